"""Raw against length-controlled win rates on real systems, with a judge and with the humans.

    .venv/bin/python -m bench.bench_length_control            # ~10 s, no model: writes its docs/benchmarks.md section
    .venv/bin/python -m bench.bench_length_control --no-write # prints only

AlpacaEval 2's length-controlled (LC) win rate (judgelab.metrics.bias.length_controlled_win_rate:
the GLM logit P(system wins) = theta + phi tanh(delta / sd(delta)), delta = len(system) -
len(baseline) in characters, LC = sigmoid(theta)) needs systems and their texts. Chatbot Arena's
shared copy has no texts, and LLMBar has no systems (and its human label is a constructed winner),
so the real data here is HANNA: 11 story generators (10 models and the human-written story) on the
same 67 prompts, with three people's ratings of every story on six aspects and 20 published LLM
raters (reference/hanna_llm_ratings.jsonl). Each system meets the baseline once per prompt; who
wins a comparison is the story with the higher mean rating over the six aspects (equal: a tie,
half a win), for the humans (their mean) and for a judge (an LLM rater's mean). Each system's win
rate against the baseline, raw and LC, by the judge and by the humans, 95% intervals (raw:
bootstrap; LC: the GLM's robust Wald interval through the sigmoid).
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.common import command_line, describe_machine, write_doc_section
from judgelab.metrics import bias

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SECTION = "## Length-controlled win rates: HANNA's systems, a judge and the humans (`bench/bench_length_control.py`)"
ASPECTS = ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity")
BASELINE = "GPT-2"  # a generator in the middle of the field, of middling length (1,665 characters on average)
JUDGES = ("Mistral-7B/eval_prompt_1", "ChatGPT/eval_prompt_1")


def rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load(shared: Path):
    """(stories by id, the humans' mean rating by id, each judge's mean rating by id, the story of
    (prompt, system))."""
    stories = {r["id"]: r for r in rows(shared / "hanna.jsonl")}
    human = {i: float(np.mean([r["scores"][a] for a in ASPECTS])) for i, r in stories.items()}
    judges: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows(shared / "reference" / "hanna_llm_ratings.jsonl"):
        value = r["prediction"].get("average")
        if value is not None:
            judges[r["judge"]][r["item_id"]] = float(value)
    story_of = {(r["group_id"], r["system_id"]): i for i, r in stories.items()}
    return stories, human, judges, story_of


def preference(ratings: dict[str, float], system_story: str, baseline_story: str) -> float:
    """1 when the system's story is rated higher than the baseline's, 0 lower, 0.5 equal; NaN unrated."""
    if system_story not in ratings or baseline_story not in ratings:
        return float("nan")
    x, y = ratings[system_story], ratings[baseline_story]
    return 0.5 if x == y else float(x > y)


def win_rates(shared: Path, judge: str, baseline: str = BASELINE) -> list[dict]:
    stories, human, judges, story_of = load(shared)
    systems = sorted({r["system_id"] for r in stories.values()} - {baseline})
    prompts = sorted({r["group_id"] for r in stories.values()})
    out = []
    for system in systems:
        pairs = [(story_of[(p, system)], story_of[(p, baseline)]) for p in prompts
                 if (p, system) in story_of and (p, baseline) in story_of]
        length = np.array([[len(stories[s]["output"]), len(stories[b]["output"])] for s, b in pairs], dtype=float)
        found = {}
        for who, ratings in (("judge", judges[judge]), ("humans", human)):
            prefs = [preference(ratings, s, b) for s, b in pairs]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # statsmodels' convergence chatter near separation: the reason says it
                found[who] = bias.length_controlled_win_rate(prefs, length[:, 0], length[:, 1], seed=0)
        out.append({"system": system, "n": len(pairs), "length_ratio": float(length[:, 0].mean() / length[:, 1].mean()),
                    "shorter": float(np.mean(length[:, 0] < length[:, 1])), **found})
    return out


def fmt(estimate) -> str:
    if not np.isfinite(estimate.value):
        return f"n/a ({estimate.reason.split(':')[0]})"
    low, high = estimate.ci
    return f"{estimate.value:.2f} [{low:.2f}, {high:.2f}]"


def _width(estimate) -> float:
    return estimate.ci[1] - estimate.ci[0]


def table(results: list[dict], judge: str) -> str:
    lines = [f"Judge: {judge}; baseline {BASELINE}.", "",
             "| system | n | length / baseline's | shorter in | judge raw | judge LC | humans raw | humans LC |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        j, h = r["judge"], r["humans"]
        lines.append(f"| {r['system']} | {r['n']} | {r['length_ratio']:.2f} | {r['shorter']:.0%} | "
                     f"{fmt(j['win_rate'])} | {fmt(j['length_controlled_win_rate'])} | {fmt(h['win_rate'])} | "
                     f"{fmt(h['length_controlled_win_rate'])} |")
    gaps = {kind: [abs(r["judge"][key].value - r["humans"][key].value) for r in results
                   if np.isfinite(r["judge"][key].value) and np.isfinite(r["humans"][key].value)]
            for kind, key in (("raw", "win_rate"), ("LC", "length_controlled_win_rate"))}
    moved = {who: np.mean([abs(r[who]["length_controlled_win_rate"].value - r[who]["win_rate"].value) for r in results
                           if np.isfinite(r[who]["length_controlled_win_rate"].value)]) for who in ("judge", "humans")}
    widths = [_width(r[who]["length_controlled_win_rate"]) / _width(r[who]["win_rate"]) for r in results
              for who in ("judge", "humans") if np.isfinite(r[who]["length_controlled_win_rate"].value)]
    lines += ["", f"Mean |judge - humans| over the systems: raw {np.mean(gaps['raw']):.3f} ({len(gaps['raw'])} systems), "
                  f"LC {np.mean(gaps['LC']):.3f} ({len(gaps['LC'])} systems). Mean |LC - raw|: judge "
                  f"{moved['judge']:.3f}, humans {moved['humans']:.3f}. LC interval width / raw: "
                  f"{min(widths):.1f}-{max(widths):.1f} (median {np.median(widths):.1f})."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    parts = [f"`{command_line('bench.bench_length_control', argv)}` on {describe_machine()}.", "",
             __doc__.split("\n\n", 2)[2].strip(), ""]
    for judge in JUDGES:
        parts += [table(win_rates(args.shared, judge), judge), ""]
    body = "\n".join(parts)
    print(body)
    if not args.no_write:
        write_doc_section("bench_length_control", body, heading=SECTION)


if __name__ == "__main__":
    main()
