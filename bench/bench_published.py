"""Published tables reproduced from published judge outputs: LLMBar, AlpacaEval's evaluators, Arena-Hard-Auto, JudgeBench.

    .venv/bin/python -m bench.bench_published --llmbar LLMBAR --alpaca-eval ALPACA --arena-hard ARENA \\
        --judgebench JUDGEBENCH --write        # ~40 s, no model: writes its docs/benchmarks.md section

Each folder is a clone of the tool's repository (docs/published.md says how to get them); each is optional,
and a table without its folder is skipped. For every table: the published value, judgelab's from the
published judge outputs, and the largest absolute difference. With ``--llmbar``, the shared
``reference/llmbar_evaluator_results.jsonl`` (``--llmbar-verdicts``) is checked verdict by verdict against the
clone's.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from bench.common import command_line, describe_machine, log, write_doc_section
from judgelab.data.sources import SourceData, read_source
from judgelab.metrics.agreement import label_agreement
from judgelab.metrics.bias import both_order_verdict
from judgelab.metrics.bradley_terry import fit_bradley_terry
from judgelab.metrics.pairwise import pairwise_accuracy

SECTION = "## Published tables reproduced (`bench/bench_published.py`)"
SHARED_VERDICTS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "reference" / \
    "llmbar_evaluator_results.jsonl"
SHARED_ITEMS = SHARED_VERDICTS.parents[1] / "llmbar.jsonl"


def largest(pairs: list[tuple[float, float]]) -> float:
    """The largest |published - ours| over the rows with both values."""
    gaps = [abs(p - o) for p, o in pairs if p is not None and o is not None and np.isfinite(p) and np.isfinite(o)]
    return max(gaps) if gaps else float("nan")


# -- LLMBar -------------------------------------------------------------------------------------
#: LLMBar's statistics.json keys (LLMEvaluator/evaluate.py): accuracy per order (False: as shown, True: swapped),
#: their mean, both right, both orders agree, and Cohen's kappa as LLMBar codes the verdicts.
LLMBAR_STATISTICS = ("correct_False", "correct_True", "correct_average", "correct_both", "equal",
                     "kappa_False", "kappa_True", "kappa_average", "kappa_agreement")
LLMBAR_WINNER = {"1": "a", "2": "b"}


def llmbar_number(value: Any) -> float:
    """A statistics.json value as a number: "90 / 100 = 90.0%" and "94.5%" as shares, kappas as they are."""
    if isinstance(value, (int, float)):
        return float(value)
    return float(re.findall(r"([-\d.]+)%", value)[-1]) / 100


def llmbar_code(verdicts: np.ndarray) -> np.ndarray:
    """LLMBar's kappa coding: a verdict "1" is 1, anything else (verdict "2", unparsable) is 0."""
    return np.where(verdicts == "a", 1, 0)


def llmbar_statistics(gold, first, second) -> dict[str, float]:
    """LLMBar's nine statistics with judgelab's metrics. ``gold`` "a"/"b"; ``first`` the verdict as shown,
    ``second`` swapped (already in the item's names), None where unparsable (LLMBar counts it wrong)."""
    gold, first, second = (np.asarray(v, dtype=object) for v in (gold, first, second))
    options = {"ties": "wrong", "n_resamples": 0}
    one = pairwise_accuracy(gold, first, second, **options)
    other = pairwise_accuracy(gold, second, **options)["accuracy"].value
    both = pairwise_accuracy(gold, both_order_verdict(first, second), **options)["accuracy"].value
    # LLMBar scores its kappa against the gold label coded 1 / 2 while the verdict is coded 1 / 0 (its code)
    gold_code = np.where(gold == "a", 1, 2)

    def kappa(x, y) -> float:
        return label_agreement(x, y, level_of_measurement="nominal", n_resamples=0)["kappa"].value

    kappas = [kappa(llmbar_code(first), gold_code), kappa(llmbar_code(second), gold_code)]
    return {"correct_False": one["accuracy"].value, "correct_True": other,
            "correct_average": (one["accuracy"].value + other) / 2, "correct_both": both,
            "equal": one["positional_consistency"].value, "kappa_False": kappas[0], "kappa_True": kappas[1],
            "kappa_average": sum(kappas) / 2, "kappa_agreement": kappa(llmbar_code(first), llmbar_code(second))}


def llmbar_result(path: Path) -> tuple[list[str], list[str | None], list[str | None]]:
    """(gold, verdict as shown, verdict swapped) from an LLMBar result.json (its last round decides)."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    gold = [LLMBAR_WINNER[str(r["label"])] for r in rows]
    first = [LLMBAR_WINNER.get(r["results"][-1]["swap = False"]["winner"]) for r in rows]
    second = [LLMBAR_WINNER.get(r["results"][-1]["swap = True"]["winner"]) for r in rows]
    return gold, first, second


def llmbar_reproduced(folder: Path) -> list[dict]:
    """Per (subset, evaluator): the published statistics and judgelab's from the evaluator's result.json."""
    out = []
    for stats in sorted((folder / "Dataset" / "LLMBar").rglob("evaluators/*/*/statistics.json")):
        subset = stats.parents[3].relative_to(folder / "Dataset" / "LLMBar").as_posix()
        evaluator = f"{stats.parents[1].name}/{stats.parent.name}"
        published = {k: llmbar_number(v) for k, v in json.loads(stats.read_text(encoding="utf-8")).items()}
        gold, first, second = llmbar_result(stats.with_name("result.json"))
        out.append({"subset": subset, "evaluator": evaluator, "n": len(gold), "published": published,
                    "ours": llmbar_statistics(gold, first, second)})
    return out


def llmbar_shared_check(folder: Path, verdicts: Path, items: Path) -> str:
    """Does the shared per-item file hold the repository's verdicts? Items matched by their texts."""
    texts = {json.dumps([r["instruction"], r["output_a"], r["output_b"]]): r["id"]
             for r in map(json.loads, items.open(encoding="utf-8"))}
    published: dict[tuple[str, str], tuple] = {}
    everything: set[str] = set()
    for result in (folder / "Dataset" / "LLMBar").rglob("evaluators/*/*/result.json"):
        evaluator = f"{result.parents[1].name}/{result.parent.name}"
        for r in json.loads(result.read_text(encoding="utf-8")):
            text = json.dumps([r["input"], r["output_1"], r["output_2"]])
            everything.add(text)
            key = texts.get(text)
            if key is not None:
                last = r["results"][-1]
                published[(key, evaluator)] = tuple(LLMBAR_WINNER.get(last[f"swap = {s}"]["winner"])
                                                    for s in ("False", "True"))
    shared = [json.loads(line) for line in verdicts.open(encoding="utf-8")]
    same = sum(published.get((r["item_id"], r["judge"])) == (r["prediction"].get("swap_false"),
                                                              r["prediction"].get("swap_true")) for r in shared)
    return (f"The shared `reference/llmbar_evaluator_results.jsonl` ({len(shared):,} verdict pairs on {len(texts)} "
            f"of the repository's {len(everything)} items) holds the repository's verdicts on {same:,} of them; "
            "on a part of the items its statistics are not the published ones, so the table is computed from "
            "the repository's `result.json` files.")


def llmbar_section(folder: Path | None, verdicts: Path, items: Path) -> tuple[str, float, str]:
    if folder is None:
        return ("**LLMBar**: no clone given (`--llmbar`): no published table to compare with.", float("nan"),
                "no clone given")
    rows = llmbar_reproduced(folder)
    lines = ["| statistic | rows compared | largest abs. difference | mean published | mean judgelab |",
             "|---|---|---|---|---|"]
    worst = 0.0
    for name in LLMBAR_STATISTICS:
        pairs = [(r["published"][name], r["ours"][name]) for r in rows if name in r["published"]]
        gap = largest(pairs)
        worst = max(worst, gap) if np.isfinite(gap) else worst
        lines.append(f"| `{name}` | {len(pairs)} | {gap:.1e} | {np.mean([p for p, _ in pairs]):.4f} | "
                     f"{np.mean([o for _, o in pairs]):.4f} |")
    subsets = sorted({r["subset"] for r in rows})
    by_subset = ["| evaluator | " + " | ".join(subsets) + " |", "|---" * (len(subsets) + 1) + "|"]
    for evaluator in ("GPT-4/Vanilla_NoRules", "GPT-4/Vanilla", "GPT-4/Metrics_Reference", "GPT-4/Rating",
                      "ChatGPT/Metrics_Reference", "LLaMA2/Swap_CoT"):
        got = {r["subset"]: r for r in rows if r["evaluator"] == evaluator}
        if got:
            by_subset.append(f"| {evaluator} | " + " | ".join(
                f"{100 * got[s]['published']['correct_average']:.1f} / {100 * got[s]['ours']['correct_average']:.1f}"
                if s in got else "-" for s in subsets) + " |")
    text = "\n\n".join([
        f"**LLMBar** (princeton-nlp/LLMBar, `Dataset/LLMBar/*/evaluators/<model>/<strategy>/`): {len(rows)} "
        f"(subset, evaluator) rows, {len({r['evaluator'] for r in rows})} evaluators, each one's `statistics.json` "
        "(published) against judgelab's metrics on its `result.json` (pairwise accuracy with ties and "
        "unparsable verdicts wrong; positional consistency for `equal`; Cohen's kappa from "
        "`label_agreement`). Largest absolute difference over all rows and statistics: "
        f"**{worst:.1e}**.", "\n".join(lines),
        "LLMBar's kappas are not the kappa of the verdicts against the gold label: its code turns a verdict "
        "into 1 (output 1) or 0 (anything else) and compares it with the gold label coded 1 / 2, so a verdict "
        "for output 2 never matches (GPT-4/CoT on Natural: kappa 0.26 at 94.5% accuracy). They are reproduced "
        "with that coding; judgelab's own `meta` reports the kappa of the verdicts against the label.",
        "`correct_average` (the mean of the two orders' accuracies, %), published / judgelab, per subset:",
        "\n".join(by_subset), llmbar_shared_check(folder, verdicts, items)])
    return text, worst, f"each evaluator's `statistics.json`, {len(rows)} (subset, evaluator) rows x 9 statistics"


# -- AlpacaEval's evaluators leaderboard ---------------------------------------------------------
ALPACA_LEADERBOARD = "src/alpaca_eval/leaderboards/evaluators/evaluators_leaderboard.csv"


def alpaca_columns(reads: list[SourceData], costs: list[tuple[float | None, float | None]]) -> dict[str, float]:
    """AlpacaEval's evaluator columns that need no human labels (alpaca_eval.analyze.get_metrics_evaluator),
    from judgelab's reading of annotations files: P(prefer longer) (outputs more than 30 characters
    apart), P(prefer 1) = 2 - mean preference, # parsed; price and time per 1000 examples from ``costs``."""
    pairs = [(items[j.item_id], j) for read in reads for items in [{one.id: one for one in read.items}]
             for j in read.judgments]
    preference = np.array([j.extra["preference"] if j.ok else np.nan for _, j in pairs], dtype=float)
    first = np.array([len(one.output_a or "") for one, _ in pairs])
    second = np.array([len(one.output_b or "") for one, _ in pairs])
    # AlpacaEval's best output: output_1 for a preference in [1, 1.5), else output_2 (a draw, 0, too)
    best_first = (preference >= 1) & (preference < 1.5)
    best, worse = np.where(best_first, first, second), np.where(best_first, second, first)
    apart = np.abs(best - worse) > 30
    out = {"Proba. prefer longer": float(np.mean(best[apart] > worse[apart])) if apart.any() else float("nan"),
           "Proba. prefer 1": float(2 - np.nanmean(preference)), "# parsed": float(np.sum(~np.isnan(preference)))}
    for k, name in enumerate(("Price [$/1000 examples]", "Time [seconds/1000 examples]")):
        values = [c[k] for c in costs if c[k] is not None]
        out[name] = 1000 * float(np.mean(values)) if values else float("nan")
    return out


def alpaca_costs(path: Path) -> list[tuple[float | None, float | None]]:
    """Price and time per example as the annotator recorded them (judgelab's reader keeps only verdicts)."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [(r.get("price_per_example"), r.get("time_per_example")) for r in rows
            if r.get("generator_1") != r.get("generator_2")]


def alpaca_section(folder: Path | None) -> tuple[str, float, str]:
    if folder is None:
        return "**AlpacaEval evaluators**: no clone given (`--alpaca-eval`).", float("nan"), "no clone given"
    with open(folder / ALPACA_LEADERBOARD, encoding="utf-8") as handle:
        board = {row[""]: row for row in csv.DictReader(handle)}
    annotator = "weighted_alpaca_eval_gpt4_turbo"
    found = sorted((folder / "results").glob(f"*/{annotator}/annotations.json"))
    by_file = {f: alpaca_costs(f) for f in found}
    files = [f for f in found if by_file[f]]  # the reference model's own file compares it with itself only
    costs = [c for f in files for c in by_file[f]]
    # one file at a time: a model's folder holds other annotators' files on the same instructions
    ours = alpaca_columns([read_source(f, "alpaca-eval") for f in files], costs) if files else {}
    columns = ("Price [$/1000 examples]", "Time [seconds/1000 examples]", "Proba. prefer longer",
               "Proba. prefer 1", "# parsed")
    lines = ["| column | leaderboard (2,592 cross-annotations) | judgelab on AlpacaEval 2's annotations |",
             "|---|---|---|"]
    for name in columns:
        digits = 0 if name == "# parsed" else 3
        lines.append(f"| {name} | {float(board[annotator][name]):.{digits}f} | {ours.get(name, float('nan')):.{digits}f} |")
    text = "\n\n".join([
        f"**AlpacaEval evaluators leaderboard** (`{ALPACA_LEADERBOARD}`, {len(board)} evaluators): every column "
        "is computed on the 2,592 AlpacaFarm human cross-annotations (648 instructions x 4 people) and each "
        "evaluator's annotations of them. Both are published on the Hugging Face Hub "
        "(`tatsu-lab/alpaca_eval`, `alpaca_farm_human_crossannotations.json`), not in the repository, so "
        "**no column is reproduced**: human agreement, Spearman and Pearson, bias and variance need the "
        "people's labels; price, time, P(prefer longer), P(prefer lists), P(prefer 1) and # parsed need the "
        "evaluator's annotations of those 648 instructions, which the repository does not hold for any "
        f"evaluator. The only evaluator annotations in it are `{annotator}`'s of AlpacaEval 2 "
        f"({len(files)} models' `results/<model>/{annotator}/annotations.json` reachable here, "
        f"{int(ours.get('# parsed', 0)):,} comparisons): the columns that need no person, computed on them with "
        "AlpacaEval's definitions, are beside the leaderboard's below as a check of the definitions on "
        "another set of instructions, not as a reproduction (no difference is reported).", "\n".join(lines)])
    return text, float("nan"), ("not reproduced: the human cross-annotations and the evaluators' annotations "
                                "of them are on the Hugging Face Hub")


# -- Arena-Hard-Auto -----------------------------------------------------------------------------
#: Arena-Hard-Auto's show_result.py (v0.1): a game's verdict as (winner, battles), ``>>`` weighing ``weight``.
ARENA_GAME = {"A>>B": ("a", True), "A>B": ("a", False), "A=B": ("tie", False), "B=A": ("tie", False),
              "B>A": ("b", False), "B>>A": ("b", True), "A<B": ("b", False), "A<<B": ("b", True),
              "B<A": ("a", False), "B<<A": ("a", True)}


def arena_scores(read: SourceData, weight: int = 3) -> dict[str, float]:
    """Each model's win rate against the baseline (%) as Arena-Hard-Auto computes it: both games of every
    question as battles (game 1 shows the baseline as A, game 2 the model), ``>>`` counted ``weight`` times, a
    tie half a win each, then a Bradley-Terry fit (judgelab's) and P(model beats baseline)."""
    items = {one.id: one for one in read.items}
    battles: list[tuple[str, str, float, float]] = []  # (first shown, second shown, battles, first's wins)
    for verdict in read.judgments:
        one = items[verdict.item_id]
        shown = [(one.system_a, one.system_b), (one.system_b, one.system_a)]
        for (a, b), score in zip(shown, verdict.extra.get("games", ()), strict=False):
            if score is None:
                continue  # Arena-Hard drops a game without a verdict
            side, strong = ARENA_GAME[score]
            n = weight if strong else 1
            battles.append((a, b, n, n * {"a": 1.0, "b": 0.0, "tie": 0.5}[side]))
    names = sorted({s for a, b, _, _ in battles for s in (a, b)})
    index = {name: k for k, name in enumerate(names)}
    fit = fit_bradley_terry(len(names), np.array([index[a] for a, *_ in battles]),
                            np.array([index[b] for _, b, *_ in battles]),
                            np.array([n for *_, n, _ in battles], dtype=float),
                            np.array([w for *_, w in battles], dtype=float))
    baselines = {one.system_a for one in read.items}
    if len(baselines) != 1:
        raise ValueError(f"expected one baseline, found {sorted(baselines)}")
    if not fit.converged:  # Arena-Hard's unpenalised regression has no finite answer either
        raise ValueError("no finite Bradley-Terry strengths: a model wins or loses all of its battles")
    base = index[baselines.pop()]
    return {name: 100 * float(expit(fit.strength[k] - fit.strength[base])) for name, k in index.items()}


def arena_published(folder: Path) -> dict[str, float]:
    """The newest leaderboard CSV the repository published (``leaderboard/arena_hard_leaderboard_*.csv``)."""
    boards = sorted((folder / "leaderboard").glob("arena_hard_leaderboard_*.csv"))
    if not boards:
        return {}
    with open(boards[-1], encoding="utf-8") as handle:
        return {row["model"]: float(row["score"]) for row in csv.DictReader(handle)}


def arena_section(folder: Path | None, judgments: Path | None) -> tuple[str, float, str]:
    if folder is None:
        return "**Arena-Hard-Auto**: no clone given (`--arena-hard`).", float("nan"), "no clone given"
    published = arena_published(folder)
    found = judgments if judgments is not None else folder / "data" / "arena-hard-v0.1" / "model_judgment"
    files = sorted(found.rglob("*.jsonl")) if found.exists() else []
    head = (f"**Arena-Hard-Auto** (v0.1, judge gpt-4-1106-preview, baseline gpt-4-0314): the published "
            f"leaderboard `{(sorted((folder / 'leaderboard').glob('*.csv')) or [Path('none')])[-1].name}` "
            f"({len(published)} models). ")
    if not files:
        return head + (
            "**Not reproduced: the judgments are not reachable.** The git history names the v0.1 judgment files "
            "(`data/arena-hard-v0.1/model_judgment/gpt-4-1106-preview/{gpt-3.5-turbo-0125,gpt-4-0613}.jsonl`, "
            "7 MB each) and five v2.0 files, but the copy reachable here holds none of their contents (files of "
            "4 MB and more are left out); the other models' judgments were only ever on the Hugging Face Hub. The "
            "judgments the history does hold (`data/arena-bench-v1/model_judgment/`, December 2023, 15 files) "
            "are single-answer grades (1-10 against a GPT-4 reference answer, no games, no baseline): neither "
            "the `arena-hard` nor the `mt-bench` reader claims them, and the repository published no table for "
            "them. The computation (both games as battles, `>>` three times, Bradley-Terry, P(model beats the "
            "baseline)) is in `arena_scores` and is tested on a made-up fixture "
            "(tests/unit/test_bench_published.py); give `--arena-judgments DIR` with the v0.1 files from the "
            "Hub to compare."), float("nan"), "not reproduced: the judgments are not reachable"
    read = read_source(found, "arena-hard")
    ours = arena_scores(read)
    pairs = [(published.get(m), v) for m, v in ours.items()]
    lines = ["| model | published | judgelab |", "|---|---|---|"] + [
        f"| {m} | {published.get(m, float('nan')):.1f} | {v:.1f} |" for m, v in sorted(ours.items(), key=lambda x: -x[1])]
    gap = largest(pairs)
    return (head + f"{len(read.judgments)} judgments read; largest absolute difference **{gap:.2f}**.\n\n"
            + "\n".join(lines), gap, f"the leaderboard CSV's score, {len(lines) - 2} models")


# -- JudgeBench ----------------------------------------------------------------------------------
#: run_judge.py's categories: a pair's source starts with one of these.
JUDGEBENCH_CATEGORIES = {"knowledge": "mmlu-pro", "reasoning": "livebench-reasoning", "math": "livebench-math",
                         "coding": "livecodebench"}


def judgebench_scores(read: SourceData) -> dict[str, dict[str, float]]:
    """Per judge: JudgeBench's score (%) overall and per category, as judgelab's pairwise accuracy of the
    reader's verdict (the side more games name) with ties and missing verdicts wrong."""
    items = {one.id: one for one in read.items}
    by_judge: dict[str, list] = defaultdict(list)
    for verdict in read.judgments:
        by_judge[str(verdict.judge)].append(verdict)
    out = {}
    for judge, verdicts in sorted(by_judge.items()):
        source = np.array([items[v.item_id].dataset or "" for v in verdicts], dtype=object)
        gold = np.array([items[v.item_id].label for v in verdicts], dtype=object)
        said = np.array([v.label if v.ok else None for v in verdicts], dtype=object)
        scores = {}
        for name, prefix in {"overall": "", **JUDGEBENCH_CATEGORIES}.items():
            keep = np.array([s.startswith(prefix) for s in source])
            scores[name] = 100 * pairwise_accuracy(gold[keep], said[keep], ties="wrong",
                                                   n_resamples=0)["accuracy"].value if keep.any() else float("nan")
        out[judge] = scores
    return out


def judgebench_their_rule(folder: Path) -> dict[str, dict[str, float]]:
    """JudgeBench's own utils/metrics.py on each output file (its code, run as run_judge.py runs it)."""
    code = folder / "utils" / "metrics.py"
    spec = importlib.util.spec_from_file_location("judgebench_metrics", code) if code.is_file() else None
    if spec is None or spec.loader is None:
        return {}
    metrics = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(metrics)
    out = {}
    for path in sorted((folder / "outputs").glob("*.jsonl")):
        pairs = [json.loads(line) for line in path.open(encoding="utf-8")]
        judge = read_source(path, "judgebench").judges()[0]
        two = all(len(p["judgments"]) == 2 for p in pairs)
        out[judge] = {name: metrics.compute_final_metrics(pairs, two, include_fn=lambda x, p=prefix:
                                                          x["source"].startswith(p))
                      for name, prefix in {"overall": "", **JUDGEBENCH_CATEGORIES}.items()}
    return out


def judgebench_section(folder: Path | None) -> tuple[str, float, str]:
    if folder is None:
        return "**JudgeBench**: no clone given (`--judgebench`).", float("nan"), "no clone given"
    ours = judgebench_scores(read_source(folder / "outputs", "judgebench"))
    theirs = judgebench_their_rule(folder)
    names = ["overall", *JUDGEBENCH_CATEGORIES]
    lines = ["| judge | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for judge, scores in ours.items():
        lines.append(f"| {judge} | " + " | ".join(
            f"{theirs[judge][n]:.2f} / {scores[n]:.2f}" if judge in theirs else f"{scores[n]:.2f}" for n in names)
            + " |")
    gap = largest([(theirs[j][n], ours[j][n]) for j in ours if j in theirs for n in names])
    text = "\n\n".join([
        f"**JudgeBench** (ScalerLab/JudgeBench `outputs/`): {len(ours)} judges' output files in the folder. The "
        "repository's README publishes no scores (its leaderboard is a Hugging Face Space), so the reference is "
        "JudgeBench's own scoring code (`utils/metrics.py`, both orders, a pair right when more games name the "
        "right response) run on the same files. "
        + ("JudgeBench's / judgelab's score (%), judgelab's read through its `judgebench` reader: largest "
           f"absolute difference **{gap:.1e}**." if theirs else
           "The folder has no `utils/metrics.py`: judgelab's scores (%) alone."), "\n".join(lines)])
    return text, gap, (f"JudgeBench's own `utils/metrics.py` on the {len(ours)} output files (no published scores "
                       "in the repository)" if theirs else "no reference: the folder has no utils/metrics.py")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--llmbar", type=Path, help="A clone of github.com/princeton-nlp/LLMBar.")
    parser.add_argument("--llmbar-verdicts", type=Path, default=SHARED_VERDICTS,
                        help="The shared per-item verdicts checked against the clone's (default: %(default)s).")
    parser.add_argument("--llmbar-items", type=Path, default=SHARED_ITEMS, help="Their items (default: %(default)s).")
    parser.add_argument("--alpaca-eval", type=Path, help="A clone of github.com/tatsu-lab/alpaca_eval.")
    parser.add_argument("--arena-hard", type=Path, help="A clone of github.com/lmarena/arena-hard-auto.")
    parser.add_argument("--arena-judgments", type=Path, help="Arena-Hard v0.1 model_judgment/<judge>/ folder "
                        "(default: the clone's data/arena-hard-v0.1/model_judgment).")
    parser.add_argument("--judgebench", type=Path, help="A clone of github.com/ScalerLab/JudgeBench.")
    parser.add_argument("--write", action="store_true", help="Write the section of docs/benchmarks.md.")
    args = parser.parse_args(argv)
    parts, summary = [], ["| table | compared with | largest abs. difference |", "|---|---|---|"]
    for name, (text, gap, what) in (("LLMBar", llmbar_section(args.llmbar, args.llmbar_verdicts, args.llmbar_items)),
                              ("AlpacaEval evaluators", alpaca_section(args.alpaca_eval)),
                              ("Arena-Hard-Auto", arena_section(args.arena_hard, args.arena_judgments)),
                              ("JudgeBench", judgebench_section(args.judgebench))):
        log(f"{name}: largest difference {gap:.3g}")
        parts.append(text)
        summary.append(f"| {name} | {what} | {'-' if np.isnan(gap) else f'{gap:.1e}'} |")
    body = "\n\n".join(["\n".join(summary), *parts]) + f"\n\nCommand: `{command_line('bench.bench_published', argv)}`. {describe_machine()}"
    print(body)
    if args.write:
        write_doc_section("bench_published", body, heading=SECTION)


if __name__ == "__main__":
    main()
