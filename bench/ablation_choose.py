"""Which ranking should `evaluate` recommend?  Rules compared on the same label draws (issue #32 item 2).

    python -m bench.ablation_choose --draws 20                     # tuning: HANNA coherence + engagement
    python -m bench.ablation_choose --draws 8 --systems 6          # tuning: 3 random sets of 6 systems per rater
    python -m bench.ablation_choose --draws 20 --sets hanna@each:relevance hanna@each:complexity \
        hanna@each:empathy hanna@each:surprise                     # held out
    python -m bench.ablation_choose --draws 100 --sets topical_chat@each:naturalness ...   # seen before

Each draw labels a random 5-40% of each system's items (as `bench_evaluate`), fits judge-only,
human-only, corrected (calibration 'auto') and shrunk on all the labels, and runs the split-half
check of src/judgelab/evaluate/choose.py (same seed, same halvings) extended to score more
candidates on each half: shrunk, the labels' means, and corrected refitted on the half (the
judge's mean over all the system's items times lambda, plus the half's mean of human - lambda x
judge; lambda: the full fit's calibration, identity or the within-system slope, refitted on the
half). Two scores of a half's ranking against the other half's means: Kendall tau (what ships),
and a weighted concordance, sum over pairs of sign(estimate difference) x (held-out difference),
which counts a pair by how far apart the held-out half puts it instead of by its sign alone.

Rules (each a function of one draw's figures; every rule sees the same draws):
  current    shrunk unless the labels' means score higher by tau, then corrected (what ships)
  to-human   as current, but recommends human-only (the ranking the check scored) instead of corrected
  three-way  as current; when the labels win, corrected if it scores above the labels' means on the
             halves, else human-only
  variance   as current; when the labels win, corrected if its mean estimated variance is below
             human-only's, else human-only
  guard-2    three-way, but shrunk whenever the halves hold under 2 labels per system on average
  wconc      three-way with the weighted concordance in place of Kendall tau (shipped until session 16)
  smooth-wconc  wconc with shrunk's trend a smooth curve in the judge's means (fay_herriot rule
             "smooth") in the check and in the estimate it recommends (what ships)
  four-way   the best-scoring of shrunk (line), the labels' means, corrected and the curve
  judge-check  smooth-wconc, then the judge's own ranking if it scores higher still on the halves
             (it does far too often: it is fitted on no half, the others on half the labels)
Columns `shrunk` and `smooth`: the line's and the curve's estimate alone, without a check.
The gap of a rule: its Kendall tau with the all-human ranking minus max(judge-only tau, human-only
tau), per judge, averaged over the set's judges; the goal: gap >= -0.03 at every budget.
"""

from __future__ import annotations

import warnings

import numpy as np

from bench.ablation_shrink import cells, parse_args
from bench.bench_evaluate import GOAL_MARGIN, kendall, truth_of
from judgelab.evaluate import draw, judge_only
from judgelab.evaluate.calibrate import within_slope
from judgelab.evaluate.choose import SPLITS, kendall_tau_b
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.shrinkage import fay_herriot

CANDIDATES = ("shrunk", "labels", "corrected", "smooth", "judge")  # scored on the halves
RULES = ("current", "to-human", "three-way", "variance", "guard-2", "wconc", "smooth-wconc", "four-way",
         "judge-check")


def _concordance(a: np.ndarray, b: np.ndarray) -> float:
    """sum over pairs of sign(a_s - a_t) (b_s - b_t), over sum |b_s - b_t|: in [-1, 1]."""
    upper = np.triu_indices(len(a), 1)
    x, y = np.sign(a[:, None] - a[None, :])[upper], (b[:, None] - b[None, :])[upper]
    total = float(np.abs(y).sum())
    return float(x @ y) / total if total > 0 else float("nan")


def split_scores(labelled, design, judge_means, method: str, seed: int) -> dict | None:
    """choose_ranking's halvings (same rng), each half scoring every candidate by tau and by concordance."""
    mask = design.labelled[:, None] & labelled.present & np.isfinite(labelled.human)
    units, systems = np.nonzero(mask)
    values = labelled.human[units, systems]
    judged = labelled.judge[units, systems]
    weights = 1.0 / design.probability[units]
    counts = np.bincount(systems, minlength=len(labelled.systems))
    usable = (counts >= 2) & np.isfinite(judge_means)
    if usable.sum() < 3:
        return None
    means = np.bincount(systems, values, minlength=len(counts)) / np.maximum(counts, 1)
    residual = values - means[systems]
    df = int(counts[usable].sum() - usable.sum())
    pooled = float(residual[usable[systems]] @ residual[usable[systems]]) / max(df, 1)
    if not pooled > 0:
        return None
    everywhere = np.nanmean(np.where(labelled.present, labelled.judge, np.nan), axis=0)
    rng = np.random.default_rng(seed)
    taus, concordances = [], []
    for _ in range(SPLITS):
        first = np.zeros(len(values), dtype=bool)
        for system in np.flatnonzero(usable):
            rows = np.flatnonzero(systems == system)
            first[rng.choice(rows, len(rows) // 2, replace=False)] = True
        for fit in (first, ~first):
            rows, held = fit & usable[systems], ~fit & usable[systems]
            n = np.bincount(systems[rows], minlength=len(usable)).astype(float)[usable]
            half = np.bincount(systems[rows], values[rows], minlength=len(usable))[usable] / n
            other = (np.bincount(systems[held], values[held], minlength=len(usable))[usable]
                     / np.bincount(systems[held], minlength=len(usable))[usable])
            pulled = fay_herriot(half, pooled / n, judge_means[usable], interval=False).value
            slope = (within_slope(judged[rows], values[rows], weights[rows], systems[rows])
                     if method == "linear" else 1.0)
            error = np.bincount(systems[rows], values[rows] - slope * judged[rows], minlength=len(usable))[usable] / n
            fixed = slope * everywhere[usable] + error
            curved = fay_herriot(half, pooled / n, judge_means[usable], rule="smooth", interval=False).value
            estimates = (pulled, half, fixed, curved, judge_means[usable])
            taus.append([kendall_tau_b(e, other) for e in estimates])
            concordances.append([_concordance(e, other) for e in estimates])
    taus, concordances = np.array(taus, dtype=float), np.array(concordances, dtype=float)
    # as choose_ranking: each halving's two directions averaged, halvings with no finite score dropped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a halving neither way of which ranked: NaN, dropped below
        taus = np.nanmean(taus.reshape(SPLITS, 2, -1), axis=1)
        concordances = np.nanmean(concordances.reshape(SPLITS, 2, -1), axis=1)
    taus = taus[np.isfinite(taus[:, :2]).all(axis=1)]
    if len(taus) == 0:
        return None
    return {"tau": np.nanmean(taus, axis=0), "concordance": np.nanmean(concordances, axis=0),
            "per_half": counts[usable].mean() / 2}


def recommend(rule: str, check: dict | None, variance: dict[str, float]) -> str:
    if check is None:
        return "smooth" if rule in ("smooth-wconc", "judge-check") else "shrunk"
    score = check["concordance" if rule in ("wconc", "smooth-wconc", "four-way", "judge-check") else "tau"]
    shrink, labels, fixed, curved, judged = score
    if rule == "four-way":  # the best-scoring of the four; ties go to the earlier
        return ("shrunk", "human", "corrected", "smooth")[int(np.argmax(score[:4]))]
    if rule == "judge-check":  # smooth-wconc, then the judge's own ranking if it scores higher still
        chosen = recommend("smooth-wconc", check, variance)
        return "judge" if judged > {"smooth": curved, "corrected": fixed, "human": labels}[chosen] else chosen
    if rule == "smooth-wconc":  # wconc with the smooth trend as the shrunk candidate
        if curved >= labels:
            return "smooth"
        return "corrected" if fixed > labels else "human"
    if rule == "guard-2" and check["per_half"] < 2:
        return "shrunk"
    if shrink >= labels:
        return "shrunk"
    if rule == "current":
        return "corrected"
    if rule == "to-human":
        return "human"
    if rule == "variance":
        return "corrected" if variance["corrected"] < variance["human"] else "human"
    return "corrected" if fixed > labels else "human"  # three-way, guard-2, wconc


def one_judge(problem, fraction: float, draws: int) -> dict[str, float]:
    truth = truth_of(problem)
    judge = judge_only(problem, n_resamples=0).value
    taus = {name: [] for name in ("human", "corrected", "shrunk", "smooth", *RULES)}
    shares = {rule: [] for rule in RULES}
    for k in range(draws):
        design = draw(problem, fraction, seed=k).design
        labelled = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
        human = human_only(labelled, design, target="items")
        fixed = corrected(labelled, design, calibration="auto", target="items", seed=k)
        pulled = fay_herriot(fixed.value, np.diag(fixed.cov), judge, interval=False).value
        curved = fay_herriot(fixed.value, np.diag(fixed.cov), judge, rule="smooth", interval=False).value
        rankings = {"human": human.value, "corrected": fixed.value, "shrunk": pulled, "smooth": curved, "judge": judge}
        tau = {name: kendall(value, truth) for name, value in rankings.items()}
        check = split_scores(labelled, design, judge, fixed.info["calibration"], k)
        variance = {"human": float(np.nanmean(np.diag(human.cov))), "corrected": float(np.nanmean(np.diag(fixed.cov)))}
        for name in ("human", "corrected", "shrunk", "smooth"):
            taus[name].append(tau[name])
        for rule in RULES:
            chosen = recommend(rule, check, variance)
            taus[rule].append(tau[chosen])
            shares[rule].append(chosen)
    out = {name: float(np.nanmean(v)) for name, v in taus.items()}
    out["judge"] = kendall(judge, truth)
    out["shares"] = {rule: {e: float(np.mean([c == e for c in chosen]))
                            for e in ("shrunk", "corrected", "human", "smooth", "judge")}
                     for rule, chosen in shares.items()}
    return out


def main() -> None:
    args = parse_args(__doc__.split("\n")[0], draws=20)
    names = ("judge", "human", "corrected", "shrunk", "smooth", *RULES)
    print("| set | budget | " + " | ".join(f"tau {n}" for n in names) + " | " +
          " | ".join(f"gap {n}" for n in ("shrunk", "smooth", *RULES)) + " | share shrunk / corrected / human (three-way) |")
    print("|" + "---|" * (3 + len(names) + len(RULES) + 1))
    for spec, fraction, runs in cells(args, one_judge):
        best = np.array([max(r["judge"], r["human"]) for r in runs])
        taus = {n: np.mean([r[n] for r in runs]) for n in names}
        gaps = {n: float(np.mean(np.array([r[n] for r in runs]) - best)) for n in ("shrunk", "smooth", *RULES)}
        share = {e: np.mean([r["shares"]["three-way"][e] for r in runs]) for e in ("shrunk", "corrected", "human")}
        print(f"| {spec} | {fraction:.0%} | " + " | ".join(f"{taus[n]:.3f}" for n in names) + " | " +
              " | ".join(f"{gaps[n]:+.3f}" + ("" if gaps[n] >= -GOAL_MARGIN else "*") for n in ("shrunk", "smooth", *RULES))
              + " | " + " / ".join(f"{share[e]:.2f}" for e in share) + " |", flush=True)


if __name__ == "__main__":
    main()
