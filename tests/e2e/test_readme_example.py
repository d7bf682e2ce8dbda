"""The README's first screen and its "Your own data" example, as a newcomer meets them in a fresh clone.

The example's two JSON lines are the first lines of the files it then runs on, which ship in the package
(no ../shared); every file the docs name under src/judgelab/examples exists; and the commands run in the
order written, exit 0 and leave the files they promise (the judge commands with the small test model).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from judgelab.data import Item
from tests.conftest import REPO, TEST_MODEL
from tests.e2e.cli import run_cli

README = REPO / "README.md"


def _section(title: str) -> str:
    return README.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _block(section: str, language: str) -> str:
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


def _commands(tmp_path: Path) -> list[list[str]]:
    """The example's commands as argument lists: $E is the examples folder, runs/ lands in tmp_path."""
    first, *lines = _block(_section("Your own data"), "bash").strip().splitlines()
    examples = REPO / re.search(r"\bE=(\S+)", first).group(1)
    commands = []
    for line in lines:
        words = shlex.split(line.split("  #", 1)[0])
        assert words[0] == "judgelab", line
        commands.append([word.replace("$E", str(examples)).replace("runs/", f"{tmp_path}/runs/") for word in words[1:]])
    return commands


def test_the_first_screen_says_what_it_does_the_two_commands_and_an_own_data_example():
    text = README.read_text(encoding="utf-8")
    quickstart = _block(_section("Quickstart"), "bash")
    assert [line.split()[:2] for line in quickstart.strip().splitlines()] == [["make", "demo"], ["make", "test"]]
    assert "make test" in (REPO / ".ci" / "run").read_text()  # CI runs what the README says
    assert text.index("## Your own data") < text.index("## What is in it")
    head = text[:text.index("## What is in it")]
    assert len(head.splitlines()) < 70 and "../shared" not in head
    lines = _block(_section("Your own data"), "json").strip().splitlines()
    commands = _block(_section("Your own data"), "bash").strip().splitlines()
    assert len(lines) + len(commands) <= 10


def test_the_example_lines_are_the_first_lines_of_the_shipped_files():
    """A pointwise item with a human score, then a comparison of two systems with a verdict."""
    item_line, comparison_line = _block(_section("Your own data"), "json").strip().splitlines()
    examples = REPO / "src" / "judgelab" / "examples"
    assert (examples / "answers.jsonl").read_text(encoding="utf-8").splitlines()[0] == item_line
    assert (examples / "comparisons.jsonl").read_text(encoding="utf-8").splitlines()[0] == comparison_line
    item, comparison = Item.model_validate(json.loads(item_line)), Item.model_validate(json.loads(comparison_line))
    assert item.kind == "pointwise" and item.source and item.system_id and item.scores["helpfulness"] == 3
    assert comparison.kind == "pairwise" and comparison.system_a and comparison.system_b and comparison.label == "b"
    assert not item.extra and not comparison.extra  # every field is one judgelab reads


def test_every_example_file_the_docs_name_ships():
    named = set()
    for page in [README, *sorted((REPO / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        uses_e = "E=src/judgelab/examples" in text
        named |= set(re.findall(r"src/judgelab/examples/([\w.-]+\.\w+)", text))
        named |= set(re.findall(r"\$E/([\w.-]+\.\w+)", text)) if uses_e else set()
    assert {"answers.jsonl", "comparisons.jsonl", "helpfulness.yaml", "pairwise.yaml"} <= named
    missing = [name for name in sorted(named) if not (REPO / "src" / "judgelab" / "examples" / name).is_file()]
    assert missing == []


@pytest.mark.timeout(3000)
def test_the_own_data_commands_run_in_order(tmp_path, test_model_path):
    for command in _commands(tmp_path):
        if command[0] == "judge":
            command += ["--model", TEST_MODEL]
        result = run_cli(*command, timeout=1200)
        assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])
    assert len((tmp_path / "runs" / "answers" / "judgments.jsonl").read_text().splitlines()) == 30
    assert len((tmp_path / "runs" / "pairs" / "judgments.jsonl").read_text().splitlines()) == 30
    assert (tmp_path / "runs" / "board" / "report.html").is_file()


def test_the_install_defaults_are_the_makefiles():
    """The README's "defaults used by make" line is what `make` runs (it left out the annotate extra)."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    extras, models = (re.search(rf"^{name} \?= (.+)$", makefile, re.M).group(1).strip() for name in ("EXTRAS", "MODELS"))
    install = _block(_section("Install"), "bash").split("# e.g. the defaults used by make:\n", 1)[1].splitlines()[0]
    assert install.split() == ["scripts/install.sh", ".venv", extras, *models.split()]
