"""Run `judgelab` as a user does: a separate process, its exit code and its output."""

from __future__ import annotations

import subprocess
import sys
from unittest import mock


def run_cli(*args: object, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def run_main_in_process(capsys, *args: object) -> tuple[int, str]:
    """The console script's entry point in this process (no process start per case): exit code and
    stderr. ``capsys`` is pytest's fixture of the calling test."""
    from judgelab.cli import main

    with mock.patch.object(sys, "argv", ["judgelab", *map(str, args)]):
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code
    return code, capsys.readouterr().err
