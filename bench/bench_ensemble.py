"""Ensembles of published LLM judges (PanguIR multi-model collaboration) vs their best member.

* LLMBar: the per-item verdicts of the 65 evaluators the LLMBar authors published. A member's value
  is the share of its two presentation orders that prefer output (a) (1, 0.5 or 0).
* HANNA: the ratings of 20 LLM/prompt pairs published with HANNA, one ensemble per aspect.

Everything is cross-validated: folds over the items (LLMBar, stratified by subset) or over the
story prompts (HANNA, group-wise); each ensemble is fitted on the other folds and predicts the held-out
one; the figures pool every held-out prediction.

    nice -n 10 .venv/bin/python -m bench.bench_ensemble
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

from bench.bench_similarity import SHARED, correlations, fmt
from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import load_items
from judgelab.data.split import kfold_by_group
from judgelab.judges.ensemble import EnsembleJudge, Member, selection_frame

REFERENCE = SHARED / "benchmarks" / "reference"
HANNA_ASPECTS = ["relevance", "coherence", "empathy", "surprise", "engagement", "complexity"]


def llmbar_member_files(folder: Path) -> list[Member]:
    """One judgments file per published evaluator: score = share of the two orders preferring (a)."""
    rows: dict[str, list[dict]] = defaultdict(list)
    with open(REFERENCE / "llmbar_evaluator_results.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            votes = [v for v in (row["prediction"].get("swap_false"), row["prediction"].get("swap_true")) if v in ("a", "b")]
            if votes:
                rows[row["judge"]].append({"item_id": row["item_id"], "score": sum(v == "a" for v in votes) / len(votes)})
            else:  # both verdicts unparsable in the source: kept as such
                rows[row["judge"]].append({"item_id": row["item_id"], "status": "unparsable", "reason": "no verdict"})
    members = []
    for k, (judge, judged) in enumerate(sorted(rows.items())):
        path = folder / f"llmbar-{k:02d}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in judged), encoding="utf-8")
        members.append(Member(name=judge, judgments=path))
    return members


def pairwise_accuracy(scores: np.ndarray, labels: np.ndarray) -> float:
    """Share right, a tie (0.5: the two orders disagree) counting as half right."""
    truth = (labels == "a").astype(float)
    credit = np.where(scores == 0.5, 0.5, (np.round(scores) == truth).astype(float))
    return float(np.nanmean(np.where(np.isnan(scores), 0.0, credit)))  # no verdict counts as wrong


def cross_validated(ensemble: EnsembleJudge, items: list, folds: list[tuple[list[int], list[int]]]) -> np.ndarray:
    predictions = np.full(len(items), np.nan)
    for train, test in folds:
        fitted = ensemble.fit([items[i] for i in train]) if not ensemble.fitted else ensemble
        for position, judgment in zip(test, fitted.run([items[i] for i in test]), strict=True):
            if judgment.ok:
                predictions[position] = judgment.score
    return predictions


def llmbar_section(folder: Path, k: int) -> tuple[list[str], str]:
    items = list(load_items(SHARED / "benchmarks" / "llmbar.jsonl"))
    labels = np.array([item.label for item in items])
    subsets = [item.subset for item in items]
    members = llmbar_member_files(folder)
    folds = [(list(a), list(b)) for a, b in StratifiedKFold(k, shuffle=True, random_state=0).split(items, subsets)]
    single = {m.name: cross_validated(EnsembleJudge(members=[m]), items, [(list(range(len(items))), list(range(len(items))))])
              for m in members}
    oracle_name, oracle = max(((n, pairwise_accuracy(s, labels)) for n, s in single.items()), key=lambda p: p[1])
    top5 = sorted(single, key=lambda n: -pairwise_accuracy(single[n], labels))[:5]
    configs = {
        "best member, chosen on dev (overall)": EnsembleJudge(members=members, aggregate="best", metric="accuracy",
                                                              task_field="dataset"),
        "best member per subset (PanguIR eq. 1-2)": EnsembleJudge(members=members, aggregate="best", metric="accuracy"),
        "mean of all 65": EnsembleJudge(members=members, aggregate="mean"),
        "majority vote of all 65": EnsembleJudge(members=members, aggregate="vote"),
        "weighted mean (non-negative, fitted on dev)": EnsembleJudge(members=members, aggregate="weighted"),
        "stacking (logistic regression on dev)": EnsembleJudge(members=members, aggregate="stack", stacker="logistic"),
        "mean of the 5 best (chosen on all items: optimistic)": EnsembleJudge(
            members=[m for m in members if m.name in top5], aggregate="mean"),
    }
    lines = ["| ensemble | accuracy | per subset: " + ", ".join(sorted(set(subsets))) + " |", "|---|---:|---|"]
    lines.append(f"| best single member, chosen on all items ({oracle_name}; optimistic) | {oracle:.3f} | "
                 + _per_subset(single[oracle_name], labels, subsets) + " |")
    for name, ensemble in configs.items():
        started = time.perf_counter()
        scores = cross_validated(ensemble, items, folds)
        log(f"llmbar {name}: {pairwise_accuracy(scores, labels):.3f} ({time.perf_counter() - started:.0f}s)")
        lines.append(f"| {name} | {pairwise_accuracy(scores, labels):.3f} | {_per_subset(scores, labels, subsets)} |")
    table = selection_frame(configs["best member per subset (PanguIR eq. 1-2)"].fit(items))
    chosen = ["", "Selection on all 293 items (the table `selection_frame` reports; dev accuracy of the chosen member):", "",
              "| subset | chosen member | dev accuracy | runner-up |", "|---|---|---:|---|"]
    for task, row in table.iterrows():
        ranked = row.drop("selected").dropna().sort_values(ascending=False)
        others = ranked.drop(row["selected"])  # the chosen member is the first listed among equals
        chosen.append(f"| {task} | {row['selected']} | {ranked[row['selected']]:.3f} | {others.index[0]} "
                      f"({others.iloc[0]:.3f}) |")
    return lines + chosen, f"{len(members)} evaluators"


def vote_section(folder: Path) -> list[str]:
    """The plain vote of all 65 evaluators on all 293 items (nothing is fitted): its accuracy, how
    many verdicts are ties and how many the tie-break decided, beside the plain mean."""
    items = list(load_items(SHARED / "benchmarks" / "llmbar.jsonl"))
    labels = np.array([item.label for item in items])
    members = llmbar_member_files(folder)
    lines = ["| aggregate | accuracy (ties count half) | verdicts that are ties | decided by the tie-break |",
             "|---|---:|---:|---:|"]
    for aggregate in ("vote", "mean"):
        judged = EnsembleJudge(members=members, aggregate=aggregate).run(items)
        scores = np.array([j.score if j.ok else np.nan for j in judged])
        ties = sum(j.label == "tie" for j in judged)
        broken = sum("tie_break" in j.extra.get("vote", {}) for j in judged) if aggregate == "vote" else "-"
        lines.append(f"| {aggregate} of all {len(members)} | {pairwise_accuracy(scores, labels):.3f} | "
                     f"{ties}/{len(items)} | {broken} |")
        log(lines[-1])
    return lines


def _per_subset(scores: np.ndarray, labels: np.ndarray, subsets: list[str]) -> str:
    groups = np.array(subsets)
    return ", ".join(f"{pairwise_accuracy(scores[groups == s], labels[groups == s]):.2f}" for s in sorted(set(subsets)))


def hanna_member_files(folder: Path) -> dict[str, Path]:
    """The published ratings split into one file per rater (each file is then parsed once)."""
    rows: dict[str, list[str]] = defaultdict(list)
    with open(REFERENCE / "hanna_llm_ratings.jsonl", encoding="utf-8") as f:
        for line in f:
            rows[json.loads(line)["judge"]].append(line)
    paths = {}
    for k, (judge, lines) in enumerate(sorted(rows.items())):
        paths[judge] = folder / f"hanna-{k:02d}.jsonl"
        paths[judge].write_text("".join(lines), encoding="utf-8")
    return paths


def hanna_section(folder: Path, k: int) -> list[str]:
    items = load_items(SHARED / "benchmarks" / "hanna.jsonl")
    index = {item.id: n for n, item in enumerate(items)}
    folds = [([index[i.id] for i in train], [index[i.id] for i in test]) for train, test in kfold_by_group(items, k, seed=0)]
    items = list(items)
    groups = [item.group for item in items]
    per_judge = hanna_member_files(folder)
    lines = ["| aspect | best single member, chosen on all items (optimistic) | best member chosen on dev | mean of all 20 | "
             "median | weighted mean | stacking (ridge) | dev choice on all items |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for aspect in HANNA_ASPECTS:
        human = np.array([item.human_score(aspect) for item in items], dtype=float)
        members = [Member(name=j, judgments=path, field=f"prediction.{aspect}") for j, path in per_judge.items()]
        everyone = EnsembleJudge(members=members, aggregate="mean", aspect=aspect)
        matrix = everyone._matrix(items, everyone.member_judgments(items, None))
        per_member = {m.name: correlations(human, matrix[:, c], groups) for c, m in enumerate(members)}
        oracle = max(per_member, key=lambda n: per_member[n][0])
        cells = [f"{oracle}: {fmt(per_member[oracle][0])} / {fmt(per_member[oracle][1])}"]
        for aggregate in ("best", "mean", "median", "weighted", "stack"):
            ensemble = EnsembleJudge(members=members, aggregate=aggregate, aspect=aspect, task_field="dataset")
            d, g = correlations(human, cross_validated(ensemble, items, folds), groups)
            cells.append(f"{fmt(d)} / {fmt(g)}")
            log(f"hanna {aspect} {aggregate}: {fmt(d)} / {fmt(g)}")
        chosen = EnsembleJudge(members=members, aggregate="best", aspect=aspect, task_field="dataset").fit(items).selection["*"]
        lines.append(f"| {aspect} | " + " | ".join(cells) + f" | {chosen} |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--vote-only", action="store_true", help="only the plain vote vs mean on LLMBar (docs/ensembles.md)")
    args = parser.parse_args(argv)
    if args.vote_only:
        with tempfile.TemporaryDirectory() as folder:
            print("\n".join(vote_section(Path(folder))))
        return
    started_at = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    loads = [load_avg()]
    with tempfile.TemporaryDirectory() as folder:
        llmbar, _ = llmbar_section(Path(folder), args.folds)
        loads.append(load_avg())
        if not args.no_doc:  # on a busy machine the LLMBar half lands even if HANNA does not finish
            write_doc_section("bench_ensemble", render(args, argv, started_at, loads, llmbar, None))
        hanna = hanna_section(Path(folder), args.folds)
        loads.append(load_avg())
    report = render(args, argv, started_at, loads, llmbar, hanna)
    print(report)
    if not args.no_doc:
        write_doc_section("bench_ensemble", report)


def render(args, argv, started_at: str, loads: list[str], llmbar: list[str], hanna: list[str] | None) -> str:
    hanna_part = [
        f"**HANNA** (737 stories, 67 prompts): the 20 LLM/prompt raters published with HANNA, one ensemble per aspect. "
        f"Group-wise {args.folds}-fold cross-validation over story prompts (seed 0). Cells: dataset-level / "
        "group-level Spearman of the pooled held-out predictions with the human mean rating.",
        "",
        *hanna,
    ] if hanna is not None else ["**HANNA**: not finished in this run (the LLMBar part above is complete)."]
    return "\n".join([
        "## Ensembles of published LLM judges (PanguIR)",
        "",
        f"Command: `{command_line('bench.bench_ensemble', argv)}`  ",
        f"Date: {started_at}; machine: {describe_machine()}; load average at start, after LLMBar, after HANNA: "
        f"{', '.join(loads)}. No model runs here: the members are published verdicts, read as judgments files.",
        "",
        f"**LLMBar** (293 pairs): the 65 evaluators the LLMBar authors published. {args.folds}-fold cross-validation "
        "over items, stratified by subset (seed 0): every learned ensemble (selection, weights, stacker) is fitted on "
        "the other folds. A member's value is the share of its two presentation orders that prefer (a); a tie (the "
        "orders disagree) counts as half right, no verdict as wrong; `best` selects members by the same rule "
        "(`ties: half`). The vote: a member's tie abstains, a tied count goes to the members' mean (docs/ensembles.md). "
        "Rows marked optimistic choose with the test labels and are upper bounds, not methods.",
        "",
        *llmbar,
        "",
        *hanna_part,
        "",
        "Not run here: the LLM vote integration (PanguIR 3.1.2) needs an aggregator LLM over every item; it is "
        "tested end to end with the embedded SmolLM2 model (tests/integration/test_ensemble_judge.py) but was not "
        "benchmarked on this shared 2-core machine, and neither was an ensemble of the embedded 0.5B/1.5B models.",
    ]) + "\n"


if __name__ == "__main__":
    main()
