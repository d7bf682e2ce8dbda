"""In-context example selection logic (judgelab.judges.retrieval) and the retriever's training (judgelab.optimize.icl) on tiny hand-made embeddings.

The real MiniLM retriever and the real judge run in tests/integration/test_icl.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from judgelab.data import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import load_judge
from judgelab.judges.prompted import PromptedJudge
from judgelab.judges.retrieval import (
    RandomSelector,
    RetrievalSelector,
    TrainedRetriever,
    _take_in_turns,
    band_of,
    item_text,
)
from judgelab.optimize.icl import collect_feedback, lambdarank_pair_loss
from judgelab.strategy import Strategy
from tests.doubles import ScriptedBackend, scripted_client


class TableEncoder:
    """Looks each text's vector up by the judged text (the last line): tiny known embeddings."""

    identity = "table"

    def __init__(self, vectors: dict[str, tuple[float, ...]]):
        self.vectors = vectors
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        rows = np.array([self.vectors[text.splitlines()[-1]] for text in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def item(name: str, rating: float, scale=(1, 5)) -> Item:
    return Item(id=name, source=f"source of {name}", output=name, scores={"q": rating}, scale=scale)


# -- the loss (eq. 5-6) -------------------------------------------------------------------------


def test_loss_matches_a_hand_computed_value():
    sims = torch.tensor([0.5, 0.1, -0.2])
    ranks = torch.tensor([1.0, 2.0, 3.0])
    # pairs (c1 better than c2): w = 1/r1 - 1/r2, term = log(1 + exp(sim2 - sim1))
    expected = (0.5 * math.log(1 + math.exp(0.1 - 0.5))          # (1, 2): w = 1 - 1/2
                + (2 / 3) * math.log(1 + math.exp(-0.2 - 0.5))   # (1, 3): w = 1 - 1/3
                + (1 / 6) * math.log(1 + math.exp(-0.2 - 0.1)))  # (2, 3): w = 1/2 - 1/3
    assert lambdarank_pair_loss(sims, ranks).item() == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(0.256507 + 0.268791 + 0.092392, abs=2e-6)  # the three terms, by hand


def test_loss_ignores_tied_ranks_and_falls_when_the_order_is_learned():
    sims = torch.tensor([0.3, 0.9])
    assert lambdarank_pair_loss(sims, torch.tensor([1.0, 1.0])).item() == 0.0
    right = lambdarank_pair_loss(torch.tensor([2.0, -2.0]), torch.tensor([1.0, 2.0]))
    wrong = lambdarank_pair_loss(torch.tensor([-2.0, 2.0]), torch.tensor([1.0, 2.0]))
    assert right.item() < 0.01 < 2.0 < wrong.item()


def test_loss_gradient_pushes_the_better_example_up():
    sims = torch.tensor([0.0, 0.0], requires_grad=True)
    lambdarank_pair_loss(sims, torch.tensor([2.0, 1.0])).backward()
    assert sims.grad[1] < 0 < sims.grad[0]  # descending the gradient raises sim of rank 1


# -- bands --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rating", "scale", "band"), [
    (5, (1, 5), "high"), (4, (1, 5), "high"), (3, (1, 5), "low"), (1, (1, 5), "low"),
    (3, (1, 3), "high"), (2, (1, 3), "low"),
    (6, (1, 6), "high"), (5, (1, 6), "high"), (4.5, (1, 6), "low"), (1, (0, 1), "high"), (0, (0, 1), "low"),
])
def test_bands_follow_the_seed_on_1_to_5_and_scale_with_the_range(rating, scale, band):
    assert band_of(rating, scale) == band


def test_band_threshold_is_configurable_and_empty_scales_are_refused():
    assert band_of(3, (1, 5), high_from=0.5) == "high"
    with pytest.raises(ConfigError, match="empty"):
        band_of(3, (2, 2))


# -- retrieval ------------------------------------------------------------------------------------

POOL = [item("hi-near", 5), item("hi-far", 4), item("lo-near", 2), item("lo-far", 1), item("mid", 3)]
VECTORS = {"hi-near": (1.0, 0.1), "hi-far": (0.0, 1.0), "lo-near": (0.9, 0.3), "lo-far": (-1.0, 0.2),
           "mid": (0.7, 0.7), "query": (1.0, 0.0)}


def test_semantic_ranking_is_by_cosine_and_leaves_out_the_judged_item():
    selector = RetrievalSelector(POOL, "q", [TableEncoder(VECTORS)], bands=False)
    query = item("query", 3)
    assert [it.id for it in selector.ranking(query)] == ["hi-near", "lo-near", "mid", "hi-far", "lo-far"]
    examples = selector.select(2, 5, exclude=query)
    assert [e.item.id for e in examples] == ["hi-near", "lo-near"] and [e.rating for e in examples] == [5, 2]
    assert [it.id for it in selector.ranking(POOL[0])] == ["lo-near", "mid", "hi-far", "lo-far"]


def test_examples_are_rescaled_to_the_judge_scale():
    selector = RetrievalSelector(POOL, "q", [TableEncoder(VECTORS)], bands=False)
    [example] = selector.select(1, 10, exclude=item("query", 3))
    assert example.human == 5 and example.rating == 10


def test_diverse_takes_high_and_low_band_from_each_retriever_in_turn():
    flipped = {name: (-x, y) for name, (x, y) in VECTORS.items() if name != "query"} | {"query": (1.0, 0.0)}
    selector = RetrievalSelector(POOL, "q", [TableEncoder(VECTORS), TableEncoder(flipped)], bands=True)
    picked = [e.item.id for e in selector.select(4, 5, exclude=item("query", 3))]
    # semantic: high hi-near, low lo-near; second encoder: high hi-far, low lo-far
    assert picked == ["hi-near", "lo-near", "hi-far", "lo-far"]
    # a fifth: the first list (high band) is used up, so the next turn's list gives it
    assert [e.item.id for e in selector.select(5, 5, exclude=item("query", 3))][4] == "mid"


def test_diverse_with_one_retriever_alternates_bands():
    selector = RetrievalSelector(POOL, "q", [TableEncoder(VECTORS)], bands=True)
    picked = [e.item.id for e in selector.select(4, 5, exclude=item("query", 3))]
    assert picked == ["hi-near", "lo-near", "hi-far", "mid"]


def test_take_in_turns_skips_chosen_items_and_stops_when_exhausted():
    assert _take_in_turns([[1, 2, 3], [1, 4], [2]], 4) == [1, 4, 2, 3]
    assert _take_in_turns([[1], [1]], 3) == [1]


def test_too_few_examples_is_a_clear_error():
    selector = RetrievalSelector(POOL[:2], "q", [TableEncoder(VECTORS)], bands=False)
    with pytest.raises(ConfigError, match="only 1 labelled items"):
        selector.select(2, 5, exclude=POOL[0])


def test_prepare_encodes_the_judged_items_in_one_batch():
    encoder = TableEncoder(VECTORS)
    selector = RetrievalSelector(POOL, "q", [encoder], bands=False)
    before = encoder.calls
    selector.prepare([item("query", 3), POOL[0]])
    selector.select(1, 5, exclude=item("query", 3))
    selector.select(1, 5, exclude=POOL[0])
    assert encoder.calls == before + 1


def test_instruction_is_read_by_the_towers():
    text = item_text(item("x", 1), "Rate the q of the output.")
    assert text.splitlines() == ["Rate the q of the output.", "source of x", "x"]


def test_random_selection_is_per_item_seeded_and_excludes_the_item():
    selector = RandomSelector(POOL, "q", seed=3)
    first = [e.item.id for e in selector.select(3, 5, exclude=POOL[0])]
    assert first == [e.item.id for e in RandomSelector(POOL, "q", seed=3).select(3, 5, exclude=POOL[0])]
    assert "hi-near" not in first and len(set(first)) == 3
    draws = {tuple(e.item.id for e in RandomSelector(POOL, "q", seed=s).select(3, 5, exclude=POOL[0]))
             for s in range(8)}
    assert len(draws) > 1


# -- feedback (eq. 4) through the real judge path, the model scripted ---------------------------


def test_feedback_ranks_candidates_by_distance_to_the_human_score():
    # The scripted judge answers the rating of the one example it is shown: the example with
    # the query's own rating is best, unparsable replies are dropped, not scored.
    def reply(request, _):
        prompt = request.messages[-1].content
        shown = prompt.split("Rating: [[")[-1].split("]]")[0]  # the last: the example's
        return "no idea" if shown == "1" else f"Rating: [[{shown}]]"

    backend = ScriptedBackend(reply)
    judge = PromptedJudge(aspect="q", family="generic", task="Rate it.", criteria="Quality.",
                          strategy=Strategy(cot="none"))
    query = item("query", 4)
    with scripted_client(backend) as client:
        [feedback] = collect_feedback(judge, [query], POOL, client, candidates=5)
    assert backend.calls == 5
    by_id = dict(zip(feedback.candidate_ids, feedback.ranks, strict=True))
    errors = dict(zip(feedback.candidate_ids, feedback.errors, strict=True))
    assert feedback.dropped == 1 and "lo-far" not in by_id
    assert errors == {"hi-near": 1.0, "hi-far": 0.0, "lo-near": 2.0, "mid": 1.0}
    assert by_id == {"hi-far": 1, "hi-near": 2, "mid": 2, "lo-near": 4}


# -- the config ----------------------------------------------------------------------------------


def test_config_names_the_source_and_round_trips_the_retriever_path(tmp_path):
    folder = tmp_path / "fitted"
    judge = PromptedJudge(aspect="q", example_source="diverse", example_retriever=folder / "retriever",
                          strategy=Strategy(examples=3))
    path = judge.save(folder / "judge.yaml")
    assert "example_retriever: retriever" in path.read_text()
    assert load_judge(path) == judge


def test_default_example_fields_do_not_change_the_digest():
    plain = PromptedJudge(aspect="q")
    assert "example_source" not in plain.model_dump()
    assert PromptedJudge(aspect="q", example_source="semantic").digest() != plain.digest()


def test_trained_source_without_a_retriever_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="example_retriever"):
        PromptedJudge(aspect="q", example_source="trained")
    with pytest.raises(ConfigError, match="not a trained in-context retriever"):
        TrainedRetriever.load(tmp_path)


# -- the sources through PromptedJudge.run (scripted model; the static embedder is real) ----------


def _shown_examples(request) -> list[str]:
    prompt = request.messages[-1].content
    blocks = prompt.split("[Example ")[1:]
    return [block.split("[The Start of the Output]\n")[1].split("\n")[0] for block in blocks]


def _judged(request) -> str:
    return request.messages[-1].content.rsplit("[The Start of the Output]\n", 1)[1].split("\n")[0]


def _run_with_source(source: str, **fields):
    pool = [Item(id=f"p{i}", source="A place.", output=text, scores={"q": float(1 + i % 5)}, scale=(1, 5))
            for i, text in enumerate(["The pizza was cold and late.", "Great sushi, friendly staff.",
                                      "Cold pizza again, slow delivery.", "Lovely sushi bar by the sea.",
                                      "Terrible parking near the station.", "Parking is hard to find."])]
    backend = ScriptedBackend(lambda request, _: "Rating: [[3]]")
    judge = PromptedJudge(aspect="q", family="generic", task="Review.", criteria="Quality.",
                          strategy=Strategy(cot="none", examples=3), example_source=source, **fields)
    with scripted_client(backend) as client:
        judgments = judge.run(pool[:2], client, examples_pool=pool)
    assert [j.status for j in judgments] == ["ok", "ok"]
    return {_judged(r): _shown_examples(r) for r in backend.requests}


def test_semantic_source_shows_the_most_similar_pool_items():
    shown = _run_with_source("semantic", example_embedder="static")
    pizza = shown["The pizza was cold and late."]
    assert pizza[0] == "Cold pizza again, slow delivery." and "The pizza was cold and late." not in pizza
    assert shown["Great sushi, friendly staff."][0] == "Lovely sushi bar by the sea."


def test_random_source_draws_per_item():
    shown = _run_with_source("random", seed=2)
    assert all(len(examples) == 3 and judged not in examples for judged, examples in shown.items())
    assert len({tuple(examples) for examples in shown.values()}) == 2
