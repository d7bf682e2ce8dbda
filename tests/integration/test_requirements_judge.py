"""The requirements judge end to end with the real embedded test model, on two agent runs of the shipped
examples (trajectories, requirements from each item): the stage runs through the client, every reply is
recorded, and each judgment is a score from the model's own verdicts or unparsable with its reason, never
an error."""

from __future__ import annotations

from pathlib import Path

import judgelab
from judgelab.data import load_items
from judgelab.judges.base import load_judge
from judgelab.llm import Client

EXAMPLES = Path(judgelab.__file__).parent / "examples"


def test_the_shipped_config_judges_two_agent_runs_with_the_embedded_model(embedded_backend, tmp_path):
    items = [item for item in load_items(EXAMPLES / "agent_runs.jsonl") if item.group_id == "weather"]
    judge = load_judge(EXAMPLES / "requirements.yaml").model_copy(update={"max_tokens": 120})  # short CPU calls
    client = Client(embedded_backend, cache=tmp_path / "cache.sqlite")  # not closed: the backend is shared
    judgments = judge.run(items, client)
    assert [j.item_id for j in judgments] == ["weather-a", "weather-b"]
    for judgment in judgments:
        assert judgment.status in ("ok", "unparsable"), judgment.reason
        assert judgment.raw and judgment.raw.startswith("[verification]")  # the reply, whatever it says
        assert len(judgment.extra["requirements"]) == 3 and judgment.extra["shown"] == ["task", "trajectory", "output"]
        if judgment.status == "ok":
            assert 0 <= judgment.score <= 1 and judgment.explanation
        else:
            assert judgment.score is None and judgment.reason.startswith("no verdict")
    assert judgments[1].extra["trajectory"]["repeated_calls"] == 1  # no model needed for these
    assert judgments[1].extra["trajectory"]["error_steps"] == [1]
    assert client.stats()["calls"] == 2  # one call per run (verify: batch)
