"""Bias audit of published judges (position, ties, self-preference, verbosity), and probes of an embedded one.

    .venv/bin/python -m bench.bench_audit                 # ~1 min, no model: writes its docs/benchmarks.md section
    .venv/bin/python -m bench.bench_audit --no-write      # prints only
    nice -n 10 .venv/bin/python -m bench.bench_audit --probes --model qwen2.5-coder-1.5b   # the probes (hours)
    .venv/bin/python -m bench.bench_audit --probes --probe-names swap pad   # only these (a cached run resumes)
    .venv/bin/python -m bench.bench_audit --probes --model smollm2-135m --limit 4 --no-write  # a proof run

Published verdicts (no model):
* Chatbot Arena, GPT-4 / Claude 3 Opus / GPT-3.5 (one order, the order the voter saw): first-position
  rate of judge and humans on the same comparisons and the paired difference, tie rates, and
  self-preference (the judge's family among the 20 systems: gpt-4, claude, gpt-3.5); cluster
  bootstrap over Arena questions.
* LLMBar, its 65 evaluators (both orders): flip rate, first-position rate, accuracy of one order
  and of the position-corrected (both-order) verdict, verbosity coefficient (fractional logit of the
  verdict on the standardised length difference, the gold label as covariate); and across evaluators,
  does the audited bias predict the evaluator's error? (Spearman with a bootstrap interval over
  evaluators; Pearson with Fisher's interval.)
* HANNA, the 20 LLM raters of reference/hanna_llm_ratings.jsonl (5 models x 4 prompts): length
  coefficient of the rater's mean rating over the six aspects on the story length in words, the
  human mean rating held fixed, cluster-robust over story prompts. HANNA's raters are humans, so
  the covariate is the humans' mean; as a reference, each of the three human rating slots is
  regressed the same way on the mean of the other two (the slots are not the same people across
  stories: a reference for "a human beside other humans", not a per-person figure).

``--probes`` runs judgelab.audit's swap / pad / reformat probes with the embedded model on LLMBar
(the pairwise judge, one order per request, ``swap: false``, so the swap probe sees the raw order
effect), through ``--cache`` (a rerun resumes), and writes its own section.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

from bench.common import command_line, describe_machine, log, write_doc_section
from judgelab.metrics import bias
from judgelab.metrics.pairwise import pairwise_accuracy

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
ARENA_FAMILIES = {"gpt-4-0125-preview": "gpt-4", "claude-3-opus-20240229": "claude", "gpt-3.5-turbo": "gpt-3.5"}
HANNA_ASPECTS = ("relevance", "coherence", "empathy", "surprise", "engagement", "complexity")


def rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def fmt(estimate, digits: int = 3) -> str:
    if not np.isfinite(estimate.value):
        return f"n/a ({estimate.reason})"
    ci = "" if not estimate.ci else f" [{estimate.ci[0]:.{digits}f}, {estimate.ci[1]:.{digits}f}]"
    return f"{estimate.value:.{digits}f}{ci}"


def fmt_difference(comparison, digits: int = 3) -> str:
    ci = "" if not comparison.ci else f" [{comparison.ci[0]:+.{digits}f}, {comparison.ci[1]:+.{digits}f}]"
    return f"{comparison.difference:+.{digits}f}{ci}"


# -- Chatbot Arena ------------------------------------------------------------------------------
def arena_section(shared: Path, n_resamples: int) -> str:
    comparisons = {r["id"]: r for r in rows(shared / "chatbot_arena" / "comparisons.jsonl")}
    by_judge: dict[str, dict[str, str]] = defaultdict(dict)
    for r in rows(shared / "chatbot_arena" / "judgments.jsonl"):
        by_judge[r["judge"]][r["item_id"]] = r["prediction"]
    lines = ["| judge | first-position rate, judge | humans | judge - humans | tie rate, judge | humans | "
             "own family | own-family win share, judge - humans |", "|---|---|---|---|---|---|---|---|"]
    for judge, family in ARENA_FAMILIES.items():
        ids = list(by_judge[judge])
        verdicts = [by_judge[judge][i] for i in ids]
        human = [comparisons[i]["label"] for i in ids]
        groups = [comparisons[i]["group_id"] for i in ids]
        options = {"n_resamples": n_resamples}
        position = bias.position_bias_one_order(verdicts, human, groups, **options)
        ties = bias.tie_rates(verdicts, human, groups, **options)
        own = bias.self_preference(verdicts, human, [comparisons[i]["system_a"] for i in ids],
                                   [comparisons[i]["system_b"] for i in ids], family, groups, **options)
        lines.append(f"| {judge} | {fmt(position['judge_first_position_rate'])} | "
                     f"{fmt(position['human_first_position_rate'])} | {fmt_difference(position['difference'])} | "
                     f"{fmt(ties['judge_tie_rate'])} | {fmt(ties['human_tie_rate'])} | {family} "
                     f"(n = {own['judge_own_win_share'].n}) | {fmt_difference(own['difference'])} "
                     f"({own['judge_own_win_share'].value:.3f} vs {own['human_own_win_share'].value:.3f}) |")
        log(f"arena {judge} done")
    return "\n".join(lines)


# -- LLMBar -------------------------------------------------------------------------------------
def llmbar_evaluators(shared: Path, n_resamples: int) -> list[dict]:
    items = {r["id"]: r for r in rows(shared / "llmbar.jsonl")}
    by_judge: dict[str, list[dict]] = defaultdict(list)
    for r in rows(shared / "reference" / "llmbar_evaluator_results.jsonl"):
        by_judge[r["judge"]].append(r)
    out = []
    for judge, results in by_judge.items():
        first = [r["prediction"].get("swap_false") for r in results]
        second = [r["prediction"].get("swap_true") for r in results]
        gold = [items[r["item_id"]]["label"] for r in results]
        keep = bias.has_verdict(np.array(first, dtype=object), np.array(second, dtype=object))
        kept = [np.asarray(v, dtype=object)[keep] for v in (first, second, gold)]
        position = bias.position_bias_both_orders(kept[0], kept[1], n_resamples=n_resamples)
        corrected = bias.both_order_verdict(kept[0], kept[1])
        lengths = [np.array([len(items[r["item_id"]][side]) for r in results], dtype=float)[keep]
                   for side in ("output_a", "output_b")]
        out.append({
            "judge": judge, "n": int(keep.sum()), **position,
            "accuracy_one_order": pairwise_accuracy(kept[2], kept[0], n_resamples=n_resamples)["accuracy"],
            "accuracy_both_orders": pairwise_accuracy(kept[2], corrected, n_resamples=n_resamples)["accuracy"],
            "length": bias.verbosity_pairwise(kept[0], *lengths, kept[2], judge_swapped=kept[1]),
        })
    log(f"llmbar: {len(out)} evaluators")
    return out


def llmbar_table(evaluators: list[dict]) -> str:
    lines = ["| evaluator | n | flip rate | first-position rate | accuracy, one order | accuracy, both orders | "
             "length coefficient |", "|---|---|---|---|---|---|---|"]
    for e in sorted(evaluators, key=lambda e: -e["flip_rate"].value):
        lines.append(f"| {e['judge']} | {e['n']} | {fmt(e['flip_rate'])} | {fmt(e['first_position_rate'])} | "
                     f"{fmt(e['accuracy_one_order'])} | {fmt(e['accuracy_both_orders'])} | {fmt(e['length'], 2)} |")
    return "\n".join(lines)


def predicts_accuracy(evaluators: list[dict], n_resamples: int) -> str:
    """Across evaluators: does the audited bias go with a larger error? Spearman (bootstrap over
    evaluators, scipy) and Pearson (Fisher's interval, scipy)."""
    error_one = np.array([1 - e["accuracy_one_order"].value for e in evaluators])
    error_both = np.array([1 - e["accuracy_both_orders"].value for e in evaluators])
    biases = {"flip rate": np.array([e["flip_rate"].value for e in evaluators]),
              "|first-position rate - 0.5|": np.array([abs(e["first_position_rate"].value - 0.5) for e in evaluators]),
              "length coefficient": np.array([e["length"].value for e in evaluators])}
    lines = ["| audited bias | error | Spearman [95% CI] | Pearson [95% CI] |", "|---|---|---|---|"]
    for name, values in biases.items():
        for error_name, error in (("one order", error_one), ("both orders", error_both)):
            finite = np.isfinite(values) & np.isfinite(error)
            x, y = values[finite], error[finite]
            spearman = stats.spearmanr(x, y).statistic
            interval = stats.bootstrap((x, y), lambda a, b: stats.spearmanr(a, b).statistic, paired=True,
                                       vectorized=False, n_resamples=n_resamples, method="percentile",
                                       random_state=np.random.default_rng(0)).confidence_interval
            pearson = stats.pearsonr(x, y)
            fisher = pearson.confidence_interval(0.95)
            lines.append(f"| {name} | 1 - accuracy, {error_name} | {spearman:+.2f} [{interval.low:+.2f}, "
                         f"{interval.high:+.2f}] | {pearson.statistic:+.2f} [{fisher.low:+.2f}, {fisher.high:+.2f}] |")
    return "\n".join(lines)


# -- HANNA --------------------------------------------------------------------------------------
def hanna_section(shared: Path) -> str:
    stories = {r["id"]: r for r in rows(shared / "hanna.jsonl")}
    human_mean = {i: float(np.mean([r["scores"][a] for a in HANNA_ASPECTS])) for i, r in stories.items()}
    words = {i: len(r["output"].split()) for i, r in stories.items()}
    by_judge: dict[str, list[dict]] = defaultdict(list)
    for r in rows(shared / "reference" / "hanna_llm_ratings.jsonl"):
        by_judge[r["judge"]].append(r)
    lines = ["| rater | n | length coefficient, human mean held fixed | without the covariate |", "|---|---|---|---|"]
    for judge, ratings in sorted(by_judge.items()):
        ids = [r["item_id"] for r in ratings]
        score = [r["prediction"].get("average") for r in ratings]
        score = np.array([np.nan if s is None else s for s in score], dtype=float)
        length = np.array([words[i] for i in ids], dtype=float)
        groups = [stories[i]["group_id"] for i in ids]
        held = bias.verbosity_pointwise(score, length, [human_mean[i] for i in ids], groups)
        raw = bias.verbosity_pointwise(score, length, None, groups)
        lines.append(f"| {judge} | {held.n} | {fmt(held)} | {fmt(raw)} |")
    ids = list(stories)
    slots = [np.array([np.mean([stories[i]["extra"]["annotator_scores"][a][k] for a in HANNA_ASPECTS]) for i in ids])
             for k in range(3)]
    length = np.array([words[i] for i in ids], dtype=float)
    groups = [stories[i]["group_id"] for i in ids]
    for k in range(3):
        others = np.mean([slots[j] for j in range(3) if j != k], axis=0)
        held = bias.verbosity_pointwise(slots[k], length, others, groups)
        raw = bias.verbosity_pointwise(slots[k], length, None, groups)
        lines.append(f"| human slot {k + 1} (vs the other two) | {held.n} | {fmt(held)} | {fmt(raw)} |")
    log("hanna done")
    return "\n".join(lines)


# -- probes -------------------------------------------------------------------------------------
def probes_section(shared: Path, model: str, limit: int | None, cache: Path | None,
                   names: list[str] | None = None) -> str:
    from judgelab.audit.probes import PROBES, load_probe_items, run_probes
    from judgelab.judges.pairwise import PairwiseJudge
    from judgelab.llm.resolve import make_client

    items = load_probe_items(shared / "llmbar.jsonl", limit=limit)
    judge = PairwiseJudge(swap=False)
    log(f"probes: {len(items)} LLMBar pairs, model {model}")
    with make_client(model, None, cache=cache or True) as client:
        results = run_probes(items, judge, client, names or PROBES)
    lines = [f"Model `{model}`, the pairwise judge's defaults with `swap: false`, {len(items)} LLMBar pairs; "
             "flip rate: the verdict changed; towards: the preference moved towards the perturbed output "
             "(95% Wilson intervals).", "", "| probe | n | failed | flip rate | towards the perturbed |",
             "|---|---|---|---|---|"]
    for name, result in results.items():
        toward = "" if result.toward_perturbed is None else fmt(result.toward_perturbed)
        lines.append(f"| {name} | {result.flip_rate.n} | {result.failed} | {fmt(result.flip_rate)} | {toward} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="The shared benchmarks folder.")
    parser.add_argument("--bootstrap", type=int, default=1000, help="Bootstrap resamples.")
    parser.add_argument("--probes", action="store_true", help="Run the probes with --model instead.")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="The probes' model.")
    parser.add_argument("--limit", type=int, default=None, help="Probe only the first N LLMBar pairs.")
    parser.add_argument("--probe-names", nargs="+", default=None, metavar="PROBE",
                        help="Run only these probes (swap, pad, reformat; default: all).")
    parser.add_argument("--cache", type=Path, default=None, help="Completion cache (default: judgelab's).")
    parser.add_argument("--no-write", action="store_true", help="Print only; leave docs/benchmarks.md alone.")
    args = parser.parse_args(argv)
    command = command_line("bench.bench_audit", argv)
    if args.probes:
        body = probes_section(args.shared, args.model, args.limit, args.cache, args.probe_names)
        name, heading = "bench_audit_probes", "## Bias audit: counterfactual probes"
    else:
        evaluators = llmbar_evaluators(args.shared, args.bootstrap)
        body = "\n\n".join([
            "### Chatbot Arena judges: one order against the human votes (18,833 comparisons)",
            arena_section(args.shared, args.bootstrap),
            "First-position rate: share of the decisive verdicts (a or b) that pick the output shown first; "
            "the benchmarks README's 86% / 35% count ties as not-first. 95% cluster-bootstrap intervals over "
            "Arena questions; differences are paired. Own-family win share: ties count half, on the comparisons "
            "with exactly one system of the judge's family.",
            "### LLMBar evaluators: both orders (293 items each)",
            llmbar_table(evaluators),
            "Flip rate and first-position rate with 95% intervals (Wilson; the first-position rate by a "
            "bootstrap over items, two verdicts each); accuracy against the gold label, ties half; length "
            "coefficient: log-odds of preferring output_a per SD of len(a) - len(b) (characters), mean of "
            "both orders, gold label held fixed, robust 95% interval.",
            "### Does the audited bias predict the evaluator's error? (across the 65 evaluators)",
            predicts_accuracy(evaluators, args.bootstrap),
            "The evaluators share items and several share a model, so the interval treats evaluators as "
            "exchangeable: read it as descriptive.",
            "### HANNA raters: verbosity (pointwise)",
            hanna_section(args.shared),
            "Length coefficient: rating points (mean over the six aspects, 1-5) per SD of story length in words, "
            "OLS with the humans' mean rating as covariate, cluster-robust 95% interval over the 67 story prompts.",
        ])
        name, heading = "bench_audit", "## Bias audit on published judges"
    body += f"\n\nCommand: `{command}`. {describe_machine()}"
    print(body)
    if not args.no_write:
        write_doc_section(name, body, heading=heading)


if __name__ == "__main__":
    main()
