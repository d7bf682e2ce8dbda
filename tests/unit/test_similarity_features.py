"""The similarity judge's feature layout and its stored linear model, on hand-made unit vectors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from judgelab.data.item import Item
from judgelab.judges.similarity import LinearModel, _Layout


def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=float)
    return v / np.linalg.norm(v)


VECTORS = {"a": _unit(1, 0, 0), "b": _unit(1, 1, 0), "c": _unit(0, 1, 0), "q": _unit(1, 0, 1)}


def _item(id: str, group: str, system: str | None, output: str, source: str | None = "q") -> Item:
    return Item(id=id, group_id=group, system_id=system, output=output, source=source)


def test_system_columns_follow_the_stable_order_and_impute_missing_systems():
    items = [_item("1", "g", "S2", "a"), _item("2", "g", "S1", "b"), _item("3", "h", "S1", "c"),
             _item("4", "h", "S3", "a", source=None)]
    rows = _Layout("systems", ("source",), systems=("S1", "S2")).rows(items, VECTORS)
    assert rows.names == ["sim:S1", "sim:S2", "sim:source"]
    # item 1 (S2, "a"): similarity to S1's output "b", to itself (1.0), to the source.
    np.testing.assert_allclose(rows.values[0], [VECTORS["a"] @ VECTORS["b"], 1.0, VECTORS["a"] @ VECTORS["q"]])
    # group h has no S2 output: that column is missing (NaN), and item 4 has no source either.
    assert np.isnan(rows.values[2, 1]) and rows.imputed[2] == ["sim:S2"]
    assert rows.imputed[3] == ["sim:S2", "sim:source"] and rows.unseen[3] and not rows.unseen[2]
    assert rows.problems == [None] * 4


def test_sorted_neighbours_pad_small_groups_with_their_mean():
    items = [_item("1", "g", None, "a"), _item("2", "g", None, "b"), _item("3", "g", None, "c"),
             _item("4", "h", None, "a"), _item("5", "h", None, "c")]
    rows = _Layout("sorted", ("source",), neighbours=2).rows(items, VECTORS)
    ab, ac = VECTORS["a"] @ VECTORS["b"], VECTORS["a"] @ VECTORS["c"]
    np.testing.assert_allclose(rows.values[0, :2], [ab, ac])  # most similar first
    np.testing.assert_allclose(rows.values[3, :2], [ac, ac])  # one peer, padded with its mean


def test_one_output_groups_and_repeated_systems_are_reported_per_item():
    items = [_item("1", "g", "S1", "a"), _item("2", "h", "S1", "b"), _item("3", "h", "S1", "c")]
    rows = _Layout("systems", ("source",), systems=("S1",)).rows(items, VECTORS)
    assert "has one output" in rows.problems[0]
    assert all("two outputs of one system" in p for p in rows.problems[1:])


@pytest.mark.parametrize("n_classes", [2, 4])
def test_stored_arrays_predict_exactly_as_the_fitted_pipeline(n_classes):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(80, 5))
    x[rng.random(x.shape) < 0.1] = np.nan
    y = rng.integers(1, n_classes + 1, size=80).astype(float)
    pipeline = make_pipeline(SimpleImputer(), StandardScaler(), LogisticRegression(max_iter=1000)).fit(x, y)
    model = pipeline[-1]
    linear = LinearModel("logistic", list("abcde"), pipeline[0].statistics_, pipeline[1].mean_, pipeline[1].scale_,
                         np.atleast_2d(model.coef_), model.intercept_, model.classes_.astype(float))
    np.testing.assert_allclose(linear.probabilities(x), pipeline.predict_proba(x), atol=1e-10)
    np.testing.assert_array_equal(linear.predict(x, "class"), pipeline.predict(x))
    np.testing.assert_allclose(linear.predict(x, "expected"), pipeline.predict_proba(x) @ model.classes_)
