"""`judgelab --help` starts at once (issue 39, item 4): the command line loads only what declaring its
options needs (typer, rich, help texts); every command imports what it uses inside its function.

Checked on what the process has imported, not on a time (a busy machine makes any bound flaky; the
timings are bench/bench_startup.py's). Each heavy package below cost 0.1-1.5 s before.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.cli import run_main_captured

#: Packages no help may load. numpy and pydantic too: judgelab's own, but each is 0.1-0.3 s of a start
#: that typer and rich already make 0.2 s long (typer loads pydantic only to check a value given).
HEAVY = ("sklearn", "pandas", "scipy", "numpy", "torch", "transformers", "sentence_transformers", "httpx",
         "openai", "llama_cpp", "ray", "pyarrow", "krippendorff", "ir_measures", "jinja2", "yaml", "pydantic")

_LOADED = """
import json, sys
sys.argv = ["judgelab", *sys.argv[1:]]
from judgelab.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""

COMMANDS = [["--help"], ["evaluate", "--help"], ["judge", "--help"], ["optimize", "--help"], ["models", "list", "--help"]]


def loaded_by(args: list[str], shows: str = "Usage") -> set[str]:
    """The top-level packages a fresh ``judgelab ARGS`` process has imported when it exits."""
    done = subprocess.run([sys.executable, "-c", _LOADED, *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    assert shows in done.stdout, done.stdout + done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return {name.split(".")[0] for name in json.loads(line.removeprefix("MODULES "))}


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_help_loads_no_heavy_package(args):
    heavy = sorted(set(HEAVY) & loaded_by(args))
    assert not heavy, (f"`judgelab {' '.join(args)}` imports {heavy}: import them inside the command's function "
                       "(src/judgelab/commands/__init__.py), not at the top of its module")


def test_a_small_evaluate_loads_only_what_it_computes_with():
    """numpy and scipy do the work; scikit-learn and pandas (about 1.5 s together) were loaded for one
    isotonic fit and one factorize, krippendorff and the LLM clients through package imports."""
    data = Path(__file__).resolve().parents[1] / "data" / "sources" / "promptfoo" / "results.json"
    loaded = loaded_by(["evaluate", "--data", data, "--from", "promptfoo", "--judge", "llm-rubric"], "echo-plain")
    assert {"numpy", "scipy"} <= loaded
    heavy = sorted(loaded & {"sklearn", "pandas", "pyarrow", "krippendorff", "torch", "transformers", "httpx",
                             "openai", "llama_cpp", "ray", "sentence_transformers"})
    assert not heavy, heavy


def _commands():
    """(path, click command) for every command and sub-app, the root included."""
    import typer

    from judgelab.cli import app

    def walk(command, path):
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])

    return list(walk(typer.main.get_command(app), []))


@pytest.mark.parametrize("path", [path for path, _ in _commands()], ids=lambda path: " ".join(path) or "judgelab")
def test_no_flag_reads_as_taking_a_value(path, capsys, monkeypatch):
    """typer 0.29 prints a type beside every option: ``--debug <bool>`` and ``--help <bool>`` read as if they
    took a value (issue 41, item 12). Flags show none; options that take a value keep theirs."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run_main_captured(capsys, *path, "--help")
    assert code == 0, err
    assert "<bool>" not in out, out
    assert "--help" in out
    if path == ["evaluate"]:
        assert re.search(r"--data\s+-d\s+<path>", out), out  # a value's type is still shown


def test_every_checked_range_is_a_limit():
    """Commands name their ranges (``checked("Seconds")``) so that --help loads no pydantic: each name is
    one of judgelab.limits' constrained types (a typo would first fail when a user gives the option)."""
    from pydantic import TypeAdapter

    from judgelab import limits

    sources = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "commands"
    names = {name for path in sources.glob("*.py") for name in re.findall(r'checked\("(\w+)"\)', path.read_text())}
    assert len(names) >= 15
    for name in sorted(names):
        TypeAdapter(getattr(limits, name))


def test_the_concurrency_and_threads_help_state_the_limits():
    from judgelab import limits
    from judgelab.commands._common import CONCURRENCY_HELP, THREADS_HELP

    assert f"1 to {limits.MAX_CONCURRENCY} " in CONCURRENCY_HELP
    assert f"1 to {limits.MAX_THREADS} " in THREADS_HELP
