"""Traced runs and conversations through the command line: Langfuse traces (`--from langfuse`), the Collector's OTLP
JSON (detected as `otel`) and promptfoo's multi-turn tests, into `meta` and `evaluate` as a user runs them. The
expected figures are counted from the fixtures (tests/data/sources/README.md says how each was made)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import run_main_captured

SOURCES = Path(__file__).resolve().parents[1] / "data" / "sources"
LANGFUSE = SOURCES / "langfuse" / "traces.jsonl"


def _json(capsys, *args) -> tuple[dict, str]:
    code, out, err = run_main_captured(capsys, *args, "--json", "--bootstrap", "50")
    assert code == 0, err
    return json.loads(out), err


def _judge_values(report: dict) -> dict[str, float]:
    return {system: report["estimators"]["judge"][system]["value"] for system in report["systems"]}


def test_langfuse_meta_compares_the_evaluator_with_the_annotations(capsys):
    # correctness (EVAL) 0.9, 0.4, 0.1 against helpfulness (ANNOTATION) 5, mean(2, 3), 1: the same order
    report, err = _json(capsys, "meta", "--data", LANGFUSE, "--from", "langfuse", "--judge", "correctness")
    assert report["aspect"] == "helpfulness" and report["coverage"]["n_used"] == 3
    assert report["dataset"]["spearman"]["value"] == 1.0
    assert "their mean is read" in err  # the reader's notes, on stderr


def test_langfuse_evaluate_ranks_the_systems_by_the_evaluators_scores(capsys):
    report, _ = _json(capsys, "evaluate", "--data", LANGFUSE, "--from", "langfuse", "--judge", "correctness")
    assert _judge_values(report) == {"careful": 0.65, "sloppy": 0.1}  # (0.9 + 0.4) / 2 and 0.1


def test_otlp_json_is_detected_and_evaluated_as_the_sdks_spans_are(capsys):
    otlp, _ = _json(capsys, "evaluate", "--data", SOURCES / "otel" / "otlp.jsonl", "--judge", "Relevance")
    spans, _ = _json(capsys, "evaluate", "--data", SOURCES / "otel" / "spans.jsonl", "--judge", "Relevance")
    assert _judge_values(otlp) == _judge_values(spans) and set(otlp["systems"]) == {"careful", "sloppy"}


def test_a_bad_langfuse_export_exits_2_naming_its_line(capsys, tmp_path):
    lines = LANGFUSE.read_text(encoding="utf-8").splitlines()
    trace = json.loads(lines[1])
    trace["observations"] = []
    bad = tmp_path / "traces.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(trace), lines[2]]) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    code, _, err = run_main_captured(capsys, "evaluate", "--data", bad, "--from", "langfuse", "--judge", "correctness",
                                     "--out", out)
    assert code == 2 and "traces.jsonl:2" in err and "no GENERATION observation" in err and not out.exists()
