"""The labelling app's task and store logic behind issue #32 items 4-7: relevance items' scale and
criteria, scale anchors, several aspects per item (one label line each), skips counted apart from
labels, the history of one's answers, and the start line's scale."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("starlette", reason="needs the annotate extra")

from starlette.testclient import TestClient  # noqa: E402

from judgelab.annotate.server import create_app, describe_aspects  # noqa: E402
from judgelab.annotate.store import LabelStore  # noqa: E402
from judgelab.annotate.task import (  # noqa: E402
    ANCHORS,
    GENERIC_ANCHORS,
    RELEVANCE_ANCHORS,
    build_task,
    parse_aspects,
)
from judgelab.data.labels import labels_aspect, load_labels, read_labels  # noqa: E402
from judgelab.errors import ConfigError  # noqa: E402

ORIGIN = "http://127.0.0.1"


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _trec(tmp_path, labels=(0, 1, 2, 3, 1, 0)):
    return _write(tmp_path / "trec.jsonl", [
        {"id": f"q1-d{k}", "qid": "q1", "docid": f"d{k}", "query": "what is a cat", "passage": f"passage {k}",
         "label": label} for k, label in enumerate(labels)])


def _dialogues(tmp_path, n=4):
    """Topical-Chat-like items: per-aspect scales (naturalness 1-3, informativeness 1-3, understandability 0-1)."""
    return _write(tmp_path / "chat.jsonl", [
        {"id": f"c{k}", "source": f"context {k}", "output": f"response {k}",
         "extra": {"aspect_scales": {"naturalness": [1, 3], "informativeness": [1, 3], "understandability": [0, 1]}}}
        for k in range(n)])


def _form(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))


def _post(client, page: str, **fields):
    return client.post("/answer", data={**_form(page), **fields}, headers={"origin": ORIGIN}, follow_redirects=False)


# -- 4: relevance items ---------------------------------------------------------------------------------------
def test_relevance_items_default_to_trecs_0_to_3_grades_with_relevance_criteria(tmp_path):
    task = build_task(_trec(tmp_path), "relevance", tmp_path / "labels.jsonl")
    assert [(c.value, c.key, c.caption) for c in task.scale.choices] == [
        (0, "0", "irrelevant"), (1, "1", "related"), (2, "2", "highly relevant"), (3, "3", "perfectly relevant")]
    assert task.scale.summary == "0-3 (0 irrelevant, 1 related, 2 highly relevant, 3 perfectly relevant)"
    assert "query" in task.criteria and "passage" in task.criteria
    assert "output" not in task.criteria and "source" not in task.criteria
    assert task.aspects[0].anchors == RELEVANCE_ANCHORS
    wide = build_task(_trec(tmp_path, labels=(0, 4, 2)), "relevance", tmp_path / "labels.jsonl")
    assert [c.value for c in wide.scale.choices] == [0, 1, 2, 3, 4]  # the items' own grades widen it
    given = build_task(_trec(tmp_path), "relevance", tmp_path / "labels.jsonl", labels="0=no,1=yes")
    assert [c.caption for c in given.scale.choices] == ["no", "yes"] and given.aspects[0].anchors is None


def test_anchors_come_from_the_aspect_or_the_criteria(tmp_path):
    data = _write(tmp_path / "items.jsonl", [{"id": "i0", "output": "o"}])
    assert build_task(data, "coherence", tmp_path / "l.jsonl").aspects[0].anchors == ANCHORS["coherence"]
    custom = build_task(data, "helpfulness", tmp_path / "l.jsonl", criteria="Helps the user.")
    assert custom.aspects[0].anchors == GENERIC_ANCHORS
    page = TestClient(create_app(build_task(data, "coherence", tmp_path / "l.jsonl", annotator="a")),
                      base_url=ORIGIN).get("/").text
    low, high = ANCHORS["coherence"]
    assert 'class="anchors"' in page and low in page and high in page


# -- 6: several aspects per item ----------------------------------------------------------------------------------
def test_several_aspects_each_get_their_scale_criteria_and_line(tmp_path):
    task = build_task(_dialogues(tmp_path), "naturalness, understandability", tmp_path / "labels.jsonl")
    assert task.aspect_names == ["naturalness", "understandability"]
    assert [a.scale.summary for a in task.aspects] == ["1-3", "0-1"]  # each aspect's declared scale
    assert task.aspects[1].criteria.startswith("The response is understandable")
    store = LabelStore(task)
    store.record("ann", "c0", {"naturalness": 3.0, "understandability": 1.0}, note="fine", answer_id="A" * 10)
    store.record("ann", "c0", {"naturalness": 3.0, "understandability": 1.0}, answer_id="A" * 10)  # a retried post
    store.record("ann", "c1", None)  # a skip: every aspect
    store.close()
    lines = [json.loads(line) for line in task.out.read_text().splitlines()]
    assert [(x["item_id"], x["aspect"], x["value"]) for x in lines] == [
        ("c0", "naturalness", 3), ("c0", "understandability", 1),
        ("c1", "naturalness", None), ("c1", "understandability", None)]
    assert lines[0]["scale"] == [1.0, 3.0] and lines[1]["scale"] == [0.0, 1.0] and lines[1]["note"] == "fine"
    read = load_labels(task.out)  # what evaluate --human / meta --human read, per aspect, unchanged
    assert {(x.aspect, x.value) for x in read} == {("naturalness", 3.0), ("understandability", 1.0)}
    with pytest.raises(ConfigError, match="rate 2 aspects"):
        labels_aspect(read)


def test_an_item_counts_as_answered_once_every_aspect_is(tmp_path):
    task = build_task(_dialogues(tmp_path, 2), "naturalness,informativeness", tmp_path / "labels.jsonl")
    # a server killed between two lines of one answer would leave this: the item is offered again
    _write(task.out, [{"item_id": "c0", "aspect": "naturalness", "value": 2, "annotator": "ann"}])
    store = LabelStore(task)
    assert store.next_item("ann").id == "c0" and store.progress("ann").done == 0
    store.record("ann", "c0", {"naturalness": 2.0, "informativeness": 1.0})
    assert store.next_item("ann").id == "c1" and store.progress("ann").done == 1
    with pytest.raises(ValueError, match="a value for each"):
        store.record("ann", "c1", {"naturalness": 2.0})
    store.close()


def test_the_page_posts_every_aspect_at_once_and_refuses_a_missing_one(tmp_path):
    task = build_task(_dialogues(tmp_path), "naturalness,informativeness", tmp_path / "labels.jsonl", annotator="ann")
    client = TestClient(create_app(task), base_url=ORIGIN)
    page = client.get("/").text
    assert page.count('class="aspect-group') == 2 and 'name="value-0"' in page and 'name="value-1"' in page
    response = _post(client, page, **{"value-0": "2"})
    assert response.status_code == 400 and "informativeness has none" in response.text
    assert not task.out.exists() or read_labels(task.out) == []
    assert _post(client, page, **{"value-0": "2", "value-1": "3"}).status_code == 303
    assert {(x.item_id, x.aspect, x.value) for x in read_labels(task.out)} == {
        ("c0", "naturalness", 2.0), ("c0", "informativeness", 3.0)}
    again = client.get("/item/0").text  # reopened: both answers are checked
    assert re.search(r'name="value-0" value="2" required checked', again)
    assert re.search(r'name="value-1" value="3" required checked', again)


def test_criteria_are_given_once_per_aspect(tmp_path):
    data = _dialogues(tmp_path)
    with pytest.raises(ConfigError, match="1 criteria for 2 aspects"):
        build_task(data, "naturalness,informativeness", tmp_path / "l.jsonl", criteria=["only one"])
    task = build_task(data, "naturalness,informativeness", tmp_path / "l.jsonl", criteria=["N.", "I."])
    assert [a.criteria for a in task.aspects] == ["N.", "I."]
    with pytest.raises(ConfigError, match="named twice"):
        parse_aspects("fluency,fluency")
    with pytest.raises(ConfigError, match="one aspect at a time"):
        _write(tmp_path / "pairs.jsonl", [{"id": "p0", "instruction": "x", "output_a": "a", "output_b": "b"}])
        build_task(tmp_path / "pairs.jsonl", "preference,harmlessness", tmp_path / "l.jsonl",
                   criteria=["Better?", "Safer?"])


# -- 5 and 7: history, skips, the start line ------------------------------------------------------------------------
def test_history_lists_each_answer_with_a_link_and_skips_are_counted_apart(tmp_path):
    task = build_task(_trec(tmp_path, labels=(0, 1, 2)), "relevance", tmp_path / "labels.jsonl", annotator="ann")
    client = TestClient(create_app(task), base_url=ORIGIN)
    assert _post(client, client.get("/").text, value="3").status_code == 303
    assert _post(client, client.get("/").text, action="skip").status_code == 303
    assert _post(client, client.get("/").text, value="0").status_code == 303
    history = client.get("/history").text
    rows = re.findall(r'<a href="/item/(\d+)" class="revisit-link">', history)
    assert rows == ["0", "1", "2"]
    assert "3 perfectly relevant" in history and "skipped" in history and "0 irrelevant" in history
    assert "what is a cat" in history  # the query with the passage
    done = client.get("/").text
    assert 'id="done"' in done
    assert re.search(r'id="answered">2 items labelled</span>,\s*<span id="skipped">1 skipped', done)


def test_the_start_line_says_the_scale_and_the_aspects(tmp_path):
    relevance = build_task(_trec(tmp_path), "relevance", tmp_path / "labels.jsonl")
    assert describe_aspects(relevance) == ("aspect 'relevance', scale 0-3 (0 irrelevant, 1 related, "
                                           "2 highly relevant, 3 perfectly relevant)")
    several = build_task(_dialogues(tmp_path), "naturalness,understandability", tmp_path / "labels.jsonl")
    assert describe_aspects(several) == "aspects 'naturalness' (scale 1-3), 'understandability' (scale 0-1)"


def test_the_assets_are_gzipped_and_the_pages_are_not(tmp_path):
    data = _write(tmp_path / "items.jsonl", [{"id": "i0", "output": "o"}])
    client = TestClient(create_app(build_task(data, "coherence", tmp_path / "l.jsonl", annotator="a")), base_url=ORIGIN)
    page = client.get("/", headers={"accept-encoding": "gzip"})
    assert "content-encoding" not in page.headers  # it carries the form token: no compression oracle
    for asset in re.findall(r'(?:href|src)="(/static/annotate\.(?:css|js)\?v=\w+)"', page.text):
        response = client.get(asset, headers={"accept-encoding": "gzip"})
        # each under 3.5 kB (the stylesheet, with the chat, passages and steps of issue #48: 3.1 kB)
        assert response.headers["content-encoding"] == "gzip" and int(response.headers["content-length"]) < 3500
        assert "immutable" in response.headers["cache-control"]
