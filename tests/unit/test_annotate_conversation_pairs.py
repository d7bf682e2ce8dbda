"""The labelling page of two assistants' conversations compared (``messages_a``, ``messages_b``): the opening
once, each side's chat under the reply the page shows on that side, in the annotator's order, and the
answer saved in the item's own order."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="needs the annotate extra")

from starlette.testclient import TestClient  # noqa: E402

from judgelab.annotate.server import create_app  # noqa: E402
from judgelab.annotate.task import PAIRWISE, AnnotationTask  # noqa: E402
from judgelab.annotate.view import item_view  # noqa: E402
from judgelab.data import Item, load_items  # noqa: E402

ORIGIN = "http://127.0.0.1"
EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "judgelab" / "examples"


def _jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _cake() -> Item:
    return next(item for item in load_items(EXAMPLES / "conversation_pairs.jsonl") if item.id == "cake-v1-v2")


def test_the_view_holds_the_opening_and_each_side_after_it():
    item = _cake()
    view = item_view(item)
    assert [b.role for b in view.bubbles] == ["system", "user"] and "source" in view.hidden
    side_a, side_b = view.sides
    assert [b.role for b in side_a] == ["assistant", "tool", "assistant", "user", "assistant"]
    assert side_a[0].calls == ('search_notes({"query": "nut-free cakes"})',)
    assert side_a[1].label == "tool result \u00b7 search_notes"
    assert [b.rated for b in side_b] == [False, False, True] and side_b[-1].text == item.output_b


def test_the_sides_follow_the_replies_the_page_shows_and_are_never_guessed(tmp_path):
    item = _cake()
    view = item_view(item)
    side_a, side_b = view.sides
    assert view.sides_shown(item.output_a, item.output_b) == (side_a, side_b)
    assert view.sides_shown(item.output_b, item.output_a) == (side_b, side_a)
    assert view.sides_shown("another text", item.output_b) is None
    # the same last words on both sides, read from a file (two texts): told apart by which of the item's two
    # texts the page was given; one text object for both (a Python literal used twice) cannot be: no chat
    row = {"id": "same", "messages_a": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}],
           "messages_b": [{"role": "user", "content": "Hey"}, {"role": "assistant", "content": "Hello."}]}
    [same] = load_items(_jsonl(tmp_path / "same.jsonl", row))
    view = item_view(same)
    assert same.output_a == same.output_b and same.output_a is not same.output_b
    assert view.sides_shown(same.output_b, same.output_a)[0][0].text == "Hey"
    assert view.sides_shown(same.output_a, same.output_b)[0][0].text == "Hi"
    assert view.sides_shown("Hello.", "Hello.") is None  # equal words that are not the item's: no chat
    shared = Item.model_validate(row)
    assert shared.output_a is shared.output_b and item_view(shared).sides_shown(shared.output_a, shared.output_b) is None


def _annotated(tmp_path: Path, annotator: str) -> tuple[str, list[dict]]:
    """The page one annotator sees for the cake pair, and the label saved when they pick the left side."""
    task = AnnotationTask(items=[_cake()], aspect="preference", scale=PAIRWISE, criteria="Which assistant helped?",
                          out=tmp_path / f"{annotator}.jsonl", annotator=annotator)
    client = TestClient(create_app(task), base_url=ORIGIN)
    page = client.get("/").text
    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))
    response = client.post("/answer", data={**form, "value": "left"}, headers={"origin": ORIGIN},
                           follow_redirects=False)
    assert response.status_code == 303
    return page, [json.loads(line) for line in task.out.read_text().splitlines()]


@pytest.mark.parametrize("swapped", [False, True])
def test_the_left_column_holds_the_conversation_of_the_side_saved_for_left(tmp_path, swapped):
    probe = AnnotationTask(items=[_cake()], aspect="preference", scale=PAIRWISE, criteria="c", out=tmp_path / "x")
    annotator = next(name for name in (f"ann{k}" for k in range(50)) if probe.swapped(name, "cake-v1-v2") == swapped)
    page, [label] = _annotated(tmp_path, annotator)
    html = page[page.index('<section class="item card"'):page.index("</section>")]
    left = html[html.index('id="left-chat"'):html.index('id="right-chat"')]
    right = html[html.index('id="right-chat"'):]
    item = _cake()
    shown_left, shown_right = (item.output_b, item.output_a) if swapped else (item.output_a, item.output_b)
    assert f'id="left">{shown_left}<' in left and f'id="right">{shown_right}<' in right
    assert ("search_notes" in left) != swapped and ("allergic to nuts, I said" in left) == swapped
    assert html.count("My daughter is allergic to nuts.") == 1  # the opening, once, above both
    assert html.index('id="chat"') < html.index('id="left-chat"') and 'id="source"' not in html
    assert (label["value"], label["order"]) == (("b", "ba") if swapped else ("a", "ab"))
