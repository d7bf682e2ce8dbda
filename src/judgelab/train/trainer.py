"""Fine-tune the cross-encoder on CPU: group-aware validation split, early stopping, a seed.

The validation split takes whole groups (every output for one source), so the score used for
early stopping is measured on sources the scorer never saw, as at use time.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from scipy import stats

from judgelab.data.dataset import Dataset
from judgelab.data.item import Item
from judgelab.data.split import split_by_group
from judgelab.errors import ConfigError, DataError, term
from judgelab.judges.scorer_model import CrossEncoderScorer, encode, feature_batches, predict
from judgelab.train.labels import Targets, ordinal_levels, scale_of
from judgelab.train.model import new_scorer, pairwise_loss

if TYPE_CHECKING:
    from judgelab.judges.trained import TrainedJudge

#: Called as training goes: (steps done, total steps, latest figures).
OnProgress = Callable[[int, int, dict[str, Any]], None]
_WARMUP_SHARE = 0.1
_MAX_GRAD_NORM = 1.0


@dataclass
class Trained:
    """A fine-tuned scorer in memory, the config that describes it, and how training went."""

    spec: TrainedJudge
    scorer: CrossEncoderScorer
    tokenizer: Any
    history: list[dict[str, Any]] = field(default_factory=list)
    best: dict[str, Any] = field(default_factory=dict)
    train_ids: list[str] = field(default_factory=list)
    val_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def predict(self, items: Sequence[Item]) -> np.ndarray:
        return predict(self.scorer, self.tokenizer, items, self.spec)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def frozen_layers(spec: TrainedJudge, scorer: CrossEncoderScorer) -> int:
    """How many encoder layers stay as shipped (``train_layers`` None: none, all are fine-tuned)."""
    if spec.train_layers is None:
        return 0
    return max(0, scorer.n_layers - spec.train_layers)


@torch.no_grad()  # not inference_mode: the trained layers take these as inputs with autograd on
def hidden_below(scorer: CrossEncoderScorer, tokenizer: Any, items: Sequence[Item], spec: TrainedJudge,
                 n_frozen: int) -> list[torch.Tensor]:
    """Per item, the frozen bottom's hidden states (one row per token): computed once, reused
    by every epoch and every cross-validation fold (frozen layers give the same output each time)."""
    scorer.eval()
    features = encode(items, tokenizer, spec)
    rows: list[torch.Tensor] = []
    for _, batch in feature_batches(features, tokenizer, spec.batch_size, list(range(len(features)))):
        hidden = scorer.below(batch, n_frozen)
        rows.extend(h[: int(n)].clone() for h, n in zip(hidden, batch["attention_mask"].sum(1), strict=True))
    return rows


def _stack(rows: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    hidden = torch.nn.utils.rnn.pad_sequence(list(rows), batch_first=True)
    lengths = torch.tensor([len(r) for r in rows])
    mask = (torch.arange(hidden.shape[1])[None, :] < lengths[:, None]).long()
    return hidden, mask


@torch.inference_mode()
def predict_from_below(scorer: CrossEncoderScorer, rows: Sequence[torch.Tensor], n_frozen: int,
                       batch_size: int) -> np.ndarray:
    """Scores from cached bottom states (validation, cross-validation folds)."""
    scorer.eval()
    scores = [scorer.scores(scorer.above(*_stack(rows[s:s + batch_size]), n_frozen))
              for s in range(0, len(rows), batch_size)]
    return np.concatenate(scores) if scores else np.zeros(0)


def train_scorer(spec: TrainedJudge, targets: Targets, *, on_progress: OnProgress | None = None,
                 below: list[torch.Tensor] | None = None) -> Trained:
    """Fine-tune a new scorer on ``targets`` (already checked: enough items, varying labels).

    ``below``: the frozen bottom's states for ``targets.items`` (``hidden_below``), when the caller
    already has them (cross-validation computes them once for all folds).
    """
    started = time.perf_counter()
    if spec.label_aggregator is not None:
        check_gradeable(spec, targets)
    seed_everything(spec.seed)
    scale = scale_of(targets.items, spec.aspect, targets.labels)
    levels = ordinal_levels(targets.labels, spec.max_levels) if spec.head == "ordinal" else list(scale)
    spec = spec.model_copy(update={"scale": scale, "levels": levels if spec.head == "ordinal" else None})
    train_idx, val_idx = _validation_split(targets, spec.val_fraction, spec.seed)
    scorer, tokenizer = new_scorer(spec.base_model, spec.head, levels, scale)
    n_frozen = frozen_layers(spec, scorer)
    scorer.freeze_below(n_frozen)
    if below is None:
        below = hidden_below(scorer, tokenizer, targets.items, spec, n_frozen)
    run = _Run(spec, scorer, below, n_frozen, targets, train_idx, val_idx, on_progress)
    history, best = run.fit()
    trained = Trained(spec, scorer, tokenizer, history, best,
                      [targets.items[i].id for i in train_idx], [targets.items[i].id for i in val_idx])
    if spec.label_aggregator is not None:
        trained.spec = _fit_label_aggregator(trained, targets, val_idx)
    trained.seconds = time.perf_counter() - started
    return trained


def _fit_label_aggregator(trained: Trained, targets: Targets, val_idx: list[int]) -> TrainedJudge:
    """The spec with its label aggregator fitted on the validation groups' scores and labels (cut
    points learnt where the scorer was not trained: on its training items its scores are too sure)."""
    from judgelab.judges.aggregate import fit_aggregator, whole_labels
    from judgelab.judges.trained import LABEL_FEATURE

    scores = trained.predict([targets.items[i] for i in val_idx])
    fitted = fit_aggregator(trained.spec.label_aggregator, [{LABEL_FEATURE: float(s)} for s in scores],
                            whole_labels(targets.labels[val_idx], trained.spec.aspect), (LABEL_FEATURE,))
    return trained.spec.model_copy(update={"label_aggregator": fitted})


def check_gradeable(spec: TrainedJudge, targets: Targets) -> None:
    """Before any training: graded labels need whole-number targets and validation groups to learn on."""
    from judgelab.judges.aggregate import whole_labels

    if spec.val_fraction <= 0:
        raise ConfigError(f"graded labels are learnt on the validation groups: give a {term('val_fraction')} above 0")
    whole_labels(targets.labels, spec.aspect)


def group_batches(order: Sequence[int], groups: Sequence[str], size: int) -> list[list[int]]:
    """``order`` cut into batches of whole groups (groups in order of first appearance), each
    batch closed once it holds ``size`` or more items; a group larger than ``size`` is one batch."""
    members: dict[str, list[int]] = {}
    for index, group in zip(order, groups, strict=True):
        members.setdefault(group, []).append(index)
    batches: list[list[int]] = [[]]
    for group_items in members.values():
        if len(batches[-1]) >= size:
            batches.append([])
        batches[-1].extend(group_items)
    return [batch for batch in batches if batch]


def _validation_split(targets: Targets, fraction: float, seed: int) -> tuple[list[int], list[int]]:
    if fraction <= 0:
        return list(range(len(targets.items))), []
    parts = split_by_group(Dataset(targets.items), {"train": 1 - fraction, "val": fraction}, seed=seed)
    position = {item.id: i for i, item in enumerate(targets.items)}
    train, val = ([position[item.id] for item in parts[name]] for name in ("train", "val"))
    if np.ptp(targets.labels[train]) == 0:
        raise DataError("the labels left for training after the validation split are constant; "
                        f"give more varied labels or a smaller {term('val_fraction')}")
    return train, val


class _Run:
    """One training run: the loop, periodic validation, early stopping on the validation score
    (unless ``select_on_validation`` is off)."""

    def __init__(self, spec: TrainedJudge, scorer: CrossEncoderScorer, below: list[torch.Tensor], n_frozen: int,
                 targets: Targets, train_idx: list[int], val_idx: list[int], on_progress: OnProgress | None):
        self.spec, self.scorer, self.below, self.n_frozen = spec, scorer, below, n_frozen
        self.targets, self.on_progress = targets, on_progress
        self.train_idx, self.val_idx = train_idx, val_idx
        # (batches of whole groups, loss="pairwise", can be a few fewer: the linear decay then stops short of 0)
        self.steps_per_epoch = -(-len(train_idx) // spec.batch_size)
        self.total = self.steps_per_epoch * spec.epochs
        self.eval_every = max(1, self.steps_per_epoch // max(1, spec.evals_per_epoch))
        self.optimizer, self.schedule = self._optimizer()

    def _optimizer(self):
        from transformers import get_linear_schedule_with_warmup

        encoder = [p for p in self.scorer.encoder.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW([{"params": encoder, "lr": self.spec.learning_rate},
                                       {"params": self.scorer.head.parameters(), "lr": self.spec.head_learning_rate}],
                                      weight_decay=0.01)
        schedule = get_linear_schedule_with_warmup(optimizer, int(_WARMUP_SHARE * self.total), self.total)
        return optimizer, schedule

    def fit(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        history: list[dict[str, Any]] = []
        best: dict[str, Any] = {}
        best_state, stale, step = None, 0, 0
        generator = torch.Generator().manual_seed(self.spec.seed)
        labels = self.targets.labels
        for epoch in range(1, self.spec.epochs + 1):
            losses: list[float] = []
            batches = self._batch_order(generator)
            for k, chosen in enumerate(batches):
                losses.append(self._step(chosen, labels[chosen]))
                step += 1
                if (k + 1) % self.eval_every != 0 and k + 1 < len(batches):  # and always at the epoch's end
                    self._report(step, {"epoch": epoch, "loss": float(np.mean(losses))})
                    continue
                point = {"step": step, "epoch": round(epoch - 1 + (k + 1) / len(batches), 2),
                         "train_loss": float(np.mean(losses)), **self._validate()}
                history.append(point)
                self._report(step, point)
                if not best or point["val_score"] > best["val_score"]:
                    best, stale = point, 0
                    best_state = copy.deepcopy(self.scorer.state_dict()) if self.selects else None
                else:
                    stale += 1
                if self.selects and stale >= self.spec.patience:
                    break
            if self.selects and stale >= self.spec.patience:
                break
        if best_state is not None:
            self.scorer.load_state_dict(best_state)
        self.scorer.eval()
        return history, best

    @property
    def selects(self) -> bool:
        """Early stopping on the validation groups (else they only report, and the last checkpoint is kept)."""
        return bool(self.val_idx) and self.spec.select_on_validation

    def _batch_order(self, generator: torch.Generator) -> list[list[int]]:
        """Training batches of one epoch: a seeded shuffle of the items, or (pairwise loss) of
        whole groups packed into batches of about ``batch_size`` items, so every batch has pairs."""
        shuffled = [self.train_idx[i] for i in torch.randperm(len(self.train_idx), generator=generator).tolist()]
        size = self.spec.batch_size
        if self.spec.loss != "pairwise":
            return [shuffled[start:start + size] for start in range(0, len(shuffled), size)]
        return group_batches(shuffled, [self.targets.items[i].group for i in shuffled], size)

    def _step(self, chosen: list[int], labels: np.ndarray) -> float:
        self.scorer.train()
        outputs = self.scorer.above(*_stack([self.below[i] for i in chosen]), self.n_frozen)
        loss = self.scorer.loss(outputs, self.scorer.targets(labels))
        if self.spec.loss == "pairwise":
            groups = [self.targets.items[i].group for i in chosen]
            loss = loss + pairwise_loss(self.scorer.rank_values(outputs), labels, groups)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in self.scorer.parameters() if p.requires_grad], _MAX_GRAD_NORM)
        self.optimizer.step()
        self.schedule.step()
        self.optimizer.zero_grad()
        return float(loss.detach())

    def _validate(self) -> dict[str, Any]:
        """Spearman with the targets on the validation groups (``val_score``: the early-stopping
        criterion; minus the MSE when Spearman is undefined, e.g. constant validation labels)."""
        if not self.val_idx:
            return {"val_score": 0.0}
        predicted = predict_from_below(self.scorer, [self.below[i] for i in self.val_idx], self.n_frozen,
                                       self.spec.batch_size)
        wanted = self.targets.labels[self.val_idx]
        mse = float(np.mean((predicted - wanted) ** 2))
        rho = float(stats.spearmanr(wanted, predicted).statistic) if np.ptp(wanted) and np.ptp(predicted) else float("nan")
        return {"val_spearman": None if np.isnan(rho) else rho, "val_mse": mse,
                "val_score": -mse if np.isnan(rho) else rho}

    def _report(self, step: int, figures: dict[str, Any]) -> None:
        if self.on_progress:
            self.on_progress(step, self.total, figures)
