"""The trained judge's scorer at run time: the cross-encoder, loading a fitted one, and scoring items.

A BERT-style encoder reads (segment A, output), mean-pooled, and a head:

* ``regression`` head: one number, trained with MSE on the label mapped to [0, 1] by the scale;
* ``ordinal`` head: K-1 logits, logit k = "the label is above level k" (the extended binary
  decomposition of ordinal regression, Niu et al. 2016), trained with binary cross-entropy;
  the score is the expected level ``levels[0] + sum_k P(above k) * (levels[k+1] - levels[k])``,
  so both heads give a score on the aspect's own scale.

Mean pooling because the shipped MiniLM was trained as a mean-pooled sentence embedder, so the
head starts on features that already mean something. Fitting (new scorers, losses, the training
loop) lives in ``judgelab.train``. This module imports torch: ``judges/trained.py`` imports it only
when a trained judge runs, so ``import judgelab.judges`` stays light.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.scorer_inputs import build_pair, tokenizer_spans

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights come from a pip package or a folder, never a hub

import torch  # noqa: E402 - after the offline switch
from torch import nn  # noqa: E402

if TYPE_CHECKING:
    from judgelab.judges.trained import TrainedJudge

Head = Literal["regression", "ordinal"]
HEAD_FILE = "head.pt"


class CrossEncoderScorer(nn.Module):
    def __init__(self, encoder: nn.Module, head: Head, levels: Sequence[float], scale: tuple[float, float]):
        super().__init__()
        self.encoder = encoder
        self.head_kind = head
        self.levels = [float(v) for v in levels]
        self.scale = (float(scale[0]), float(scale[1]))
        outputs = 1 if head == "regression" else len(self.levels) - 1
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(encoder.config.hidden_size, outputs)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Head outputs from token ids: the whole encoder (what a saved judge runs)."""
        return self.pool_and_head(self.encoder(**batch).last_hidden_state, batch["attention_mask"])

    def pool_and_head(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return self.head(self.dropout(pooled))

    # -- the frozen bottom / trained top split (training reuses the bottom's outputs) ------------
    @property
    def n_layers(self) -> int:
        return len(self.encoder.encoder.layer)

    def _layers(self, hidden: torch.Tensor, mask: torch.Tensor, layers) -> torch.Tensor:
        from transformers.masking_utils import create_bidirectional_mask

        extended = create_bidirectional_mask(config=self.encoder.config, inputs_embeds=hidden, attention_mask=mask)
        for layer in layers:
            out = layer(hidden, extended)
            hidden = out[0] if isinstance(out, tuple) else out
        return hidden

    def below(self, batch: dict[str, torch.Tensor], n_frozen: int) -> torch.Tensor:
        """Hidden states after the embeddings and the first ``n_frozen`` layers."""
        hidden = self.encoder.embeddings(input_ids=batch["input_ids"], token_type_ids=batch.get("token_type_ids"))
        return self._layers(hidden, batch["attention_mask"], self.encoder.encoder.layer[:n_frozen])

    def above(self, hidden: torch.Tensor, mask: torch.Tensor, n_frozen: int) -> torch.Tensor:
        """Head outputs from the hidden states ``below`` returned: the trained layers, pooling, head."""
        return self.pool_and_head(self._layers(hidden, mask, self.encoder.encoder.layer[n_frozen:]), mask)

    # -- targets and scores ------------------------------------------------------------------
    def targets(self, labels: np.ndarray) -> torch.Tensor:
        if self.head_kind == "regression":
            low, high = self.scale
            return torch.tensor((labels - low) / (high - low), dtype=torch.float32).unsqueeze(-1)
        cuts = (np.asarray(self.levels[:-1]) + np.asarray(self.levels[1:])) / 2  # between adjacent levels
        return torch.tensor(labels[:, None] > cuts[None, :], dtype=torch.float32)

    def loss(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if self.head_kind == "regression":
            return nn.functional.mse_loss(outputs, targets)
        return nn.functional.binary_cross_entropy_with_logits(outputs, targets)

    def rank_values(self, outputs: torch.Tensor) -> torch.Tensor:
        """A differentiable value per item that orders items as ``scores`` does (for ranking losses)."""
        if self.head_kind == "regression":
            return outputs[:, 0]
        steps = torch.tensor(np.diff(self.levels), dtype=outputs.dtype)
        return torch.sigmoid(outputs) @ steps

    def scores(self, outputs: torch.Tensor) -> np.ndarray:
        """Scores on the aspect's scale from the head's outputs."""
        if self.head_kind == "regression":
            low, high = self.scale
            return (low + outputs[:, 0].double() * (high - low)).numpy()
        steps = torch.tensor(np.diff(self.levels), dtype=torch.float64)
        return (self.levels[0] + torch.sigmoid(outputs.double()) @ steps).numpy()

    def freeze_below(self, n_frozen: int) -> None:
        """Freeze the embeddings and the first ``n_frozen`` layers: their outputs are computed once
        per item and reused every epoch (and every cross-validation fold), so a CPU trains only the top."""
        for module in [self.encoder.embeddings, *self.encoder.encoder.layer[:n_frozen]]:
            for parameter in module.parameters():
                parameter.requires_grad = False

    # -- files --------------------------------------------------------------------------------
    def save(self, folder: Path, tokenizer) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.encoder.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        torch.save({"head": self.head.state_dict(), "kind": self.head_kind, "levels": self.levels,
                    "scale": list(self.scale)}, folder / HEAD_FILE)


def load_tokenizer(folder: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def load_scorer(folder: Path) -> tuple[CrossEncoderScorer, object]:
    """A fine-tuned scorer saved by ``CrossEncoderScorer.save``, in eval mode."""
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    if not (folder / HEAD_FILE).is_file():
        raise ConfigError(f"{folder}: no trained scorer here (missing {HEAD_FILE}); train one with `judgelab train`")
    hf_logging.disable_progress_bar()
    state = torch.load(folder / HEAD_FILE, weights_only=True)
    encoder = AutoModel.from_pretrained(folder, local_files_only=True)
    scorer = CrossEncoderScorer(encoder, state["kind"], state["levels"], tuple(state["scale"]))
    scorer.head.load_state_dict(state["head"])
    scorer.eval()
    return scorer, load_tokenizer(folder)


def encode(items: Sequence[Item], tokenizer: Any, spec: TrainedJudge) -> list[dict[str, list[int]]]:
    """Token ids per item after the truncation rule (judges.scorer_inputs); no padding yet."""
    spans = tokenizer_spans(tokenizer)
    pairs = [build_pair(item, spans, spec.max_length, spec.inputs, spec.truncation) for item in items]
    encoded = tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first",
                        max_length=spec.max_length)
    return [{key: encoded[key][i] for key in encoded} for i in range(len(pairs))]


def feature_batches(features: list[dict[str, list[int]]], tokenizer: Any, size: int, order: Sequence[int]):
    for start in range(0, len(order), size):
        chosen = order[start:start + size]
        yield chosen, tokenizer.pad([features[i] for i in chosen], return_tensors="pt")


@torch.inference_mode()
def predict(scorer: CrossEncoderScorer, tokenizer: Any, items: Sequence[Item], spec: TrainedJudge,
            features: list[dict[str, list[int]]] | None = None) -> np.ndarray:
    """Scores on the aspect's scale, in item order (fixed batches: the same items give the same scores)."""
    scorer.eval()
    features = features if features is not None else encode(items, tokenizer, spec)
    scores = [scorer.scores(scorer(batch)) for _, batch in
              feature_batches(features, tokenizer, spec.batch_size, list(range(len(features))))]
    return np.concatenate(scores) if scores else np.zeros(0)
