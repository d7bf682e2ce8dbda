"""Citation markers read without a model (judgelab.judges.citations): which bracketed texts are citations, which
ids they name and which they name that the item has no passage for; and the ``citations`` judge that scores the
share of valid citations with no model."""

from __future__ import annotations

import pytest

from judgelab.data.item import Item
from judgelab.judges.base import judge_from_dict
from judgelab.judges.citations import (
    CitationsJudge,
    attribute,
    citations_of,
    find_citations,
    segments,
    without_markers,
)

NUMBERED = ["1", "2", "3"]
DOCS = ["doc1", "doc2", "doc-3"]


def markers(text: str, ids: list[str]) -> list[str]:
    return [m.text for m in find_citations(text, ids).markers]


@pytest.mark.parametrize(("text", "ids", "cited", "unknown"), [
    ("Finished in 1889 [2].", NUMBERED, ["2"], []),
    ("Tall [1][3] and old [2].", NUMBERED, ["1", "3", "2"], []),
    ("Tall [1, 3]; old [2;1].", NUMBERED, ["1", "3", "2"], []),
    ("See [ doc2 , doc5 ].", DOCS, ["doc2"], ["doc5"]),  # doc5: the item's prefix plus digits, no such passage
    ("As [doc-3] and [DOC1] say.", DOCS, ["doc-3", "doc1"], []),  # case is ignored when one passage matches
    ("As [doc-2] says.", DOCS, [], ["doc-2"]),  # the letters before the digits decide, not the dash
    ("Paris[1] and Rome[7].", NUMBERED, ["1"], ["7"]),  # glued to the word, as Wikipedia writes them
    ("Stated [3] and [3] again.", NUMBERED, ["3"], []),  # each id once in cited, twice in the count
])
def test_markers_name_known_and_unknown_ids(text, ids, cited, unknown):
    found = find_citations(text, ids)
    assert found.cited == cited and found.unknown == unknown


@pytest.mark.parametrize("text", [
    "He wrote 'teh' [sic] twice.",
    "The moon is cheese [citation needed].",
    "A footnote[^1] here.\n\n[^1]: The note.",
    "See [the docs](https://example.com/1) and ![chart 2](img/2.png).",
    "Use `xs[1]` or\n```\nys[2] = 0\n```",  # code: indexing, not citing
    "[1]: https://example.com/one",  # a markdown link definition
    "Pages [1, p. 5] and [see 2] and [1-3].",  # a token that is no id makes the whole bracket text
    "Brackets [] and [ ] and [,].",
    "Nested [[x]] and unclosed [1 and ] stray.",
])
def test_brackets_that_are_not_citations(text):
    assert markers(text, NUMBERED) == []


def test_a_prefixed_token_is_an_id_only_when_the_items_ids_have_that_prefix():
    assert find_citations("As [COVID-19] showed.", DOCS).markers == ()  # prefix "covid": not the item's "doc"
    assert find_citations("As [COVID-19] showed.", ["covid-1"]).unknown == ["COVID-19"]
    assert find_citations("In [2023] and [doc9].", []).unknown == ["2023"]  # no passages: only digits look like ids
    # word ids are known when cited, but an unknown word cannot be told from a bracketed word
    assert find_citations("Closed [hours], cheap [prices].", ["hours"]).cited == ["hours"]
    assert find_citations("Closed [hours], cheap [prices].", ["hours"]).unknown == []


def test_ambiguous_case_is_not_guessed():
    found = find_citations("See [DOC2] and [doc2].", ["doc2", "Doc2"])
    assert found.cited == ["doc2"] and found.unknown == ["DOC2"]


def test_counts_and_valid_share():
    found = find_citations("A [1][9], B [1, 2].", NUMBERED)
    assert (found.count, found.valid, found.valid_share) == (4, 3, 0.75)
    assert found.as_dict() == {"markers": ["[1]", "[9]", "[1, 2]"], "cited": ["1", "2"], "unknown": ["9"],
                               "count": 4, "valid": 3}
    assert find_citations("No citation here.", NUMBERED).valid_share is None
    assert find_citations(None, NUMBERED).count == 0


def test_markers_keep_their_place_in_the_text_and_can_be_taken_out():
    text = "It opened in 1889 [2]. It is tall [1][3], says `a[1]`."
    found = find_citations(text, NUMBERED)
    assert [text[m.start:m.end] for m in found.markers] == ["[2]", "[1]", "[3]"]
    assert without_markers(text, found) == "It opened in 1889. It is tall, says `a[1]`."


def test_citations_of_an_item_read_its_output_against_its_passage_ids():
    item = Item(id="q", source="When?", output="In 1889 [2], by Eiffel [4].",
                contexts=["Finished in 1889.", "Built by Eiffel's company."])  # plain strings are numbered 1, 2
    assert citations_of(item).cited == ["2"] and citations_of(item).unknown == ["4"]
    without = Item(id="q2", source="When?", output="In 1889 [1].", context="Finished in 1889.")
    assert citations_of(without).cited == [] and citations_of(without).unknown == ["1"]


def test_an_answer_is_cut_into_pieces_each_with_the_markers_that_end_it():
    text = "It was finished in 1889 [1]. It is tall [2][3], in Paris [9] and old. Built by Eiffel. [1]"
    assert [(piece, cites.cited, cites.unknown) for piece, cites in segments(text, NUMBERED)] == [
        ("It was finished in 1889", ["1"], []), ("It is tall", ["2", "3"], []), (", in Paris", [], ["9"]),
        ("and old.", [], []), ("Built by Eiffel.", ["1"], [])]  # a marker after the full stop ends its sentence


@pytest.mark.parametrize(("claim", "piece"), [
    ("The Eiffel Tower was finished in 1889.", "It was finished in 1889"),  # "It" became the tower's name
    ("The Eiffel Tower is in Paris.", ", in Paris"),
    ("Gustave Eiffel built the tower.", "Built by Eiffel."),
    ("Bread costs 2 euros.", None),  # shares no word
    ("The tower was painted gold in Berlin by the council.", None),  # only "tower"... which no piece has
    ("The council met on Monday in the old hall.", "and old."),  # all of a short piece's words: it cites nothing
])
def test_a_claim_is_matched_to_the_piece_sharing_most_of_its_words(claim, piece):
    pieces = segments("It was finished in 1889 [1]. It is tall [2][3], in Paris [9] and old. Built by Eiffel. [1]",
                      NUMBERED)
    matched = attribute(claim, pieces)
    assert (matched[0] if matched else None) == piece


# -- the judge with no model ------------------------------------------------------------------------


def test_the_citations_judge_scores_the_share_of_valid_citations_without_a_model():
    passages = [{"id": "1", "text": "Finished in 1889."}, {"id": "2", "text": "330 metres tall."}]
    items = [Item(id="good", source="Q", output="In 1889 [1], 330 m [2].", contexts=passages),
             Item(id="half", source="Q", output="In 1889 [1], in Paris [5].", contexts=passages),
             Item(id="none", source="Q", output="In 1889 [sic].", contexts=passages),
             Item(id="pair", instruction="Q", output_a="A [1]", output_b="B")]
    judge = judge_from_dict({"kind": "citations"})
    assert isinstance(judge, CitationsJudge) and not judge.uses_llm
    good, half, none, pair = judge.run(items)  # no client: it calls no model
    assert good.score == 1 and good.explanation == "All 2 citations name passages of the item."
    assert half.score == 0.5 and half.extra["unknown"] == ["5"] and "1 of 2 citations" in half.explanation
    assert none.score == 0 and none.extra["count"] == 0 and none.explanation == "The output cites no passage."
    assert pair.status == "error" and pair.score is None
