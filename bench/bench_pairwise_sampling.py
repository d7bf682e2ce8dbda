"""Which comparisons to label on Chatbot Arena: uniform, stratified by pair, or active, with GPT-4 as the judge.

    python -m bench.bench_pairwise_sampling                 # 200 draws of n = 500 and 1,000
    python -m bench.bench_pairwise_sampling --draws 30      # a quick look

Data: ``benchmarks/chatbot_arena`` (18,833 comparisons among 20 models, the human vote on each, the
verdicts of GPT-4, Claude 3 Opus and GPT-3.5). The truth is each model's all-human win probability
over the 18,833 comparisons (ties half); every estimate uses ``target="items"``. A draw labels n
comparisons by one design (``judgelab sample``'s):

* ``uniform``: a simple random sample of the comparisons;
* ``stratified``: proportional to each unordered pair of models' share, at least 2 per pair;
* ``active``: within each pair, probabilities proportional to half uniform + half the judges' doubt
  (1 - |2p - 1|, p the three judges' mean preference: their disagreement), weighted back by 1 / pi.

Per design and n: per-model coverage of the truth by the corrected and human-only 95% intervals,
and their mean widths (the estimator is GPT-4's corrected win probability either way).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bench.common import command_line, describe_machine, log
from judgelab.data.arena import load_arena
from judgelab.data.labels import PREFERENCES
from judgelab.evaluate.comparisons import comparisons
from judgelab.evaluate.preferences import estimate
from judgelab.evaluate.sampling import comparison_problem, comparison_uncertainty, draw

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "chatbot_arena"
JUDGE = "gpt-4-0125-preview"
DESIGNS = ("uniform", "stratified", "active")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000])
    args = parser.parse_args(argv)
    started = time.perf_counter()
    items, judgments = load_arena(SHARED)
    items = list(items)
    ids = tuple(item.id for item in items)
    gpt4 = {j.item_id: PREFERENCES[j.label] for j in judgments if j.judge == JUDGE and j.label in PREFERENCES}
    a, b = [i.system_a for i in items], [i.system_b for i in items]
    judge = [gpt4.get(i) for i in ids]
    human = np.array([PREFERENCES[i.label] for i in items])
    truth = estimate(comparisons(a, b, judge, human), "human", target="items").value
    problem = comparison_problem(items)
    doubt = comparison_uncertainty(judgments, ids)
    rng = np.random.default_rng(0)
    print(f"{len(items)} comparisons, {len(truth)} models, {len(problem.systems)} pairs; judge {JUDGE}; "
          f"{args.draws} draws per design and n; {describe_machine()}")
    print("| n | design | corrected coverage | corrected width | human coverage | human width |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        for design in DESIGNS:
            hits = {"corrected": [], "human": []}
            widths = {"corrected": [], "human": []}
            for seed in range(args.draws):
                if design == "uniform":
                    labelled = np.zeros(len(items), dtype=bool)
                    labelled[rng.choice(len(items), n, replace=False)] = True
                    probability = None
                else:
                    drawn = draw(problem, n, uncertainty=doubt if design == "active" else None, seed=seed,
                                 strata_name="pairs of systems").design
                    labelled, probability = drawn.labelled, drawn.probability
                data = comparisons(a, b, judge, human, labelled=labelled, probability=probability)
                for name in hits:
                    est = estimate(data, name, target="items")
                    hits[name].append((est.ci[:, 0] <= truth) & (truth <= est.ci[:, 1]))
                    widths[name].append(np.nanmean(est.ci[:, 1] - est.ci[:, 0]))
            print(f"| {n} | {design} | {np.mean(hits['corrected']):.3f} | {np.mean(widths['corrected']):.3f} | "
                  f"{np.mean(hits['human']):.3f} | {np.mean(widths['human']):.3f} |", flush=True)
            log(f"n={n} {design} done")
    print(f"\n{time.perf_counter() - started:.0f} s; `{command_line('bench.bench_pairwise_sampling', argv)}`")


if __name__ == "__main__":
    main()
