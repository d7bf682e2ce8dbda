"""The bootstrap's threads run under the caller's np.errstate: a resample that leaves a group out (0/0) prints
no RuntimeWarning where the caller silenced it, and still warns where the caller did not."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from judgelab.metrics.bootstrap import GroupBootstrap


def _empty_share(weights: np.ndarray) -> np.ndarray:
    return weights[:, 0] * 0.0 / (weights[:, 0] * 0.0)  # 0/0 in every resample


def test_a_silenced_division_stays_silent_in_the_threads():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(invalid="ignore", divide="ignore"):
            replicates = GroupBootstrap(3, 300, 0).replicate(_empty_share)
    assert replicates.shape == (300,) and np.isnan(replicates).all()


def test_a_division_the_caller_did_not_silence_still_warns():
    with np.errstate(invalid="warn"), pytest.warns(RuntimeWarning, match="invalid value"):
        GroupBootstrap(3, 300, 0).replicate(_empty_share)


def test_evaluate_on_few_items_a_system_prints_no_numpy_warning():
    import judgelab as jl

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        board = jl.evaluate("tests/data/sources/promptfoo/conversations.json", judge="llm-rubric")
    assert len(board.to_dict()["systems"]) == 3
