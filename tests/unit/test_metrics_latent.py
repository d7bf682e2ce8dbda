"""Dawid-Skene and family Dawid-Skene (judgelab.metrics.latent) on simulated judges with known parameters."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.metrics.latent import dawid_skene, family_dawid_skene, judge_dependence, vote_shares


def _confusion(accuracy: float, n_classes: int, rng) -> np.ndarray:
    """Rows c: P(says k | c), ``accuracy`` on the diagonal, the errors spread unevenly over the other classes."""
    out = np.zeros((n_classes, n_classes))
    for c in range(n_classes):
        errors = rng.dirichlet(np.ones(n_classes - 1) * 2) * (1 - accuracy)
        out[c] = np.insert(errors, c, accuracy)
    return out


def _judge(truth: np.ndarray, confusion: np.ndarray, rng) -> np.ndarray:
    cumulative = confusion[truth].cumsum(axis=1)
    return (rng.random(truth.size)[:, None] > cumulative).sum(axis=1)


def _simulate(accuracies, n_classes=3, n_items=2000, seed=0, priors=None):
    rng = np.random.default_rng(seed)
    truth = rng.choice(n_classes, n_items, p=priors)
    confusions = [_confusion(a, n_classes, rng) for a in accuracies]
    codes = np.column_stack([_judge(truth, m, rng) for m in confusions])
    return truth, codes, np.stack(confusions)


def _accuracy(posterior: np.ndarray, truth: np.ndarray) -> float:
    return float((posterior.argmax(axis=1) == truth).mean())


def test_dawid_skene_recovers_known_confusion_matrices_and_priors():
    truth, codes, confusions = _simulate((0.9, 0.7, 0.6), priors=[0.5, 0.3, 0.2])
    fit = dawid_skene(codes, 3)
    assert fit.converged and fit.n == 2000
    assert np.abs(fit.confusion - confusions).max() < 0.08  # cells of the rarest class rest on ~400 items
    assert np.abs(fit.priors - [0.5, 0.3, 0.2]).max() < 0.03
    assert np.allclose(fit.accuracy(), [0.9, 0.7, 0.6], atol=0.03)
    # the two weaker judges overrule the 0.9 one where they agree on the class it misses (a small gain:
    # with errors spread evenly over two classes the best rule would be to follow the 0.9 judge alone)
    best = max((codes[:, j] == truth).mean() for j in range(3))
    assert _accuracy(fit.posterior, truth) > best


def test_dawid_skene_beats_the_best_judge_and_the_majority_with_five_judges():
    truth, codes, _ = _simulate((0.8, 0.7, 0.65, 0.6, 0.55), seed=1)
    fit = dawid_skene(codes, 3)
    best = max((codes[:, j] == truth).mean() for j in range(codes.shape[1]))
    assert _accuracy(fit.posterior, truth) > best + 0.03
    assert _accuracy(fit.posterior, truth) > _accuracy(vote_shares(codes, 3), truth)


def test_a_fit_is_deterministic():
    _, codes, _ = _simulate((0.8, 0.6, 0.6), seed=2, n_items=300)
    first, second = dawid_skene(codes, 3), dawid_skene(codes, 3)
    assert np.array_equal(first.posterior, second.posterior) and first.iterations == second.iterations


def test_missing_verdicts_are_left_out_not_guessed():
    truth, codes, confusions = _simulate((0.85, 0.75, 0.65, 0.6), seed=3, n_items=3000)
    rng = np.random.default_rng(4)
    codes[rng.random(codes.shape) < 0.4] = -1  # each judge covers about 60% of the items
    codes[np.flatnonzero((codes < 0).all(axis=1)), 0] = 0  # every item keeps one verdict
    only_one = np.flatnonzero((codes >= 0).sum(axis=1) == 1)
    fit = dawid_skene(codes, 3)
    assert np.array_equal(fit.coverage, (codes >= 0).sum(axis=0))
    assert np.abs(fit.confusion - confusions).max() < 0.08
    assert np.allclose(fit.posterior.sum(axis=1), 1) and len(only_one) > 0
    # an item one judge covers follows that judge (its confusion matrix is diagonal-heavy)
    judge = (codes[only_one] >= 0).argmax(axis=1)
    said = codes[only_one, judge]
    assert (fit.posterior[only_one].argmax(axis=1) == said).mean() > 0.9


def test_family_model_is_not_fooled_by_two_copies_of_a_bad_judge():
    rng = np.random.default_rng(5)
    truth, good, _ = _simulate((0.8, 0.75, 0.7), seed=5)
    bad = _judge(truth, _confusion(0.45, 3, rng), rng)
    codes = np.column_stack([good, bad, bad])
    independent = dawid_skene(codes, 3)
    families = family_dawid_skene(codes, 3)
    assert (3, 4) in families.families and all(len(f) == 1 for f in families.families if f != (3, 4))
    assert _accuracy(independent.posterior, truth) < 0.6  # the copies agree perfectly: Dawid-Skene trusts them
    assert _accuracy(families.posterior, truth) > 0.8
    assert _accuracy(families.posterior, truth) > _accuracy(vote_shares(codes, 3), truth)
    assert families.dependence[3, 4] > 0.9 and abs(families.dependence[0, 3]) < 0.2
    # the family's members report its opinion exactly; their confusion is the bad judge's
    assert np.allclose(families.confusion[3], families.confusion[4])
    assert families.accuracy()[3] < 0.55


def test_family_model_keeps_independent_judges_apart_and_then_is_dawid_skene():
    truth, codes, _ = _simulate((0.8, 0.7, 0.6, 0.5, 0.5), seed=6)
    families = family_dawid_skene(codes, 3)
    assert families.families == tuple((j,) for j in range(5))
    assert np.allclose(families.posterior, dawid_skene(codes, 3).posterior)
    assert all(not merge["accepted"] for merge in families.merges)


def test_families_given_by_hand_and_all_in_one_falls_back_to_dawid_skene():
    truth, codes, _ = _simulate((0.8, 0.7, 0.6), seed=7, n_items=500)
    given = family_dawid_skene(codes, 3, families=[[1, 2]])
    assert given.families == ((0,), (1, 2)) and given.dependence is None
    one = family_dawid_skene(codes, 3, families=[[0, 1, 2]])
    assert one.families == ((0,), (1,), (2,)) and "one family" in one.notes[0]
    with pytest.raises(ValueError, match="at most once"):
        family_dawid_skene(codes, 3, families=[[0, 1], [1, 2]])


def test_dependence_needs_three_judges_and_enough_shared_items():
    _, codes, _ = _simulate((0.8, 0.7), seed=8, n_items=100)
    assert not judge_dependence(codes, 3).any()
    _, codes, _ = _simulate((0.8, 0.7, 0.6), seed=8, n_items=100)
    codes[10:, 0] = -1  # judge 0 shares 10 items with the others
    dependence = judge_dependence(codes, 3)
    assert dependence[0, 1] == dependence[0, 2] == 0 and dependence[1, 2] != 0


def test_vote_shares_and_bad_codes():
    codes = np.array([[0, 0, 1], [2, -1, -1], [-1, 1, 1]])
    assert np.allclose(vote_shares(codes, 3), [[2 / 3, 1 / 3, 0], [0, 0, 1], [0, 1, 0]])
    with pytest.raises(ValueError, match="-1..2"):
        dawid_skene(np.array([[0, 3], [1, 1]]), 3)
    with pytest.raises(ValueError, match="at least one judge"):
        dawid_skene(np.array([[0, 1], [-1, -1]]), 2)
    with pytest.raises(ValueError, match="integer"):
        dawid_skene(np.array([[0.0, 1.0]]), 2)
