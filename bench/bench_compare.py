"""The CI gate (`judgelab compare`) on real systems: coverage, false alarms and detected regressions.

    python -m bench.bench_compare                       # 40 label draws per pair and budget
    python -m bench.bench_compare --draws 20 --budgets 10   # a quick look

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
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import combinations
from pathlib import Path

import numpy as np

from judgelab.data import Judgment, load_items
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["hanna:coherence", "topical_chat:coherence"],
                        help="dataset:aspect (hanna with its Mistral-7B rater, topical_chat with UniEval)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
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
