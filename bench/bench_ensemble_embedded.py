"""An ensemble of the embedded models and the similarity scorer vs its best member (PanguIR 3.1).

Members, each run once over the dev and test items, their verdicts written as judgments files:

* two prompted judges (``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``), strategy ``cot=suffix``: the
  reply starts with the rating and goes on with a short reason (``--reason-tokens`` caps it), so every
  verdict carries a score and a reason for the LLM vote;
* the UCLWI similarity scorer (no LLM), fitted on the dev items. Its dev predictions are out of fold
  (group-wise k-fold inside dev), so the learned ensembles do not see a member that memorised dev; its
  test predictions come from the fit on all of dev. Its scores are mapped linearly onto the LLM judges'
  rating scale (Spearman and Kendall unchanged), so the means and the vote prompt see one scale.

The ensembles read those files as members (bring your own judgments), so every aggregate reuses the
same member verdicts: mean, median, weighted (fitted on dev), stack (fitted on dev), best (selection
on dev, PanguIR eq. 1-2) and llm_vote (PanguIR 3.1.2) with each ``--aggregator-model``.
Reported on the test items: Spearman/Pearson/Kendall at dataset and group level with bootstrap CIs
(groups resampled), the difference to the best member (paired bootstrap), LLM calls per item, the
unparsable share. Every LLM call goes through the normal judgelab cache and every run folder resumes,
so an interrupted run picks up where it stopped and a rerun is free.

    nice -n 10 .venv/bin/python -m bench.bench_ensemble_embedded                       # full size
    nice -n 15 .venv/bin/python -m bench.bench_ensemble_embedded --member-models smollm2-135m smollm2-135m \\
        --aggregator-model smollm2-135m --dev-items 6 --test-items 6                   # plumbing check
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bench.bench_similarity import SHARED
from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import load_items
from judgelab.data.dataset import Dataset
from judgelab.data.io import load_judgments, save_judgments
from judgelab.data.judgment import Judgment
from judgelab.data.split import kfold_by_group, split_by_group
from judgelab.errors import ConfigError
from judgelab.judges.ensemble import EnsembleJudge, Member, selection_frame
from judgelab.judges.examples import rescale
from judgelab.judges.prompted import PromptedJudge
from judgelab.judges.similarity import SimilarityJudge
from judgelab.llm.models import judgelab_home
from judgelab.llm.resolve import make_client
from judgelab.metrics import meta_evaluate
from judgelab.runner.run import run_judge
from judgelab.strategy import Strategy

DEFAULT_MODELS = ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]
DEFAULT_ASPECT = {"sfres": "naturalness", "sfhot": "naturalness", "topical_chat": "coherence"}
STATISTICS = ("spearman", "pearson", "kendall")
LEVELS = ("dataset", "group")
PLAIN = ("mean", "median")
LEARNED = ("weighted", "stack", "best")


@dataclass
class Row:
    """One judge of the results table: a member or an ensemble, with its test judgments."""

    name: str
    kind: str  # "member" or "ensemble"
    judgments: list[Judgment]
    calls_per_item: float
    wall_s: float
    note: str = ""
    new_calls: int = 0  # calls the model answered in this run (an aggregator's; members: see MemberRun)
    metrics: dict = field(default_factory=dict)
    versus_best: dict = field(default_factory=dict)


@dataclass
class MemberRun:
    name: str
    model: str | None  # None: the similarity scorer
    path: Path
    wall_s: float
    new_calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int


# -- data -------------------------------------------------------------------------------------------
def dev_test_split(dataset_name: str, aspect: str, dev_items: int, test_items: int, seed: int) -> tuple[Dataset, Dataset]:
    """Dev and test items, whole groups each (no source in both), from the groups of two or more
    outputs with a human score (the similarity scorer compares an output with its group)."""
    items = load_items(SHARED / "benchmarks" / f"{dataset_name}.jsonl")
    scored = items.filter(lambda item: item.human_score(aspect) is not None)
    sizes = {group: len(members) for group, members in scored.groups().items()}
    usable = scored.filter(lambda item: sizes[item.group] >= 2)
    if dev_items + test_items > len(usable):
        raise ConfigError(f"{dataset_name}/{aspect}: {dev_items} dev + {test_items} test items asked, "
                          f"{len(usable)} usable (groups of 2+ outputs with a human score)")
    rest = 1.0 - (dev_items + test_items) / len(usable)
    parts = split_by_group(usable, {"dev": dev_items / len(usable), "test": test_items / len(usable),
                                    "rest": max(rest, 0.0)}, seed=seed)
    return parts["dev"], parts["test"]


def judge_scale(items: Dataset, aspect: str) -> int:
    """The rating scale the LLM judges write on: the dataset's own when HPSS has it (Topical-Chat 1-3),
    else 5 (SF-RES's 1-6 is not in the strategy space), as ``Strategy.mt_bench`` chooses."""
    low, high = items[0].aspect_scale(aspect) or (1.0, 5.0)
    return Strategy.mt_bench(native_scale=int(high) if low == 1 else None).scale


# -- members ----------------------------------------------------------------------------------------
def member_names(models: Sequence[str]) -> list[str]:
    """Distinct names, in order: the model string, with #2, #3 for repeats."""
    names: list[str] = []
    for model in models:
        name, k = model, 1
        while name in names:
            k += 1
            name = f"{model}#{k}"
        names.append(name)
    return names


def llm_member(name: str, model: str, judge: PromptedJudge, items: Dataset, out: Path,
               backend_options: dict) -> MemberRun:
    """Run one prompted judge over dev + test into its own run folder (resumes; every call cached)."""
    folder = out / "members" / f"{_slug(name)}-{judge.digest()[:8]}"
    log(f"member {name}: {len(items)} items -> {folder}")
    with make_client(model, backend_options=backend_options) as client:
        result = run_judge(judge, list(items), client, folder, meta=False)
    usage = result.usage
    log(f"member {name}: {usage['calls']} new calls, {usage['cache_hits']} cache hits, {usage['wall_s']:.0f}s, "
        f"counts {result.counts}")
    return MemberRun(name, model, folder / "judgments.jsonl", usage["wall_s"], usage["calls"], usage["cache_hits"],
                     usage["prompt_tokens"], usage["completion_tokens"])


def prompted_member(aspect: str, scale: int, reason_tokens: int, seed: int) -> PromptedJudge:
    """Rating first, then a short reason (cut at ``reason_tokens``): cheap, and the vote gets a reason."""
    strategy = Strategy.mt_bench(native_scale=scale).model_copy(update={"cot": "suffix"})
    return PromptedJudge(aspect=aspect, strategy=strategy, max_tokens=reason_tokens, seed=seed)


def similarity_member(aspect: str, embedder: str, dev: Dataset, test: Dataset, target: tuple[float, float],
                      folds: int, seed: int, out: Path) -> MemberRun:
    """The similarity scorer's verdicts on dev (out of fold) and test (fitted on all of dev), on the
    LLM judges' scale; the native prediction stays in ``extra.native_score``."""
    scorer = SimilarityJudge(aspect=aspect, embedder=embedder, predict="expected")
    folder = out / "members" / f"similarity-{embedder}-{scorer.digest()[:8]}"
    weights = folder / "weights"
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter of tiny folds; failures are error judgments
        judged = _out_of_fold(scorer, dev, folds, seed, weights) + _fitted_or_errors(scorer, dev, list(test), weights)
    source = dev[0].aspect_scale(aspect)
    placed = [_on_scale(j, source, target) for j in judged]
    path = save_judgments(placed, folder / "judgments.jsonl")
    wall = time.perf_counter() - started
    log(f"member similarity ({embedder}): {len(placed)} items, {wall:.1f}s, "
        f"{sum(not j.ok for j in placed)} without a score")
    return MemberRun("similarity", None, path, wall, 0, 0, 0, 0)


def _out_of_fold(scorer: SimilarityJudge, dev: Dataset, folds: int, seed: int, weights: Path) -> list[Judgment]:
    k = min(folds, len(dev.groups()))
    if k < 2:
        return [scorer.error(item, "dev has one group: no out-of-fold prediction") for item in dev]
    judged: list[Judgment] = []
    for train, held_out in kfold_by_group(dev, k, seed=seed):
        judged += _fitted_or_errors(scorer, train, list(held_out), weights)
    return judged


def _fitted_or_errors(scorer: SimilarityJudge, train: Dataset, items: list, weights: Path) -> list[Judgment]:
    """Fit on ``train`` and judge ``items``; a fold that cannot be fitted (e.g. one score class)
    gives its items error judgments that say why, never a made-up score."""
    try:
        fitted = scorer.fit(list(train), out_dir=weights)
    except ConfigError as exc:
        return [scorer.error(item, f"similarity fit failed: {exc}") for item in items]
    return fitted.run(items)


def _on_scale(judgment: Judgment, source: tuple[float, float], target: tuple[float, float]) -> Judgment:
    if not judgment.ok or judgment.score is None:
        return judgment
    extra = {**judgment.extra, "native_score": judgment.score}
    return judgment.model_copy(update={"score": rescale(judgment.score, source, target), "extra": extra})


# -- ensembles --------------------------------------------------------------------------------------
def ensembles(members: list[Member], aspect: str, dev: Dataset, test: Dataset, aggregators: Sequence[str],
              scale: tuple[float, float], vote_tokens: int, seed: int, out: Path,
              backend_options: dict) -> tuple[list[Row], EnsembleJudge]:
    """Every aggregate over the same member files: plain ones, the ones learned on dev, the LLM votes."""
    rows = []
    best = None
    for aggregate in PLAIN + LEARNED:
        started = time.perf_counter()
        ensemble = EnsembleJudge(members=members, aggregate=aggregate, aspect=aspect, task_field="dataset")
        if aggregate in LEARNED:
            ensemble = ensemble.fit(list(dev))
            best = ensemble if aggregate == "best" else best
        judgments = ensemble.run(list(test))
        note = f"chose {ensemble.selection['*']}" if aggregate == "best" else _weights_note(ensemble)
        rows.append(Row(_ensemble_label(aggregate), "ensemble", judgments, 0.0, time.perf_counter() - started, note))
    for model in aggregators:
        vote = EnsembleJudge(members=members, aggregate="llm_vote", aspect=aspect, scale=scale,
                             max_tokens=vote_tokens, seed=seed)
        folder = out / "votes" / f"{_slug(model)}-{vote.digest()[:8]}"
        log(f"llm_vote by {model}: {len(test)} items -> {folder}")
        with make_client(model, backend_options=backend_options) as client:
            result = run_judge(vote, list(test), client, folder, meta=False)
        aggregator_calls = sum(j.usage.calls + j.usage.cache_hits for j in result.judgments)
        log(f"llm_vote by {model}: {result.usage['calls']} new calls, {result.usage['wall_s']:.0f}s, {result.counts}")
        rows.append(Row(f"LLM vote, aggregator {model}", "ensemble", list(result.judgments), aggregator_calls / len(test),
                        result.usage["wall_s"], f"{result.usage['calls']} new aggregator calls",
                        new_calls=result.usage["calls"]))
    return rows, best


def _ensemble_label(aggregate: str) -> str:
    return {"mean": "mean", "median": "median", "weighted": "weighted mean (fitted on dev)",
            "stack": "stacking, ridge (fitted on dev)", "best": "best member chosen on dev (PanguIR eq. 1-2)"}[aggregate]


def _weights_note(ensemble: EnsembleJudge) -> str:
    if ensemble.learned is None:
        return ""
    coef = ensemble.learned["coef"]
    return "coef " + ", ".join(f"{m.name} {c:.2f}" for m, c in zip(ensemble.members, coef, strict=True))


# -- evaluation -------------------------------------------------------------------------------------
def member_row(run: MemberRun, test: Dataset) -> Row:
    wanted = {item.id for item in test}
    judgments = [j for j in load_judgments(run.path) if j.item_id in wanted]
    calls = sum(j.usage.calls + j.usage.cache_hits for j in judgments)
    label = run.name if run.model else "similarity scorer (no LLM)"
    return Row(label, "member", judgments, calls / len(test), run.wall_s)


def evaluate(rows: list[Row], test: Dataset, aspect: str, resamples: int, seed: int) -> Row:
    """Correlations with CIs for every row; the best member (by test dataset-level Spearman) and
    every other row's difference to it (paired bootstrap on the same resampled groups)."""
    for row in rows:
        report = meta_evaluate(test, row.judgments, aspect=aspect, n_resamples=resamples, seed=seed)
        row.metrics = {level: report.sections.get(level, {}) for level in LEVELS}
    members = [r for r in rows if r.kind == "member"]
    best = max(members, key=lambda r: _value(r.metrics["dataset"].get("spearman")))
    for row in rows:
        if row is not best:
            row.versus_best = _comparison(test, row, best, aspect, resamples, seed)
    return best


def _comparison(test: Dataset, row: Row, best: Row, aspect: str, resamples: int, seed: int) -> dict:
    try:
        report = meta_evaluate(test, row.judgments, aspect=aspect, n_resamples=resamples, seed=seed,
                               baseline=best.judgments)
    except ValueError:  # a constant judge has no bootstrap replicates to pair: the difference is n/a
        return {}
    return report.sections.get("comparison", {})


def _value(estimate) -> float:
    value = getattr(estimate, "value", float("nan"))
    return -np.inf if value is None or np.isnan(value) else value


def _cell(estimate) -> str:
    if estimate is None or estimate.value is None or np.isnan(estimate.value):
        return "n/a"
    ci = f" [{estimate.ci[0]:.2f}, {estimate.ci[1]:.2f}]" if estimate.ci else ""
    return f"{estimate.value:.3f}{ci}"


def _difference(comparison) -> str:
    if comparison is None or comparison.difference is None or np.isnan(comparison.difference):
        return "n/a"
    ci = f" [{comparison.ci[0]:+.2f}, {comparison.ci[1]:+.2f}]" if comparison.ci else ""
    return f"{comparison.difference:+.3f}{ci}"


def unparsable_share(judgments: list[Judgment]) -> str:
    unparsable = sum(j.status == "unparsable" for j in judgments)
    errors = sum(j.status == "error" for j in judgments)
    text = f"{unparsable}/{len(judgments)}"
    return text + (f" (+{errors} errors)" if errors else "")


# -- the report -------------------------------------------------------------------------------------
def results_table(rows: list[Row], best: Row) -> list[str]:
    head = ["judge", "scored", *(f"{level} {s}" for level in LEVELS for s in STATISTICS),
            "Δ dataset ρ vs best member", "LLM calls/item", "unparsable", "note"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + "---|"]
    for row in rows:
        name = f"**{row.name}** (best member)" if row is best else row.name
        cells = [_cell(row.metrics[level].get(s)) for level in LEVELS for s in STATISTICS]
        versus = "—" if row is best else _difference(row.versus_best.get("dataset", {}).get("spearman"))
        scored = sum(j.ok and j.score is not None for j in row.judgments)
        lines.append(f"| {name} | {scored}/{len(row.judgments)} | " + " | ".join(cells) + f" | {versus} | {row.calls_per_item:.2f} | "
                     f"{unparsable_share(row.judgments)} | {row.note} |")
    return lines


def selection_table(best: EnsembleJudge) -> list[str]:
    frame = selection_frame(best)
    names = [m.name for m in best.members]
    lines = ["| task | " + " | ".join(names) + " | selected |", "|---|" + "---:|" * len(names) + "---|"]
    for task, values in frame.iterrows():
        cells = ["n/a" if values[n] is None or np.isnan(values[n]) else f"{values[n]:.3f}" for n in names]
        lines.append(f"| {task} | " + " | ".join(cells) + f" | {values['selected']} |")
    return lines


def cost_table(runs: list[MemberRun], rows: list[Row]) -> list[str]:
    lines = ["| member | items | new calls | cache hits | wall s | s per new call | prompt tokens/call | "
             "completion tokens/call |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for run in runs:
        judgments = load_judgments(run.path)
        if run.model is None:
            lines.append(f"| similarity scorer | {len(judgments)} | 0 | 0 | {run.wall_s:.1f} | — | — | — |")
            continue
        per_call = f"{run.wall_s / run.new_calls:.2f}" if run.new_calls else "— (all cached)"
        lines.append(f"| {run.name} | {len(judgments)} | {run.new_calls} | {run.cache_hits} | {run.wall_s:.1f} | "
                     f"{per_call} | {_tokens_per_call(judgments)} |")
    for row in rows:
        if row.name.startswith("LLM vote"):
            per_call = f"{row.wall_s / row.new_calls:.2f}" if row.new_calls else "— (all cached)"
            lines.append(f"| {row.name} (test only) | {len(row.judgments)} | {row.new_calls} | — | {row.wall_s:.1f} | "
                         f"{per_call} | {_tokens_per_call(row.judgments)} |")
    return lines


def _tokens_per_call(judgments: list[Judgment]) -> str:
    """Prompt | completion tokens per call the model answered (a cache hit records none), over every run
    folder's judgments: a resumed or cached rerun still shows what the calls cost when they were made."""
    answered = [j.usage for j in judgments if j.usage.calls]
    if not answered:
        return "— | —"
    calls = sum(u.calls for u in answered)
    return f"{sum(u.prompt_tokens for u in answered) / calls:.0f} | {sum(u.completion_tokens for u in answered) / calls:.0f}"


def render(args, argv, started_at: str, loads: list[str], dev: Dataset, test: Dataset, scale: int,
           runs: list[MemberRun], rows: list[Row], best: Row, chooser: EnsembleJudge, total_s: float) -> str:
    default_models = list(args.member_models) == DEFAULT_MODELS
    size_note = ("" if default_models else
                 f"**Plumbing check, not a quality figure**: members {', '.join(args.member_models)}, aggregator "
                 f"{', '.join(args.aggregator_model) or 'none (--no-vote)'}, {len(dev)} dev / {len(test)} test items. The full run uses "
                 f"{' and '.join(DEFAULT_MODELS)} with the 1.5B model as aggregator.")
    return "\n".join([
        "## Ensemble of the embedded models and the similarity scorer (PanguIR)",
        "",
        *([size_note, ""] if size_note else []),
        *([args.note, ""] if args.note else []),
        f"Command: `{command_line('bench.bench_ensemble_embedded', argv)}`  ",
        f"Date: {started_at}; machine: {describe_machine()}; load average (1/5/15 min) at start and after the "
        f"members and the ensembles: {', '.join(loads)}. Wall time of the whole run: {total_s / 60:.1f} min "
        "(calls served from the cache cost nothing).",
        "",
        f"Data: `{args.dataset}` {args.aspect} (human scale {_scale_text(dev, args.aspect)}), groups of two or more "
        f"outputs, split by group (seed {args.seed}): {len(dev)} dev items ({len(dev.groups())} groups), "
        f"{len(test)} test items ({len(test.groups())} groups). Members: prompted judges "
        f"({', '.join(args.member_models)}; strategy `cot=suffix` on a 1-{scale} scale: the rating, then a reason "
        f"cut at {args.reason_tokens} tokens; greedy), and the similarity scorer ({args.embedder} embeddings, "
        f"logistic regression, expected score; dev predictions out of fold, {args.sim_folds} folds; test from the "
        f"fit on all dev; scores mapped linearly onto 1-{scale}). Each member ran once over dev + test; every "
        "ensemble reads the members' judgments files, so all aggregates use the same member verdicts. `llm_vote`: "
        f"the aggregator reads the item, each member's rating and reason, and writes a reason and a rating on "
        f"1-{scale} (up to {args.vote_tokens} tokens).",
        "",
        f"Test figures ({len(test)} items): correlation with the human score, 95% bootstrap CIs over resampled "
        f"groups ({args.resamples} resamples). Group level: within each source, averaged (SF groups mostly hold two "
        "outputs, so a group's ρ is ±1). Δ: this row minus the best member (by test dataset-level Spearman, in "
        "bold; choosing it with the test labels is optimistic), paired bootstrap on the items both scored. LLM calls/item: "
        "calls plus cache hits per test item (an ensemble pays for its LLM members, plus one aggregator call for "
        "the vote). Unparsable: replies with no readable rating, recorded and left out (an ensemble leaves out the "
        "members that failed on an item).",
        "",
        *results_table(rows, best),
        "",
        "Selection table (`best`, PanguIR eq. 1): dev Spearman of each member, per task (`task_field: dataset`, "
        "so `*` and the dataset are the same items here):",
        "",
        *selection_table(chooser),
        "",
        "Cost of each member and aggregator (wall time per call: this run's wall time over the calls the model "
        "answered in this run, cache hits excluded; tokens: per call the model answered, in any run):",
        "",
        *cost_table(runs, rows),
        "",
        f"Run folders, judgments and `results.json`: `{args.out}`.",
    ]) + "\n"


def _scale_text(items: Dataset, aspect: str) -> str:
    low, high = items[0].aspect_scale(aspect)
    return f"{low:g}-{high:g}"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)


def results_json(rows: list[Row], best: Row, runs: list[MemberRun]) -> dict:
    def estimates(row: Row) -> dict:
        return {level: {s: (e.to_dict() if (e := row.metrics[level].get(s)) is not None else None) for s in STATISTICS}
                for level in LEVELS}

    return {"best_member": best.name,
            "rows": [{"name": r.name, "kind": r.kind, "calls_per_item": r.calls_per_item, "wall_s": r.wall_s,
                      "statuses": {s: sum(j.status == s for j in r.judgments) for s in ("ok", "unparsable", "error")},
                      "correlations": estimates(r), "note": r.note} for r in rows],
            "members": [{"name": m.name, "model": m.model, "judgments": str(m.path), "wall_s": m.wall_s,
                         "new_calls": m.new_calls, "cache_hits": m.cache_hits} for m in runs]}


# -- main -------------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="sfres", choices=sorted(DEFAULT_ASPECT))
    parser.add_argument("--aspect", help="default: naturalness (SF), coherence (Topical-Chat)")
    parser.add_argument("--dev-items", type=int, default=40)
    parser.add_argument("--test-items", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--member-models", nargs="+", default=DEFAULT_MODELS, help="one prompted member per model")
    parser.add_argument("--aggregator-model", nargs="+", default=["qwen2.5-coder-1.5b"],
                        help="one llm_vote ensemble per model (e.g. qwen2.5-coder-1.5b qwen2.5-coder-0.5b)")
    parser.add_argument("--no-vote", action="store_true", help="skip the LLM vote")
    parser.add_argument("--embedder", default="static", help="similarity scorer embeddings: static, minilm or a folder")
    parser.add_argument("--sim-folds", type=int, default=5, help="folds for the scorer's out-of-fold dev predictions")
    parser.add_argument("--reason-tokens", type=int, default=40, help="max tokens of a member's rating + reason")
    parser.add_argument("--vote-tokens", type=int, default=96, help="max tokens of the aggregator's reason + rating")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--n-threads", type=int, help="llama.cpp threads (default: every core; 1 on a busy machine)")
    parser.add_argument("--out", type=Path, default=judgelab_home() / "bench" / "ensemble_embedded",
                        help="member run folders, vote run folders, results.json (rerun: resumes)")
    parser.add_argument("--note", default="", help="a remark printed in the section (e.g. what the machine was doing)")
    parser.add_argument("--no-doc", action="store_true", help="print the section, do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    args.aspect = args.aspect or DEFAULT_ASPECT[args.dataset]
    if args.no_vote:
        args.aggregator_model = []
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    started_at = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    started, loads = time.perf_counter(), [load_avg()]
    dev, test = dev_test_split(args.dataset, args.aspect, args.dev_items, args.test_items, args.seed)
    scale = judge_scale(dev, args.aspect)
    log(f"{args.dataset}/{args.aspect}: {len(dev)} dev, {len(test)} test items; judges rate on 1-{scale}")
    both = Dataset(list(dev) + list(test))
    judge = prompted_member(args.aspect, scale, args.reason_tokens, args.seed)
    backend = {"n_threads": args.n_threads} if args.n_threads else {}
    runs = [llm_member(name, model, judge, both, args.out, backend)
            for name, model in zip(member_names(args.member_models), args.member_models, strict=True)]
    runs.append(similarity_member(args.aspect, args.embedder, dev, test, (1.0, float(scale)), args.sim_folds,
                                  args.seed, args.out))
    loads.append(load_avg())
    members = [Member(name=run.name, judgments=run.path) for run in runs]
    ensemble_rows, chooser = ensembles(members, args.aspect, dev, test, args.aggregator_model, (1.0, float(scale)),
                                       args.vote_tokens, args.seed, args.out, backend)
    loads.append(load_avg())
    rows = [member_row(run, test) for run in runs] + ensemble_rows
    for row in ensemble_rows:  # an ensemble pays for every LLM member's call, plus its own aggregator's
        row.calls_per_item += sum(r.calls_per_item for r in rows if r.kind == "member")
    best = evaluate(rows, test, args.aspect, args.resamples, args.seed)
    report = render(args, argv, started_at, loads, dev, test, scale, runs, rows, best, chooser,
                    time.perf_counter() - started)
    (args.out / "results.json").write_text(json.dumps(results_json(rows, best, runs), indent=1), encoding="utf-8")
    print(report)
    if not args.no_doc:
        write_doc_section("bench_ensemble_embedded", report)


if __name__ == "__main__":
    main()
