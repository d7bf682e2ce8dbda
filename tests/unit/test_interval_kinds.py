"""One contract for every per-system interval kind (``KINDS`` in evaluate/intervals.py), as
tests/unit/test_contract.py has for judge kinds: a new kind is checked by adding nothing but its
registry entry (and its branch in ``per_system``). Each kind, asked for by name through the human-only
and corrected estimators on a small simulated problem with a scale, must give intervals that hold the
point estimate, stay on the scale, widen as the confidence rises and cover the true mean in most
seeded simulations; and it has a mark and a description, and the report shows its mark."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from judgelab.evaluate import draw
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.intervals import BETTING_KINDS, INTERVALS, KINDS, is_betting, mark_of
from judgelab.evaluate.system_estimates import SystemEstimates
from judgelab.report.systems_view import MARKS, systems_section
from tests.unit.test_evaluate_intervals import ratings

SCALE = (1.0, 5.0)
MEANS = (2.5, 3.0, 3.5)  # away from the scale's ends: where every kind, the t interval too, stays on the scale
UNITS = 40  # per system
LABELLED = 15  # per system
SIMULATIONS = 50
MIN_COVERAGE = 0.85  # of 150 intervals per kind and estimator at 95%: loose, so the test cannot flake
ESTIMATORS = {"human": human_only, "corrected": corrected}


def run(kind: str, estimator: str, seed: int, confidence: float = 0.95) -> tuple[SystemEstimates, np.ndarray]:
    """The estimate of ``kind`` from LABELLED labels per system, and each system's true mean over its units."""
    problem = ratings(UNITS, MEANS, seed, SCALE)  # 1-5 ratings, rounded, and a noisy judge of them
    design = draw(problem, LABELLED / UNITS, seed=seed).design
    truth = np.nanmean(np.where(problem.present, problem.human, np.nan), axis=0)
    seen = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
    return ESTIMATORS[estimator](seen, design, target="items", intervals=kind, confidence=confidence,
                                 seed=seed), truth


@cache
def coverage(kind: str, estimator: str) -> float:
    hits = []
    for seed in range(SIMULATIONS):
        est, truth = run(kind, estimator, seed)
        hits.extend((est.ci[:, 0] <= truth) & (truth <= est.ci[:, 1]))
    return float(np.mean(hits))


CASES = [(kind, estimator) for kind in KINDS for estimator in ESTIMATORS]


def test_the_registry_is_what_the_choices_and_the_marks_are_made_of():
    assert INTERVALS == ("auto", *KINDS) and len(set(INTERVALS)) == len(INTERVALS)
    assert BETTING_KINDS == tuple(name for name in KINDS if is_betting(name))
    assert MARKS == {name: kind.mark for name, kind in KINDS.items() if kind.mark}
    assert not is_betting("auto") and not is_betting(None) and mark_of("auto") == mark_of(None) == ""


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_has_a_name_a_distinct_mark_and_a_description(kind):
    entry = KINDS[kind]
    assert entry.name == kind and mark_of(kind) == entry.mark
    assert isinstance(entry.mark, str) and len(entry.mark) <= 1
    assert entry.mark == "" or [other.mark for other in KINDS.values()].count(entry.mark) == 1
    assert entry.description.strip() and "\n" not in entry.description
    assert entry.betting <= entry.needs_scale  # a betting construction bets on a bounded mean


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_report_shows_each_kind_by_its_mark(kind):
    def estimate(value):
        return {"value": value, "ci": [value - 0.5, value + 0.5], "rank_interval": [1, 2], "rank": 1}

    systems = {"kind": "items", "systems": ["x", "y"], "pairs": {}, "labels": {"n_labelled": 20},
               "estimators": {"judge": {"x": estimate(3.0), "y": estimate(2.5)},
                              "human": {"x": estimate(3.2), "y": estimate(2.4)}},
               "estimator_info": {"human": {"per_system": [kind, "t"]}}}
    section = systems_section(systems)
    assert section is not None
    marks = {row["system"]: dict((name, mark) for name, _, mark in row["cells"]) for row in section["rows"]}
    assert marks["x"]["human"] == (KINDS[kind].mark or None) and marks["y"]["human"] is None
    assert marks["x"]["judge"] is None


@pytest.mark.parametrize(("kind", "estimator"), CASES)
def test_each_kind_holds_its_estimate_on_the_scale_and_widens_with_confidence(kind, estimator):
    for seed in range(3):
        est, _ = run(kind, estimator, seed)
        assert np.all(np.isfinite(est.ci)) and np.all(np.isfinite(est.value))
        assert np.all((est.ci[:, 0] <= est.value) & (est.value <= est.ci[:, 1])), est.ci
        assert np.all((est.ci >= SCALE[0]) & (est.ci <= SCALE[1])), est.ci
        assert np.all(est.ci[:, 1] > est.ci[:, 0])
        if kind != "t":  # intervals="t" is every earlier release's design-based interval: no per-system record
            assert set(est.info["per_system"]) == {kind}
        narrow, _ = run(kind, estimator, seed, confidence=0.8)
        assert np.all(np.diff(narrow.ci, axis=1) < np.diff(est.ci, axis=1)), (narrow.ci, est.ci)


@pytest.mark.parametrize(("kind", "estimator"), CASES)
def test_each_kind_covers_the_true_mean_in_most_simulations(kind, estimator):
    assert coverage(kind, estimator) >= MIN_COVERAGE
