"""Why the t branch of evaluate/intervals.py is guarded: each system's coverage of the per-system t interval.

    python -m bench.ablation_t_guard --draws 2000 --write     # HANNA, six aspects, 20% and 40% labels (~10 min)

Human labels only (no judge): a draw labels a stratified random sample of each HANNA system's 67
stories, and each system's 95% interval for its mean over exactly those stories (finite-population
factor 1 - n/N) is checked against the all-human mean. Variants, all from the system's own labels:

* ``t``: Student's t, the system's own variance;
* ``t guarded``: the same at level 1 - 0.6 alpha (what ships, intervals.T_GUARD);
* ``Hall``: Hall's (1992) monotone skewness-correcting transformation of the t statistic, with the
  system's own sample skewness (scaled by (1 - 2f) / sqrt(1 - f) for sampling without replacement);
* ``Hall pooled``: the same with one skewness pooled over the systems of the draw.

Reported per (aspect, budget): the worst system's coverage (2,000 draws: Monte Carlo error about
+-0.005 per system) and the mean over systems, and the width against plain t.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats

from bench.bench_evaluate import item_problem
from bench.common import describe_machine, write_doc_section
from judgelab.evaluate import draw
from judgelab.evaluate.intervals import T_GUARD

ASPECTS = ("coherence", "relevance", "empathy", "surprise", "engagement", "complexity")
BUDGETS = (0.2, 0.4)
VARIANTS = ("t", "t guarded", "Hall", "Hall pooled")
SECTION = "### Why the t branch is guarded (`bench/ablation_t_guard.py`)"


def hall(x: np.ndarray, population: int, gamma: float, quantile: float) -> tuple[float, float]:
    """Hall's transformation g(T) = T + a/2 + a T^2 + a^2 T^3 / 3, a = gamma_eff / (3 sqrt(n)), inverted at +-quantile."""
    n, f = len(x), len(x) / population
    mean, sd = x.mean(), x.std(ddof=1)
    se = sd * math.sqrt((1 - f) / n)
    a = gamma * (1 - 2 * f) / math.sqrt(1 - f) / (3 * math.sqrt(n))

    def inverse(v: float) -> float:
        return v if abs(a) < 1e-12 else (np.cbrt(1 + 3 * a * (v - a / 2)) - 1) / a

    return mean - inverse(quantile) * se, mean - inverse(-quantile) * se


def run(aspect: str, budget: float, draws: int) -> dict:
    problem = item_problem("hanna", aspect)
    truth = np.nanmean(np.where(problem.present, problem.human, np.nan), axis=0)
    size = len(problem.systems)
    hits = {v: np.zeros(size) for v in VARIANTS}
    width = {v: 0.0 for v in VARIANTS}
    given = np.zeros(size)
    for k in range(draws):
        design = draw(problem, budget, seed=k).design
        samples = [problem.human[design.labelled & problem.present[:, s], s] for s in range(size)]
        centred = np.concatenate([x - x.mean() for x in samples])
        pooled_gamma = float(np.mean(centred ** 3) / np.mean(centred ** 2) ** 1.5)
        for s, x in enumerate(samples):
            n, population = len(x), int(problem.present[:, s].sum())
            sd = x.std(ddof=1)
            if sd == 0:
                continue
            given[s] += 1
            se = sd * math.sqrt((1 - n / population) / n)
            own_gamma = float(np.mean((x - x.mean()) ** 3) / np.mean((x - x.mean()) ** 2) ** 1.5)
            for variant, (low, high) in {
                "t": (x.mean() - stats.t.ppf(0.975, n - 1) * se, x.mean() + stats.t.ppf(0.975, n - 1) * se),
                "t guarded": (x.mean() - stats.t.ppf(1 - T_GUARD * 0.025, n - 1) * se,
                              x.mean() + stats.t.ppf(1 - T_GUARD * 0.025, n - 1) * se),
                "Hall": hall(x, population, own_gamma, stats.t.ppf(0.975, n - 1)),
                "Hall pooled": hall(x, population, pooled_gamma, stats.t.ppf(0.975, n - 1)),
            }.items():
                hits[variant][s] += low <= truth[s] <= high
                width[variant] += high - low
    coverage = {v: hits[v] / np.maximum(given, 1) for v in VARIANTS}
    return {"aspect": aspect, "budget": budget, "labels": float(np.mean([len(x) for x in samples])),
            "worst": {v: float(coverage[v].min()) for v in VARIANTS},
            "mean": {v: float(hits[v].sum() / given.sum()) for v in VARIANTS},
            "width": {v: width[v] / width["t"] for v in VARIANTS}}


def line(r: dict) -> str:
    cells = [r["aspect"], f"{r['budget']:.0%} ({r['labels']:.0f} labels)"]
    cells += [f"{r['worst'][v]:.3f} / {r['mean'][v]:.3f} / {r['width'][v]:.2f}" for v in VARIANTS]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    for aspect in ASPECTS:
        for budget in BUDGETS:
            rows.append(run(aspect, budget, args.draws))
            print(line(rows[-1]), flush=True)
    if args.write:
        head = ["aspect", "budget"] + [f"{v}: worst / mean / width vs t" for v in VARIANTS]
        body = [f"Machine: {describe_machine()}. Command: `python -m bench.ablation_t_guard --draws {args.draws} "
                "--write`. HANNA human labels only, each system's 95% interval for its mean over its 67 stories "
                f"({args.draws} stratified draws per budget; Monte Carlo error about +-0.005 per system).", "",
                "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        write_doc_section("ablation_t_guard", "\n".join(body + [line(r) for r in rows]), heading=SECTION)


if __name__ == "__main__":
    main()
