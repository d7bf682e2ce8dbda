"""The UCLWI similarity scorer: no LLM, just embeddings and a linear model.

An output that resembles the other outputs answering the same source is probably a good one
(UCLWI, NTCIR-18 AEOLLM, Algorithm 1). Per output the features are

* its cosine similarity to every output of its group (the outputs answering the same source):
  ``features="systems"`` gives one column per system, in a stable (sorted) system order learned
  at fit time, as the paper does (its own column is 1.0, as Algorithm 1 iterates over all
  replies); ``features="sorted"`` gives the similarities to the *other* outputs sorted from
  most to least similar, for data whose groups have no or differing systems (SF Hotel/Restaurant);
  ``"auto"`` picks ``systems`` when every training item names a system and no group repeats one;
* its similarity to the source (and optionally to ``context`` / ``reference``).

Features are standardised (scikit-learn StandardScaler) and a multinomial logistic regression
(lbfgs, max_iter 1000) predicts the human score class; ``estimator="ridge"`` regresses the
score instead, for continuous scales. ``dense_rank`` turns predictions into dense ranks within
each group, as AEOLLM submissions are.

Bad input, by design:
* a group of one output has no peers: fit skips it (counted in the warning), run gives those
  items an error judgment saying so;
* a group lacking some system's output (``systems`` mode) or an item without a source text:
  the missing similarity is imputed with the training mean (0 after standardisation) and the
  judgment lists it in ``extra["imputed"]``; with ``sorted`` features a group smaller than the
  training groups is padded with its own mean similarity;
* a system not seen at fit time adds no column: its outputs are judged from their similarities
  to the seen systems' outputs (``extra["unseen_system"]``);
* two outputs of one system in one group (``systems`` mode) cannot fill one column: fit raises
  a DataError naming them, run gives them error judgments;
* pairwise items are not outputs of a group: error judgments.

Relevance items (query-passage pairs, TREC): the one feature is the passage's similarity to its
query (``features="none"``: a query's passages are not peers answering it the same way outputs
answer a source), and ``label_aggregator`` (e.g. a class-balanced logistic model) gives each
pair a graded label for ``judgelab qrels``. That zero-shot cosine with the MiniLM embedder ranks the
DL 2019 runs about as the TREMA authors' Llama-3-8B labels do (docs/trema.md, "A relevance judge
on a CPU").
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from scipy.special import softmax
from scipy.stats import rankdata

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, DataWarning
from judgelab.files import private_dir, restrict_tree, safe_name
from judgelab.judges.aggregate import Aggregator, aggregate_grades, fit_aggregator, whole_labels
from judgelab.judges.base import ConfigPath, JudgeConfig, OnJudgment
from judgelab.limits import Count, Positive
from judgelab.llm.client import Client

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

FeatureMode = Literal["auto", "systems", "sorted", "none"]
#: Items the judge rates: outputs of a group, or a query's passages.
RATED_KINDS = ("pointwise", "relevance")
SourceField = Literal["source", "context", "reference"]


@dataclass
class FeatureRows:
    """One row of features per item (NaN where a value is missing), or why the item has none."""

    names: list[str]
    values: np.ndarray
    problems: list[str | None]
    imputed: list[list[str]] = field(default_factory=list)
    unseen: list[bool] = field(default_factory=list)


@dataclass(frozen=True)
class LinearModel:
    """The fitted standardiser + linear model as plain arrays (the ``.npz`` weights file).

    Stored as arrays rather than a pickle: readable by any scikit-learn version, and loading a
    weights file executes no code. Prediction is the two lines of algebra the estimators do.
    """

    estimator: str
    feature_names: list[str]
    impute: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (n_classes or 1, n_features)
    intercept: np.ndarray
    classes: np.ndarray  # the score of each class (logistic); empty for ridge

    def standardise(self, values: np.ndarray) -> np.ndarray:
        filled = np.where(np.isnan(values), self.impute, values)
        return (filled - self.mean) / self.scale

    def probabilities(self, values: np.ndarray) -> np.ndarray:
        logits = self.standardise(values) @ self.coef.T + self.intercept
        if len(self.classes) == 2:  # scikit-learn keeps one row for two classes: P(second) = sigmoid
            logits = np.column_stack([np.zeros(len(logits)), logits[:, 0]])
        return softmax(logits, axis=1)

    def predict(self, values: np.ndarray, mode: str) -> np.ndarray:
        if self.estimator == "ridge":
            return self.standardise(values) @ self.coef[0] + self.intercept[0]
        probabilities = self.probabilities(values)
        if mode == "expected":
            return probabilities @ self.classes
        return self.classes[np.argmax(probabilities, axis=1)]

    def save(self, path: Path) -> Path:
        private_dir(path.parent)
        np.savez(path, estimator=self.estimator, feature_names=np.array(self.feature_names), impute=self.impute,
                 mean=self.mean, scale=self.scale, coef=self.coef, intercept=self.intercept, classes=self.classes)
        return restrict_tree(path)  # numpy writes with the umask's mode

    @classmethod
    def load(cls, path: Path) -> LinearModel:
        try:
            with np.load(path, allow_pickle=False) as data:
                return cls(str(data["estimator"]), [str(n) for n in data["feature_names"]], data["impute"],
                           data["mean"], data["scale"], data["coef"], data["intercept"], data["classes"])
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"{path}: cannot read similarity weights: {exc}") from exc


class SimilarityJudge(JudgeConfig):
    """Embedding similarities within each group + a linear model fitted on human scores (no LLM)."""

    registry_name: ClassVar[str] = "similarity"
    uses_llm: ClassVar[bool] = False
    trainable: ClassVar[bool] = True
    omitted_at_default: ClassVar[dict[str, Any]] = {"label_aggregator": None}  # added later: digests kept
    kind: Literal["similarity"] = "similarity"
    aspect: str
    #: "static" (Model2Vec, fast, no torch), "minilm" (sentence-transformers), or a model folder.
    embedder: str = "static"
    features: FeatureMode = "auto"
    #: Item fields whose similarity to the output is a feature (one column each).
    source_fields: tuple[SourceField, ...] = ("source",)
    #: logistic: classify the (rounded) human score, as UCLWI; ridge: regress it.
    estimator: Literal["logistic", "ridge"] = "logistic"
    #: expected: the probability-weighted mean score (the default: it ranks better out of sample and
    #: seldom gives a whole source one score, docs/similarity.md); class: the most probable class (UCLWI).
    predict: Literal["class", "expected"] = "expected"
    #: Human scores are rounded to multiples of this to form classes (averaged ratings are not integers).
    class_step: Positive = 1.0
    #: Inverse regularisation of the logistic regression / alpha of the ridge.
    regularisation: Positive = 1.0
    #: Report dense ranks within each group as the score (1 = lowest predicted quality).
    dense_rank: bool = False
    #: Also give a graded label (e.g. TREC relevance 0-3, for ``judgelab qrels``): an aggregator
    #: (``ordinal``, ``logistic``, ``naive-bayes``) over the features, fitted on the whole-number
    #: human scores; once fitted, its parameters are kept here.
    label_aggregator: Aggregator | None = None
    # -- learned by fit ---------------------------------------------------------------------
    systems: tuple[str, ...] | None = None
    neighbours: Count | None = None
    weights: ConfigPath | None = None

    @property
    def fitted(self) -> bool:
        return self.weights is not None

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        """Fitted on its own items with the static embedder (no torch, loads in about a second)."""
        from judgelab.judges.contract import ContractExample, pointwise_items

        items = pointwise_items("coherence")
        unfitted = cls(aspect="coherence", features="sorted", estimator="ridge")
        return ContractExample(unfitted.fit(items, out_dir=folder / "fitted"), items, unfitted=unfitted)

    # -- fit ------------------------------------------------------------------------------------
    def fit(self, items: Sequence[Item], client: Client | None = None, *, out_dir: Path | None = None) -> SimilarityJudge:
        """Learn the system order / neighbour count and the linear model; weights go to ``out_dir``."""
        from sklearn.impute import SimpleImputer
        from sklearn.linear_model import LogisticRegression, Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        items = _rated_only(items)
        scored = [item.human_score(self.aspect) for item in items]
        if self.label_aggregator is not None:  # before the embedding, which is the slow part
            whole_labels([s for s in scored if s is not None], self.aspect)
        layout = self._layout(items)
        rows = layout.rows(items, self._vectors(items))
        usable = [i for i, item in enumerate(items)
                  if rows.problems[i] is None and item.human_score(self.aspect) is not None]
        skipped = sum(p is not None for p in rows.problems)
        if skipped:
            warnings.warn(f"similarity fit: {skipped} items skipped ({_first(rows.problems)})", DataWarning, stacklevel=2)
        if len(usable) < 2:
            raise ConfigError(f"similarity fit needs labelled items ('{self.aspect}' scores) in groups of two or more "
                              f"outputs; {len(usable)} usable of {len(items)}")
        x = rows.values[usable]
        y = np.array([scored[i] for i in usable])
        label_aggregator = self._fit_labels(rows, usable, y)  # on the scores as given, before any class rounding
        if self.estimator == "logistic":
            y = np.round(y / self.class_step) * self.class_step
            if len(np.unique(y)) < 2:
                raise ConfigError(f"similarity fit: every '{self.aspect}' score falls in one class ({y[0]})")
            model = LogisticRegression(C=self.regularisation, solver="lbfgs", max_iter=1000)
        else:
            model = Ridge(alpha=self.regularisation)
        pipeline = make_pipeline(SimpleImputer(strategy="mean", keep_empty_features=True), StandardScaler(), model)
        pipeline.fit(x, y)
        imputer, scaler = pipeline[0], pipeline[1]
        linear = LinearModel(
            self.estimator, rows.names, imputer.statistics_, scaler.mean_, scaler.scale_,
            np.atleast_2d(model.coef_), np.atleast_1d(model.intercept_),
            model.classes_.astype(float) if self.estimator == "logistic" else np.array([]),
        )
        folder = Path(out_dir) if out_dir else _default_fitted_dir()
        fitted = self.model_copy(update={"features": layout.mode, "systems": layout.systems,
                                         "neighbours": layout.neighbours,
                                         "label_aggregator": label_aggregator})
        path = linear.save(folder / f"similarity-{safe_name(self.aspect)}-{fitted.digest()}.npz")
        return fitted.model_copy(update={"weights": path})

    def _fit_labels(self, rows: FeatureRows, usable: list[int], scores: np.ndarray):
        if self.label_aggregator is None:
            return None
        grades = [dict(zip(rows.names, rows.values[i], strict=True)) for i in usable]
        return fit_aggregator(self.label_aggregator, grades, whole_labels(scores, self.aspect), rows.names)

    def _layout(self, items: Sequence[Item]) -> _Layout:
        mode = self.features
        named = all(item.system_id for item in items)
        if mode == "auto" and any(item.kind == "relevance" for item in items):
            mode = "none"
        elif mode == "auto":
            mode = "systems" if named and not _repeated_systems(items) else "sorted"
        if mode == "systems":
            if not named:
                missing = next(item.id for item in items if not item.system_id)
                raise DataError("features='systems' needs a system_id on every item (or use features='sorted')",
                                path=f"item {missing}", field="system_id")
            repeated = _repeated_systems(items)
            if repeated:
                raise DataError(f"features='systems': group has two outputs of one system (items {', '.join(repeated)}); "
                                "use features='sorted'", path=f"item {repeated[0]}", field="system_id")
            return _Layout("systems", self.source_fields, systems=tuple(sorted({i.system_id for i in items})))
        if mode == "none":
            return _Layout("none", self.source_fields)
        sizes = [len(g) for g in _groups(items).values() if len(g) > 1]
        return _Layout("sorted", self.source_fields, neighbours=max(sizes) - 1 if sizes else 1)

    # -- run --------------------------------------------------------------------------------------
    def run(self, items: Sequence[Item], client: Client | None = None, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        if not self.fitted:
            raise ConfigError("this similarity judge is not fitted: `judgelab fit --method similarity` (or judge.fit(items))")
        linear = LinearModel.load(self.weights)
        judgments: list[Judgment | None] = [None] * len(items)
        pointwise = [i for i, item in enumerate(items) if item.kind in RATED_KINDS]
        for i, item in enumerate(items):
            if item.kind not in RATED_KINDS:
                judgments[i] = self.error(item, f"the similarity judge rates pointwise outputs and relevance pairs, "
                                                f"not {item.kind} items")
        subset = [items[i] for i in pointwise]
        layout = _Layout(self.features, self.source_fields, systems=self.systems, neighbours=self.neighbours)
        rows = layout.rows(subset, self._vectors(subset)) if subset else None
        if rows is not None and rows.names != linear.feature_names:
            raise ConfigError(f"{self.weights}: weights are for features {linear.feature_names}, config gives {rows.names}")
        ok = [k for k in range(len(subset)) if rows.problems[k] is None] if rows else []
        predictions = linear.predict(rows.values[ok], self.predict) if ok else np.array([])
        labels = self._labels(rows, ok)
        ranks = _dense_ranks(subset, ok, predictions) if self.dense_rank else {}
        for position, k in enumerate(ok):
            judgments[pointwise[k]] = self._judgment(subset[k], float(predictions[position]), rows, k, ranks.get(k),
                                                     labels[position])
        for k, problem in enumerate(rows.problems if rows else []):
            if problem is not None:
                judgments[pointwise[k]] = self.error(subset[k], problem)
        return [self.emit(j, on_judgment) for j in judgments]

    def _labels(self, rows: FeatureRows | None, ok: list[int]) -> list[int | None]:
        if rows is None or self.label_aggregator is None or not self.label_aggregator.fitted:
            return [None] * len(ok)
        # A missing feature (an item without a source text) leaves its label None: nothing is guessed.
        grades = [{name: (None if np.isnan(v) else float(v)) for name, v in zip(rows.names, rows.values[k], strict=True)}
                  for k in ok]
        return aggregate_grades(self.label_aggregator, grades, rows.names)

    def _judgment(self, item: Item, predicted: float, rows: FeatureRows, k: int,
                  rank: tuple[float, float] | None, label: int | None = None) -> Judgment:
        extra: dict = {"predicted": predicted}
        if rows.imputed[k]:
            extra["imputed"] = rows.imputed[k]
        if rows.unseen[k]:
            extra["unseen_system"] = item.system_id
        score = predicted
        if rank is not None:
            score, extra["rank"] = rank
        return Judgment(item_id=item.id, score=score, label=label, aspect=self.aspect, judge=self.name, extra=extra)

    def _vectors(self, items: Sequence[Item]) -> dict[str, np.ndarray]:
        """Unit vectors of every output and source text, keyed by the text."""
        from judgelab.embed import make_embedder

        texts = {item.judged for item in items if item.judged is not None}
        for item in items:
            texts.update(_field_text(item, f) for f in self.source_fields if _field_text(item, f) is not None)
        ordered = sorted(texts)
        vectors = make_embedder(self.embedder).encode(ordered) if ordered else np.zeros((0, 0))
        return dict(zip(ordered, vectors, strict=True))


@dataclass
class _Layout:
    """Which columns the features have: per system (stable order) or sorted neighbours, then sources."""

    mode: str
    source_fields: tuple[str, ...]
    systems: tuple[str, ...] | None = None
    neighbours: Count | None = None

    @property
    def names(self) -> list[str]:
        if self.mode == "systems":
            peers = [f"sim:{s}" for s in self.systems or ()]
        elif self.mode == "none":
            peers = []
        else:
            peers = [f"sim:neighbour{k + 1}" for k in range(self.neighbours or 0)]
        return peers + [f"sim:{f}" for f in self.source_fields]

    def rows(self, items: Sequence[Item], vectors: dict[str, np.ndarray]) -> FeatureRows:
        names = self.names
        values = np.full((len(items), len(names)), np.nan)
        rows = FeatureRows(names, values, [None] * len(items), [[] for _ in items], [False] * len(items))
        for members in _groups(items).values():
            if self.mode == "none":
                self._source_columns(items, members, vectors, rows)
            else:
                self._group_rows(items, members, vectors, rows)
        return rows

    def _group_rows(self, items: Sequence[Item], members: list[int], vectors: dict[str, np.ndarray],
                    rows: FeatureRows) -> None:
        if len(members) < 2:
            rows.problems[members[0]] = (f"group {items[members[0]].group!r} has one output: "
                                         "there are no other outputs to compare it with")
            return
        matrix = np.stack([vectors[items[m].judged] for m in members])
        similarity = matrix @ matrix.T
        peers = len(rows.names) - len(self.source_fields)
        if self.mode == "systems":
            self._system_columns(items, members, similarity, rows)
        else:
            for a, m in enumerate(members):
                others = np.sort(np.delete(similarity[a], a))[::-1][:peers]
                padded = np.full(peers, others.mean())
                padded[:len(others)] = others
                rows.values[m, :peers] = padded
        self._source_columns(items, members, vectors, rows)

    def _source_columns(self, items: Sequence[Item], members: list[int], vectors: dict[str, np.ndarray],
                        rows: FeatureRows) -> None:
        """The last columns: each output's (or passage's) similarity to its source fields."""
        peers = len(rows.names) - len(self.source_fields)
        for m in members:
            for f, field_name in enumerate(self.source_fields):
                text = _field_text(items[m], field_name)
                if text is None:
                    rows.imputed[m].append(rows.names[peers + f])
                else:
                    rows.values[m, peers + f] = float(vectors[items[m].judged] @ vectors[text])

    def _system_columns(self, items: Sequence[Item], members: list[int], similarity: np.ndarray,
                        rows: FeatureRows) -> None:
        column = {s: c for c, s in enumerate(self.systems or ())}
        by_system: dict[str, list[int]] = defaultdict(list)
        for a, m in enumerate(members):
            by_system[items[m].system_id or ""].append(a)
        repeated = [items[members[a]].id for pos in by_system.values() if len(pos) > 1 for a in pos]
        if repeated or "" in by_system:
            reason = ("two outputs of one system in this group" if repeated else "an output without system_id")
            for m in members:
                rows.problems[m] = f"group {items[m].group!r} has {reason}: features='systems' needs one output per system"
            return
        for a, m in enumerate(members):
            rows.unseen[m] = items[m].system_id not in column
            for system, c in column.items():
                if system in by_system:
                    rows.values[m, c] = similarity[a, by_system[system][0]]
                else:
                    rows.imputed[m].append(rows.names[c])


def _groups(items: Sequence[Item]) -> dict[str, list[int]]:
    members: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        members[item.group].append(i)
    return members


def _repeated_systems(items: Sequence[Item]) -> list[str]:
    seen: dict[tuple[str, str | None], str] = {}
    for item in items:
        key = (item.group, item.system_id)
        if key in seen:
            return [seen[key], item.id]
        seen[key] = item.id
    return []


def _dense_ranks(items: Sequence[Item], ok: list[int], predictions: np.ndarray) -> dict[int, tuple[float, float]]:
    """(dense rank with 1 = lowest prediction, AEOLLM rank with 1 = best) per judged item."""
    by_group: dict[str, list[int]] = defaultdict(list)
    for position, k in enumerate(ok):
        by_group[items[k].group].append(position)
    ranks: dict[int, tuple[float, float]] = {}
    for positions in by_group.values():
        dense = rankdata(predictions[positions], method="dense")
        for position, rank in zip(positions, dense, strict=True):
            ranks[ok[position]] = (float(rank), float(dense.max() - rank + 1))
    return ranks


def _rated_only(items: Sequence[Item]) -> list[Item]:
    other = next((item for item in items if item.kind not in RATED_KINDS), None)
    if other is not None:
        raise DataError(f"the similarity judge learns from pointwise outputs or relevance pairs, not {other.kind} items",
                        path=f"item {other.id}")
    if len({item.kind for item in items}) > 1:
        raise DataError("the similarity judge learns from pointwise outputs or from relevance pairs, not both at once")
    return list(items)


def _field_text(item: Item, name: str) -> str | None:
    """A source field's text; a relevance pair's "source" is its query."""
    return item.query if name == "source" and item.kind == "relevance" else getattr(item, name)


def _first(problems: list[str | None]) -> str:
    return next(p for p in problems if p is not None)


def _default_fitted_dir() -> Path:
    from judgelab.llm.models import judgelab_home

    return judgelab_home() / "fitted"


def weight_table(judge: SimilarityJudge):
    """The weights the paper analyses (its Table 4): one row per class (or one for ridge), one
    column per standardised feature, plus the bias. A pandas DataFrame."""
    import pandas as pd

    if not judge.fitted:
        raise ConfigError("the similarity judge is not fitted: it has no weights yet")
    linear = LinearModel.load(judge.weights)
    index = [f"class {c:g}" for c in linear.classes] if len(linear.classes) > 2 else (
        [f"class {linear.classes[1]:g} vs {linear.classes[0]:g}"] if len(linear.classes) == 2 else ["score"])
    table = pd.DataFrame(linear.coef, columns=linear.feature_names, index=index)
    table["bias"] = linear.intercept
    return table
