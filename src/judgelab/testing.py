"""Assertions for test suites: the gate of ``judgelab compare`` as a Python call (docs/compare.md).

    from judgelab.testing import assert_not_worse

    def test_new_prompt_is_not_worse():
        assert_not_worse("outputs.jsonl", "runs/judged", baseline="v1", candidate="v2", margin=0.1)

It raises ``AssertionError`` with the figures when the candidate is significantly worse than the
baseline by more than ``margin``, and returns the :class:`~judgelab.evaluate.gate.Comparison`
otherwise (to log, or to assert more on).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.evaluate.gate import Comparison
from judgelab.evaluate.two_systems import compare_systems


def compare(items: Iterable[Item] | str | Path, judgments: Iterable[Judgment] | str | Path, *, baseline: str,
            candidate: str, field: str | None = None, **options: Any) -> Comparison:
    """:func:`~judgelab.evaluate.two_systems.compare_systems` on items and judgments given as objects
    or as files (items: any file ``load_items`` reads; judgments: a run folder or any file
    ``load_judgments`` reads, ``field`` as there). Human labels: ``human={item id: value}`` (from a
    labels file: ``judgelab.data.labels.human_values(load_labels(path), aspect, items)``) or
    ``human_ids`` (ids whose own human score is the label, or ``"all"``)."""
    from judgelab.data.io import load_items, load_judgments

    if isinstance(items, (str, Path)):
        items = load_items(items)
    if isinstance(judgments, (str, Path)):
        judgments = load_judgments(judgments, field=field)
    return compare_systems(items, judgments, baseline=baseline, candidate=candidate, **options)


def assert_not_worse(items: Iterable[Item] | str | Path, judgments: Iterable[Judgment] | str | Path, *,
                     baseline: str, candidate: str, margin: float = 0.0, require_card: str | Path | None = None,
                     floor: str = "tpr=0.8,tnr=0.8", **options: Any) -> Comparison:
    """Fail (``AssertionError`` with the figures) when ``candidate`` is worse than ``baseline`` by more
    than ``margin``: the upper bound of the ``1 - alpha`` interval of candidate - baseline is below
    ``-margin`` (``higher_is_better=False``: its lower bound above ``margin``). ``options``: those of
    :func:`compare` (``alpha``, ``higher_is_better``, ``human``, ``human_ids``, ``aspect``, ...).
    ``require_card``: a judge card (``judgelab meta --card``) that must certify the judge at ``floor`` first,
    as ``compare --require-card`` does; else a ``ConfigError`` saying why, before any comparison."""
    if require_card is not None:
        from judgelab.report.card import require_card as certified

        certified(require_card, floor, judge=options.get("judge"),
                  judgments_file=judgments if isinstance(judgments, (str, Path)) else None)
    result = compare(items, judgments, baseline=baseline, candidate=candidate, margin=margin, **options)
    if not result.passed:
        raise AssertionError(result.details())
    return result


__all__ = ["assert_not_worse", "compare"]
