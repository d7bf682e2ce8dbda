"""`judgelab judge` on two assistants' conversations compared (docs/conversations.md), as a user runs the
example: the shipped config and pairs with the smallest embedded model, one pair in both orders; a bad
pair refused naming file, line and field, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import TEST_MODEL
from tests.e2e.cli import read_jsonl, run_main_captured, run_main_in_process, write_jsonl

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "examples"


def test_the_example_pairs_are_judged_in_both_orders(tmp_path, capsys, test_model_path):
    out = tmp_path / "run"
    code, stdout, err = run_main_captured(
        capsys, "judge", "--config", EXAMPLES / "conversation_pairwise.yaml", "--data",
        EXAMPLES / "conversation_pairs.jsonl", "--model", TEST_MODEL, "--out", out, "--cache-path",
        tmp_path / "cache.sqlite", "--limit", "1")  # one pair, two calls: seconds on a CPU
    assert code == 0, err
    [judgment] = read_jsonl(out / "judgments.jsonl")
    assert judgment["item_id"] == "cake-v1-v2" and judgment["status"] == "ok"
    assert judgment["label"] in ("a", "b", "tie") and set(judgment["extra"]["verdicts"]) == {"original", "swapped"}
    assert judgment["usage"]["calls"] == 2
    run = json.loads((out / "run.json").read_text())
    assert run["judge"]["kind"] == "pairwise"
    assert "positional_consistency" in " ".join(stdout.split())


def test_a_tool_result_without_its_call_is_refused_before_the_model_loads(tmp_path, capsys):
    rows = read_jsonl(EXAMPLES / "conversation_pairs.jsonl")
    rows[1]["messages_b"].insert(2, {"role": "tool", "tool_call_id": "call_7", "content": "Closed on Mondays."})
    data = write_jsonl(tmp_path / "pairs.jsonl", rows)
    out = tmp_path / "run"
    code, err = run_main_in_process(capsys, "judge", "--config", EXAMPLES / "conversation_pairwise.yaml",
                                    "--data", data, "--model", tmp_path / "missing.gguf", "--out", out)
    assert code == 2
    assert (f"error: {data}:2: field 'messages_b.2.tool_call_id': a tool result must answer a tool call made "
            "earlier in the conversation: 'call_7' names no call made before it") in " ".join(err.split())
    assert "GGUF" not in err and not out.exists()
