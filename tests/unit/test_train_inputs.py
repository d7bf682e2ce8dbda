"""Truncation rules of the trained scorer's inputs: what is kept when an item exceeds the window."""

from __future__ import annotations

import re

import pytest

from judgelab.data.item import Item
from judgelab.judges.scorer_inputs import (
    PAIR_SPECIAL_TOKENS,
    build_pair,
    cut_source,
    dialogue_turns,
    keep_end,
    keep_recent_turns,
    keep_start,
)


def words(text: str) -> list[tuple[int, int]]:
    """A whitespace 'tokenizer': one token per word, so expected cuts are easy to write down."""
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def n_words(text: str) -> int:
    return len(words(text))


def test_keep_start_and_end_cut_at_token_boundaries():
    text = "one two three four five"
    assert keep_start(text, words(text), 2) == "one two"
    assert keep_end(text, words(text), 2) == "four five"
    assert keep_start(text, words(text), 10) == text
    assert keep_start(text, words(text), 0) == "" and keep_end(text, words(text), 0) == ""


def test_dialogue_keeps_the_most_recent_whole_turns():
    source = "a1 a2 a3 \n b1 b2 \n c1 c2 c3"
    assert dialogue_turns(source) == ["a1 a2 a3", "b1 b2", "c1 c2 c3"]
    assert keep_recent_turns(dialogue_turns(source), words, 5) == "b1 b2\nc1 c2 c3"
    assert keep_recent_turns(dialogue_turns(source), words, 7) == "b1 b2\nc1 c2 c3"  # a1..a3 would not fit whole
    assert keep_recent_turns(dialogue_turns(source), words, 8) == "a1 a2 a3\nb1 b2\nc1 c2 c3"


def test_a_last_turn_longer_than_the_budget_keeps_its_end():
    source = "old turn \n w1 w2 w3 w4 w5"
    assert cut_source(source, words, 2) == "w4 w5"


def test_single_line_sources_keep_their_start_unless_told_otherwise():
    article = "first second third fourth"
    assert cut_source(article, words, 2) == "first second"
    assert cut_source("x1 x2 \n y1 y2", words, 2, rule="start") == "x1 x2"
    assert cut_source("x1 x2 y1 y2", words, 2, rule="recent_turns") == "y1 y2"  # one turn: its end


def test_pair_fits_the_window_and_gives_the_output_at_least_half():
    long_source = " ".join(f"s{i}" for i in range(200))
    long_output = " ".join(f"o{i}" for i in range(200))
    item = Item(id="x", source=long_source, output=long_output)
    a, b = build_pair(item, words, max_length=64)
    window = 64 - PAIR_SPECIAL_TOKENS
    assert n_words(b) == window // 2 and b.startswith("o0 o1")
    assert n_words(a) + n_words(b) == window and a.startswith("s0 s1")


def test_short_output_leaves_the_rest_to_the_source():
    item = Item(id="x", source=" ".join(f"s{i}" for i in range(100)), output="short answer")
    a, b = build_pair(item, words, max_length=43)
    assert b == "short answer" and n_words(a) == 40 - 2


def test_context_comes_first_then_the_most_recent_turns_and_placeholders_are_dropped():
    dialogue = " \n ".join(f"t{i} t{i}b" for i in range(30))
    item = Item(id="x", source=dialogue, context="fact words here", output="reply")
    a, _ = build_pair(item, words, max_length=20, inputs=("source", "context"))
    assert a.startswith("context: fact words here") and a.endswith("t29 t29b")
    assert n_words(a) + 1 <= 20 - PAIR_SPECIAL_TOKENS
    no_fact = Item(id="y", source="hi", context="_nofact", output="reply")
    assert build_pair(no_fact, words, max_length=20, inputs=("source", "context"))[0] == "hi"


def test_reference_is_read_only_when_asked():
    item = Item(id="x", source="mr", reference="the reference text", output="out")
    assert "reference" not in build_pair(item, words, 32)[0]
    assert build_pair(item, words, 32, inputs=("source", "reference"))[0] == "reference: the reference text\nmr"


@pytest.fixture(scope="module")
def minilm_tokenizer():
    from judgelab.judges.scorer_model import load_tokenizer
    from judgelab.judges.trained import DEFAULT_BASE
    from judgelab.train.model import base_model_dir

    return load_tokenizer(base_model_dir(DEFAULT_BASE))


def test_real_tokenizer_pairs_never_need_the_tokenizers_own_truncation(minilm_tokenizer, benchmarks_dir):
    from judgelab.data import load_items
    from judgelab.judges.scorer_inputs import tokenizer_spans

    spans = tokenizer_spans(minilm_tokenizer)
    items = list(load_items(benchmarks_dir / "topical_chat.jsonl"))[:6] + list(load_items(benchmarks_dir / "qags_cnndm.jsonl"))[:6]
    for item in items:
        a, b = build_pair(item, spans, max_length=128)
        ids = minilm_tokenizer(a, b)["input_ids"]
        assert len(ids) <= 128, item.id
    article = list(load_items(benchmarks_dir / "qags_cnndm.jsonl"))[0]
    a, _ = build_pair(article, spans, max_length=128)
    assert article.source.strip().startswith(a[:50])  # an article keeps its start
