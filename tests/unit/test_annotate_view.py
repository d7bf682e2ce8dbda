"""How the item page shows a conversation, its passages and an agent's run (issue #48 item 3): the view built
from an item, and the page the app serves for it (escaped, the answer saved as on any item)."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="needs the annotate extra")

from starlette.testclient import TestClient  # noqa: E402

from judgelab.annotate.server import create_app  # noqa: E402
from judgelab.annotate.task import PAIRWISE, AnnotationTask, scale_from_range  # noqa: E402
from judgelab.annotate.view import STEP_ARGUMENTS, item_view  # noqa: E402
from judgelab.data import Item, load_items  # noqa: E402

ORIGIN = "http://127.0.0.1"
EXAMPLES = Path(str(files("judgelab") / "examples"))


def _shipped(item_id: str) -> Item:
    return next(item for item in load_items(EXAMPLES / "conversations.jsonl") if item.id == item_id)


def _page(tmp_path, *items: Item, pairwise: bool = False) -> tuple[TestClient, str]:
    task = AnnotationTask(items=list(items), aspect="overall", scale=PAIRWISE if pairwise else scale_from_range("1-5"),
                          criteria="Rate it.", out=tmp_path / "labels.jsonl", annotator="ann")
    client = TestClient(create_app(task), base_url=ORIGIN)
    return client, client.get("/").text


def _item_html(page: str) -> str:
    return page[page.index('<section class="item card"'):page.index("</section>")]


def test_an_item_without_messages_contexts_or_a_trajectory_has_no_view_and_its_page_as_before(tmp_path):
    item = Item(id="i", source="A text.", context="Some context.", output="A summary.")
    assert item_view(item) is None
    assert item_view(Item(id="r", qid="q", docid="d", query="Q?", passage="P.", contexts=["x"])) is None
    html = _item_html(_page(tmp_path, item)[1])
    assert re.findall(r'id="(\w+)"', html) == ["item", "source", "context", "output"]
    assert "chat" not in html and "passages" not in html and "trajectory" not in html


def test_a_conversation_is_one_bubble_per_message_its_last_reply_the_one_to_rate():
    item = _shipped("order-v1")
    view = item_view(item)
    assert [(b.role, b.label) for b in view.bubbles] == [
        ("system", "system"), ("user", "user"), ("assistant", "assistant"), ("tool", "tool result \u00b7 search_notes"),
        ("assistant", "assistant")]
    assert view.bubbles[2].text is None and view.bubbles[2].calls == ('search_notes({"query": "cake orders"})',)
    assert [b.rated for b in view.bubbles] == [False] * 4 + [True] and view.bubbles[-1].text == item.output
    assert view.hidden == {"source", "output", "context"}  # the texts derived from them: shown as chat and passages
    assert [p.id for p in view.passages] == ["orders"] and view.steps == ()


def test_an_output_given_beside_the_messages_is_a_last_bubble_and_a_source_of_ones_own_stays():
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
               {"role": "user", "content": "Bread?"}]
    view = item_view(Item(id="c", messages=history, output="We have spelt bread."))
    assert [(b.role, b.text, b.rated) for b in view.bubbles][-2:] == [("user", "Bread?", False),
                                                                      ("assistant", "We have spelt bread.", True)]
    assert view.hidden == {"source", "output"}
    own = item_view(Item(id="c", messages=history, output="Spelt.", source="A customer asks about bread.",
                         contexts=["Spelt daily."], context="Notes of my own."))
    assert own.hidden == {"output"}  # the item's own source and context are shown as before


def test_a_trajectory_is_one_folded_line_per_step_with_long_arguments_cut():
    url = "https://example.org/" + "x" * 200
    view = item_view(Item(id="t", source="Find it.", output="Found.", trajectory=[
        {"tool": "search", "arguments": {"q": "bread"}, "thought": "Look.", "observation": "3 hits"},
        {"tool": "fetch", "arguments": {"url": url}}, {"tool": "stop"}]))
    assert [s.line for s in view.steps][0::2] == ['Step 1: search({"q": "bread"})', "Step 3: stop()"]
    line = view.steps[1].line
    assert line.endswith("\u2026)") and len(line) == len("Step 2: fetch()") + STEP_ARGUMENTS
    assert view.steps[1].arguments == json.dumps({"url": url}) and view.steps[0].arguments is None
    assert (view.steps[0].thought, view.steps[0].observation) == ("Look.", "3 hits")
    assert view.hidden == set() and view.bubbles == ()


def test_a_pairwise_item_shows_the_conversation_before_the_two_responses(tmp_path):
    item = Item(id="p", messages=[{"role": "user", "content": "Say hi"}], output_a="Hi!", output_b="Hello.",
                contexts=["Greet warmly."])
    view = item_view(item)
    assert [(b.role, b.rated) for b in view.bubbles] == [("user", False)] and view.hidden == {"source", "context"}
    html = _item_html(_page(tmp_path, item, pairwise=True)[1])
    assert html.index('id="chat"') < html.index('id="left"') < html.index('id="passages"')
    assert 'id="source"' not in html and 'id="output"' not in html


def test_the_page_shows_chat_passages_and_steps_in_order_and_saves_the_answer(tmp_path):
    row = next(r for r in map(json.loads, (EXAMPLES / "conversations.jsonl").read_text().splitlines())
               if r["id"] == "order-v1")
    item = Item(**row, trajectory=[{"tool": "look", "observation": "seen"}])
    client, page = _page(tmp_path, item)
    html = _item_html(page)
    assert html.count('class="bubble ') == 5 and html.count('class="call"') == 1 and html.count("<details") == 1
    assert html.index('id="trajectory"') < html.index('id="chat"') < html.index('id="output"') < \
        html.index('id="passages"')
    assert '<code class="passage-id">[orders]</code> <strong>Orders</strong>' in html
    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))
    response = client.post("/answer", data={**form, "value": "4"}, headers={"origin": ORIGIN}, follow_redirects=False)
    assert response.status_code == 303
    saved = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert [(label["item_id"], label["value"]) for label in saved] == [("order-v1", 4.0)]


def test_markup_in_messages_passages_and_steps_is_escaped(tmp_path):
    script, closing = "<script>alert(1)</script>", "</textarea><img src=x onerror=alert(2)>"
    item = Item(id="x", messages=[
        {"role": "user", "content": closing, "name": "<b>bo</b>"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "function": {"name": "f<i>", "arguments": script}}]},
        {"role": "tool", "tool_call_id": "c1", "content": script},
        {"role": "assistant", "content": script}],
        contexts=[{"id": '"><script>', "title": script, "text": closing, "source": script}],
        trajectory=[{"tool": "<t>", "arguments": closing, "thought": script, "observation": closing}])
    page = _page(tmp_path, item)[1]
    assert "<script>alert" not in page and "<img" not in page and "<b>" not in page and "<i>" not in page
    assert page.count("</textarea>") == 1  # the note's own: the page's textarea is not closed early
    assert "&lt;/textarea&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    assert 'data-passage="&#34;&gt;&lt;script&gt;"' in page
    assert "calls <code>f&lt;i&gt;(&lt;script&gt;alert(1)&lt;/script&gt;)</code>" in page
    assert "user \u00b7 &lt;b&gt;bo&lt;/b&gt;" in page
