"""Fitting the cross-encoder (``judgelab.judges.scorer_model``): its starting weights and the ranking loss."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from judgelab.embed import shipped_minilm
from judgelab.errors import ConfigError
from judgelab.judges.scorer_model import CrossEncoderScorer, Head, load_tokenizer
from judgelab.judges.trained import DEFAULT_BASE

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights come from a pip package or a folder, never a hub

import torch  # noqa: E402 - after the offline switch
from torch import nn  # noqa: E402


def base_model_dir(name: str) -> Path:
    """Folder with the starting weights: the shipped MiniLM for ``all-minilm-l6-v2``, else a local folder."""
    if name == DEFAULT_BASE:
        return shipped_minilm()[0]
    folder = Path(name)
    if not (folder / "config.json").is_file():
        raise ConfigError(f"base model {name!r}: not {DEFAULT_BASE!r} and not a folder with a config.json")
    return folder


def pairwise_loss(values: torch.Tensor, labels: np.ndarray, groups: Sequence[str]) -> torch.Tensor:
    """RankNet (Burges et al. 2005): mean of ``softplus(-(v_i - v_j))`` over pairs of one group with
    label_i > label_j; zero (still differentiable) when the batch holds no such pair."""
    wanted = torch.as_tensor(labels[:, None] - labels[None, :])
    same = torch.as_tensor(np.asarray(groups, dtype=object)[:, None] == np.asarray(groups, dtype=object)[None, :])
    pairs = (wanted > 0) & same
    if not bool(pairs.any()):
        return values.sum() * 0.0
    return nn.functional.softplus(-(values[:, None] - values[None, :])[pairs]).mean()


def new_scorer(base: str, head: Head, levels: Sequence[float], scale: tuple[float, float]) -> tuple[CrossEncoderScorer, object]:
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    folder = base_model_dir(base)
    encoder = AutoModel.from_pretrained(folder, local_files_only=True)
    return CrossEncoderScorer(encoder, head, levels, scale), load_tokenizer(folder)


