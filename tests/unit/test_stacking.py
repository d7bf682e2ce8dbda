"""The stacker of ensembles (aggregate: stack) and of train --stack: non-negative weights, a penalty
chosen by group-wise cross-validation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from judgelab.judges.stacking import ALPHAS, DEFAULT_ALPHA, fit_stacker, predict_stacked


def _members(rng, n, noise=(0.5, 3.0, 3.0, 3.0)):
    """A human score, one informative member, weak/noise members and one that runs the wrong way."""
    human = rng.normal(size=n)
    columns = [human + scale * rng.normal(size=n) for scale in noise] + [-human + rng.normal(size=n)]
    return human, np.column_stack(columns)


def test_weights_are_non_negative_and_the_choice_is_recorded():
    rng = np.random.default_rng(0)
    human, values = _members(rng, 120)
    groups = np.repeat(np.arange(30), 4).astype(str)
    learned = fit_stacker(values, human, groups)
    assert min(learned["coef"]) >= 0 and learned["coef"][-1] == 0  # the reversed member is not flipped
    assert learned["coef"][0] == max(learned["coef"])
    assert learned["alpha"][0] in ALPHAS and 0 < learned["cv_spearman"][0] <= 1
    scores = predict_stacked(learned, values)
    assert stats.spearmanr(human, scores).statistic > 0.8


def test_out_of_sample_the_stack_is_not_worse_than_its_best_member():
    """Fitted on 40 items of 10 groups (a --stack validation split), scored on 2000 new ones."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        human, values = _members(rng, 40, noise=(0.8, 4.0, 4.0, 4.0, 4.0))
        groups = np.repeat(np.arange(10), 4).astype(str)
        new_human, new_values = _members(rng, 2000, noise=(0.8, 4.0, 4.0, 4.0, 4.0))
        best = max(stats.spearmanr(new_human, new_values[:, c]).statistic for c in range(new_values.shape[1]))
        stacked = stats.spearmanr(new_human, predict_stacked(fit_stacker(values, human, groups), new_values)).statistic
        assert stacked >= best - 0.02, seed


def test_too_few_groups_for_cross_validation_use_the_default_penalty():
    rng = np.random.default_rng(1)
    human, values = _members(rng, 8)
    learned = fit_stacker(values, human, ["a"] * 4 + ["b"] * 4)
    assert learned["cv_spearman"] == [] and learned["alpha"] == [DEFAULT_ALPHA]
    assert min(learned["coef"]) >= 0
    with pytest.raises(ValueError):
        fit_stacker(values[:, :2], human[:5])  # rows must match
