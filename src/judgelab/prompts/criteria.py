"""Human-written criteria (and other auxiliary texts) from ``auxiliary_prompts.jsonl``.

The benchmark copy lives outside the package (``shared/benchmarks/``), because its texts come
from repositories without a stated licence. Users judging their own data pass their own
criteria text instead: ``criteria_text(...)`` takes either.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from judgelab.errors import ConfigError, term

AUXILIARY_FILE = "auxiliary_prompts.jsonl"
ENV_VAR = "JUDGELAB_BENCHMARKS"


def default_auxiliary_path() -> Path:
    """``$JUDGELAB_BENCHMARKS/auxiliary_prompts.jsonl``, else ``shared/benchmarks/`` beside the repo or cwd."""
    candidates = []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]) / AUXILIARY_FILE)
    repo = Path(__file__).resolve().parents[3]
    for base in (Path.cwd(), Path.cwd().parent, repo, repo.parent):
        candidates.append(base / "shared" / "benchmarks" / AUXILIARY_FILE)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"cannot find {AUXILIARY_FILE}; set {ENV_VAR} to the benchmarks folder or pass path= / your own criteria text"
    )


@functools.cache
def _rows(path: Path) -> tuple[dict[str, Any], ...]:
    with path.open(encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())


def find_auxiliary(
    kind: str,
    dataset: str,
    aspect: str,
    scale: int | None = None,
    *,
    written_by: str = "human",
    model: str | None = None,
    criteria_from: str | None = None,
    path: str | Path | None = None,
) -> str:
    """The text for (kind, dataset, aspect, scale): the row for that scale, else the scale-free one.

    ``kind`` is ``criteria`` or ``autocot``; ``written_by`` ``human`` or ``llm`` (then ``model``,
    e.g. ``gpt4o_mini``, and for autocot ``criteria_from`` narrow it down).
    """
    rows = [
        row for row in _rows(Path(path) if path else default_auxiliary_path())
        if row["kind"] == kind
        and row["dataset"] == dataset
        and (row["aspect"] or "").lower() == aspect.lower()
        and row["written_by"] == written_by
        and (model is None or row["model"] == model)
        and (criteria_from is None or row["criteria_from"] == criteria_from)
    ]
    for wanted in (scale, None):
        matching = [row for row in rows if row["scale"] == wanted]
        if matching:
            return matching[0]["text"].strip()
    scales = sorted({row["scale"] for row in rows if row["scale"] is not None})
    detail = f"only for scales {scales}" if scales else "none at all"
    raise ConfigError(f"no {written_by}-written {kind} for {dataset}/{aspect} at scale {scale} ({detail})")


def load_human_criteria(dataset: str, aspect: str, scale: int | None = None, *, path: str | Path | None = None) -> str:
    """The human-written criteria HPSS uses for a benchmark aspect, at ``scale`` when it has one.

    HANNA and Topical-Chat criteria name score anchors, so they exist per scale (3/5/10/50/100);
    SummEval, SF-HOT and SF-RES criteria are scale-free definitions.
    """
    return find_auxiliary("criteria", dataset, aspect, scale, written_by="human", path=path)


def criteria_text(
    aspect: str,
    scale: int | None = None,
    *,
    text: str | None = None,
    dataset: str | None = None,
    path: str | Path | None = None,
) -> str:
    """The user's own criteria when given, else the benchmark's human-written ones."""
    if text and text.strip():
        return text.strip()
    if dataset is None:
        raise ConfigError(f"no criteria for {aspect!r}: say what it means with {term('criteria')} 'TEXT' or "
                          f"{term('criteria')} @FILE (or name one of the shared benchmarks whose human-written "
                          "criteria to use, e.g. topical_chat)")
    return load_human_criteria(dataset, aspect, scale, path=path)
