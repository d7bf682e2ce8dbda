"""Style-controlled Bradley-Terry and Davidson's tie model: coverage on simulations, and how Arena-Hard's ranking moves.

    .venv/bin/python -m bench.bench_style --arena-hard /work/data/arena-hard --write   # ~4 min: writes its section

The Arena-Hard folder is arena-bench-v1 as the repository's commit 4a705dd (2023-12-14) holds it, outside this one:
    git clone https://github.com/lmarena/arena-hard-auto && mkdir -p /work/data/arena-hard
    git -C arena-hard-auto archive 4a705dd data/arena-bench-v1 | tar -x --strip-components=2 -C /work/data/arena-hard
    .venv/bin/python -m bench.bench_style                                              # the simulations, printed

(a) Simulation with known strengths and a known style effect: 8 systems, 4,000 comparisons between random pairs
each draw, two standardised style covariates; the humans prefer ``a`` with probability ``sigmoid(beta_a - beta_b
+ 0.4 z_length + 0 z_bold)``, the judge with ``sigmoid(beta'_a - beta'_b + 1.0 z_length + 0.3 z_bold)`` (its
strengths ``beta'`` off by N(0, 0.3) per system, fixed over draws) and agrees with the humans' draw 80% of the
time beyond what the probabilities share (a common uniform); 400 comparisons labelled, drawn uniformly. Per
system, the share of draws whose 95% style-controlled interval holds the true ``beta`` (centred), for the
corrected and the human-only estimates; the length coefficient's mean estimate and coverage. Davidson: verdicts
drawn from Davidson's model (nu 0.8), the coverage of nu's and the strengths' intervals.

(a2) The same with a question effect: the 4,000 comparisons spread over 50 questions, and each question draws
for each system a standard normal ``w``; a comparison's shared uniform is ``Phi(sqrt(0.5) (w_a - w_b) / sqrt(2) +
sqrt(0.5) e)`` (a system that does well on a question wins its comparisons there together; each outcome alone
keeps its probability, so the model and the true strengths are unchanged). Coverage of the corrected and
human-only style-controlled intervals, clustered by question and as if the comparisons were independent.

(b) Real data: Arena-Hard-Auto's first benchmark (arena-bench-v1 in lmarena/arena-hard-auto's git history: 300
questions, 16 systems' answers, each graded 1-10 by GPT-4 against a reference). Its judgments are single grades,
not pairwise verdicts: every two systems' answers to a question make one comparison, won by the higher grade
(equal grades: a tie), with the shown order drawn at random. Style covariates from the two answers' texts;
plain and style-controlled Bradley-Terry on the judge's verdicts, the Kendall tau between the two rankings, and
Davidson's tie parameter. Each question makes 120 comparisons: intervals as if they were independent, clustered
by question, and bootstrapped over the questions; simultaneous rank sets from each. There are no human verdicts on these comparisons, and the shared Chatbot Arena file
(human and judge verdicts) has no response texts, so the corrected style-controlled estimate is measured on
the simulation only.
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import combinations
from pathlib import Path

import numpy as np
from scipy import stats

from bench.common import command_line, describe_machine, table_head, table_row, write_doc_section
from judgelab.evaluate.preferences import comparisons, estimate
from judgelab.evaluate.rank_sets import rank_sets
from judgelab.evaluate.style import davidson, style_covariates, style_estimate

SECTION = "## Style control and ties (`bench/bench_style.py`)"
K, N, LABELLED = 8, 4000, 400
HUMAN_STYLE = np.array([0.4, 0.0])
JUDGE_STYLE = np.array([1.0, 0.3])
FEATURES = ("length", "bold")
NU = 0.8
QUESTIONS, RHO = 50, 0.5  # the question effect: 80 comparisons a question (Arena-like), outcomes' copula correlation


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def simulate(rng: np.random.Generator, beta: np.ndarray, beta_judge: np.ndarray, rho: float = 0.0):
    """(comparisons, covariates, questions) of one draw; systems named s0..s7 in order of the true strengths.
    ``rho`` > 0: a question effect, the comparisons spread over QUESTIONS questions whose outcomes share a Gaussian
    copula per question and system (each outcome alone keeps its probability)."""
    a = rng.integers(0, K, N)
    b = (a + rng.integers(1, K, N)) % K
    z = rng.normal(size=(N, 2))
    q = None
    if rho > 0:  # (without, the draws stay those of the independent simulation)
        q = rng.integers(0, QUESTIONS, N)
        w = rng.normal(size=(QUESTIONS, K))
        u = stats.norm.cdf(np.sqrt(rho) * (w[q, a] - w[q, b]) / np.sqrt(2) + np.sqrt(1 - rho) * rng.normal(size=N))
    else:
        u = rng.random(N)
    human = (u < _sigmoid(beta[a] - beta[b] + z @ HUMAN_STYLE)).astype(float)
    shared = np.where(rng.random(N) < 0.8, u, rng.random(N))
    judge = (shared < _sigmoid(beta_judge[a] - beta_judge[b] + z @ JUDGE_STYLE)).astype(float)
    labelled = np.zeros(N, dtype=bool)
    labelled[rng.choice(N, LABELLED, replace=False)] = True
    names = np.array([f"s{k}" for k in range(K)], dtype=object)
    return comparisons(names[a], names[b], judge, np.where(labelled, human, np.nan)), z, q


def simulation(draws: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    beta = np.linspace(-1, 1, K)
    beta -= beta.mean()
    beta_judge = beta + np.random.default_rng(99).normal(0, 0.3, K)
    hits = {name: np.zeros(K) for name in ("corrected", "human")}
    width = {name: [] for name in hits}
    coef = {name: [] for name in (*hits, "judge")}
    coef_hit = {name: 0 for name in coef}
    lam, taken = [], 0
    for _ in range(draws):
        data, z, _ = simulate(rng, beta, beta_judge)
        order = [data.systems.index(f"s{k}") for k in range(K)]
        for name in coef:
            fit = style_estimate(data, z, name, features=FEATURES)
            length = fit.coefficients["length"]
            coef[name].append(length["value"])
            coef_hit[name] += length["low"] <= HUMAN_STYLE[0] <= length["high"]
            if name in hits:
                ci = fit.strengths.ci[order]
                hits[name] += (ci[:, 0] <= beta) & (beta <= ci[:, 1])
                width[name].append(np.mean(ci[:, 1] - ci[:, 0]))
            if name == "corrected":
                lam.append(fit.judge_weight)
                taken += len(fit.strengths.info.get("labels_own_narrower") or ())
    return {"coverage": {n: h / draws for n, h in hits.items()}, "width": {n: float(np.mean(w)) for n, w in width.items()},
            "coef": {n: (float(np.mean(v)), float(np.std(v))) for n, v in coef.items()},
            "coef_coverage": {n: h / draws for n, h in coef_hit.items()}, "lambda": float(np.mean(lam)), "draws": draws,
            "labels_own": taken}


def clustered_simulation(draws: int, seed: int = 2) -> dict:
    """Per estimator, with and without clustering by question: each system's coverage and the mean width, under
    the question effect RHO."""
    rng = np.random.default_rng(seed)
    beta = np.linspace(-1, 1, K)
    beta -= beta.mean()
    beta_judge = beta + np.random.default_rng(99).normal(0, 0.3, K)
    keys = [(name, clustered) for name in ("corrected", "human") for clustered in (True, False)]
    hits, width = {key: np.zeros(K) for key in keys}, {key: [] for key in keys}
    taken = dict.fromkeys(keys, 0)
    for _ in range(draws):
        data, z, q = simulate(rng, beta, beta_judge, RHO)
        order = [data.systems.index(f"s{k}") for k in range(K)]
        for name, clustered in keys:
            fit = style_estimate(data, z, name, features=FEATURES, groups=q if clustered else None)
            ci = fit.strengths.ci[order]
            hits[name, clustered] += (ci[:, 0] <= beta) & (beta <= ci[:, 1])
            width[name, clustered].append(np.mean(ci[:, 1] - ci[:, 0]))
            taken[name, clustered] += len(fit.strengths.info.get("labels_own_narrower") or ())
    return {"coverage": {key: h / draws for key, h in hits.items()},
            "width": {key: float(np.mean(w)) for key, w in width.items()}, "draws": draws, "labels_own": taken}


def davidson_simulation(draws: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    beta = np.linspace(-1, 1, K)
    beta -= beta.mean()
    nu_hit, hits, nus = 0, np.zeros(K), []
    names = np.array([f"s{k}" for k in range(K)], dtype=object)
    for _ in range(draws):
        a = rng.integers(0, K, N)
        b = (a + rng.integers(1, K, N)) % K
        d = beta[a] - beta[b]
        total = np.exp(d / 2) + np.exp(-d / 2) + NU
        u = rng.random(N)
        win, tie = np.exp(d / 2) / total, NU / total
        verdict = np.where(u < win, 1.0, np.where(u < win + tie, 0.5, 0.0))
        data = comparisons(names[a], names[b], verdict)
        fit = davidson(data)
        order = [data.systems.index(f"s{k}") for k in range(K)]
        ci = fit.strengths.ci[order]
        hits += (ci[:, 0] <= beta) & (beta <= ci[:, 1])
        nu_hit += fit.tie["low"] <= NU <= fit.tie["high"]
        nus.append(fit.tie["nu"])
    return {"nu_coverage": nu_hit / draws, "coverage": hits / draws, "nu": (float(np.mean(nus)), float(np.std(nus)))}


# -- Arena-Hard v1 -----------------------------------------------------------------------------------------
def _rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def arena_hard(folder: Path, seed: int = 0):
    """(comparisons, first texts, second texts, each comparison's question) from arena-bench-v1's answers and
    grades."""
    answers: dict[str, dict[str, str]] = {}
    for path in sorted((folder / "model_answer").glob("*.jsonl")):
        for r in _rows(path):
            answers.setdefault(r["model_id"].split("/")[-1], {})[r["question_id"]] = r["choices"][0]["turns"][0]
    grades: dict[str, dict[str, float]] = {}
    for path in sorted((folder / "model_judgment").glob("*.jsonl")):
        for r in _rows(path):
            if isinstance(r.get("score"), (int, float)) and r["score"] >= 0:  # -1: the grader's parse failure
                grades.setdefault(r["model"].split("/")[-1], {})[r["question_id"]] = float(r["score"])
    systems = sorted(set(grades) & set(answers))
    rng = np.random.default_rng(seed)
    first, second, verdicts, texts_a, texts_b, questions = [], [], [], [], [], []
    for question in sorted({q for s in systems for q in grades[s]}):
        graded = [s for s in systems if question in grades[s] and question in answers[s]]
        for x, y in combinations(graded, 2):
            if rng.random() < 0.5:
                x, y = y, x
            gx, gy = grades[x][question], grades[y][question]
            first.append(x)
            second.append(y)
            verdicts.append(0.5 if gx == gy else float(gx > gy))
            texts_a.append(answers[x][question])
            texts_b.append(answers[y][question])
            questions.append(question)
    return comparisons(first, second, verdicts), texts_a, texts_b, np.asarray(questions)


def arena_section(folder: Path, resamples: int) -> list[str]:
    data, texts_a, texts_b, questions = arena_hard(folder)
    covariates = style_covariates(texts_a, texts_b)
    plain = estimate(data, "judge", estimand="bradley-terry")
    naive = style_estimate(data, covariates, "judge")
    styled = style_estimate(data, covariates, "judge", groups=questions)
    started = time.perf_counter()
    boot = style_estimate(data, covariates, "judge", groups=questions, intervals="bootstrap", n_resamples=resamples)
    boot_seconds = time.perf_counter() - started
    sets = {name: rank_sets(fit.strengths) for name, fit in (("naive", naive), ("clustered", styled),
                                                              ("bootstrap", boot))}
    ties = davidson(data, groups=questions)
    ties_styled = davidson(data, covariates=covariates, groups=questions)
    from scipy.stats import kendalltau

    tau = kendalltau(plain.value, styled.strengths.value).statistic
    rank_plain = np.argsort(np.argsort(-plain.value)) + 1
    rank_style = np.argsort(np.argsort(-styled.strengths.value)) + 1
    ties_share = float(np.mean(data.judge == 0.5))
    lines = [f"{data.n:,} comparisons between {len(data.systems)} systems ({ties_share:.0%} ties); style features "
             f"{', '.join(covariates.features)}" + (f" (left out, no variation: {', '.join(covariates.dropped)})"
                                                     if covariates.dropped else "") + ".", "",
             "Style coefficients (judge's verdicts; log-odds per standard deviation of the normalised difference, "
             f"95% intervals: sandwich as if the comparisons were independent, sandwich clustered by the "
             f"{len(set(questions))} questions, bootstrap over the questions ({resamples:,} resamples, "
             f"{boot_seconds:.0f} s), Davidson's clustered):", ""]
    lines += table_head(["feature", "ties half", "naive", "clustered", "bootstrap", "Davidson"])
    for f, c in styled.coefficients.items():
        d, n, b = ties_styled.coefficients[f], naive.coefficients[f], boot.coefficients[f]
        lines.append(table_row([f, f"{c['value']:+.3f}", f"[{n['low']:+.3f}, {n['high']:+.3f}]",
                                f"[{c['low']:+.3f}, {c['high']:+.3f}]", f"[{b['low']:+.3f}, {b['high']:+.3f}]",
                                f"{d['value']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"]))
    width = {name: float(np.mean(np.diff(fit.strengths.ci, axis=1))) for name, fit in
             (("naive", naive), ("clustered", styled), ("bootstrap", boot))}
    size = {name: float(np.mean(one.size)) for name, one in sets.items()}
    lines += ["", "Strengths' intervals, mean width: " + ", ".join(f"{name} {w:.3f}" for name, w in width.items())
              + "; simultaneous rank sets (max-t), mean size: " + ", ".join(f"{name} {v:.2f}" for name, v in size.items())
              + "."]
    lines += ["", f"Kendall tau, plain vs style-controlled ranking: {tau:.3f}. Davidson's nu {ties.tie['nu']:.3f} "
                  f"[{ties.tie['low']:.3f}, {ties.tie['high']:.3f}] (ties at equal strength "
                  f"{ties.tie['tie_share_at_equal_strength']:.0%}); Kendall tau, ties-half vs Davidson strengths: "
                  f"{kendalltau(plain.value, ties.strengths.value).statistic:.3f}.", ""]
    lines += table_head(["system", "plain BT", "rank", "style-controlled BT (clustered)", "rank (set, clustered)",
                         "rank set, naive", "moved", "Davidson"])
    clustered, independent = sets["clustered"], sets["naive"]
    for k in np.argsort(rank_style):
        ci = styled.strengths.ci[k]
        lines.append(table_row([data.systems[k], f"{plain.value[k]:+.2f}", rank_plain[k],
                                f"{styled.strengths.value[k]:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]",
                                f"{rank_style[k]} ({clustered.best[k]:.0f}-{clustered.worst[k]:.0f})",
                                f"{independent.best[k]:.0f}-{independent.worst[k]:.0f}",
                                f"{rank_plain[k] - rank_style[k]:+d}", f"{ties.strengths.value[k]:+.2f}"]))
    return lines


def simulation_section(draws: int) -> list[str]:
    sim, dav = simulation(draws), davidson_simulation(draws)
    lines = table_head(["estimate", "worst system's coverage", "mean coverage", "mean width",
                        "length coefficient (true 0.4): mean (sd)", "its coverage"])
    for name in ("corrected", "human"):
        cov = sim["coverage"][name]
        mean, sd = sim["coef"][name]
        lines.append(table_row([name, f"{cov.min():.3f}", f"{cov.mean():.3f}", f"{sim['width'][name]:.3f}",
                                f"{mean:.3f} ({sd:.3f})", f"{sim['coef_coverage'][name]:.3f}"]))
    mean, sd = sim["coef"]["judge"]
    lines.append(table_row(["judge", "-", "-", "-", f"{mean:.3f} ({sd:.3f})", f"{sim['coef_coverage']['judge']:.3f}"]))
    lines += ["", f"{sim['draws']} draws; mean tuned lambda {sim['lambda']:.2f}; {_taken(sim['labels_own'], sim['draws'])} "
                  "The judge's own length coefficient "
                  f"estimates its taste (1.0), not the humans'. Davidson (nu {NU}): nu {dav['nu'][0]:.3f} "
                  f"(sd {dav['nu'][1]:.3f}), its 95% interval covered {dav['nu_coverage']:.3f}; strengths covered "
                  f"{dav['coverage'].min():.3f}-{dav['coverage'].max():.3f} per system."]
    return lines


def clustered_section(draws: int) -> list[str]:
    sim = clustered_simulation(draws)
    lines = table_head(["estimate", "intervals", "worst system's coverage", "mean coverage", "mean width"])
    for (name, clustered), cov in sim["coverage"].items():
        lines.append(table_row([name, f"clustered by {QUESTIONS} questions" if clustered else "naive (independent)",
                                f"{cov.min():.3f}", f"{cov.mean():.3f}", f"{sim['width'][name, clustered]:.3f}"]))
    corrected = {clustered: sim["labels_own"]["corrected", clustered] for clustered in (True, False)}
    return [*lines, "", f"{sim['draws']} draws. Clustered: {_taken(corrected[True], sim['draws'])} Naive: "
                        f"{_taken(corrected[False], sim['draws'])}"]


def _taken(count: int, draws: int) -> str:
    """How often the corrected fit took a system's human-only strength (its own interval was wider)."""
    return (f"the corrected fit took the human-only strength for {count} of {K * draws:,} system-draws "
            f"({count / (K * draws):.1%}; its own interval came out wider there).")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arena-hard", type=Path, help="arena-bench-v1 extracted from lmarena/arena-hard-auto's "
                                                         "history (model_answer/, model_judgment/)")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--bootstrap", type=int, default=1000, help="resamples of Arena-Hard's questions")
    parser.add_argument("--write", action="store_true", help="with --arena-hard: write the section of "
                                                              "docs/benchmarks.md (else print only)")
    args = parser.parse_args(argv)
    parts = [f"`{command_line('bench.bench_style', argv)}` on {describe_machine()}.", "",
             __doc__.split("\n\n", 3)[3].strip(), "", "### (a) Simulation", "", *simulation_section(args.draws), "",
             "### (a2) Simulation with a question effect", "", *clustered_section(args.draws), ""]
    if args.arena_hard is not None:
        parts += ["### (b) Arena-Hard-Auto v1 (arena-bench-v1), GPT-4's grades as pairwise verdicts", "",
                  *arena_section(args.arena_hard, args.bootstrap), ""]
    body = "\n".join(parts)
    print(body)
    if args.write and args.arena_hard is not None:
        write_doc_section("bench_style", body, heading=SECTION)


if __name__ == "__main__":
    main()
