"""The tool_use judge end to end with the real embedded test model, on two agent runs of the shipped examples:
one call per run through the client, every reply recorded, and each judgment a score from the model's own
verdicts or unparsable with its reason, never an error; the tool_calls judge on the same runs needs no model."""

from __future__ import annotations

from pathlib import Path

import judgelab
from judgelab.data import load_items
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.llm import Client

EXAMPLES = Path(judgelab.__file__).parent / "examples"


def test_tool_use_judges_two_agent_runs_with_the_embedded_model(embedded_backend, tmp_path):
    items = [item for item in load_items(EXAMPLES / "agent_runs.jsonl") if item.group_id == "weather"]
    judge = judge_from_dict({"kind": "tool_use", "max_tokens": 60})  # short CPU calls
    client = Client(embedded_backend, cache=tmp_path / "cache.sqlite")  # not closed: the backend is shared
    judgments = judge.run(items, client)
    assert [j.item_id for j in judgments] == ["weather-a", "weather-b"]
    for judgment, calls in zip(judgments, (2, 3), strict=True):
        assert judgment.status in ("ok", "unparsable"), judgment.reason
        assert judgment.raw and judgment.raw.startswith("[verification]")
        assert len(judgment.extra["calls"]) == calls
        if judgment.status == "ok":
            assert 0 <= judgment.score <= 1 and judgment.explanation
        else:
            assert judgment.score is None and judgment.reason.startswith("no verdict")
    assert client.stats()["calls"] == 2  # one call per run (verify: batch)
    no_model = load_judge(EXAMPLES / "tool_calls.yaml").run(items)
    assert [j.score for j in no_model] == [1.0, 0.5]  # weather-b never wrote forecast.txt
