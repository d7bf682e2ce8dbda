"""A rerun into a run folder judges again the items whose judged content changed, and only those.

A prompted judge on a scripted model with no cache: every call the backend counts is one paid for.
"""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from judgelab.commands._common import print_run
from judgelab.data import Item
from judgelab.data.digest import content_digest
from judgelab.data.io import load_judgments
from judgelab.judges.prompted import PromptedJudge
from judgelab.runner import run_judge
from judgelab.runner.run import RunResult
from tests.doubles import ScriptedBackend, scripted_client

SHAPES = {"batch": {}, "stream": {"chunk_size": 2}}


def _items() -> list[Item]:
    return [Item(id=f"i{k}", group_id=f"g{k // 2}", source=f"Question {k}?", output=f"Answer {k}.",
                 scores={"quality": 3.0}, extra={"annotator": "a1"}) for k in range(5)]


def _reply(request, sample) -> str:
    return "Rating: [[5]]" if "EDITED" in request.messages[-1].content else "Rating: [[2]]"


def _run(items: list[Item], folder, shape: str):
    backend = ScriptedBackend(_reply)
    judge = PromptedJudge(aspect="quality", family="generic", criteria="Quality: the answer is right.")
    with scripted_client(backend) as client:
        result = run_judge(judge, items, client, folder, **SHAPES[shape])
    return result, backend


def _lines(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "judgments.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("shape", SHAPES)
def test_an_edited_output_is_judged_again_and_replaces_its_old_judgment(tmp_path, shape):
    items = _items()
    _run(items, tmp_path / "run", shape)
    items[3] = items[3].model_copy(update={"output": "Answer 3, EDITED."})
    again, backend = _run(items, tmp_path / "run", shape)
    assert backend.calls == 1 and "EDITED" in backend.requests[0].messages[-1].content  # the others pay nothing
    assert again.usage["rejudged_changed_items"] == 1 and again.usage["resumed_items"] == 4
    lines = _lines(tmp_path / "run")
    assert sorted(line["item_id"] for line in lines) == [f"i{k}" for k in range(5)]  # replaced, not duplicated
    by_id = {line["item_id"]: line for line in lines}
    assert by_id["i3"]["score"] == 5.0 and by_id["i3"]["item_digest"] == content_digest(items[3])
    assert all(by_id[item.id]["item_digest"] == content_digest(item) for item in items)
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["usage"]["rejudged_changed_items"] == 1 and record["counts"]["ok"] == 5


@pytest.mark.parametrize("shape", SHAPES)
def test_editing_human_labels_ids_or_bookkeeping_judges_nothing_again(tmp_path, shape):
    items = _items()
    _run(items, tmp_path / "run", shape)
    edited = [item.model_copy(update={"scores": {"quality": 1.0}, "group_id": "other", "system_id": "v2",
                                      "extra": {"annotator": "a2"}}) for item in items]
    again, backend = _run(edited, tmp_path / "run", shape)
    assert backend.calls == 0 and again.usage["resumed_items"] == 5
    assert again.usage["rejudged_changed_items"] == 0


@pytest.mark.parametrize("shape", SHAPES)
def test_judgments_of_an_older_run_without_digests_resume_as_before(tmp_path, shape):
    items = _items()
    _run(items, tmp_path / "run", shape)
    path = tmp_path / "run" / "judgments.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in line.items() if k != "item_digest"}) + "\n"
                            for line in _lines(tmp_path / "run")))
    items[3] = items[3].model_copy(update={"output": "Answer 3, EDITED."})
    again, backend = _run(items, tmp_path / "run", shape)
    assert backend.calls == 0 and again.usage["resumed_items"] == 5
    assert {j.item_id: j.score for j in load_judgments(path)}["i3"] == 2.0  # kept on its id, as before
    assert again.usage["rejudged_changed_items"] == 0


def test_a_stream_stopped_after_judging_a_changed_item_again_keeps_the_new_judgment(tmp_path):
    items = _items()
    _run(items, tmp_path / "run", "stream")
    items[3] = items[3].model_copy(update={"output": "Answer 3, EDITED."})
    path = tmp_path / "run" / "judgments.jsonl"
    new = {**_lines(tmp_path / "run")[3], "score": 5.0, "item_digest": content_digest(items[3])}
    with path.open("a") as handle:  # as a run stopped before dropping the old line leaves the file
        handle.write(json.dumps(new) + "\n")
    again, backend = _run(items, tmp_path / "run", "stream")
    assert backend.calls == 0
    assert sorted(line["item_id"] for line in _lines(tmp_path / "run")) == [f"i{k}" for k in range(5)]
    assert {j.item_id: j.score for j in load_judgments(path)}["i3"] == 5.0
    assert again.usage["rejudged_changed_items"] == 0


def test_the_summary_line_says_how_many_were_judged_again():
    out = io.StringIO()
    usage = {"resumed_items": 23, "rejudged_changed_items": 1, "calls": 1, "cache_hits": 0, "prompt_tokens": 10,
             "completion_tokens": 2, "cost_usd": None, "wall_s": 0.1, "retries": 0}
    print_run(Console(file=out, width=200), RunResult([None] * 24, usage, None, None, {"ok": 24, "unparsable": 0,
                                                                                       "error": 0}))
    assert ("24 judgments: 24 ok, 0 unparsable, 0 errors (23 resumed from the run folder, 1 judged now, "
            "1 of them again because the item changed)") in out.getvalue()


def test_the_digest_covers_what_a_judge_reads_and_nothing_else():
    item = Item(id="a", source="Q?", context="C", output="A.", reference="R", scale=(1, 5), scores={"q": 2.0},
                extra={"note": "n", "aspect_scales": {"q": [1, 5]}})
    digest = content_digest(item)
    for change in ({"id": "b"}, {"group_id": "g"}, {"system_id": "s"}, {"dataset": "d"}, {"scores": {"q": 5.0}},
                   {"extra": {"note": "other", "aspect_scales": {"q": [1, 5]}}}):
        assert content_digest(item.model_copy(update=change)) == digest, change
    for change in ({"source": "Q2?"}, {"context": None}, {"output": "B."}, {"reference": "R2"}, {"scale": (1, 10)},
                   {"extra": {"note": "n", "aspect_scales": {"q": [0, 5]}}}):
        assert content_digest(item.model_copy(update=change)) != digest, change
    pair = Item(id="p", instruction="Do it.", output_a="A", output_b="B", label="a")
    assert content_digest(pair.model_copy(update={"label": "b"})) == content_digest(pair)
    assert content_digest(pair.model_copy(update={"output_b": "B2"})) != content_digest(pair)
    passage = Item(id="r", qid="1", docid="d", query="q", passage="p", label=2)
    assert content_digest(passage.model_copy(update={"label": 0})) == content_digest(passage)
    assert content_digest(passage.model_copy(update={"passage": "p2"})) != content_digest(passage)
