"""Several judges in one estimate: the panel's corrected intervals against the best single judge's.

    python -m bench.bench_panel --draws 300 --write          # HANNA (5 raters, one prompt each), TREC DL 2019
    python -m bench.bench_panel --sets hanna:coherence --draws 40   # a quick look
    python -m bench.bench_panel --sets hanna+metrics:coherence --no-trec --no-arena   # raters and free metrics

``hanna+metrics:<aspect>``: the five raters and three automatic metrics that cost nothing to run, as judges
(:data:`METRICS`: the story's length in characters, and its MiniLM cosine similarity to the human-written
reference story and to the prompt; judgelab.embed's ``minilm``, cached on disk), the panel all eight.

A draw labels a stratified random sample of the units, as ``judgelab sample`` does (the same draws for
every judge and for the panel), and each gets the corrected estimate with the CLI's defaults
(``intervals="auto"``; ``target`` both ``items`` and the default ``population``). Per cell:

* the panel's per-system coverage, worst single system (a user reads one system's interval);
* its mean width against the best single judge's at the same draws (the best chosen *after* the fact,
  over the judges' mean widths: a bar no user could choose in advance) and against human-only.

Monte Carlo error of a width ratio: the draws are paired, so ratios of mean widths move by about 0.005
from one set of 300 draws to another (two seeds, HANNA coherence 20%). Every (set, budget) group is
written to a results file as it finishes (``--results``; rerun to resume, ``--fresh`` to start over).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.bench_evaluate import item_problem, judges_of, query_problem
from bench.bench_per_system import run, scale_of, upper_bound
from bench.common import describe_machine, table_head, table_row, write_doc_section

SECTION = "## Several judges in one estimate (`bench/bench_panel.py`)"
ITEM_SETS = (*(f"hanna:{a}" for a in ("coherence", "relevance", "empathy", "surprise", "engagement", "complexity")),
             "hanna+metrics:coherence", "hanna+metrics:relevance")
METRICS = ("metric:length", "metric:similarity-to-reference", "metric:similarity-to-prompt")
PANEL_FILTER = "eval_prompt_1"  # HANNA: the five LLMs, one prompt each
TREC_PANEL = ("TREMA-4prompts/llama3-8b", "TREMA-4prompts/llama3.3-70b", "TREMA-4prompts/flan-t5-large")
BUDGETS = (0.05, 0.10, 0.20, 0.40)
QUERY_BUDGETS = (9, 12, 20, 25)  # of the 30 judged queries
PANEL = "panel"
ESTIMATORS = ("corrected", "corrected population")
RESULTS = Path.home() / ".cache" / "judgelab" / "bench_panel.jsonl"


def item_groups(sets: list[str]):
    for spec in sets:
        dataset, aspect = spec.split(":")
        dataset, with_metrics = dataset.removesuffix("+metrics"), dataset.endswith("+metrics")
        scale = scale_of(dataset, aspect)
        names = [n for n in judges_of(dataset) if PANEL_FILTER in n]
        singles = {name: replace(item_problem(dataset, aspect, name), scale=scale) for name in names}
        if with_metrics:
            first = next(iter(singles.values()))
            singles |= {name: replace(first, judge=values) for name, values in metric_judges(dataset, first).items()}
        yield from _groups(spec, singles, BUDGETS)


def metric_judges(dataset: str, problem) -> dict[str, np.ndarray]:
    """Each of :data:`METRICS` as a judge's (units, systems) matrix, laid out as ``problem``'s judge."""
    from bench.bench_evaluate import SHARED
    from judgelab.data import load_items
    from judgelab.embed import make_embedder

    items = load_items(SHARED / f"{dataset}.jsonl")
    embed = make_embedder("minilm").encode
    story, reference, prompt = (embed([getattr(i, field) or "" for i in items]) for field in
                                ("output", "reference", "source"))
    values = {"metric:length": np.array([len(i.output or "") for i in items], dtype=float),
              "metric:similarity-to-reference": np.sum(story * reference, axis=1),
              "metric:similarity-to-prompt": np.sum(story * prompt, axis=1)}
    row = {item.id: k for k, item in enumerate(items)}  # an item problem's units are its items' ids
    order = np.array([row[unit] for unit in problem.units])
    return {name: np.where(problem.present, column[order][:, None], np.nan) for name, column in values.items()}


def trec_groups():
    singles = {name: query_problem(name) for name in TREC_PANEL}
    yield from _groups("trec_dl2019", singles, QUERY_BUDGETS)


ARENA_SIZES = (200, 500, 1000, 2000)


def arena_rows(draws: int, results: Path, fresh: bool) -> list[dict]:
    """Chatbot Arena's comparisons with its three judges alone and as a panel, per number of labelled
    comparisons: the same draws for all, bench_per_system's arena_group for each (win probability)."""
    from bench.bench_pairwise import JUDGES, arena_data
    from judgelab.data.labels import PREFERENCES
    from judgelab.evaluate.comparisons import comparisons

    _, a, b, human, verdicts = arena_data()
    human_pref = np.array([PREFERENCES[h] for h in human])
    prefs = {JUDGES[short]: np.array([PREFERENCES[v] for v in verdicts[short]]) for short in verdicts}
    singles = {name: comparisons(a, b, p, human_pref) for name, p in prefs.items()}
    first = next(iter(singles.values()))
    panel = replace(first, judges=np.column_stack(list(prefs.values())), judge_names=tuple(prefs))
    groups = [(f"chatbot_arena@{name}", n, {f"chatbot_arena@{name}": problem})
              for n in ARENA_SIZES for name, problem in (singles | {PANEL: panel}).items()]
    rows = run(groups, draws, results, fresh)
    for row in rows:  # arena_group names a row by its one judge; the panel summary groups by size
        row["group"] = "panel:chatbot_arena"
    return rows


def _groups(spec: str, singles: dict, budgets):
    first = next(iter(singles.values()))
    panel = first.with_judges(np.stack([p.judge for p in singles.values()], axis=-1), list(singles))
    problems = {f"{spec}@{name}": p for name, p in singles.items()} | {f"{spec}@{PANEL}": panel}
    for budget in budgets:
        yield f"panel:{spec}", budget, problems


def summary(rows: list[dict]) -> list[dict]:
    """One line per (set, budget, estimator): the panel's worst system and widths against the singles'."""
    cells: dict[tuple, list[dict]] = {}
    for row in rows:
        cells.setdefault((row["group"], row["budget"]), []).append(row)
    out = []
    for (group, budget), members in cells.items():
        panel = next(r for r in members if r["cell"].endswith("@" + PANEL))
        singles = [r for r in members if r is not panel]
        for estimator in ESTIMATORS:
            human = estimator.replace("corrected", "human")
            hits, given = np.array(panel["hits"][estimator]), np.array(panel["given"][estimator])
            coverage = np.where(given > 0, hits / np.maximum(given, 1), np.nan)
            worst = int(np.nanargmin(coverage))
            widths = {r["cell"].partition("@")[2]: _mean_width(r, estimator) for r in singles}
            best = min(widths, key=widths.get)
            mine = _mean_width(panel, estimator)
            out.append({"set": group.partition(":")[2], "budget": budget, "estimator": estimator,
                        "draws": panel["draws"], "labels": panel["labels"], "worst": float(coverage[worst]),
                        "worst_bound": upper_bound(hits[worst], given[worst]),
                        "width": mine, "best_single": best, "best_width": widths[best],
                        "vs_best": mine / widths[best], "vs_human": mine / _mean_width(panel, human),
                        "best_vs_human": widths[best] / _mean_width(panel, human)})
    return out


def _mean_width(row: dict, estimator: str) -> float:
    given, width = np.array(row["given"][estimator]), np.array(row["width"][estimator])
    ok = given > 0
    return float(np.mean(width[ok] / given[ok])) if ok.any() else np.nan


def line(r: dict) -> str:
    unit = "comparisons" if r["set"].startswith("chatbot_arena") else "queries"
    budget = f"{r['budget']:.0%}" if r["budget"] < 1 else f"{r['budget']:g} {unit}"
    cells = [r["set"], budget, r["estimator"], f"{r['labels']:.0f}", f"{r['worst']:.3f}", f"{r['worst_bound']:.3f}",
             f"{r['width']:.3f}", r["best_single"], f"{r['best_width']:.3f}", f"{r['vs_best']:.3f}",
             f"{r['best_vs_human']:.3f}", f"{r['vs_human']:.3f}"]
    return table_row(cells)


HEAD = ["set", "budget", "estimator", "labels", "panel's worst system", "its upper 98% bound", "panel width",
        "best single judge (after the fact)", "its width", "panel / best single", "best single / human-only",
        "panel / human-only"]


def doc(rows: list[dict], args, minutes: float) -> str:
    lines = summary(rows)
    ratios = [r["vs_best"] for r in lines]
    out = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_panel --draws {args.draws} --write` "
           f"({minutes:.0f} min); {args.draws} label draws per cell, the same for every judge and the panel; 95% "
           "intervals with the CLI's rule (`intervals=\"auto\"`). HANNA: the five LLM raters on `eval_prompt_1`; "
           "`hanna+metrics`: those five and three automatic metrics (length, MiniLM similarity to the reference "
           "story and to the prompt) that cost nothing, the panel all eight. "
           "TREC DL 2019: TREMA-4prompts with Llama-3-8B, Llama-3.3-70B and Flan-T5-large, by labelled queries; "
           "Chatbot Arena: GPT-4, Claude 3 Opus and GPT-3.5 on its 18,833 comparisons, by labelled comparisons "
           "(win probability). "
           "`panel / best single`: the panel's mean corrected width over the best single judge's, that judge "
           "chosen after the fact (the narrowest mean width), a bar no user can pick in advance.", "",
           *table_head(HEAD)]
    out += [line(r) for r in lines]
    out += ["", f"Panel over the best single judge: {min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} cells; "
            f"worst single system's coverage {min(r['worst'] for r in lines):.3f}-"
            f"{max(r['worst'] for r in lines):.3f}."]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="*", default=list(ITEM_SETS))
    parser.add_argument("--no-trec", action="store_true")
    parser.add_argument("--no-arena", action="store_true")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = run(item_groups(args.sets), args.draws, args.results, args.fresh)
    if not args.no_trec:
        rows += run(trec_groups(), args.draws, args.results, args.fresh and not args.sets)
    if not args.no_arena:
        rows += arena_rows(args.draws, args.results, False)
    for r in summary(rows):
        print(line(r), flush=True)
    if args.write and rows:
        write_doc_section("bench_panel", doc(rows, args, (time.perf_counter() - started) / 60), heading=SECTION)


if __name__ == "__main__":
    main()
