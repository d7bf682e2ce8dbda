"""Faithfulness on QAGS: the claim-level judge with the embedded model against the human consistency labels.

The ``faithfulness`` judge (src/judgelab/examples/faithfulness.yaml: the summary's claims listed, each checked
against the article) runs with the embedded model on the QAGS CNN/DM and XSum summaries of ../shared/benchmarks
(the 70% shared there). Reported per dataset: Spearman, Pearson and Kendall with the human consistency labels
(one summary per article: the dataset level), group-bootstrap 95% intervals, how many judgments were unparsable,
and UniEval's published predictions on the same items with the paired difference judge - UniEval. Beside it the
``grounding`` score (src/judgelab/examples/grounding.yaml: each summary sentence's best MiniLM cosine to an article
sentence, averaged; no LLM) on the same datasets, with its own paired difference to UniEval.

The run folders and the completion cache make it resumable: rerun the same command after an interruption and the
finished calls are read back, not paid again.

    .venv/bin/python -m bench.bench_faithfulness --datasets qags_xsum,qags_cnndm --write
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bench.common import command_line, describe_machine, log, table_head, table_row, write_doc_section

ROOT = Path(__file__).resolve().parents[1]
RUNS = Path(os.environ.get("JUDGELAB_BENCH_RUNS", Path.home() / ".cache" / "judgelab" / "bench_faithfulness"))
CONFIG = ROOT / "src" / "judgelab" / "examples" / "faithfulness.yaml"
GROUNDING = ROOT / "src" / "judgelab" / "examples" / "grounding.yaml"
STATISTICS = ("spearman", "pearson", "kendall")


def benchmarks() -> Path:
    return Path(os.environ.get("JUDGELAB_SHARED", ROOT.parent / "shared")) / "benchmarks"


def run_judge(dataset: str, model: str | None, threads: int, limit: int | None) -> Path:
    """The judge's run folder for ``dataset`` (resumed when it exists); no ``model``: the grounding score."""
    out = RUNS / f"{dataset}-{model or 'grounding'}"
    config, chosen = (CONFIG, ["--model", model]) if model else (GROUNDING, [])
    argv = [sys.executable, "-m", "judgelab.cli", "judge", "--config", str(config), "--aspect", "consistency",
            "--data", str(benchmarks() / f"{dataset}.jsonl"), *chosen, "--threads", str(threads),
            "--out", str(out), *(["--limit", str(limit)] if limit else [])]
    subprocess.run(argv, check=True)
    return out


def measure(dataset: str, run: Path) -> dict:
    """The judge's and UniEval's correlations on the items the judge scored, and judge - UniEval (paired)."""
    import judgelab as jl

    data = benchmarks() / f"{dataset}.jsonl"
    unieval = benchmarks() / "reference" / "unieval_predictions.jsonl"
    judged = jl.meta(data, run, aspect="consistency", levels="dataset", baseline=unieval,
                     baseline_field="prediction.consistency", baseline_judge="UniEval")
    found = judged.to_dict()
    coverage = found["coverage"]
    return {"dataset": dataset, "n": found["dataset"]["spearman"]["n"], "coverage": coverage,
            "judge": {s: found["dataset"][s] for s in STATISTICS},
            "difference": {s: found["comparison"]["dataset"][s] for s in STATISTICS}}


def rows(result: dict, model: str, grounding: dict | None = None) -> list[list[str]]:
    def cell(estimate: dict) -> str:
        ci = estimate.get("ci")
        if estimate.get("value") is None:
            return "-"
        return f"{estimate['value']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and None not in ci else "")

    def difference(found: dict) -> str:
        ci = found.get("ci")
        if found.get("difference") is None:
            return "-"
        return f"{found['difference']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci and None not in ci else "")

    counts = result["coverage"]
    judged = (f"{counts['n_used']} of {counts['n_items']} (unparsable {counts['n_unparsable']}, "
              f"errors {counts['n_error']})")
    out = [[result["dataset"], f"faithfulness, {model}", judged,
            *(cell(result["judge"][s]) for s in STATISTICS)]]
    differences = result["difference"]
    out.append([result["dataset"], "UniEval (published), same items", str(result["n"]),
                *(cell(differences[s]["baseline"]) for s in STATISTICS)])
    out.append([result["dataset"], "judge - UniEval (paired)", str(result["n"]),
                *(difference(differences[s]) for s in STATISTICS)])
    if grounding is not None:
        counts = grounding["coverage"]
        out.append([result["dataset"], "grounding, MiniLM (no LLM)", f"{counts['n_used']} of {counts['n_items']}",
                    *(cell(grounding["judge"][s]) for s in STATISTICS)])
        out.append([result["dataset"], "grounding - UniEval (paired)", str(grounding["n"]),
                    *(difference(grounding["difference"][s]) for s in STATISTICS)])
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="qags_xsum,qags_cnndm")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="the first N items of each dataset (a trial)")
    parser.add_argument("--write", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args(argv)
    table = [*table_head(["dataset", "judge", "scored", *STATISTICS])]
    for dataset in args.datasets.split(","):
        log(f"{dataset}: judging")
        result = measure(dataset, run_judge(dataset, args.model, args.threads, args.limit))
        log(f"{dataset}: grounding")
        grounding = measure(dataset, run_judge(dataset, None, args.threads, args.limit))
        table += [table_row(row) for row in rows(result, args.model, grounding)]
        log(f"{dataset}: {result['judge']['spearman']}; grounding {grounding['judge']['spearman']}")
    body = "\n".join([f"Machine: {describe_machine()}. Command: `{command_line('bench.bench_faithfulness', argv)}`. "
                      "Dataset-level correlations with the human consistency labels (one summary per article), "
                      "95% group-bootstrap intervals; UniEval's row is its published predictions on the items the "
                      "judge scored; the third row is the paired difference; the grounding rows are the no-LLM "
                      "score (src/judgelab/examples/grounding.yaml) and its paired difference to UniEval.", "",
                      *table])
    print(body)
    if args.write and args.limit is None:
        write_doc_section("bench_faithfulness", body,
                          heading="## Faithfulness on QAGS: the claim-level judge (`bench/bench_faithfulness.py`)")


if __name__ == "__main__":
    main()
