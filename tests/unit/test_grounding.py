"""The grounding score (judges/grounding.py): each answer sentence's best cosine to an evidence sentence, no LLM.
The static embedder (no torch) keeps these fast; the shipped MiniLM is what bench_faithfulness measures."""

from __future__ import annotations

import pytest

from judgelab.data import Item
from judgelab.errors import ConfigError
from judgelab.judges import judge_from_dict
from judgelab.judges.grounding import GroundingJudge, sentences

ARTICLE = "The council met on Monday. It voted to raise the parks budget by ten percent. The mayor was absent."


def judge(**options) -> GroundingJudge:
    return GroundingJudge(embedder="static", **options)


def test_sentences_end_at_punctuation_and_line_breaks_and_keep_closing_quotes():
    assert sentences('He said "hi!" Then left.\nA list item\n\n') == ['He said "hi!"', "Then left.", "A list item"]


def test_a_copied_sentence_scores_near_one_and_an_unrelated_one_low():
    copied, unrelated = judge().run([Item(id="c", source=ARTICLE, output="The mayor was absent."),
                                     Item(id="u", source=ARTICLE, output="Penguins swim in cold southern seas.")])
    assert copied.score == pytest.approx(1.0, abs=1e-4)
    assert unrelated.score < 0.5
    assert copied.extra["sentences"] == 1 and unrelated.extra["best_similarity"] == [round(unrelated.score, 4)]


def test_the_explanation_names_the_least_grounded_sentence_and_the_share_counts_it():
    (found,) = judge(threshold=0.6).run([Item(id="m", source=ARTICLE,
                                              output="The council met on Monday. Penguins swim in cold seas.")])
    assert found.explanation.startswith("least grounded: ") and "'Penguins swim in cold seas.'" in found.explanation
    assert found.explanation.index("Penguins") < found.explanation.index("council")  # weakest first
    assert found.extra["grounded_share"] == 0.5
    (share,) = judge(threshold=0.6, score="share").run([Item(id="m", source=ARTICLE,
                                                             output="The council met on Monday. Penguins swim.")])
    assert share.score == 0.5


def test_passages_come_before_the_source_and_citations_and_ids_are_not_text():
    item = Item(id="r", source="When does the bakery open?", output="It opens at 7:00 [b1].",
                contexts=[{"id": "b1", "text": "It opens at 7:00."}, {"id": "b2", "text": "Bread costs 3 euros."}])
    (found,) = judge().run([item])
    assert found.score == pytest.approx(1.0, abs=1e-4)  # "[b1]" stripped from the answer, "[b1] " from the evidence


@pytest.mark.parametrize(("item", "reason"), [
    (Item(id="n", output="An answer."), "no evidence to ground the answer in"),
    (Item(id="e", source=ARTICLE, output="  "), "the answer has no text"),
    (Item(id="p", output_a="x", output_b="y", source=ARTICLE), "not pairwise items"),
    (Item(id="q", qid="1", docid="d", query="q", passage="p"), "not relevance items"),
])
def test_items_it_cannot_score_get_an_error_judgment_and_the_others_a_score(item, reason):
    bad, good = judge().run([item, Item(id="ok", source=ARTICLE, output="The mayor was absent.")])
    assert bad.status == "error" and reason in bad.reason and bad.score is None
    assert good.status == "ok" and good.score is not None


def test_the_config_reads_from_yaml_and_share_needs_a_threshold():
    loaded = judge_from_dict({"kind": "grounding", "embedder": "static", "threshold": 0.5})
    assert isinstance(loaded, GroundingJudge) and loaded.score == "mean"
    with pytest.raises(ConfigError, match="field 'score': .*give threshold"):
        judge_from_dict({"kind": "grounding", "score": "share"})
    with pytest.raises(ConfigError, match="field 'threshold'"):
        judge_from_dict({"kind": "grounding", "threshold": 2})
