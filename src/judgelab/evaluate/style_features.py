"""The style covariates of comparisons between systems (docs/evaluate.md, "Style control and ties"): each
response's length and markdown counts, their normalised differences standardised over the comparisons, and which
comparisons share a question (the clusters of :mod:`judgelab.evaluate.style`'s cluster-robust intervals).

As Chatbot Arena's ("Does style matter?", LMSYS 2024) and Arena-Hard-Auto's ``show_result.py --style-control``:
the normalised differences ``(a - b) / (a + b + 1)`` of four counts (the response's length in tokens; markdown
headers, list items and bold spans, counted with code blocks removed), each standardised (mean 0, standard
deviation 1). Arena-Hard-Auto counts tokens with tiktoken's gpt-4o encoding; here a token is a word or a
punctuation mark (no tokenizer download), which moves the normalised length difference little, since it is a
ratio.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.errors import ConfigError, DataError
from judgelab.metrics.bootstrap import group_codes
from judgelab.metrics.results import json_number

FEATURES = ("length", "headers", "lists", "bold")

_CODE = re.compile(r"```[^`]*```")
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:\d+\.|[-*+])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_TOKEN = re.compile(r"\w+|[^\w\s]")


# -- covariates -------------------------------------------------------------------------------------------
def style_counts(text: str) -> np.ndarray:
    """(tokens, markdown headers, list items, bold spans) of one response. The markdown counts skip fenced code
    blocks (a ``#`` comment in code is no header), as Arena-Hard-Auto's add_markdown_info does."""
    prose = _CODE.sub("", text)
    return np.array([len(_TOKEN.findall(text)), len(_HEADER.findall(prose)), len(_LIST.findall(prose)),
                     len(_BOLD.findall(prose))], dtype=float)


@dataclass(frozen=True)
class StyleCovariates:
    """Standardised covariates per comparison (``values``, one column per kept feature), the mean and standard
    deviation each raw normalised difference was standardised with, and the features left out because they do
    not vary over the comparisons (e.g. no response has a header) or only repeat the features before them."""

    values: np.ndarray
    features: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    dropped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "dropped": list(self.dropped),
                "mean": dict(zip(self.features, map(json_number, self.mean), strict=True)),
                "std": dict(zip(self.features, map(json_number, self.std), strict=True))}


def style_covariates(texts_a: Sequence[str], texts_b: Sequence[str],
                     features: Sequence[str] = FEATURES) -> StyleCovariates:
    """The covariates of comparisons whose responses are ``texts_a`` (shown first) and ``texts_b``: for each
    feature ``(a - b) / (a + b + 1)`` (the +1 keeps two responses without markdown at 0), standardised."""
    unknown = [f for f in features if f not in FEATURES]
    if unknown or not features:
        raise ConfigError(f"style features {list(features)!r}: choose among {', '.join(FEATURES)}")
    if len(texts_a) != len(texts_b):
        raise ConfigError(f"{len(texts_a)} first responses for {len(texts_b)} second ones")
    columns = [FEATURES.index(f) for f in features]
    a = np.array([style_counts(t) for t in texts_a]).reshape(-1, len(FEATURES))[:, columns]
    b = np.array([style_counts(t) for t in texts_b]).reshape(-1, len(FEATURES))[:, columns]
    diff = (a - b) / (a + b + 1)
    mean, std = diff.mean(axis=0), diff.std(axis=0)
    varies = std > 1e-12
    for j in np.flatnonzero(varies):  # a feature that repeats others (every list item in bold) has no own effect
        earlier = np.flatnonzero(varies[:j])
        if len(earlier) and np.linalg.matrix_rank(diff[:, [*earlier, j]] - mean[[*earlier, j]]) <= len(earlier):
            varies[j] = False
    kept = tuple(f for f, v in zip(features, varies, strict=True) if v)
    dropped = tuple(f for f, v in zip(features, varies, strict=True) if not v)
    values = (diff[:, varies] - mean[varies]) / std[varies]
    return StyleCovariates(values, kept, mean[varies], std[varies], dropped)


def comparison_texts(items: Sequence[Any], where: str | None = None) -> tuple[list[str], list[str]]:
    """The two responses of each comparison item (``output_a``, ``output_b``); a clear error naming the file and
    the field when some comparisons lack them (style control reads the texts)."""
    missing = [k for k, item in enumerate(items)
               if getattr(item, "output_a", None) is None or getattr(item, "output_b", None) is None]
    if missing:
        first = items[missing[0]]
        fld = "output_a" if getattr(first, "output_a", None) is None else "output_b"
        raise DataError(f"{len(missing)} of {len(items)} comparison(s) have no response text (e.g. item "
                        f"{getattr(first, 'id', missing[0])!r}): style control reads output_a and output_b of every "
                        "comparison", where, None, fld)
    return [item.output_a for item in items], [item.output_b for item in items]


def comparison_groups(items: Sequence[Any]) -> tuple[np.ndarray, str] | None:
    """(each comparison's question as a code 0..G-1, what the questions were read from) when comparisons share
    questions: the items' ``group_id`` (else ``qid``, else their input text, as :attr:`Item.group
    <judgelab.data.item.Item.group>` reads it). None when every comparison is its own question: nothing to
    cluster."""
    groups = [getattr(item, "group", None) or getattr(item, "id", k) for k, item in enumerate(items)]
    codes, names = group_codes(groups)
    if len(names) == len(groups):
        return None
    kinds = {getattr(item, "grouped_by", "id") for item in items}
    return codes, next((k for k in ("group_id", "qid", "text") if k in kinds), "id")
