"""The faithfulness judge end to end with the real embedded test model, on two answers of the shipped
conversations (passages as evidence): both stages run through the client, and each judgment is a score
from the model's own claims and verdicts or unparsable with its reason, never an error."""

from __future__ import annotations

from pathlib import Path

import judgelab
from judgelab.data import load_items
from judgelab.judges.base import load_judge
from judgelab.llm import Client

EXAMPLES = Path(judgelab.__file__).parent / "examples"


def test_the_shipped_config_judges_two_answers_with_the_embedded_model(embedded_backend, tmp_path):
    items = [item for item in load_items(EXAMPLES / "conversations.jsonl") if item.group_id == "hours"]
    judge = load_judge(EXAMPLES / "faithfulness.yaml").model_copy(update={"max_tokens": 160})  # short CPU calls
    client = Client(embedded_backend, cache=tmp_path / "cache.sqlite")  # not closed: the backend is shared
    judgments = judge.run(items, client)
    assert [j.item_id for j in judgments] == ["hours-v1", "hours-v2"]
    for judgment in judgments:
        assert judgment.status in ("ok", "unparsable"), judgment.reason
        assert judgment.raw and judgment.raw.startswith("[claims]") and judgment.extra["evidence"] == "contexts"
        if judgment.status == "ok":
            assert 0 <= judgment.score <= 1 and judgment.explanation and judgment.extra["claims"]
        else:
            assert judgment.score is None and judgment.reason
    assert client.stats()["calls"] >= 2  # the claims of each answer at least
