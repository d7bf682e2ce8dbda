"""`judgelab icl-train` as a user runs it: help, and bad input refused before any model loads.

The training path itself runs with the real models in tests/integration/test_icl.py.
"""

from __future__ import annotations

import json

from tests.e2e.cli import run_cli


def write_items(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_help_lists_every_option():
    result = run_cli("icl-train", "--help")
    assert result.returncode == 0
    for option in ("--candidates", "--epochs", "--lr", "--scale", "--source", "--pool", "--examples", "--base-model"):
        assert option in result.stdout


def test_unknown_source_is_refused(tmp_path):
    data = write_items(tmp_path / "dev.jsonl", [{"id": "a", "output": "x", "scores": {"q": 1}, "scale": [1, 5]}])
    result = run_cli("icl-train", "--data", data, "--aspect", "q", "--out", tmp_path / "out", "--source", "semantic")
    assert result.returncode == 2 and "--source 'semantic'" in result.stderr and "Traceback" not in result.stderr


def test_bad_data_names_file_and_line(tmp_path):
    data = tmp_path / "dev.jsonl"
    data.write_text('{"id": "a", "output": "x", "scores": {"q": 1}}\n{"id": \n', encoding="utf-8")
    result = run_cli("icl-train", "--data", data, "--aspect", "q", "--out", tmp_path / "out", "--model", "smollm2-135m")
    assert result.returncode == 2 and "dev.jsonl" in result.stderr and ":2" in result.stderr
    assert not (tmp_path / "out").exists()
