"""Run `judgelab` as a user does: a separate process, its exit code and its output; and the files a
user would give it (JSONL rows, a judge's run folder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock


def run_cli(*args: object, timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``env``: variables laid over this process's (e.g. ``COLUMNS=80``, the terminal width rich reads)."""
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def run_main_in_process(capsys, *args: object) -> tuple[int, str]:
    """The console script's entry point in this process (no process start per case): exit code and
    stderr. ``capsys`` is pytest's fixture of the calling test."""
    code, _, err = run_main_captured(capsys, *args)
    return code, err


def run_main_captured(capsys, *args: object) -> tuple[int, str, str]:
    """``run_main_in_process`` with stdout too: exit code, stdout, stderr."""
    from judgelab.cli import main

    with mock.patch.object(sys, "argv", ["judgelab", *map(str, args)]):
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def judge_run_folder(folder: Path, judgments: list[dict], usage: dict) -> Path:
    """A judge's run folder as `judgelab judge` leaves it (run.json + judgments.jsonl), without the
    model run: for the commands that read one (meta, report)."""
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({
        "judge": {"kind": "prompted", "aspect": "overall", "strategy": {"scale": 5}}, "model": "tiny-test-model",
        "backend": "embedded:tiny", "status": "finished", "items": len(judgments), "usage": usage}))
    write_jsonl(folder / "judgments.jsonl", judgments)
    return folder
