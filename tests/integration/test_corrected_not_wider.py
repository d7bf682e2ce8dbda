"""Issue 45's invariant on the benchmark data: the judge never widens the labels' own interval beyond Monte
Carlo error. Per (set, judge, budget) cell of bench/bench_per_system.py, with a few draws: the corrected
estimator's mean width over systems is at most the human-only one's (same target, same draws), and with
every item labelled each system's corrected interval is exactly the labels' own."""

from __future__ import annotations

import numpy as np
import pytest

SETS = {"hanna:coherence": ("Mistral-7B/eval_prompt_1", "Beluga-13B/eval_prompt_2"),
        "topical_chat:coherence": ("UniEval",)}
DRAWS = 15
#: Monte Carlo error of a ratio of mean widths over 15 paired draws (measured: 0.97-1.00 per cell at 40 draws)
TOLERANCE = 1.01


@pytest.fixture(scope="module")
def bench(benchmarks_dir):
    from bench import bench_per_system

    return bench_per_system


def problems(bench, spec: str) -> dict:
    from judgelab.evaluate.problem import Problem

    dataset, aspect = spec.split(":")
    scale = bench.scale_of(dataset, aspect)
    return {f"{dataset}@{name}:{aspect}": Problem(**{**bench.item_problem(dataset, aspect, name).__dict__,
                                                     "scale": scale}) for name in SETS[spec]}


@pytest.mark.parametrize("spec", sorted(SETS))
@pytest.mark.parametrize("budget", [0.2, 0.4])
def test_corrected_is_never_wider_than_the_labels_own(bench, spec, budget):
    rows = bench.group(problems(bench, spec), budget, DRAWS)
    for estimator in ("corrected", "corrected population"):
        found = bench._against_human(rows, estimator)
        assert found["vs_human_cell"] <= TOLERANCE, (spec, budget, estimator, found)
        # per system, by construction: where its corrected interval would be wider, it is the labels' own
        assert found["vs_human_system"] <= 1 + 1e-9, (spec, budget, estimator, found)


@pytest.mark.parametrize("spec", sorted(SETS))
def test_with_every_item_labelled_corrected_is_the_labels_own(bench, spec):
    found = problems(bench, spec)
    rows = bench.group(found, next(iter(found.values())).n_units, 2)  # a count: every item
    for estimator in ("corrected", "corrected population"):
        human = estimator.replace("corrected", "human")
        for row in rows:
            assert np.allclose(row["width"][estimator], row["width"][human]), (spec, row["cell"], estimator)
