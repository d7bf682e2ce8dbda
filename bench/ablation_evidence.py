"""Can the labels tell, with a few per system, whether to trust the judge's ranking?  (issue #32 item 2)

    python -m bench.ablation_evidence --draws 200 --out /tmp/tc.jsonl --sets topical_chat@each:naturalness \
        topical_chat@each:coherence topical_chat@each:engagingness topical_chat@each:groundedness \
        topical_chat@each:understandability topical_chat@each:overall           # 12 min
    python -m bench.ablation_evidence --draws 10 --out /tmp/hanna.jsonl --sets hanna@each:coherence \
        hanna@each:engagement hanna@each:relevance hanna@each:complexity hanna@each:empathy hanna@each:surprise  # 45 min
    python -m bench.ablation_evidence --analyse /tmp/tc.jsonl /tmp/hanna.jsonl     # seconds

The first two write one JSON line per label draw (as bench_evaluate's per-judge sets: each judge
alone, a random 5-40% of each system's items labelled): the Kendall tau of every candidate ranking
against the all-label truth (judge-only, human-only, corrected, shrunk's curve and line, guided),
and every statistic a rule could read from the labels: the split-half check's scores
(evaluate/choose.py), the judge's weighted concordance with the labels' means (unbiased: the
judge's order does not depend on the labels) and its standard error, an estimate of the labels'
own ranking's concordance, and a parametric bootstrap of labels, corrected and the curve at a
labels-only plug-in truth (the labels' means pulled toward their grand mean by the share of their
spread that is not noise). A rerun with the same --out appends; it does not resume.

--analyse prints, per set and budget, the gap (a rule's tau minus max(judge-only, human-only),
per judge, averaged over the set's judges; the goal: >= -0.03) of fixed choices, of rules on
those statistics, of the per-draw oracle, and of a chooser learned from all of them
(gradient-boosted trees predicting each candidate's tau), fitted with the scored aspect left out.
"""

from __future__ import annotations

import argparse
import collections
import json
import warnings

import numpy as np
from scipy import stats

from bench.ablation_choose import split_scores
from bench.ablation_shrink import BUDGETS, problems
from bench.bench_evaluate import GOAL_MARGIN, kendall, truth_of
from judgelab.evaluate import draw, judge_only
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.guided import guided_ranking
from judgelab.evaluate.shrinkage import fay_herriot

SIMULATIONS = 30  # parametric bootstrap draws per label draw
CANDIDATES = ("judge", "human", "curve")  # what the learned chooser picks from


def _numerator(ranking: np.ndarray, truth: np.ndarray) -> float:
    """sum over pairs of sign(ranking_s - ranking_t) (truth_s - truth_t): weighted concordance's numerator."""
    upper = np.triu_indices(len(ranking), 1)
    return float(np.sign(ranking[:, None] - ranking[None, :])[upper] @ (truth[:, None] - truth[None, :])[upper])


def evidence(human, fixed, judge: np.ndarray, rng: np.random.Generator) -> dict:
    """What the labels say of the judge's ranking and of their own (module docstring)."""
    ok = np.isfinite(human.value) & np.isfinite(fixed.value) & np.isfinite(judge)
    means, judged = human.value[ok], judge[ok]
    cov, fixed_cov = human.cov[np.ix_(ok, ok)], fixed.cov[np.ix_(ok, ok)]
    upper = np.triu_indices(len(means), 1)
    gaps = (means[:, None] - means[None, :])[upper]
    gap_var = (np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov)[upper]
    signs = np.sign(judged[:, None] - judged[None, :])
    weights = signs.sum(axis=1)  # the numerator as a linear form in the labels' means
    # the labels' own ranking: each pair ordered right with probability Phi(|gap| / sd), |gap| de-noised
    gap = np.sqrt(np.clip(gaps ** 2 - gap_var, 0, None))
    labels = float(np.sum(gap * (2 * stats.norm.cdf(gap / np.sqrt(np.clip(gap_var, 1e-12, None))) - 1)))
    centre, spread = means.mean(), np.var(means, ddof=1)
    share = np.sqrt(max(spread - np.mean(np.diag(cov)), 0) / spread) if spread > 0 else 0.0
    plug_in = centre + share * (means - centre)
    draws = {"labels": [], "corrected": [], "curve": []}
    lower, fixed_lower = (np.linalg.cholesky(c + 1e-12 * np.eye(len(means))) for c in (cov, fixed_cov))
    for _ in range(SIMULATIONS):
        simulated = plug_in + lower @ rng.standard_normal(len(means))
        simulated_fixed = plug_in + fixed_lower @ rng.standard_normal(len(means))
        draws["labels"].append(_numerator(simulated, plug_in))
        draws["corrected"].append(_numerator(simulated_fixed, plug_in))
        curve = fay_herriot(simulated_fixed, np.diag(fixed_cov), judged, rule="smooth", interval=False).value
        draws["curve"].append(_numerator(curve, plug_in))
    return {"n_judge": float(weights @ means), "se_judge": float(np.sqrt(max(weights @ cov @ weights, 0))),
            "n_labels": labels, "denom": float(np.abs(gaps).sum()), "share": float(share),
            "pb": {"judge": _numerator(judged, plug_in)} | {k: float(np.mean(v)) for k, v in draws.items()},
            "pb_denom": float(np.abs(plug_in[:, None] - plug_in[None, :])[upper].sum())}


def dump(args: argparse.Namespace) -> None:
    with open(args.out, "a") as out:
        for spec in args.sets:
            for name, problem in problems(spec):
                truth, judged = truth_of(problem), judge_only(problem, n_resamples=0)
                judge = judged.value
                for fraction in map(float, args.budgets.split(",")):
                    for k in range(args.draws):
                        out.write(json.dumps(_row(spec, name, problem, truth, judged, judge, fraction, k)) + "\n")
                    out.flush()
                    print(spec, name, f"{fraction:.0%}", flush=True)


def _row(spec, name, problem, truth, judged, judge, fraction, k) -> dict:
    design = draw(problem, fraction, seed=k).design
    labelled = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
    human = human_only(labelled, design, target="items")
    fixed = corrected(labelled, design, calibration="auto", target="items", seed=k)
    variances = np.diag(fixed.cov)
    rankings = {"judge": judge, "human": human.value, "corrected": fixed.value,
                "curve": fay_herriot(fixed.value, variances, judge, rule="smooth", interval=False).value,
                "line": fay_herriot(fixed.value, variances, judge, interval=False).value,
                "guided": guided_ranking(fixed, judged, level=0.05).value}
    check = split_scores(labelled, design, judge, fixed.info["calibration"], k)
    return {"set": spec, "judge_name": name, "budget": fraction, "draw": k, "n_labelled": int(design.labelled.sum()),
            "tau": {key: kendall(value, truth) for key, value in rankings.items()},
            "check": None if check is None else {"conc": [float(x) for x in check["concordance"]],
                                                 "tau": [float(x) for x in check["tau"]],
                                                 "per_half": float(check["per_half"])}} | evidence(
        human, fixed, judge, np.random.default_rng(1000 + k))


# -- rules on one draw's evidence ------------------------------------------------------------------------

def ships(row: dict) -> str:
    """evaluate/choose.py: the curve unless the labels' means score higher on the halves; then corrected or human."""
    if row["check"] is None:
        return "curve"
    _, labels, fixed, curve, _ = row["check"]["conc"]
    return "curve" if curve >= labels else "corrected" if fixed > labels else "human"


def _bootstrap_best(row: dict, candidates=("labels", "corrected", "curve")) -> str:
    best = max(candidates, key=lambda k: row["pb"][k])
    return "human" if best == "labels" else best


RULES = {
    "ships": ships,
    "always judge": lambda r: "judge",
    "always human": lambda r: "human",
    "always curve": lambda r: "curve",
    "judge if it beats the labels by 1 se": lambda r: "judge" if r["n_judge"] > r["n_labels"] + r["se_judge"] else ships(r),
    "bootstrap: best of labels, corrected, curve": _bootstrap_best,
    "bootstrap: best of judge, labels, curve": lambda r: _bootstrap_best(r, ("judge", "labels", "curve")),
    "ships, human if the bootstrap puts labels above the curve": lambda r: (
        "human" if ships(r) == "curve" and r["pb"]["labels"] > r["pb"]["curve"] else ships(r)),
    "oracle: the best of judge, human, curve per draw": lambda r: max(CANDIDATES, key=lambda k: np.nan_to_num(r["tau"][k], nan=-9)),
}


def _features(row: dict) -> list[float]:
    check = row["check"]
    return [*check["conc"], *check["tau"], check["per_half"], row["n_judge"] / row["denom"],
            row["n_judge"] / max(row["se_judge"], 1e-9), row["n_labels"] / row["denom"], row["share"],
            *(row["pb"][k] / max(row["pb_denom"], 1e-9) for k in ("judge", "labels", "corrected", "curve"))]


def learned(rows: list[dict]) -> None:
    """Adds row["learned"]: the candidate a gradient-boosted model of each one's tau, fitted on the other aspects, picks."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    x = np.nan_to_num(np.array([_features(r) for r in rows]))
    y = np.nan_to_num(np.array([[r["tau"][c] for c in CANDIDATES] for r in rows]))
    aspects = np.array([r["set"] for r in rows])
    for aspect in np.unique(aspects):
        held = aspects == aspect
        predicted = [HistGradientBoostingRegressor(max_iter=150, learning_rate=0.05, max_depth=3, random_state=0)
                     .fit(x[~held], y[~held, k]).predict(x[held]) for k in range(len(CANDIDATES))]
        for row, best in zip(np.array(rows, dtype=object)[held], np.argmax(predicted, axis=0), strict=True):
            row["learned"] = CANDIDATES[best]


def analyse(paths: list[str]) -> None:
    rows = [json.loads(line) for path in paths for line in open(path)]
    rows = [r for r in rows if r["check"] is not None]
    learned(rows)
    rules = RULES | {"learned chooser (aspect left out)": lambda r: r["learned"]}
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    for row in rows:
        cells[(row["set"], row["budget"])][row["judge_name"]].append(row)
    print("| set | budget | labels per system | " + " | ".join(rules) + " |")
    print("|---|---|---|" + "---|" * len(rules))
    met = collections.defaultdict(list)
    for (spec, budget), judges in sorted(cells.items()):
        gaps = {name: _gap(judges, rule) for name, rule in rules.items()}
        for name, gap in gaps.items():
            met[name].append(gap)
        per_system = np.mean([2 * r["check"]["per_half"] for rs in judges.values() for r in rs])
        print(f"| {spec} | {budget:.0%} | {per_system:.1f} | " + " | ".join(
            f"{g:+.3f}" if g >= -GOAL_MARGIN else f"**{g:+.3f}**" for g in gaps.values()) + " |")
    print("| cells meeting the goal, mean gap | | | " + " | ".join(
        f"{sum(g >= -GOAL_MARGIN for g in v)}/{len(v)}, {np.mean(v):+.3f}" for v in met.values()) + " |")
    _overlap(cells)


def _gap(judges: dict, rule) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.mean([np.nanmean([r["tau"][rule(r)] for r in rs])
                              - max(rs[0]["tau"]["judge"], np.nanmean([r["tau"]["human"] for r in rs]))
                              for rs in judges.values()]))


def _overlap(cells: dict) -> None:
    """The judge's weighted concordance with the labels' means, per cell: where the judge's ranking is
    right and where it is wrong, does what the labels see of it differ?"""
    print("\n| set | budget | judge tau | human tau | judge's weighted concordance with the labels' means: 10/25/50/75/90% |")
    print("|---|---|---|---|---|")
    for (spec, budget), judges in sorted(cells.items()):
        if len(judges) != 1:
            continue
        rows = next(iter(judges.values()))
        seen = np.quantile([r["n_judge"] / r["denom"] for r in rows], [0.1, 0.25, 0.5, 0.75, 0.9])
        print(f"| {spec} | {budget:.0%} | {rows[0]['tau']['judge']:.2f} | {np.nanmean([r['tau']['human'] for r in rows]):.2f} | "
              + " / ".join(f"{q:.2f}" for q in seen) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="*", default=[])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
    parser.add_argument("--out", help="the JSONL the draws are appended to")
    parser.add_argument("--analyse", nargs="*", help="JSONL files the draws were written to")
    args = parser.parse_args()
    if args.analyse:
        analyse(args.analyse)
    elif args.out and args.sets:
        dump(args)
    else:
        parser.error("give --sets and --out to draw, or --analyse FILES")


if __name__ == "__main__":
    main()
