"""Retrieved in-context examples (PanguIR section 3.3): the selectors a prompted judge uses at run time.

Example sources a prompted judge can name in its config (``PromptedJudge.example_source``):

- ``stratified``: one fixed set spread over the human ratings (``judges.examples``, HPSS);
- ``random``: a fresh seeded random draw for every judged item;
- ``semantic``: the pool items most similar to the judged item (embedding cosine, 3.3.2);
- ``trained``: the items a dual-tower retriever fine-tuned from LLM feedback ranks first (3.3.1);
- ``diverse``: diversity integration (3.3.3): the most relevant example of the high-score band
  and of the low-score band from each retriever (semantic, then trained if one is given), in
  turns until k examples are chosen. With k = 4 and both retrievers this is the seed's recipe.

Training the ``trained`` retriever from LLM feedback (eq. 4-6) is fitting, not judging: it lives
in ``judgelab.optimize.icl``, which writes the folder ``TrainedRetriever`` loads here.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.examples import ExampleSelector, InContextExample, rescale, same_item

ExampleSource = Literal["stratified", "random", "semantic", "trained", "diverse"]
EXAMPLE_SOURCES: tuple[str, ...] = ("stratified", "random", "semantic", "trained", "diverse")
#: The high band starts at this fraction of the rating scale: 0.75 is {4, 5} on 1..5 (the seed).
DEFAULT_HIGH_BAND = 0.75
#: What a trained retriever folder holds besides the sentence-transformers model.
RETRIEVER_META = "icl.json"
Band = Literal["high", "low"]


class Encoder(Protocol):
    """What a retriever needs: unit-norm rows, so a dot product is the similarity of eq. 3."""

    identity: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


# -- what the towers read ---------------------------------------------------------------------


def task_instruction(aspect: str) -> str:
    """P_T of eq. 3: the task instruction both towers read before the item."""
    return f"Rate the {aspect} of the output."


def item_text(item: Item, instruction: str = "") -> str:
    """P_T + <q, a>: the instruction, the item's input texts and the judged text, one per line."""
    judged = item.output or item.passage or ""
    parts = [instruction, item.prompt or "", item.context or "", judged]
    return "\n".join(part for part in parts if part)


def band_of(human: float, scale: tuple[float, float], high_from: float = DEFAULT_HIGH_BAND) -> Band:
    """``high`` when ``human`` lies at or above ``high_from`` of the way up ``scale``, else ``low``.

    Scale-aware form of the seed's {4, 5} / {1, 2, 3} split of a 1..5 scale: on 1..3 the high band
    is {3}, on 1..6 it is {5, 6} (and averaged ratings from 4.75 up), on 0..1 it is {1}.
    """
    low, high = scale
    if high <= low:
        raise ConfigError(f"rating scale {scale} is empty")
    position = (human - low) / (high - low)
    return "high" if position >= high_from - 1e-9 else "low"


# -- selectors: select(k, scale, exclude=item) -> examples, as ExampleSelector ----------------


class LabelledPool:
    """Labelled items of one aspect and how to show them as examples on a judge's scale."""

    def __init__(self, pool: Iterable[Item], aspect: str, source_scale: tuple[float, float] | None,
                 round_ratings: bool):
        self.aspect = aspect
        self.items = sorted((item for item in pool if item.human_score(aspect) is not None), key=lambda it: it.id)
        self._source_scale = source_scale
        self._round = round_ratings

    def scale_of(self, item: Item) -> tuple[float, float]:
        scale = self._source_scale or item.aspect_scale(self.aspect)
        if scale is None:
            raise ConfigError(f"item {item.id!r} has no scale for {self.aspect!r}; pass source_scale")
        return scale

    def human(self, item: Item) -> float:
        score = item.human_score(self.aspect)
        assert score is not None  # unlabelled items were filtered out
        return score

    def example(self, item: Item, target: int | tuple[float, float]) -> InContextExample:
        target_range = (1.0, float(target)) if isinstance(target, int) else target
        human = self.human(item)
        rating = rescale(human, self.scale_of(item), target_range)
        if self._round:
            rating = float(math.floor(rating + 0.5))  # half up, as judges.examples does
        return InContextExample(item=item, rating=rating, human=human)

    def eligible(self, exclude: Item) -> list[int]:
        return [index for index, item in enumerate(self.items) if not same_item(item, exclude)]


def _too_few(pool: LabelledPool, k: int, available: int) -> ConfigError:
    return ConfigError(f"{k} in-context examples asked for {pool.aspect!r}, "
                       f"but only {available} labelled items are available")


class RandomSelector:
    """``k`` examples drawn at random for each judged item (seeded by the item id)."""

    def __init__(self, pool: Iterable[Item], aspect: str, *, seed: int = 0,
                 source_scale: tuple[float, float] | None = None, round_ratings: bool = True):
        self._pool = LabelledPool(pool, aspect, source_scale, round_ratings)
        self.seed = seed

    def select(self, k: int, scale: int | tuple[float, float], *, exclude: Item) -> list[InContextExample]:
        if k <= 0:
            return []
        eligible = self._pool.eligible(exclude)
        if len(eligible) < k:
            raise _too_few(self._pool, k, len(eligible))
        chosen = random.Random(f"{self.seed}:{exclude.id}").sample(eligible, k)
        return [self._pool.example(self._pool.items[index], scale) for index in chosen]


class RetrievalSelector:
    """Examples ranked by similarity to the judged item under one or more encoders.

    ``bands=False``: the top k of the first encoder (KATE-style semantic retrieval, 3.3.2).
    ``bands=True``: diversity integration (3.3.3): lists (encoder, high band), (encoder, low band)
    for each encoder in turn, and the next most similar unchosen item taken from each list in
    turn until k are chosen. ``instructions`` gives each encoder the P_T it was trained with.
    Examples come out most relevant first.
    """

    def __init__(self, pool: Iterable[Item], aspect: str, encoders: Sequence[Encoder], *, bands: bool,
                 instructions: Sequence[str] | None = None, high_from: float = DEFAULT_HIGH_BAND,
                 source_scale: tuple[float, float] | None = None, round_ratings: bool = True):
        if not encoders:
            raise ConfigError("a retrieval example source needs at least one encoder")
        self._pool = LabelledPool(pool, aspect, source_scale, round_ratings)
        self._encoders = list(encoders)
        self._instructions = list(instructions or [""] * len(encoders))
        self.bands = bands
        self._band = [band_of(self._pool.human(item), self._pool.scale_of(item), high_from)
                      for item in self._pool.items]
        self._pool_vectors = [self._encode(e, self._pool.items) for e in range(len(encoders))]
        self._queries: list[dict[str, np.ndarray]] = [{} for _ in encoders]

    @property
    def size(self) -> int:
        return len(self._pool.items)

    def prepare(self, items: Sequence[Item]) -> None:
        """Encode the items to be judged in one batch per encoder (select would do it one by one)."""
        for e, cache in enumerate(self._queries):
            fresh = [item for item in items if item.id not in cache]
            if fresh:
                cache.update(zip([item.id for item in fresh], self._encode(e, fresh), strict=True))

    def ranking(self, item: Item, encoder: int = 0) -> list[Item]:
        """Every eligible pool item, most similar to ``item`` first (ties: pool order)."""
        return [self._pool.items[index] for index in self._ranked(item, encoder)]

    def select(self, k: int, scale: int | tuple[float, float], *, exclude: Item) -> list[InContextExample]:
        if k <= 0:
            return []
        lists = [self._ranked(exclude, e) for e in range(len(self._encoders))]
        if self.bands:
            lists = [[i for i in ranked if self._band[i] == band] for ranked in lists for band in ("high", "low")]
            chosen = _take_in_turns(lists, k)
        else:
            chosen = lists[0][:k]
        if len(chosen) < k:
            raise _too_few(self._pool, k, len(chosen))
        return [self._pool.example(self._pool.items[index], scale) for index in chosen]

    def _ranked(self, item: Item, encoder: int) -> list[int]:
        eligible = np.array(self._pool.eligible(item), dtype=int)
        if eligible.size == 0:
            return []
        self.prepare([item])
        similarity = self._pool_vectors[encoder][eligible] @ self._queries[encoder][item.id]
        order = np.argsort(-similarity, kind="stable")
        return eligible[order].tolist()

    def _encode(self, encoder: int, items: Sequence[Item]) -> np.ndarray:
        texts = [item_text(item, self._instructions[encoder]) for item in items]
        return np.asarray(self._encoders[encoder].encode(texts), dtype=np.float32)


def _take_in_turns(lists: Sequence[Sequence[int]], k: int) -> list[int]:
    """Round-robin over the lists, each time its next element not chosen yet, until k are chosen."""
    chosen: list[int] = []
    cursors = [0] * len(lists)
    while len(chosen) < k:
        progressed = False
        for position, ranked in enumerate(lists):
            while cursors[position] < len(ranked) and ranked[cursors[position]] in chosen:
                cursors[position] += 1
            if cursors[position] < len(ranked) and len(chosen) < k:
                chosen.append(ranked[cursors[position]])
                cursors[position] += 1
                progressed = True
        if not progressed:
            break
    return chosen


# -- building a judge's selector from its config ------------------------------------------------


@dataclass(frozen=True)
class TrainedRetriever:
    """A retriever folder written by ``train_retriever``: the model and the instruction it read."""

    folder: Path
    instruction: str
    meta: dict[str, Any]

    @classmethod
    def load(cls, folder: str | Path) -> TrainedRetriever:
        folder = Path(folder)
        meta_path = folder / RETRIEVER_META
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"{folder}: not a trained in-context retriever (no {RETRIEVER_META}); "
                              "train one with `judgelab icl-train`") from exc
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{meta_path}: cannot read: {exc}") from exc
        if "instruction" not in meta:
            raise ConfigError(f"{meta_path}: field 'instruction' is missing")
        return cls(folder=folder, instruction=str(meta["instruction"]), meta=meta)

    def encoder(self) -> Encoder:
        from judgelab.embed import make_embedder

        return make_embedder(f"st:{self.folder.resolve()}")


def make_selector(source: str, pool: Sequence[Item], aspect: str, *, seed: int = 0,
                  retriever: Path | None = None, embedder: str = "minilm",
                  high_from: float = DEFAULT_HIGH_BAND) -> Any:
    """The example selector a prompted judge's config names (see the module docstring)."""
    if source == "stratified":
        return ExampleSelector(pool, aspect, seed=seed)
    if source == "random":
        return RandomSelector(pool, aspect, seed=seed)
    encoders: list[Encoder] = []
    instructions: list[str] = []
    if source in ("semantic", "diverse"):
        from judgelab.embed import make_embedder

        encoders.append(make_embedder(embedder))
        instructions.append("")
    if source == "trained" or (source == "diverse" and retriever is not None):
        if retriever is None:
            raise ConfigError("example_source 'trained' needs example_retriever: a folder written by `judgelab icl-train`")
        trained = TrainedRetriever.load(retriever)
        encoders.append(trained.encoder())
        instructions.append(trained.instruction)
    if not encoders:
        raise ConfigError(f"unknown example source {source!r}: use one of {', '.join(EXAMPLE_SOURCES)}")
    return RetrievalSelector(pool, aspect, encoders, bands=source == "diverse", instructions=instructions,
                             high_from=high_from)
