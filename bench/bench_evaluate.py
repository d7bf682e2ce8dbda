"""System evaluation with a few human labels: coverage, width and ranking of the three estimators.

    python -m bench.bench_evaluate                 # print the figures (500 draws per budget)
    python -m bench.bench_evaluate --write         # also replace this section of docs/benchmarks.md
    python -m bench.bench_evaluate --draws 50 --sets hanna:coherence   # a quick look
    python -m bench.bench_evaluate --sets hanna@each:coherence topical_chat@each:overall --draws 300 \
        --draws-per-judge 100 --write    # each published judge alone (the per-judge table)

For each data set the judge's verdicts and every human label are known. A draw labels a random
sample of the units (stratified by system for items; queries for TREC), exactly as `judgelab
sample` would, and estimates every system's mean human value three ways: the judge alone, the
labelled units alone, and prediction-powered (corrected). Over many draws we measure:

* coverage: how often the 95% interval holds the all-human value (the mean over every item of
  the system, or every query for a run); the estimators run with ``target="items"``, whose
  estimand that value is;
* width: the corrected interval's width relative to the human-only one at the same labels;
* ranking: Kendall tau between each estimator's system ranking and the all-human ranking.

Judges are published outputs (no model run): HANNA's five open LLMs x four prompts (mean rating),
UniEval on Topical-Chat, SF restaurants/hotels and QAGS (which name no systems: one overall mean),
TREMA's labels (Llama-3-8B four-prompts) as qrels for the 37 TREC DL 2019 runs.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import stats

from bench.common import describe_machine, log, write_doc_section
from judgelab.data import Judgment, load_items
from judgelab.evaluate import draw, from_items, judge_only
from judgelab.evaluate.choose import MIN_LABELS_PER_SYSTEM, choose_ranking
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.ir import score_runs
from judgelab.evaluate.problem import Problem, from_queries
from judgelab.evaluate.shrinkage import shrunk
from judgelab.metrics.ir import qrels_from_labels, read_runs

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SECTION = "## System evaluation with a few human labels (`bench/bench_evaluate.py`)"
BUDGETS = (0.05, 0.10, 0.20, 0.40)
DEFAULT_SETS = ("hanna:coherence", "hanna:engagement", "hanna:relevance", "hanna:complexity",
                "topical_chat:coherence", "topical_chat:overall", "sfres:naturalness", "sfhot:naturalness",
                "qags_cnndm:consistency", "qags_xsum:consistency")  # TREC runs: --trec (by labelled queries)


# -- data sets as problems with every human value known ----------------------------------------------
def _published(path: Path, dataset: str, aspect: str, judge: str | None = None) -> dict[str, float]:
    """Each item's published judge score, the mean over the file's judges (or the one named)."""
    scores = defaultdict(list)
    for line in path.open(encoding="utf-8"):
        row = json.loads(line)
        value = row["prediction"].get(aspect) if isinstance(row["prediction"], dict) else None
        if judge is not None and row.get("judge") != judge:
            continue
        if row.get("dataset") == dataset and isinstance(value, (int, float)):
            scores[row["item_id"]].append(float(value))
    return {k: float(np.mean(v)) for k, v in scores.items()}


def _reference(dataset: str) -> Path:
    return SHARED / "reference" / ("hanna_llm_ratings.jsonl" if dataset == "hanna" else "unieval_predictions.jsonl")


def judges_of(dataset: str) -> list[str]:
    """The published judges of a data set (HANNA: twenty raters, five LLMs x four prompts)."""
    names = {row.get("judge") for row in map(json.loads, _reference(dataset).open(encoding="utf-8"))
             if row.get("dataset") == dataset}
    return sorted(n for n in names if n)


def item_problem(dataset: str, aspect: str, judge_name: str | None = None) -> Problem:
    """Items of a data set with every human value; the judge: the mean of its published judges, or one."""
    items = load_items(SHARED / f"{dataset}.jsonl")
    judge = _published(_reference(dataset), dataset, aspect, judge_name)
    return from_items([i.id for i in items], [i.system_id for i in items], [i.group for i in items],
                      [judge.get(i.id, np.nan) for i in items], [i.human_score(aspect) for i in items])


def query_problem(judge_name: str, measure: str = "nDCG@10") -> Problem:
    items = load_items(SHARED / "trec_dl2019.jsonl")
    by_id = {item.id: item for item in items}
    labels = {}
    for line in (SHARED / "reference" / "trema_outputs.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if row["dataset"] == "trec_dl2019" and row["judge"] == judge_name:
            prediction = row["prediction"]
            labels[row["item_id"]] = prediction["label"] if isinstance(prediction, dict) else prediction
    judged = [(by_id[i].qid, by_id[i].docid, v) for i, v in labels.items() if v is not None]
    judge_qrels = qrels_from_labels(*zip(*judged, strict=True))
    human_qrels = qrels_from_labels([i.qid for i in items], [i.docid for i in items], [i.label for i in items])
    runs = read_runs(SHARED / "trec_dl2019_runs")
    queries = sorted({i.qid for i in items})
    judge = score_runs(runs, judge_qrels, queries, measure=measure)
    human = score_runs(runs, human_qrels, queries, measure=measure)
    return from_queries(queries, judge.runs, judge.values, human.values)


def problem_for(spec: str) -> Problem:
    dataset, _, what = spec.partition(":")
    return query_problem(what) if dataset == "trec_dl2019" else item_problem(dataset, what)


# -- the simulation -----------------------------------------------------------------------------------
def truth_of(problem: Problem) -> np.ndarray:
    return np.nanmean(np.where(problem.present, problem.human, np.nan), axis=0)


def within_system_spearman(problem: Problem) -> float:
    """Item-level Spearman of judge and human, after removing each system's mean rank (items), or over
    all (query, run) pairs for IR."""
    judge, human = problem.judge[problem.present], problem.human[problem.present]
    keep = np.isfinite(judge) & np.isfinite(human)
    return float(stats.spearmanr(judge[keep], human[keep]).statistic)


def kendall(a: np.ndarray, b: np.ndarray) -> float:
    keep = np.isfinite(a) & np.isfinite(b)
    return float(stats.kendalltau(a[keep], b[keep]).statistic) if keep.sum() > 1 else float("nan")


def simulate(problem: Problem, fraction: float, draws: int, calibrations=("isotonic",), *,
             variance: str = "pooled", skewness_correction: bool = True) -> dict[str, dict[str, float]]:
    truth = truth_of(problem)
    judge = judge_only(problem, n_resamples=1000)
    covered = (judge.ci[:, 0] <= truth) & (truth <= judge.ci[:, 1])
    results = {"judge": {"coverage": float(covered.mean()), "tau": kendall(judge.value, truth), "width": float(
        np.mean(judge.ci[:, 1] - judge.ci[:, 0]))}}
    acc: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for k in range(draws):
        drawn = draw(problem, fraction, seed=k)
        design = drawn.design
        labelled = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
        estimates = {"human": human_only(labelled, design, target="items", variance=variance,
                                         skewness_correction=skewness_correction)}
        for calibration in calibrations:
            estimates[f"corrected-{calibration}"] = corrected(labelled, design, calibration=calibration,
                                                              target="items", variance=variance, seed=k,
                                                              skewness_correction=skewness_correction)
        if problem.kind == "items" and len(problem.systems) >= 3:
            estimates["shrunk"] = shrunk(estimates[f"corrected-{calibrations[0]}"], judge.value)
            fixed = estimates[f"corrected-{calibrations[0]}"]
            choice = choose_ranking(labelled, design, judge.value, seed=k,  # what `evaluate` recommends
                                    calibration=fixed.info["calibration"])
            chosen = fixed if choice.estimator == "corrected" else estimates[choice.estimator]
            acc["recommended"]["tau"].append(kendall(chosen.value, truth))
            acc["recommended"]["shrunk_chosen"].append(float(choice.estimator == "shrunk"))
            acc["recommended"]["human_chosen"].append(float(choice.estimator == "human"))
            acc["recommended"]["provisional"].append(float(choice.provisional is not None))
        for name, est in estimates.items():
            ci = np.array(est.info["posterior_interval"], dtype=float) if "posterior_interval" in est.info else est.ci
            est = replace(est, ci=ci)  # shrunk: its posterior intervals, which are no per-system CIs
            given = np.isfinite(est.ci).all(axis=1)  # a declined interval (too few labels) is no miss: counted apart
            covered = (est.ci[:, 0] <= truth) & (truth <= est.ci[:, 1])
            acc[name]["coverage"].append(np.mean(covered[given]) if given.any() else np.nan)
            acc[name]["declined"].append(1 - given.mean())
            acc[name]["width"].append(np.mean((est.ci[:, 1] - est.ci[:, 0])[given]) if given.any() else np.nan)
            acc[name]["tau"].append(kendall(est.value, truth))
        acc["labels"]["n"].append(design.n_labelled)
    for name, values in acc.items():
        results[name] = {key: float(np.nanmean(v)) for key, v in values.items()}
    for name in results:
        if name.startswith("corrected") or name == "shrunk":
            results[name]["width_ratio"] = results[name]["width"] / results["human"]["width"]
    return results


def hanna_rater_spread(aspect: str) -> np.ndarray:
    """Per HANNA item, the standard deviation of the twenty published raters: the judge's uncertainty."""
    items = load_items(SHARED / "hanna.jsonl")
    scores = defaultdict(list)
    for line in (SHARED / "reference" / "hanna_llm_ratings.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        value = row["prediction"].get(aspect)
        if isinstance(value, (int, float)):
            scores[row["item_id"]].append(float(value))
    return np.array([np.std(scores[item.id]) for item in items])


def active_versus_random(aspect: str, fraction: float, draws: int) -> dict[str, dict[str, float]]:
    """Corrected estimates on HANNA when the labels follow the raters' disagreement (active) or not."""
    problem = item_problem("hanna", aspect)
    truth = truth_of(problem)
    spread = hanna_rater_spread(aspect)
    out = {}
    for name, uncertainty in (("random", None), ("active", spread)):
        covered, widths = [], []
        for k in range(draws):
            design = draw(problem, fraction, uncertainty=uncertainty, seed=k).design
            est = corrected(problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan)), design,
                            target="items", seed=k)
            covered.append(np.mean((est.ci[:, 0] <= truth) & (truth <= est.ci[:, 1])))
            widths.append(np.mean(est.ci[:, 1] - est.ci[:, 0]))
        out[name] = {"coverage": float(np.mean(covered)), "width": float(np.mean(widths))}
    return out


def timing(n_items: int = 100_000, n_systems: int = 50, seed: int = 0) -> dict[str, float]:
    """judge-only bootstrap (1,000 resamples of sources) and a full evaluate with 5% labels."""
    from judgelab.evaluate import evaluate
    from judgelab.evaluate.compare import pairwise

    rng = np.random.default_rng(seed)
    sources = n_items // n_systems
    systems = np.tile(np.arange(n_systems), sources).astype(str)
    groups = np.repeat(np.arange(sources), n_systems).astype(str)
    quality = rng.normal(size=n_items) + rng.normal(size=n_systems)[np.tile(np.arange(n_systems), sources)]
    human = np.clip(np.round(3 + quality), 1, 5)
    judge = 5 + 2 * quality + rng.normal(size=n_items)
    ids = [f"i{k}" for k in range(n_items)]
    problem = from_items(ids, systems, groups, judge, human)
    started = time.perf_counter()
    estimates = judge_only(problem, n_resamples=1000)
    pairwise(estimates)
    bootstrap_s = time.perf_counter() - started
    from judgelab.data import Item

    items = [Item(id=i, system_id=s, group_id=g, output="x", scores={"q": float(h)})
             for i, s, g, h in zip(ids, systems, groups, human, strict=True)]
    judgments = [Judgment(item_id=i, score=float(v)) for i, v in zip(ids, judge, strict=True)]
    labelled = draw(problem, 0.05, seed=seed).design.labelled
    started = time.perf_counter()
    evaluate(items, judgments, aspect="q", human_ids=[ids[k] for k in np.flatnonzero(labelled)])
    return {"bootstrap_s": bootstrap_s, "evaluate_s": time.perf_counter() - started}


# -- TREC runs: labelled queries, the minimum for intervals, the guided ranking ---------------------------
TREC_JUDGES = ("TREMA-baseline-3210/llama3-8b", "TREMA-4prompts/llama3-8b", "TREMA-4prompts/llama3.3-70b",
               "TREMA-4prompts/flan-t5-large", "TREMA-CoT/llama3-8b", "TREMA-CoT/flan-t5-large",
               "TREMA-sumdecompose/llama3-8b", "TREMA-sumdecompose/flan-t5-large", "TREMA-genquery/llama3-8b")
#: the judges the minimum and the guided ranking's level were chosen on; the other four are held out
TREC_TUNING = ("TREMA-baseline-3210/llama3-8b", "TREMA-4prompts/llama3.3-70b", "TREMA-CoT/llama3-8b",
               "TREMA-sumdecompose/flan-t5-large", "TREMA-genquery/llama3-8b")
QUERY_BUDGETS = (3, 4, 5, 6, 9, 12)  # labelled queries per draw
TREC_SECTION = "### TREC runs by labelled queries: the minimum for intervals, the guided ranking (`--trec`)"


def simulate_queries(problem: Problem, n_queries: int, draws: int, seed: int = 0) -> dict[str, float]:
    """Draws labelling ``n_queries`` random queries: coverage where an interval is given, the share declined,
    the plain t intervals' coverage (the rule switched off), width ratio, and each ranking's Kendall tau."""
    from judgelab.evaluate.guided import guided_ranking

    truth = truth_of(problem)
    judge = judge_only(problem, n_resamples=0)
    sums: dict[str, float] = defaultdict(float)
    for k in range(draws):
        design = draw(problem, n_queries, seed=seed + k).design
        labelled = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
        found = {}
        for rule, minimum in (("", None), ("t-", 0)):
            extra = {} if minimum is None else {"min_queries": minimum}
            found[rule + "human"] = human_only(labelled, design, target="items", **extra)
            found[rule + "corrected"] = corrected(labelled, design, target="items", seed=k, **extra)
        for name, est in found.items():
            given = np.isfinite(est.ci[:, 0])
            sums[f"{name}:hits"] += float(((est.ci[:, 0] <= truth) & (truth <= est.ci[:, 1]) & given).sum())
            sums[f"{name}:given"] += float(given.sum())
            sums[f"{name}:valued"] += float(np.isfinite(est.value).sum())
        both = np.isfinite(found["t-human"].ci[:, 0]) & np.isfinite(found["t-corrected"].ci[:, 0])
        if both.any():  # a draw of one query twice (resampled populations) has no spread anywhere
            width = {name: np.ptp(found[f"t-{name}"].ci[both], axis=1).mean() for name in ("human", "corrected")}
            sums["width_ratio"] += width["corrected"] / width["human"]
            sums["width_draws"] += 1
        guided = guided_ranking(found["corrected"], judge)
        for name, value in (("human", found["human"].value), ("corrected", found["corrected"].value),
                            ("guided", guided.value)):
            sums[f"tau:{name}"] += kendall(value, truth)
    out = {f"tau:{name}": sums[f"tau:{name}"] / draws for name in ("human", "corrected", "guided")}
    out["tau:judge"] = kendall(judge.value, truth)
    out["width_ratio"] = sums["width_ratio"] / max(sums["width_draws"], 1)
    for name in ("human", "corrected", "t-human", "t-corrected"):
        given = sums[f"{name}:given"]
        out[f"coverage:{name}"] = sums[f"{name}:hits"] / given if given else float("nan")
        out[f"declined:{name}"] = 1 - given / sums[f"{name}:valued"]
    return out


def resampled_queries(problem: Problem, size: int, seed: int, tail: int = 0) -> Problem:
    """Another query population like this one: ``size`` queries drawn with replacement; ``tail`` > 0 draws
    ``size - n`` of them from the ``tail`` queries farthest from the runs' typical values (human and judge
    error), a population with heavier tails than the one at hand (the t intervals' weak spot)."""
    rng = np.random.default_rng(seed)
    n = problem.n_units
    if tail:
        error = problem.human - problem.judge
        far = (np.abs(problem.human - np.nanmean(problem.human, axis=0)).mean(axis=1)
               + np.abs(error - np.nanmean(error, axis=0)).mean(axis=1))
        rows = np.concatenate([np.arange(n), rng.choice(np.argsort(-far)[:tail], size - n)])
    else:
        rows = rng.integers(0, n, size)
    return from_queries([f"q{k}" for k in range(size)], problem.systems, problem.judge[rows], problem.human[rows])


def trec_main(args) -> None:
    """Per TREMA judge and budget of labelled queries; then the plain t interval on other query populations."""
    lines, stress = [], []
    started_all = time.perf_counter()
    for name in args.trec_judges:
        problem = query_problem(name)
        args.n_queries = problem.n_units
        for n_queries in QUERY_BUDGETS:
            started = time.perf_counter()
            result = simulate_queries(problem, n_queries, args.draws)
            log(f"{name} {n_queries} queries: {time.perf_counter() - started:.1f}s")
            lines.append((name, n_queries, result))
            print(_trec_row(lines[-1]), flush=True)
        if name in TREC_TUNING and args.populations:
            for kind, tail in (("bootstrap", 0), ("heavy tail", 8)):
                for n_queries in QUERY_BUDGETS:
                    results = [simulate_queries(resampled_queries(problem, 43, seed, tail), n_queries,
                                                args.population_draws, seed=1000 * seed)
                               for seed in range(args.populations)]
                    row = (name, kind, n_queries, *(min(r[f"coverage:t-{e}"] for r in results) for e in
                                                   ("human", "corrected")),
                           *(float(np.mean([r[f"coverage:t-{e}"] for r in results])) for e in ("human", "corrected")))
                    stress.append(row)
                    print(row, flush=True)
    summary = _trec_summary(lines)
    print("\n".join(summary))
    args.elapsed_min = (time.perf_counter() - started_all) / 60
    if args.write:
        write_doc_section("bench_evaluate_trec", _trec_doc(lines, stress, summary, args), heading=TREC_SECTION)


def _number(value: float, digits: int = 3) -> str:
    return "-" if not np.isfinite(value) else f"{value:.{digits}f}"


def _trec_row(line) -> str:
    name, n_queries, r = line
    held = "" if name in TREC_TUNING else " (held out)"
    cells = [f"{name}{held}", str(n_queries)]
    cells += [_number(r[f"coverage:{e}"]) for e in ("human", "corrected")]
    cells += [_number(r[f"declined:{e}"], 2) for e in ("human", "corrected")]
    cells += [_number(r[f"coverage:t-{e}"]) for e in ("human", "corrected")]
    cells += [_number(r["width_ratio"], 2)]
    cells += [_number(r[f"tau:{e}"], 2) for e in ("judge", "human", "corrected", "guided")]
    return "| " + " | ".join(cells) + " |"


def _trec_summary(lines) -> list[str]:
    """Per budget and judge group: mean tau of each ranking, and the goal: guided >= mean(max(judge, human)) - 0.03."""
    out = []
    for group, members in (("tuning", TREC_TUNING), ("held out", tuple(j for j in TREC_JUDGES if j not in TREC_TUNING)),
                           ("all nine", TREC_JUDGES)):
        for n_queries in QUERY_BUDGETS:
            rows = [r for name, n, r in lines if n == n_queries and name in members]
            if not rows:
                continue
            tau = {e: float(np.mean([r[f"tau:{e}"] for r in rows])) for e in ("judge", "human", "corrected", "guided")}
            best = float(np.mean([max(r["tau:judge"], r["tau:human"]) for r in rows]))
            out.append(f"| {group} ({len(rows)}) | {n_queries} | {tau['judge']:.3f} | {tau['human']:.3f} | "
                       f"{tau['corrected']:.3f} | {tau['guided']:.3f} | {best:.3f} | {tau['guided'] - best:+.3f} |")
    return out


def _trec_doc(lines, stress, summary, args) -> str:
    head = ["judge (TREMA label set)", "labelled queries", "coverage human", "coverage corrected",
            "declined human", "declined corrected", "t coverage human (no rule)", "t coverage corrected (no rule)",
            "width corrected / human", "tau judge", "tau human", "tau corrected", "tau guided"]
    out = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_evaluate --trec --draws {args.draws} "
           f"--populations {args.populations} --population-draws {args.population_draws}"
           f"{' --write' if args.write else ''}`; "
           f"{args.draws} draws per budget, each labelling that many random queries of the "
           f"{args.n_queries} queries of the shared data (37 runs, nDCG@10, `target=\"items\"`, 95% intervals). "
           "Coverage counts the intervals given; 'declined' is the share of runs given a value without an interval "
           "(below the minimum of labelled queries, or all labelled values equal); 't coverage (no rule)' is the "
           "same t interval with the minimum switched off (`min_queries=0`). On these 30 queries it holds at every "
           "budget; the minimum of 9 queries comes from an outside check with this simulation on all 43 DL 2019 "
           "queries (human-only 0.882 at 3 queries and 0.919 at 5, corrected 0.866-0.923 at 3 and 0.875-0.945 at "
           "5, 0.93 or more only from 9) and from the heavy-tailed query populations below (mean coverage under "
           "0.93 at 3 and 6 queries for some judges, at least 0.948 at 9). "
           f"Rules chosen on {', '.join(TREC_TUNING)}; the other four judges are held out. "
           f"This run took {args.elapsed_min:.1f} min. On other data (e.g. all 43 DL 2019 queries): the same "
           "file names under `../shared/benchmarks` (trec_dl2019.jsonl, trec_dl2019_runs/, "
           "reference/trema_outputs.jsonl), then `python -m bench.bench_evaluate --trec --draws 300 --populations 0` "
           "(no resampled populations: about half the time).", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += [_trec_row(line) for line in lines]
    out += ["", "Kendall tau of each ranking with the all-human ranking, mean over judges; the goal for the guided "
            "ranking: at least the mean over judges of max(tau judge, tau human) - 0.03:", "",
            "| judges | labelled queries | judge | human | corrected | guided | mean max(judge, human) | "
            "guided - that |", "|---|---|---|---|---|---|---|---|"]
    out += summary
    if stress:
        out += ["", f"The plain t interval (no minimum) on other query populations of 43 queries built from the "
                f"tuning judges' data ({args.populations} populations x {args.population_draws} draws each; 'worst' is the "
                "lowest population, whose Monte Carlo error is about +-0.02): "
                "'bootstrap' resamples the queries, 'heavy tail' adds 13 draws from the 8 queries farthest from the "
                "runs' typical values:", "",
                "| judge | population | labelled queries | worst t coverage human | worst t coverage corrected | "
                "mean human | mean corrected |", "|---|---|---|---|---|---|---|"]
        out += [f"| {name} | {kind} | {n} | {a:.3f} | {b:.3f} | {c:.3f} | {d:.3f} |"
                for name, kind, n, a, b, c, d in stress]
    return "\n".join(out)


# -- each published judge alone: does the recommended ranking keep up with the better of judge and human? --
JUDGES_SECTION = "## System ranking with each judge alone (`bench/bench_evaluate.py`, per-judge sets)"
GOAL_MARGIN = 0.03  # the recommended ranking may trail max(judge-only, human-only) by this, on average


def judge_set(spec: str) -> tuple[str, str, list[str]]:
    """``dataset@judge:aspect`` -> (dataset, aspect, judges); judge ``each``: every published judge of the set."""
    head, _, aspect = spec.partition(":")
    dataset, _, judge = head.partition("@")
    known = judges_of(dataset)
    judges = known if judge == "each" else judge.split(",")
    if not aspect or not judges or not set(judges) <= set(known):
        raise SystemExit(f"set {spec!r}: write dataset@judge:aspect with judge 'each' (every published judge) or "
                         f"one of {', '.join(known) or 'none: no published judge'}")
    return dataset, aspect, judges


def simulate_judges(spec: str, draws: int, calibration: str) -> list[dict]:
    """One row per budget: each estimator's coverage, width and tau averaged over the set's judges, and the
    recommended ranking's gap to the better of judge-only and human-only (mean and worst over judges)."""
    dataset, aspect, judges = judge_set(spec)
    problems = [item_problem(dataset, aspect, name) for name in judges]
    rows = []
    for fraction in BUDGETS:
        started = time.perf_counter()
        runs = [simulate(problem, fraction, draws, (calibration,)) for problem in problems]
        log(f"{spec} {fraction:.0%} ({len(judges)} judge(s)): {time.perf_counter() - started:.1f}s")
        gaps = np.array([r["recommended"]["tau"] - max(r["judge"]["tau"], r["human"]["tau"]) for r in runs])
        mean = {name: {key: float(np.mean([r[name][key] for r in runs])) for key in runs[0][name]}
                for name in ("judge", "human", f"corrected-{calibration}", "shrunk", "recommended", "labels")}
        rows.append({"spec": spec, "judges": len(judges), "systems": len(problems[0].systems),
                     "units": problems[0].n_units, "fraction": fraction, "mean": mean, "gap": float(gaps.mean()),
                     "worst": float(gaps.min()), "worst_judge": judges[int(gaps.argmin())],
                     "best": float(np.mean([max(r["judge"]["tau"], r["human"]["tau"]) for r in runs]))})
        print(_judges_row(rows[-1], calibration), flush=True)
    return rows


def _judges_row(row: dict, calibration: str) -> str:
    m, corrected_name = row["mean"], f"corrected-{calibration}"
    cells = [row["spec"], str(row["judges"]), str(row["systems"]), f"{row['fraction']:.0%}",
             f"{m['labels']['n']:.0f}", f"{m['human']['coverage']:.3f}", f"{m[corrected_name]['coverage']:.3f}",
             f"{m['shrunk']['coverage']:.3f}", f"{m[corrected_name]['width_ratio']:.2f}",
             f"{m['shrunk']['width_ratio']:.2f}", f"{m['judge']['tau']:.2f}", f"{m['human']['tau']:.2f}",
             f"{m[corrected_name]['tau']:.2f}", f"{m['shrunk']['tau']:.2f}", f"{m['recommended']['tau']:.2f}",
             f"{m['recommended']['shrunk_chosen']:.2f}", f"{m['recommended']['human_chosen']:.2f}", f"{row['gap']:+.3f}",
             f"{row['worst']:+.3f}" + (f" ({row['worst_judge']})" if row["judges"] > 1 else ""),
             f"{m['recommended']['provisional']:.2f}", "yes" if row["gap"] >= -GOAL_MARGIN else "**no**"]
    return "| " + " | ".join(cells) + " |"


def _judges_doc(rows: list[dict], calibration: str, args) -> str:
    head = ["set (dataset@judges:aspect)", "judges", "systems", "budget", "labels", "coverage human",
            f"coverage corr. {calibration}", "coverage shrunk", f"width corr. {calibration} / human",
            "width shrunk / human", "tau judge", "tau human", f"tau corr. {calibration}", "tau shrunk", "tau recommended",
            "share shrunk recommended", "share human recommended", "gap: recommended - max(judge, human), mean over judges", "worst judge's gap",
            "share provisional", f"goal (gap >= -{GOAL_MARGIN})"]
    sets = " ".join(dict.fromkeys(row["spec"] for row in rows))
    out = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_evaluate --sets {sets} "
           f"--draws {args.draws} --draws-per-judge {args.draws_per_judge} --calibrations {calibration} --write`. "
           f"Each published judge alone (HANNA: the twenty raters, five LLMs x four prompts; Topical-Chat: UniEval); "
           f"{args.draws_per_judge} label draws per judge and budget for sets of several judges, {args.draws} for "
           "one judge; 95% intervals, `target=\"items\"`; every figure is the mean over the set's judges. "
           "`recommended`: the ranking `evaluate` recommends, shrunk, corrected or human-only as the split-half check on "
           "the labels chooses (src/judgelab/evaluate/choose.py); `gap`: its Kendall tau minus the better of the "
           "judge-only and human-only ones, per judge, then averaged; `provisional`: the share of draws whose "
           f"recommended ranking `evaluate` flags as provisional (under {MIN_LABELS_PER_SYSTEM} labels per system).", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(out + [_judges_row(row, calibration) for row in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="*", default=list(DEFAULT_SETS))
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--draws-per-judge", type=int, default=None,
                        help="draws per judge for sets of several judges (dataset@each:aspect); default --draws")
    parser.add_argument("--per-judge", action="store_true",
                        help="each published judge alone: dataset:aspect sets become dataset@each:aspect")
    parser.add_argument("--calibrations", default="auto,identity,linear")
    parser.add_argument("--variance", default="pooled")
    parser.add_argument("--no-skewness-correction", action="store_true",
                        help="plain t intervals (the estimators' skewness_correction=False), to compare")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--trec", action="store_true",
                        help="only the TREC runs by labelled queries, one set per TREMA judge (docs/benchmarks.md)")
    parser.add_argument("--trec-judges", nargs="*", default=list(TREC_JUDGES))
    parser.add_argument("--populations", type=int, default=10,
                        help="--trec: resampled query populations per tuning judge (0: none)")
    parser.add_argument("--population-draws", type=int, default=100, help="--trec: draws in each population")
    args = parser.parse_args()
    if args.trec:
        return trec_main(args)
    calibrations = tuple(args.calibrations.split(","))
    args.draws_per_judge = args.draws_per_judge or args.draws
    if args.per_judge:
        args.sets = [s if "@" in s else s.replace(":", "@each:", 1) for s in args.sets if s.partition(":")[0] in (
            "hanna", "topical_chat") or "@" in s]
    judged = [row for spec in args.sets if "@" in spec for row in simulate_judges(
        spec, args.draws_per_judge if len(judge_set(spec)[2]) > 1 else args.draws, calibrations[0])]
    if judged and args.write:
        write_doc_section("bench_evaluate_judges", _judges_doc(judged, calibrations[0], args), heading=JUDGES_SECTION)
    lines = []
    for spec in [s for s in args.sets if "@" not in s]:
        problem = problem_for(spec)
        rho = within_system_spearman(problem)
        for fraction in BUDGETS:
            started = time.perf_counter()
            result = simulate(problem, fraction, args.draws, calibrations, variance=args.variance,
                              skewness_correction=not args.no_skewness_correction)
            log(f"{spec} {fraction:.0%}: {time.perf_counter() - started:.1f}s")
            lines.append((spec, len(problem.systems), problem.n_units, rho, fraction, result))
            print(_row(lines[-1], calibrations), flush=True)
    if not lines:
        return
    active = {aspect: active_versus_random(aspect, 0.1, args.draws) for aspect in ("coherence", "engagement")}
    print(active)
    times = timing()
    print(times)
    if args.write:
        write_doc_section("bench_evaluate", _doc(lines, calibrations, times, active, args), heading=SECTION)


def _row(line, calibrations) -> str:
    spec, systems, units, rho, fraction, r = line
    cells = [spec, str(systems), str(units), f"{rho:.2f}", f"{fraction:.0%}", f"{r['labels']['n']:.0f}",
             f"{r['judge']['coverage']:.2f}", f"{r['human']['coverage']:.3f}"]
    cells += [f"{r[f'corrected-{c}']['coverage']:.3f}" for c in calibrations]
    cells += [f"{r[f'corrected-{c}']['width_ratio']:.2f}" for c in calibrations]
    shrink = r.get("shrunk", {})
    cells += [f"{shrink['coverage']:.3f}" if shrink else "n/a"]
    cells += [f"{r['judge']['tau']:.2f}", f"{r['human']['tau']:.2f}"]
    cells += [f"{r[f'corrected-{c}']['tau']:.2f}" for c in calibrations]
    cells += [f"{shrink['tau']:.2f}" if shrink else "n/a"]
    return "| " + " | ".join(cells) + " |"


def _doc(lines, calibrations, times, active, args) -> str:
    names = ", ".join(calibrations)
    head = ["set : judge", "systems", "units", "judge-human Spearman", "budget", "labels", "coverage judge",
            "coverage human"] + [f"coverage corr. {c}" for c in calibrations] + [
        f"width corr. {c} / human" for c in calibrations] + ["coverage shrunk", "tau judge", "tau human"] + [
        f"tau corr. {c}" for c in calibrations] + ["tau shrunk"]
    out = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_evaluate --draws {args.draws} "
           f"--calibrations {','.join(calibrations)}{' --no-skewness-correction' if args.no_skewness_correction else ''}"
           f"{' --write' if args.write else ''}`; "
           f"{args.draws} draws per budget, 95% intervals, `target=\"items\"`, `variance=\"{args.variance}\"`, "
           f"{'plain t intervals' if args.no_skewness_correction else 't intervals with the skewness correction'}; "
           f"corrected with the calibrations {names}.", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += [_row(line, calibrations) for line in lines]
    out += ["", "Active sampling (HANNA, 10% of the items, the twenty raters' disagreement as the uncertainty, "
            "half of each probability uniform), corrected estimator:", "",
            "| aspect | coverage random | coverage active | width active / random |", "|---|---|---|---|"]
    out += [f"| {aspect} | {r['random']['coverage']:.3f} | {r['active']['coverage']:.3f} | "
            f"{r['active']['width'] / r['random']['width']:.2f} |" for aspect, r in active.items()]
    out += ["", f"Speed: judge-only estimates with 1,000 bootstrap resamples of sources plus all pairwise tests, "
            f"100,000 judged items in 50 systems: {times['bootstrap_s']:.2f} s; a whole `evaluate` (three "
            f"estimators, 5% labels, pairs, ranks) on them: {times['evaluate_s']:.2f} s."]
    return "\n".join(out)


if __name__ == "__main__":
    main()
