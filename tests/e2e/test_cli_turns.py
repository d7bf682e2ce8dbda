"""judgelab turns: conversations written as one item per reply; a file of plain items refused, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "examples"


def test_turns_are_written_and_read_back_as_items(tmp_path):
    out = tmp_path / "turns.jsonl"
    done = run_cli("turns", "--data", EXAMPLES / "conversations.jsonl", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "6 conversation(s) -> 8 turn(s)" in " ".join(done.stdout.split())
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[2]["id"] == "gluten-v1#turn1" and rows[3]["id"] == "gluten-v1#turn2"
    assert rows[3]["group_id"] == "gluten#turn2" and rows[3]["extra"]["conversation"] == "gluten-v1"
    from judgelab.data import load_items

    turns = load_items(out)  # what the next command reads
    assert len(turns) == 8 and turns[3].source.endswith("user: Which one, and is it safe for a coeliac?")


def test_items_without_messages_are_refused_and_nothing_is_written(tmp_path):
    out = tmp_path / "turns.jsonl"
    done = run_cli("turns", "--data", EXAMPLES / "answers.jsonl", "--out", out)
    assert done.returncode == 2 and "item 'q01-v1' has no messages" in done.stderr
    assert not out.exists()
