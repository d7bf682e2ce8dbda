"""Criterion aggregators: turn per-criterion grades into one label (TREMA phase two, seed 003).

Each aggregator is a small frozen config, selected by ``method``:

* ``prompt``      — an LLM call with the item and its grades (seed Table 3); run by the judge;
* ``sum``         — the sum of the grades cut at thresholds (seed Table 4; thresholds configurable);
* ``naive-bayes`` — scikit-learn's GaussianNB trained on labelled grades (seed section 2.3);
* ``logistic``    — scikit-learn's multinomial LogisticRegression on the grades;
* ``ordinal``     — Frank & Hall's ordinal classifier: one scikit-learn LogisticRegression per
  cut "label > k"; it keeps the order of the labels that a multinomial model ignores.

The learned ones keep their few parameters inline (so a fitted judge is one YAML file) and
rebuild the scikit-learn estimator from them to predict. ``aggregate_grades`` applies any
non-prompt aggregator to grades already given (e.g. published ones), without an LLM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from judgelab.errors import ConfigError, DataError
from judgelab.limits import Positive

#: What a missing criterion grade means: the item cannot be aggregated (``unparsable``), or it
#: counts as 0 (``zero``: the TREMA authors' fallback, only when asked for).
MissingGrades = Literal["unparsable", "zero"]
Grades = Mapping[str, float | None]

#: Seed Table 4: a grade sum of 10-12 gives 3, 7-9 gives 2, 5-6 gives 1, 0-4 gives 0.
TABLE4_THRESHOLDS = (5.0, 7.0, 10.0)


class _Aggregator(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: True when ``fit`` must run before ``predict``.
    trainable: ClassVar[bool] = False

    @property
    def fitted(self) -> bool:
        return True


class PromptAggregator(_Aggregator):
    """Ask the LLM for the label given the item and its grades (seed Table 3)."""

    method: Literal["prompt"] = "prompt"
    #: Your own system message (the seed's describes the TREC 0-3 relevance scale).
    system: str | None = None


class SumAggregator(_Aggregator):
    """Label = how many ``thresholds`` the grade sum reaches (seed Table 4 by default)."""

    method: Literal["sum"] = "sum"
    #: The smallest sum that earns label 1, 2, ... (ascending). The authors' released code
    #: used (6, 7, 10) on DL 2019, stricter than their paper's Table 4 (5, 7, 10).
    thresholds: tuple[float, ...] = TABLE4_THRESHOLDS

    @field_validator("thresholds")
    @classmethod
    def _ascending(cls, thresholds: tuple[float, ...]) -> tuple[float, ...]:
        if not thresholds or list(thresholds) != sorted(thresholds):
            raise ValueError(f"thresholds {list(thresholds)} must be a non-empty ascending list")
        return thresholds

    def predict(self, features: np.ndarray) -> np.ndarray:
        # side="right": a sum equal to a threshold reaches it.
        return np.searchsorted(np.asarray(self.thresholds), features.sum(axis=1), side="right")


class _LearnedAggregator(_Aggregator):
    trainable: ClassVar[bool] = True
    #: The criteria the model was trained on, in feature order (set by ``fit``).
    features: tuple[str, ...] | None = None
    classes: tuple[int, ...] | None = None

    @property
    def fitted(self) -> bool:
        return self.classes is not None

    def fit(self, features: np.ndarray, labels: np.ndarray, names: Sequence[str]) -> _LearnedAggregator:
        raise NotImplementedError

    def predict(self, features: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _check_fitted(self) -> None:
        if not self.fitted:
            raise ConfigError(f"the {self.method} aggregator is not trained: fit it on labelled items first "  # type: ignore[attr-defined]
                              "(`judgelab fit --method trema ...` or judge.fit(items, client))")


class NaiveBayesAggregator(_LearnedAggregator):
    """Gaussian naive Bayes over the grades (scikit-learn ``GaussianNB``), as TREMA-naiveBdecompose."""

    method: Literal["naive-bayes"] = "naive-bayes"
    var_smoothing: Positive = 1e-9
    theta: tuple[tuple[float, ...], ...] | None = None
    var: tuple[tuple[float, ...], ...] | None = None
    class_prior: tuple[float, ...] | None = None

    def fit(self, features: np.ndarray, labels: np.ndarray, names: Sequence[str]) -> NaiveBayesAggregator:
        if len(features) and np.ptp(features, axis=0).max() == 0:
            # GaussianNB scales its variance floor by the largest variance: with none, every class
            # has zero variance and its predictions are divisions by zero, not a model.
            raise DataError(f"every training item has the same grades {features[0].tolist()}: a naive Bayes "
                            "aggregator cannot learn from constant grades (a judge that always writes one grade; "
                            "try grade_score: logprob, or another aggregator)")
        model = GaussianNB(var_smoothing=self.var_smoothing).fit(features, labels)
        return self.model_copy(update=dict(
            features=tuple(names), classes=_ints(model.classes_), theta=_rows(model.theta_), var=_rows(model.var_),
            class_prior=_floats(model.class_prior_)))

    def predict(self, features: np.ndarray) -> np.ndarray:
        self._check_fitted()
        model = GaussianNB(var_smoothing=self.var_smoothing)
        model.classes_, model.theta_ = np.array(self.classes), np.array(self.theta)
        model.var_, model.class_prior_ = np.array(self.var), np.array(self.class_prior)
        model.n_features_in_ = len(self.features or ())
        return model.predict(features)


class LogisticAggregator(_LearnedAggregator):
    """Multinomial logistic regression over the grades (scikit-learn ``LogisticRegression``)."""

    method: Literal["logistic"] = "logistic"
    #: Inverse regularisation strength; ``balanced`` weighs rare labels up (TREC pools are mostly 0).
    C: Positive = 1.0
    class_weight: Literal["balanced"] | None = None
    coef: tuple[tuple[float, ...], ...] | None = None
    intercept: tuple[float, ...] | None = None

    def fit(self, features: np.ndarray, labels: np.ndarray, names: Sequence[str]) -> LogisticAggregator:
        model = _logistic(self.C, self.class_weight).fit(features, labels)
        return self.model_copy(update=dict(features=tuple(names), classes=_ints(model.classes_),
                                           coef=_rows(model.coef_), intercept=_floats(model.intercept_)))

    def predict(self, features: np.ndarray) -> np.ndarray:
        self._check_fitted()
        model = _logistic(self.C, self.class_weight)
        model.classes_, model.coef_, model.intercept_ = np.array(self.classes), np.array(self.coef), np.array(self.intercept)
        model.n_features_in_ = len(self.features or ())
        return model.predict(features)


class OrdinalAggregator(_LearnedAggregator):
    """Frank & Hall (2001) ordinal classification: P(label > k) from one binary logistic regression
    per cut k, P(label = k) = P(> k-1) - P(> k). Hand-combined because scikit-learn has no ordinal
    model and statsmodels/mord would be a new dependency for ten lines; the fits are scikit-learn's."""

    method: Literal["ordinal"] = "ordinal"
    C: Positive = 1.0
    class_weight: Literal["balanced"] | None = None
    #: One row per cut between consecutive ``classes``.
    coef: tuple[tuple[float, ...], ...] | None = None
    intercept: tuple[float, ...] | None = None

    def fit(self, features: np.ndarray, labels: np.ndarray, names: Sequence[str]) -> OrdinalAggregator:
        classes = np.unique(labels)
        if len(classes) < 2:
            raise DataError(f"the ordinal aggregator needs at least 2 distinct labels, got {classes.tolist()}")
        coef, intercept = [], []
        for cut in classes[:-1]:
            model = _logistic(self.C, self.class_weight).fit(features, (labels > cut).astype(int))
            coef.append(model.coef_[0])
            intercept.append(model.intercept_[0])
        return self.model_copy(update=dict(features=tuple(names), classes=_ints(classes), coef=_rows(np.array(coef)),
                                           intercept=_floats(np.array(intercept))))

    def predict(self, features: np.ndarray) -> np.ndarray:
        self._check_fitted()
        above = []
        for coef, intercept in zip(self.coef or (), self.intercept or (), strict=True):
            model = _logistic(self.C, self.class_weight)
            model.classes_, model.coef_, model.intercept_ = np.array([0, 1]), np.array([coef]), np.array([intercept])
            model.n_features_in_ = len(coef)
            above.append(model.predict_proba(features)[:, 1])
        ones, zeros = np.ones((len(features), 1)), np.zeros((len(features), 1))
        cumulative = np.hstack([ones, np.column_stack(above), zeros])  # P(label > k-1) for each class k
        return np.asarray(self.classes)[np.argmax(cumulative[:, :-1] - cumulative[:, 1:], axis=1)]


Aggregator = Annotated[
    PromptAggregator | SumAggregator | NaiveBayesAggregator | LogisticAggregator | OrdinalAggregator,
    Field(discriminator="method"),
]
AGGREGATOR_METHODS = ("prompt", "sum", "naive-bayes", "logistic", "ordinal")


def _logistic(C: float, class_weight: str | None) -> LogisticRegression:
    return LogisticRegression(C=C, class_weight=class_weight, max_iter=1000)


def _ints(values: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _floats(values: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def _rows(matrix: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(_floats(row) for row in matrix)


# -- over grade dictionaries ------------------------------------------------------------------
def feature_matrix(grades: Sequence[Grades], names: Sequence[str], missing: MissingGrades = "unparsable"
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Grades as a float matrix (rows x ``names``) and a mask of the rows that are complete.

    With ``missing="zero"`` an absent or None grade counts as 0 and every row is complete.
    """
    matrix = np.array([[_grade(row.get(name), missing) for name in names] for row in grades], dtype=float)
    matrix = matrix.reshape(len(grades), len(names))
    complete = ~np.isnan(matrix).any(axis=1)
    return np.nan_to_num(matrix), complete


def _grade(value: float | None, missing: MissingGrades) -> float:
    if value is None:
        return 0.0 if missing == "zero" else np.nan
    return float(value)


def whole_labels(values: Sequence[float], aspect: str) -> list[int]:
    """Human scores as graded labels, or a DataError when any is not a whole number (a label
    aggregator learns grades such as relevance 0-3, never a rounded average)."""
    scores = np.asarray(values, dtype=float)
    fractional = scores[~np.isclose(scores, np.round(scores))]
    if len(fractional):
        raise DataError(f"graded labels need whole-number {aspect!r} scores (e.g. relevance 0-3); "
                        f"got {len(fractional)} such as {fractional[0]:g}")
    return np.round(scores).astype(int).tolist()


def fit_aggregator(aggregator: _Aggregator, grades: Sequence[Grades], labels: Sequence[int], names: Sequence[str],
                   missing: MissingGrades = "unparsable") -> _Aggregator:
    """A trained copy of ``aggregator``; items with a missing grade are left out unless ``missing="zero"``."""
    if not isinstance(aggregator, _LearnedAggregator):
        raise ConfigError(f"the {getattr(aggregator, 'method', '?')} aggregator has nothing to learn")
    if len(grades) != len(labels):
        raise DataError(f"{len(grades)} grade rows but {len(labels)} labels")
    features, complete = feature_matrix(grades, names, missing)
    labels_array = np.asarray(labels, dtype=int)
    if complete.sum() < 2 or len(np.unique(labels_array[complete])) < 2:
        raise DataError(f"cannot train the {aggregator.method} aggregator: {int(complete.sum())} items with every "  # type: ignore[attr-defined]
                        "grade, and it needs at least 2 with 2 distinct labels")
    return aggregator.fit(features[complete], labels_array[complete], names)


def aggregate_grades(aggregator: _Aggregator, grades: Sequence[Grades], names: Sequence[str] | None = None,
                     missing: MissingGrades = "unparsable") -> list[int | None]:
    """Labels for grades already given (no LLM call): None where a grade is missing (``unparsable``).

    ``names``: the criteria to use, in order (default: what a learned aggregator was trained
    on; the sum needs them given or takes every key of the first row).
    """
    if isinstance(aggregator, PromptAggregator):
        raise ConfigError("the prompt aggregator asks the LLM; run the judge, or pick sum, naive-bayes, logistic or ordinal")
    names = tuple(names or getattr(aggregator, "features", None) or (grades[0].keys() if grades else ()))
    if not grades:
        return []
    features, complete = feature_matrix(grades, names, missing)
    predicted = aggregator.predict(features)  # type: ignore[attr-defined]
    return [int(label) if ok else None for label, ok in zip(predicted, complete, strict=True)]
