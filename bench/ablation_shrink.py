"""Which between-system variance (tau^2) should `shrunk` use?  Chosen on HANNA coherence + engagement.

    python -m bench.ablation_shrink --draws 60                       # the tuning sets (20 raters x 2 aspects)
    python -m bench.ablation_shrink --draws 60 --sets hanna@each:relevance topical_chat@each:overall

Each of HANNA's twenty published raters alone is the judge (five LLMs x four prompts, whose
system rankings range from good to poor); a draw labels a random 5-40% of the items per system,
as `bench_evaluate` does. Every rule shrinks the same corrected estimates (calibration 'auto')
toward their regression on the judge's system means; we report the Kendall tau of each ranking
with the all-human one, averaged over draws and raters, the coverage of the 95% intervals, and
the gap to the better of judge-only and human-only (mean over raters of tau - max(judge, human)).
`oracle` plugs in the true residual variance of the all-human means: what a perfect tau^2 gives.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.bench_evaluate import item_problem, judges_of, kendall, truth_of
from bench.common import log
from judgelab.evaluate import draw, judge_only
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.shrinkage import TAU2_RULES, _plugged_in, fay_herriot

TUNING_SETS = ("hanna@each:coherence", "hanna@each:engagement")
BUDGETS = (0.05, 0.10, 0.20, 0.40)


def problems(spec: str):
    """(judge name, problem) for a spec ``dataset@judge:aspect``; judge ``each``: every published judge."""
    head, _, aspect = spec.partition(":")
    dataset, _, judge = head.partition("@")
    names = judges_of(dataset) if judge == "each" else [judge]
    return [(name, item_problem(dataset, aspect, name)) for name in names]


def subsets(judged, n_systems: int, per_judge: int = 3):
    """Each judge's problem restricted to ``per_judge`` random sets of ``n_systems`` systems (HANNA has
    11): the regime of a benchmark with few systems (Topical-Chat: 6), without looking at one."""
    out = []
    for k, (name, problem) in enumerate(judged):
        rng = np.random.default_rng(k)
        for j in range(per_judge):
            keep = np.sort(rng.choice(len(problem.systems), n_systems, replace=False))
            out.append((f"{name}#{j}", restrict(problem, keep)))
    return out


def restrict(problem: Problem, keep: np.ndarray) -> Problem:
    rows = problem.present[:, keep].any(axis=1)
    strata = np.unique(problem.strata[rows], return_inverse=True)[1]
    clusters = np.unique(problem.clusters[rows], return_inverse=True)[1]
    return Problem(problem.kind, tuple(np.array(problem.systems)[keep]), tuple(np.array(problem.units)[rows]),
                   problem.judge[rows][:, keep], problem.human[rows][:, keep], problem.present[rows][:, keep],
                   clusters.astype(int), strata.astype(int))


def oracle_tau2(truth: np.ndarray, judge_means: np.ndarray) -> float:
    x = np.column_stack([np.ones(len(truth)), judge_means])
    residual = truth - x @ np.linalg.lstsq(x, truth, rcond=None)[0]
    return float(residual @ residual / (len(truth) - 2))


def one_judge(problem, fraction: float, draws: int) -> dict[str, dict[str, float]]:
    truth = truth_of(problem)
    judge = judge_only(problem, n_resamples=0).value
    out = {name: {"tau": [], "coverage": []} for name in ("human", "corrected", *TAU2_RULES, "oracle")}
    for k in range(draws):
        design = draw(problem, fraction, seed=k).design
        labelled = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
        human = human_only(labelled, design, target="items")
        fixed = corrected(labelled, design, calibration="auto", target="items", seed=k)
        fits = {"human": (human.value, human.ci), "corrected": (fixed.value, fixed.ci)}
        d, v = fixed.value, np.diag(fixed.cov)
        for rule in TAU2_RULES:
            fit = fay_herriot(d, v, judge, rule=rule)
            fits[rule] = (fit.value, fit.ci)
        x = np.column_stack([np.ones(len(d)), judge])
        fit = _plugged_in(d, v, x, oracle_tau2(truth, judge), 0.95, "oracle")
        fits["oracle"] = (fit.value, fit.ci)
        for name, (value, ci) in fits.items():
            out[name]["tau"].append(kendall(value, truth))
            out[name]["coverage"].append(np.mean((ci[:, 0] <= truth) & (truth <= ci[:, 1])))
    result = {name: {key: float(np.nanmean(v)) for key, v in values.items()} for name, values in out.items()}
    result["judge"] = {"tau": kendall(judge, truth)}
    return result


def parse_args(description: str, draws: int) -> argparse.Namespace:
    """The options the ablations share (this one and bench/ablation_choose.py)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sets", nargs="*", default=list(TUNING_SETS))
    parser.add_argument("--draws", type=int, default=draws)
    parser.add_argument("--systems", type=int, default=0, help="random subsets of this many systems")
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
    return parser.parse_args()


def cells(args: argparse.Namespace, one_judge):
    """(set name, budget, one_judge's result per judge) for every set and budget of ``args``, logged."""
    for spec in args.sets:
        judged = problems(spec)
        if args.systems:
            judged = subsets(judged, args.systems)
            spec = f"{spec} ({args.systems} of the systems)"
        for fraction in map(float, args.budgets.split(",")):
            started = time.perf_counter()
            runs = [one_judge(problem, fraction, args.draws) for _, problem in judged]
            log(f"{spec} {fraction:.0%}: {time.perf_counter() - started:.1f}s")
            yield spec, fraction, runs


def main() -> None:
    args = parse_args(__doc__.split("\n")[0], draws=60)
    names = ("judge", "human", "corrected", *TAU2_RULES, "oracle")
    print("| set | budget | " + " | ".join(f"tau {n}" for n in names) + " | " +
          " | ".join(f"gap {n}" for n in names[2:]) + " | " + " | ".join(f"cov. {n}" for n in names[1:]) + " |")
    for spec, fraction, runs in cells(args, one_judge):
        best = np.array([max(r["judge"]["tau"], r["human"]["tau"]) for r in runs])
        taus = {n: np.mean([r[n]["tau"] for r in runs]) for n in names}
        gaps = {n: np.mean([r[n]["tau"] for r in runs] - best) for n in names[2:]}
        cover = {n: np.mean([r[n]["coverage"] for r in runs]) for n in names[1:]}
        print(f"| {spec} | {fraction:.0%} | " + " | ".join(f"{taus[n]:.2f}" for n in names) + " | " +
              " | ".join(f"{gaps[n]:+.3f}" for n in names[2:]) + " | " +
              " | ".join(f"{cover[n]:.3f}" for n in names[1:]) + " |", flush=True)


if __name__ == "__main__":
    main()
