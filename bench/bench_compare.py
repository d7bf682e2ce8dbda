"""The CI gate (`judgelab compare`) on real systems: coverage, false alarms and detected regressions.

    python -m bench.bench_compare                       # 40 label draws per pair and budget
    python -m bench.bench_compare --draws 20 --budgets 10   # a quick look
    python -m bench.bench_compare --arena --draws 300 --write   # Chatbot Arena pairs with 200 labels (~30 min)

HANNA's 11 story generators answer the same 67 prompts; each prompt's two stories, for every pair
of systems, is the paired CI case (one test set, two versions). The judge is a published LLM rater
(coherence); the stories' own human coherence scores play the labels. A draw labels both outputs
of ``budget`` random prompts, and ``compare_systems`` estimates candidate - baseline, oriented so
that the candidate is the system the humans rate lower over all 67 prompts. Over all 55 pairs:

* coverage: the 95% interval holds the all-human difference (``target="items"``, whose estimand
  that is); judge-only's interval is deterministic (no labels to draw) and covers the judge's
  difference, so its "coverage" of the human one says how far to trust it as a gate;
* false alarm: the interval says the *better* system is worse (the reverse orientation fails);
* detected: the candidate fails the gate (margin 0), for regressions of at least 0.5 and of 0.2-0.5
  on the 1-5 scale.

``--arena``: Chatbot Arena's 18,833 comparisons among 20 models with GPT-4's verdicts on all of
them; a draw labels 200 comparisons at random (the human votes) and gates a random pair of models
both ways round: the candidate the humans' better model (any failure is a false alarm, at most
alpha/2 = 0.025 by design) and the humans' worse one (a clear regression when the all-human win
probabilities differ by 0.15 or more: how often the gate catches it). Head-to-head, via the others,
and ``--pairing auto`` (the rule of evaluate/two_systems.py) side by side, with how often an
interval or an estimate left the scale.
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import combinations
from pathlib import Path

import numpy as np

from judgelab.data import Judgment, load_items
from judgelab.errors import ConfigError
from judgelab.evaluate.two_systems import compare_systems

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
HANNA_RATER = "Mistral-7B/eval_prompt_1"
PLANS = (("human", "paired"), ("human", "unpaired"), ("corrected", "paired"), ("corrected", "unpaired"))


def published(dataset: str, aspect: str) -> list[Judgment]:
    """HANNA: one LLM rater (HANNA_RATER); Topical-Chat: UniEval's published predictions."""
    reference, judge = ("hanna_llm_ratings.jsonl", HANNA_RATER) if dataset == "hanna" else (
        "unieval_predictions.jsonl", "UniEval")
    with open(SHARED / "reference" / reference, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return [Judgment(item_id=r["item_id"], score=r["prediction"][aspect]) for r in rows
            if r.get("dataset", dataset) == dataset and r["judge"] == judge
            and isinstance(r["prediction"], dict) and aspect in r["prediction"]]


def run(spec: str, budgets: list[int], draws: int, seed: int) -> list[dict]:
    dataset, aspect = spec.split(":")
    items = list(load_items(SHARED / f"{dataset}.jsonl"))
    judgments = published(dataset, aspect)
    systems = sorted({item.system_id for item in items})
    prompts = sorted({item.group for item in items})
    human = {(item.system_id, item.group): item.scores[aspect] for item in items}
    truth = {s: np.mean([human[(s, p)] for p in prompts]) for s in systems}
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in combinations(systems, 2):
        baseline, candidate = (a, b) if truth[a] >= truth[b] else (b, a)
        true = truth[candidate] - truth[baseline]  # <= 0: the candidate is the humans' worse system
        options = {"baseline": baseline, "candidate": candidate, "aspect": aspect, "target": "items"}
        alone = compare_systems(items, judgments, n_resamples=1000, **options)
        rows.append(_row("judge", 0, alone, true))
        for budget in budgets:
            for _ in range(draws):
                chosen = set(rng.choice(prompts, budget, replace=False))
                ids = [item.id for item in items if item.group in chosen]
                for estimator, pairing in PLANS:
                    result = compare_systems(items, judgments, human_ids=ids, estimator=estimator, pairing=pairing,
                                             n_resamples=2, **options)  # the judge-only bootstrap is not used
                    rows.append(_row(f"{estimator} {pairing}", budget, result, true))
    return rows


def _row(name: str, budget: int, result, true: float) -> dict:
    return {"estimator": name, "budget": budget, "true": true, "covered": result.low <= true <= result.high,
            "width": result.high - result.low, "detected": result.decision == "worse", "false_alarm": result.low > 0}


def table(rows: list[dict]) -> list[str]:
    out = ["| estimator | labelled prompts (both outputs) | coverage of the human difference | mean width | "
           "false alarms (better system fails) | regressions >= 0.5 caught | 0.2-0.5 caught |",
           "|---|---|---|---|---|---|---|"]
    keys = sorted({(r["budget"], r["estimator"]) for r in rows})
    for budget, name in keys:
        chosen = [r for r in rows if r["estimator"] == name and r["budget"] == budget]
        big = [r["detected"] for r in chosen if r["true"] <= -0.5]
        small = [r["detected"] for r in chosen if -0.5 < r["true"] <= -0.2]
        out.append(f"| {name} | {budget or '-'} | {np.mean([r['covered'] for r in chosen]):.3f} | "
                   f"{np.mean([r['width'] for r in chosen]):.2f} | {np.mean([r['false_alarm'] for r in chosen]):.3f} | "
                   f"{np.mean(big):.2f} | {np.mean(small):.2f} |")
    return out


ARENA = SHARED / "chatbot_arena"
SECTION = "## The gate on comparisons: Chatbot Arena with 200 labels (`bench/bench_compare.py --arena`)"


def arena(draws: int, labels: int, seed: int) -> dict:
    """False alarms, regressions caught and scale violations of the three ways to gate a pair of Arena models."""
    from judgelab.data.arena import load_arena
    from judgelab.data.labels import PREFERENCES
    from judgelab.evaluate.comparisons import comparisons
    from judgelab.evaluate.preferences import estimate

    items, judgments = load_arena(ARENA)
    gpt4 = {j.item_id: j for j in judgments if j.judge == "gpt-4-0125-preview"}
    verdicts = [gpt4[item.id] for item in items]
    human = [PREFERENCES[item.label] for item in items]
    truth = estimate(comparisons([i.system_a for i in items], [i.system_b for i in items], human, human), "human",
                     target="items")
    value = dict(zip(truth.systems, truth.value, strict=True))
    systems = sorted(value)
    rng = np.random.default_rng(seed)
    out = {plan: {"false": [], "caught": [], "off_scale": 0, "runs": 0} for plan in ("auto", "paired", "unpaired")}
    for _ in range(draws):
        chosen = set(rng.choice(len(items), labels, replace=False))
        ids = [items[k].id for k in chosen]
        b, c = rng.choice(systems, 2, replace=False)
        better, worse = (b, c) if value[b] >= value[c] else (c, b)
        for plan in out:
            for baseline, candidate in ((worse, better), (better, worse)):
                try:
                    result = compare_systems(items, verdicts, baseline=baseline, candidate=candidate, human_ids=ids,
                                             pairing=plan, target="items")
                except ConfigError:  # head-to-head with fewer than two labelled comparisons of the pair
                    continue
                out[plan]["runs"] += 1
                bound = 0.5 if result.basis == "head-to-head" else 1.0
                out[plan]["off_scale"] += not (-bound <= result.low <= result.difference <= result.high <= bound)
                if candidate == better:
                    out[plan]["false"].append(result.decision == "worse")
                elif value[better] - value[worse] >= 0.15:
                    out[plan]["caught"].append(result.decision == "worse")
    return out


def arena_table(out: dict, draws: int, labels: int) -> list[str]:
    lines = ["| gate | false alarms (candidate the better model) | clear regressions (>= 0.15) caught | "
             "intervals or estimates off the scale |", "|---|---|---|---|"]
    names = {"auto": "`--pairing auto` (the rule)", "paired": "head-to-head only", "unpaired": "via the others only"}
    for plan, r in out.items():
        lines.append(f"| {names[plan]} | {np.mean(r['false']):.3f} ({len(r['false'])}) | "
                     f"{np.mean(r['caught']):.2f} ({len(r['caught'])}) | {r['off_scale']} of {r['runs']} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["hanna:coherence", "topical_chat:coherence"],
                        help="dataset:aspect (hanna with its Mistral-7B rater, topical_chat with UniEval)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arena", action="store_true", help="Chatbot Arena pairs with --labels random labels")
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument("--write", action="store_true", help="--arena: write its section of docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.arena:
        from bench.common import describe_machine, write_doc_section

        started = time.perf_counter()
        lines = arena_table(arena(args.draws, args.labels, args.seed), args.draws, args.labels)
        print("\n".join(lines))
        if args.write:
            head = (f"Machine: {describe_machine()}. Command: `python -m bench.bench_compare --arena --draws "
                    f"{args.draws} --labels {args.labels} --write` ({(time.perf_counter() - started) / 60:.0f} min). "
                    f"{args.draws} draws of {args.labels} random human labels among 18,833 comparisons (GPT-4 the "
                    "judge), each gating a random pair of models both ways round, margin 0, 95% intervals, "
                    "`target=\"items\"`; in brackets, how many gates each rate is over.")
            write_doc_section("bench_compare_arena", "\n".join([head, ""] + lines), heading=SECTION)
        return
    for spec in args.sets:
        started = time.perf_counter()
        rows = run(spec, args.budgets, args.draws, args.seed)
        judged = [r for r in rows if r["estimator"] == "judge"]
        big = sum(r["true"] <= -0.5 for r in judged)
        small = sum(-0.5 < r["true"] <= -0.2 for r in judged)
        print(f"\n{spec}: {len(judged)} system pairs ({big} differ by >= 0.5, {small} by 0.2-0.5), "
              f"{args.draws} draws per budget; {time.perf_counter() - started:.0f} s")
        print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
