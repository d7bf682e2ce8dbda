"""Does each system's interval hold for that system? Per-system coverage of every estimator.

    python -m bench.bench_per_system --items --draws 300 --write      # HANNA's 20 raters, Topical-Chat's UniEval
    python -m bench.bench_per_system --trec --draws 300 --write       # 37 TREC DL 2019 runs, 9 TREMA judges
    python -m bench.bench_per_system --items --sets hanna:coherence --judges 2 --draws 50   # a quick look

A draw labels a stratified random sample of the units (items by system; queries for runs), as
``judgelab sample`` does, and every estimator gives each system an interval at 95%. Over the draws,
each system's coverage is how often its interval held its all-human value (``target="items"``:
the mean over exactly the data's units, the value the labels sample). The figure that matters is
the **worst single system's**: a user reads one system's interval.

Estimators: ``human`` and ``corrected`` as ``evaluate`` makes them now (``intervals="auto"``: a
guarded per-system t interval or a betting one, by the rule of src/judgelab/evaluate/intervals.py);
``population``: the same with the CLI's default ``target="population"`` (sources like these: wider,
and here checked against the items' value all the same);
``t pooled``: the t interval with one variance pooled over systems (the default before);
``t system``: the plain per-system t interval (no guard, no skewness correction), whose width is
the reference; ``shrunk``: its posterior intervals, which are not per-system confidence intervals.

Monte Carlo error: with 300 draws a system whose interval truly covers 0.95 shows under 0.93 with
probability 0.04, so among the 220 (judge, system) pairs of a HANNA cell about nine would, by chance
alone. Each row therefore also counts the pairs *significantly* under 0.95 (the binomial test's
one-sided p < 0.01) and gives the worst pair's upper 99% bound. Every (set, budget) group of cells
is written to a results file as it finishes (``--results``; rerun to resume, ``--fresh`` to start over).
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

from bench.bench_evaluate import SHARED, TREC_JUDGES, item_problem, judges_of, query_problem, truth_of
from bench.common import describe_machine, log, table_head, table_row, write_doc_section
from judgelab.evaluate import draw
from judgelab.evaluate.estimators import corrected, human_only, judge_only
from judgelab.evaluate.problem import Problem
from judgelab.evaluate.shrinkage import shrunk

SECTION = "## One interval per system: each system's coverage (`bench/bench_per_system.py`)"
BUDGETS = (0.05, 0.10, 0.20, 0.40)
QUERY_BUDGETS = (9, 12)
ITEM_SETS = tuple(f"hanna:{a}" for a in ("coherence", "relevance", "empathy", "surprise", "engagement",
                                          "complexity")) + tuple(
    f"topical_chat:{a}" for a in ("understandability", "naturalness", "coherence", "engagingness", "groundedness",
                                  "overall"))
ESTIMATORS = ("human", "corrected", "human population", "corrected population", "human t pooled", "corrected t pooled", "human t system", "corrected t system",
              "shrunk")
GOAL = 0.93
RESULTS = Path.home() / ".cache" / "judgelab" / "bench_per_system.jsonl"


def scale_of(dataset: str, aspect: str) -> tuple[float, float]:
    with (SHARED / f"{dataset}.jsonl").open(encoding="utf-8") as rows:
        low, high = json.loads(next(rows))["extra"]["aspect_scales"][aspect]
    return float(low), float(high)


def human_estimates(problem: Problem, design, seed: int) -> dict:
    """The label-only estimators on one draw (they do not depend on the judge)."""
    known = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
    plain = {"skewness_correction": False, "min_queries": 0}
    return {"human": human_only(known, design, target="items", seed=seed),
            "human population": human_only(known, design, seed=seed),  # the CLI's default target
            "human t pooled": human_only(known, design, target="items", variance="pooled", intervals="t", min_queries=0),
            "human t system": human_only(known, design, target="items", variance="system", intervals="t", **plain)}


def judge_estimates(problem: Problem, design, seed: int, judge_means: np.ndarray | None) -> dict:
    """The prediction-powered estimators (and shrunk) on one draw with one judge."""
    known = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
    pooled = corrected(known, design, target="items", variance="pooled", intervals="t", seed=seed, min_queries=0)
    out = {"corrected": corrected(known, design, target="items", seed=seed),
           "corrected population": corrected(known, design, seed=seed),
           "corrected t pooled": pooled,
           "corrected t system": corrected(known, design, target="items", variance="system", intervals="t",
                                           seed=seed, skewness_correction=False, min_queries=0)}
    if judge_means is not None:
        out["shrunk"] = shrunk(pooled, judge_means)
    return out


class Tally:
    """Per estimator and system: hits, intervals given, summed widths; per estimator the constructions used."""

    def __init__(self, size: int):
        self.hits = defaultdict(lambda: np.zeros(size))
        self.given = defaultdict(lambda: np.zeros(size))
        self.width = defaultdict(lambda: np.zeros(size))
        self.methods = defaultdict(int)

    def add(self, estimates: dict, truth: np.ndarray) -> None:
        for name, est in estimates.items():
            if "posterior_interval" in est.info:  # shrunk: its posterior intervals, which are no CIs
                est = replace(est, ci=np.array(est.info["posterior_interval"], dtype=float))
            ok = np.all(np.isfinite(est.ci), axis=1)
            self.hits[name] += ok & (est.ci[:, 0] <= truth + 1e-9) & (truth - 1e-9 <= est.ci[:, 1])
            self.given[name] += ok
            self.width[name] += np.where(ok, est.ci[:, 1] - est.ci[:, 0], 0.0)
            for method in est.info.get("per_system", ()):
                self.methods[f"{name}:{method}"] += 1

    def row(self, label: str, budget: float, draws: int, systems, labels: float) -> dict:
        return {"cell": label, "budget": budget, "draws": draws, "systems": list(systems), "labels": labels,
                "hits": {k: v.tolist() for k, v in self.hits.items()},
                "given": {k: v.tolist() for k, v in self.given.items()},
                "width": {k: v.tolist() for k, v in self.width.items()}, "methods": dict(self.methods)}


def labels_group(problems: dict[str, Problem], budget: float, draws: int) -> list[dict]:
    """The label-only estimators of one (set, budget), which no judge changes: one row, many draws."""
    first = next(iter(problems.values()))
    truth, tally, labels = truth_of(first), Tally(len(first.systems)), 0
    for k in range(draws):
        design = draw(first, budget, seed=k).design
        labels += design.n_labelled
        tally.add(human_estimates(first, design, k), truth)
    label = next(iter(problems)).partition("@")
    return [tally.row(f"{label[0]}@labels only:{label[2].rpartition(':')[2]}", budget, draws, first.systems,
                      labels / draws)]


def group(problems: dict[str, Problem], budget: float, draws: int) -> list[dict]:
    """One (set, budget) over its judges (``problems``: judge -> problem; the same units and labels):
    the same label draws for every judge, the label-only estimators computed once per draw."""
    first = next(iter(problems.values()))
    truth = truth_of(first)
    size = len(first.systems)
    means = {name: judge_only(p, n_resamples=0).value if p.kind == "items" and size >= 3 else None
             for name, p in problems.items()}
    human, tallies, labels = Tally(size), {name: Tally(size) for name in problems}, 0
    for k in range(draws):
        design = draw(first, budget, seed=k).design
        labels += design.n_labelled
        human.add(human_estimates(first, design, k), truth)
        for name, problem in problems.items():
            tallies[name].add(judge_estimates(problem, design, k, means[name]), truth)
    rows = []
    for name, tally in tallies.items():
        for field in ("hits", "given", "width"):
            getattr(tally, field).update(getattr(human, field))
        tally.methods.update(human.methods)
        rows.append(tally.row(name, budget, draws, first.systems, labels / draws))
    return rows


# -- the cells ------------------------------------------------------------------------------------------
def item_groups(sets: list[str], judges: int | None, only: list[str] | None = None):
    for spec in sets:
        dataset, aspect = spec.split(":")
        scale = scale_of(dataset, aspect)
        names = [n for n in judges_of(dataset) if not only or any(part in n for part in only)]
        problems = {f"{dataset}@{name}:{aspect}": Problem(**{**item_problem(dataset, aspect, name).__dict__,
                                                             "scale": scale})
                    for name in names[: judges or None]}
        for budget in BUDGETS:
            yield spec, budget, problems


def trec_groups(judges: list[str]):
    problems = {f"trec_dl2019@{name}": query_problem(name) for name in judges}
    for n in QUERY_BUDGETS:
        yield "trec_dl2019", n, problems


ARENA_SIZES = (200, 500, 1000, 2000)
ARENA_ESTIMATORS = ("human", "corrected", "human population", "corrected population", "human t (before)",
                    "corrected t (before)", "shrunk")


def arena_groups(judges: list[str], sizes: tuple[int, ...]):
    """Chatbot Arena's 18,833 comparisons with one judge's verdicts, per number of labelled comparisons."""
    from bench.bench_pairwise import JUDGES, arena_data
    from judgelab.data.labels import PREFERENCES
    from judgelab.evaluate.comparisons import comparisons

    _, a, b, human, verdicts = arena_data()
    human_pref = np.array([PREFERENCES[h] for h in human])
    for short in judges:
        judge_pref = np.array([PREFERENCES[v] for v in verdicts[short]])
        full = comparisons(a, b, judge_pref, human_pref)
        for n in sizes:
            # one group per judge: the results file keys finished groups by name, so the name carries the judge
            yield f"chatbot_arena@{JUDGES[short]}", n, {f"chatbot_arena@{JUDGES[short]}": full}


def arena_group(problems: dict, n: int, draws: int) -> list[dict]:
    """Per-system coverage of the win probability and the rank sets' simultaneous coverage, ``n`` labels a draw."""
    from judgelab.evaluate.preferences import estimate
    from judgelab.evaluate.rank_sets import rank_sets

    (label, full), = problems.items()
    truth = estimate(full, "human", target="items").value  # every comparison labelled
    truth_rank = np.argsort(np.argsort(-truth)) + 1.0
    judge = estimate(full, "judge")
    tally = Tally(len(full.systems))
    sets = defaultdict(lambda: {"covered": 0, "size": 0.0})
    rng = np.random.default_rng(0)
    labels = 0
    for k in range(draws):
        mask = np.zeros(full.n, dtype=bool)
        mask[rng.choice(full.n, n, replace=False)] = True
        data = replace(full, human=np.where(mask, full.human, np.nan))
        labels += n
        found = {"human": estimate(data, "human", target="items", seed=k),
                 "corrected": estimate(data, "corrected", target="items", seed=k),
                 "human population": estimate(data, "human", seed=k),
                 "corrected population": estimate(data, "corrected", seed=k),
                 "human t (before)": estimate(data, "human", target="items", system_intervals="t"),
                 "corrected t (before)": estimate(data, "corrected", target="items", system_intervals="t")}
        before = found["corrected t (before)"]
        found["shrunk"] = shrunk(replace(before, value=np.where(before.n_labelled >= 2, before.value, np.nan)),
                                 judge.value, rule="posterior")
        tally.add(found, truth)
        for name in ("human", "corrected", "human t (before)", "corrected t (before)"):
            ranked = rank_sets(found[name], "auto", seed=k, n_draws=2000)
            best = np.where(np.isfinite(ranked.best), ranked.best, 1)
            worst = np.where(np.isfinite(ranked.worst), ranked.worst, len(truth))
            sets[name]["covered"] += bool(np.all((best <= truth_rank) & (truth_rank <= worst)))
            sets[name]["size"] += float(np.mean(worst - best + 1))
    row = tally.row(label, n, draws, full.systems, labels / draws)
    row["sets"] = {name: {"simultaneous": v["covered"] / draws, "size": v["size"] / draws} for name, v in sets.items()}
    return [row]


def run(groups, draws: int, results: Path, fresh: bool) -> list[dict]:
    """Every group's rows, from the results file where a group is there already (a resumed run)."""
    done = defaultdict(list)
    if results.exists() and not fresh:
        for line in results.open(encoding="utf-8"):
            row = json.loads(line)
            done[(row["group"], row["budget"], row["draws"])].append(row)
    results.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with results.open("w" if fresh else "a", encoding="utf-8") as sink:
        for name, budget, problems in groups:
            key = (name, budget, draws)
            if not done[key]:
                started = time.perf_counter()
                run_group = (arena_group if name.startswith("chatbot_arena") else labels_group if name.endswith("#labels")
                             else group)
                for row in run_group(problems, budget, draws):
                    row["group"] = name
                    sink.write(json.dumps(row) + "\n")
                    done[key].append(row)
                sink.flush()
                log(f"{name} {budget}: {time.perf_counter() - started:.1f}s")
            out += done[key]
    return out


# -- the summary ----------------------------------------------------------------------------------------
def significantly_under(hits: float, given: float, level: float = 0.95, p: float = 0.01) -> bool:
    return given > 0 and stats.binomtest(int(hits), int(given), level, alternative="less").pvalue < p


def upper_bound(hits: float, given: float) -> float:
    return float(stats.binomtest(int(hits), int(given)).proportion_ci(0.98, method="wilson").high) if given else np.nan


def summary(rows: list[dict]) -> list[dict]:
    """One line per (set, budget) and estimator, over the set's judges. The label-only estimators are the
    same for every judge: counted once, from the label-only pass (``--label-draws``) where there is one."""
    groups = defaultdict(list)
    label_only = {(r["cell"].partition("@")[0], r["cell"].rpartition(":")[2], r["budget"]) for r in rows
                  if "@labels only:" in r["cell"]}
    for row in rows:
        dataset, _, rest = row["cell"].partition("@")
        aspect = rest.rpartition(":")[2] if ":" in rest else ""
        if "@labels only:" not in row["cell"] and (dataset, aspect, row["budget"]) in label_only:
            row = {**row, "hits": {k: v for k, v in row["hits"].items() if not k.startswith("human")}}
        dataset, _, rest = row["cell"].partition("@")
        aspect = rest.rpartition(":")[2] if ":" in rest else ""
        groups[(f"{dataset}:{aspect}" if aspect else dataset, row["budget"])].append(row)
    out = []
    for (name, budget), members in groups.items():
        for estimator in dict.fromkeys(ESTIMATORS + ARENA_ESTIMATORS):
            chosen = [row for row in members if estimator in row["hits"]]
            if estimator.startswith("human"):  # the same for every judge: one row (the label-only pass's if any)
                chosen = sorted(chosen, key=lambda row: "@labels only:" not in row["cell"])[:1]
            pairs = [(h, g, w) for row in chosen
                     for h, g, w in zip(row["hits"][estimator], row["given"][estimator], row["width"][estimator],
                                        strict=True)]
            if not pairs:
                continue
            hits, given, width = (np.array(v) for v in zip(*pairs, strict=True))
            coverage = np.where(given > 0, hits / np.maximum(given, 1), np.nan)
            side = "human" if estimator.startswith("human") else "corrected"
            reference = next(name for name in (f"{side} t system", f"{side} t (before)") if name in chosen[0]["hits"])
            ref = [(g, w) for row in chosen for g, w in zip(row["given"][reference], row["width"][reference],
                                                            strict=True)]
            ref_width = sum(w for _, w in ref) / max(sum(g for g, _ in ref), 1)
            worst = int(np.nanargmin(coverage)) if np.isfinite(coverage).any() else None
            out.append({
                "set": name, "budget": budget, "estimator": estimator,
                "judges": "-" if estimator.startswith("human") else len(chosen), "draws": chosen[0]["draws"],
                "labels": float(np.mean([r["labels"] for r in chosen])),
                "worst": float(coverage[worst]) if worst is not None else np.nan,
                "worst_bound": upper_bound(hits[worst], given[worst]) if worst is not None else np.nan,
                "mean": float(np.nansum(hits) / max(np.nansum(given), 1)),
                "pairs": int(np.isfinite(coverage).sum()),
                "under_goal": int(np.nansum(coverage < GOAL)),
                "significantly_under": int(sum(significantly_under(h, g) for h, g in zip(hits, given, strict=True))),
                "declined": float(1 - given.sum() / (chosen[0]["draws"] * len(given))),
                "width_ratio": float((width.sum() / max(given.sum(), 1)) / ref_width) if ref_width else np.nan,
                "betting_share": _betting_share(chosen, estimator),
                **_against_human(chosen, estimator),
            })
    return out


def _against_human(members: list[dict], estimator: str) -> dict:
    """A corrected estimator's mean width over the human-only one's at the same target and draws (issue 45's
    invariant: the judge never widens the labels' own interval beyond Monte Carlo error): the worst
    (judge) cell's ratio of mean widths over systems, and the worst single (judge, system) pair's."""
    human = estimator.replace("corrected", "human")
    if not estimator.startswith("corrected") or human == estimator:
        return {"vs_human_cell": np.nan, "vs_human_system": np.nan}
    cells, systems = [], []
    for row in members:
        if human not in row["width"]:
            continue
        given_c, given_h = np.array(row["given"][estimator]), np.array(row["given"][human])
        ok = (given_c > 0) & (given_h > 0)
        mean_c = np.array(row["width"][estimator])[ok] / given_c[ok]
        mean_h = np.array(row["width"][human])[ok] / given_h[ok]
        if ok.any() and mean_h.mean() > 0:
            cells.append(mean_c.mean() / mean_h.mean())
            systems.extend(mean_c[mean_h > 0] / mean_h[mean_h > 0])
    return {"vs_human_cell": max(cells, default=np.nan), "vs_human_system": max(systems, default=np.nan)}


def rank_set_lines(rows: list[dict]) -> list[str]:
    """Arena: the rank sets' simultaneous coverage and mean size, per judge and labels."""
    out = []
    for row in rows:
        for name, v in row.get("sets", {}).items():
            judge = row["cell"].partition("@")[2]
            out.append(f"| {judge} | {row['budget']} | {name} | {v['simultaneous']:.3f} | {v['size']:.1f} |")
    return out


def _betting_share(members: list[dict], estimator: str) -> float:
    counts = defaultdict(int)
    for row in members:
        for key, value in row["methods"].items():
            if key.startswith(estimator + ":"):
                counts[key.rpartition(":")[2]] += value
    total = sum(counts.values())
    return counts["betting"] / total if total else np.nan


def line(r: dict) -> str:
    budget = f"{r['budget']:.0%}" if r["budget"] < 1 else f"{r['budget']:g} labels"
    cells = [r["set"], budget, r["estimator"], str(r["judges"]), str(r["draws"]), f"{r['labels']:.0f}",
             f"{r['worst']:.3f}",
             f"{r['worst_bound']:.3f}", f"{r['mean']:.3f}", f"{r['under_goal']}/{r['pairs']}",
             f"{r['significantly_under']}", f"{r['declined']:.2f}", f"{r['width_ratio']:.2f}",
             "-" if not np.isfinite(r["betting_share"]) else f"{r['betting_share']:.2f}",
             *("-" if not np.isfinite(r.get(k, np.nan)) else f"{r[k]:.3f}" for k in ("vs_human_cell", "vs_human_system"))]
    return table_row(cells)


HEAD = ["set", "budget", "estimator", "judges", "draws", "labels", "worst system", "its upper 98% bound", "mean",
        "(judge, system) pairs under 0.93", "significantly under 0.95", "share without interval",
        "width / per-system t", "share betting", "width / human-only, worst judge", "worst system"]


def doc(rows: list[dict], args, minutes: float) -> str:
    lines = summary(rows)
    chosen = f" --judge-filter {' '.join(args.judge_filter)}" if args.judge_filter else ""
    out = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_per_system {args.mode_flags}{chosen} "
           f"--draws {args.draws} --write` ({minutes:.0f} min); {args.draws} label draws per (set, judge, budget) cell, "
           "95% intervals, `target=\"items\"`. `worst system`: the lowest coverage of any single (judge, system) "
           "pair in the row; `its upper 98% bound`: Wilson's bound on that pair's true coverage; `significantly "
           "under 0.95`: pairs whose binomial test against 0.95 gives p < 0.01 (with 300 draws, about 4% of "
           "pairs whose interval covers exactly 0.95 fall under 0.93 by chance); `width / per-system t`: mean "
           "width over the plain per-system t interval's at the same draws; `share betting`: systems given the "
           "betting interval by the rule; `width / human-only` (corrected rows): the mean width over the "
           "human-only interval's at the same target and draws, for the worst judge (mean over systems) and the "
           "worst single (judge, system) pair: the judge should never widen the labels' own interval beyond "
           "Monte Carlo error.", "",
           *table_head(HEAD)]
    out += [line(r) for r in lines]
    sets = rank_set_lines(rows)
    if sets:
        out += ["", "Rank sets (Chatbot Arena, the default `auto` method): how often every model's true rank was "
                "in its set at once, and the mean set size (positions of 20):", "",
                "| judge | labelled comparisons | estimator | simultaneous coverage | mean size |", "|---|---|---|---|---|"]
        out += sets
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", action="store_true", help="HANNA (20 raters) and Topical-Chat (UniEval)")
    parser.add_argument("--trec", action="store_true", help="TREC DL 2019 runs, nine TREMA judges")
    parser.add_argument("--arena", action="store_true", help="Chatbot Arena, three judges, 200-2,000 labels")
    parser.add_argument("--arena-judges", nargs="*", default=["gpt-4", "claude-3-opus", "gpt-3.5"])
    parser.add_argument("--arena-sizes", nargs="*", type=int, default=list(ARENA_SIZES))
    parser.add_argument("--sets", nargs="*", default=list(ITEM_SETS))
    parser.add_argument("--judges", type=int, default=None, help="only the first N judges of each set")
    parser.add_argument("--judge-filter", nargs="*", default=None,
                        help="only judges whose name holds one of these (e.g. eval_prompt_1: HANNA's five LLMs, one "
                             "prompt each)")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--label-draws", type=int, default=0,
                        help="--items: also the label-only estimators (which no judge changes) alone, with this many "
                             "draws per (set, budget); their rows then come from this pass")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    if args.items:
        rows += run(item_groups(args.sets, args.judges, args.judge_filter), args.draws, args.results, args.fresh)
        if args.label_draws:
            rows += run(((f"{name}#labels", budget, problems) for name, budget, problems in
                         item_groups(args.sets, 1, args.judge_filter)), args.label_draws, args.results, False)
    if args.trec:
        rows += run(trec_groups(list(TREC_JUDGES)), args.draws, args.results, args.fresh and not args.items)
    if args.arena:
        rows += run(arena_groups(args.arena_judges, tuple(args.arena_sizes)), args.draws, args.results,
                    args.fresh and not (args.items or args.trec))
    for r in summary(rows):
        print(line(r), flush=True)
    print("\n".join(rank_set_lines(rows)))
    args.mode_flags = " ".join(flag for flag, on in (("--items", args.items), ("--trec", args.trec),
                                                     ("--arena", args.arena)) if on)
    if args.write and rows:
        name = "bench_per_system_" + "_".join(f.strip("-") for f in args.mode_flags.split())
        write_doc_section(name, doc(rows, args, (time.perf_counter() - started) / 60),
                          heading=f"{SECTION}: {args.mode_flags}")


if __name__ == "__main__":
    main()
