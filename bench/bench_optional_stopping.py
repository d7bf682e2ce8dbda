"""Label in rounds, look after each, stop when decided: the error rate of confidence sequences and of t intervals.

    python -m bench.bench_optional_stopping --sessions 1000 --write     # HANNA and Chatbot Arena (~15 min)

A labelling session asks one question about two systems and labels in rounds of 10, looking at
the answer after each round, and stops at the first round where the interval excludes "no
difference", or undecided once 60% of the pair's units are labelled:

* **HANNA** (is the candidate's coherence better or worse than the baseline's?): a random pair of
  its 11 systems; a round labels both stories of 10 more random prompts (of 67); the interval is for
  the mean paired difference (candidate - baseline, on -4..4) over the 67 prompts;
* **Chatbot Arena** (does the candidate win more than half its comparisons with the baseline?): a
  random pair of models that met at least 60 times; a round labels 10 more of their comparisons; the
  interval is for the win rate (ties half) over all their comparisons.

Two intervals are compared on the same sessions: the confidence sequence `judgelab` uses for
``--intervals sequence`` and ``compare --sequential`` (a betting sequence without replacement from
the pair's units, judgelab.metrics.betting.confidence_sequence), and the t interval (with the
finite-population factor) recomputed after each round, as a user peeking at a fixed-sample interval
would. An **error** is a decision whose sign is wrong, or any decision where there is no difference (the
truth is the all-human value over every unit); both are 95% intervals, so a valid procedure errs in
at most 5% of sessions. Sessions of three kinds: "no difference" (a HANNA system against itself with
its stories paired at random, mean difference exactly 0; an Arena pair's comparisons with their
mirror images, win rate exactly 1/2), where every decision is an error and peeking hurts most; all
real pairs; and the "close" ones, which differ by under 0.1 (HANNA) or 0.05 (Arena). Also reported:
the share of sessions decided, and the mean labels at the decision.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

from bench.common import describe_machine, write_doc_section
from judgelab.metrics.betting import confidence_sequence

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SECTION = "## Label until decided: optional stopping (`bench/bench_optional_stopping.py`)"
ROUND = 10
CONFIDENCE = 0.95
BUDGET = 0.6  # a session labels at most this share of the pair's units (all of them would reveal the truth)
CLOSE = {"hanna": 0.1, "chatbot_arena": 0.05}


def hanna_pairs(aspect: str = "coherence") -> list[tuple[str, np.ndarray]]:
    """Per ordered pair of systems, the 67 paired differences (candidate - baseline) of one aspect."""
    rows = [json.loads(line) for line in (SHARED / "hanna.jsonl").open(encoding="utf-8")]
    by = defaultdict(dict)
    for row in rows:
        by[row["system_id"]][row["group_id"]] = row["scores"][aspect]
    systems = sorted(by)
    prompts = sorted(set.intersection(*(set(v) for v in by.values())))
    return [(f"{c} - {b}", np.array([by[c][g] - by[b][g] for g in prompts]))
            for b in systems for c in systems if b != c]


def arena_pairs(minimum: int = 60) -> list[tuple[str, np.ndarray]]:
    """Per pair of models that met at least ``minimum`` times, the first model's preference in each comparison."""
    from judgelab.data.arena import load_arena
    from judgelab.data.labels import PREFERENCES

    items, _ = load_arena(SHARED / "chatbot_arena")
    by = defaultdict(list)
    for item in items:
        first, second = sorted((item.system_a, item.system_b))
        value = PREFERENCES[item.label]
        by[(first, second)].append(value if item.system_a == first else 1 - value)
    return [(f"{a} vs {b}", np.array(v)) for (a, b), v in by.items() if len(v) >= minimum]


def hanna_nulls(aspect: str = "coherence") -> list[tuple[str, np.ndarray]]:
    """No difference at all: each system against itself with its stories paired at random (a fixed
    permutation of its prompts), whose mean paired difference is exactly 0 with a real spread."""
    rows = [json.loads(line) for line in (SHARED / "hanna.jsonl").open(encoding="utf-8")]
    rng = np.random.default_rng(1)
    out = []
    for system in sorted({r["system_id"] for r in rows}):
        values = np.array([r["scores"][aspect] for r in rows if r["system_id"] == system])
        for k in range(6):
            out.append((f"{system} shuffled {k}", values[rng.permutation(len(values))] - values))
    return out


def arena_nulls(minimum: int = 60) -> list[tuple[str, np.ndarray]]:
    """No difference at all: each pair's comparisons with their mirror images (win rate exactly 1/2)."""
    return [(f"{name} and mirrored", np.concatenate([v, 1 - v])) for name, v in arena_pairs(minimum)]


def session(units: np.ndarray, scale: tuple[float, float], centre: float, rng) -> dict:
    """One session: label in rounds of ROUND, decide by the sequence and by the t interval."""
    order = rng.permutation(units)
    population = len(units)
    truth = units.mean() - centre
    low, high = confidence_sequence(order, scale, confidence=CONFIDENCE, population=population)
    out = {"truth": truth}
    for name in ("sequence", "t"):
        budget = int(BUDGET * population)
        out[name] = {"decided": False, "error": False, "labels": budget}
        for n in range(ROUND, budget + 1, ROUND):
            if name == "sequence":
                lo, hi = low[n - 1] - centre, high[n - 1] - centre
            else:
                x = order[:n]
                sd = x.std(ddof=1) if n > 1 else 0.0
                half = stats.t.ppf(0.5 + CONFIDENCE / 2, max(n - 1, 1)) * sd * math.sqrt(max(1 - n / population, 0) / n)
                lo, hi = x.mean() - centre - half, x.mean() - centre + half
            if lo > 0 or hi < 0:
                out[name] = {"decided": True, "error": abs(truth) < 1e-12 or (lo > 0) != (truth > 0), "labels": n}
                break
    return out


def run(data: str, pairs: list[tuple[str, np.ndarray]], nulls: list[tuple[str, np.ndarray]], sessions: int, scale,
        centre: float, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    results = [session(pairs[rng.integers(len(pairs))][1], scale, centre, rng) for _ in range(sessions)]
    null = [session(nulls[rng.integers(len(nulls))][1], scale, centre, rng) for _ in range(sessions)]
    out = {}
    for subset, keep in (("no difference", None), ("all pairs", lambda r: True),
                         ("close pairs", lambda r: abs(r["truth"]) < CLOSE[data])):
        chosen = null if keep is None else [r for r in results if keep(r)]
        for name in ("sequence", "t"):
            decided = [r[name] for r in chosen if r[name]["decided"]]
            out[(subset, name)] = {"sessions": len(chosen),
                                   "error": sum(d["error"] for d in decided) / max(len(chosen), 1),
                                   "decided": len(decided) / max(len(chosen), 1),
                                   "labels": float(np.mean([d["labels"] for d in decided])) if decided else float("nan")}
    return out


def lines(data: str, result: dict) -> list[str]:
    out = []
    for (subset, name), r in result.items():
        out.append(f"| {data} | {subset} ({r['sessions']}) | {name} | {r['error']:.3f} | {r['decided']:.2f} | "
                   f"{r['labels']:.0f} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    table = []
    hanna = run("hanna", hanna_pairs(), hanna_nulls(), args.sessions, (-4.0, 4.0), 0.0)
    table += lines("HANNA coherence, paired difference", hanna)
    arena = run("chatbot_arena", arena_pairs(), arena_nulls(), args.sessions, (0.0, 1.0), 0.5)
    table += lines("Chatbot Arena, head-to-head win rate", arena)
    print("\n".join(table))
    if args.write:
        head = ["data, question", "sessions", "interval", "error rate (wrong sign decided)", "share decided",
                "mean labels at the decision"]
        body = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_optional_stopping --sessions "
                f"{args.sessions} --write`. Rounds of {ROUND} labels (HANNA: both stories of 10 prompts; Arena: 10 "
                "comparisons of the pair), a look after each, stop at the first decision; 95% intervals. `close`: "
                "pairs that differ by under 0.1 (HANNA, on -4..4) or 0.05 (Arena, win rate).", "",
                "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        write_doc_section("bench_optional_stopping", "\n".join(body + table), heading=SECTION)


if __name__ == "__main__":
    main()
