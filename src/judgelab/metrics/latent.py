"""Latent-class aggregation of several judges' labels: Dawid-Skene, and a version for judges that err together.

Input: an (items x judges) array of class codes ``0 .. n_classes-1``, ``-1`` where a judge gave no verdict.
Output: a :class:`LatentClassFit` with each item's posterior over the true class, each judge's confusion
matrix ``P(judge says k | true class c)``, the class priors and how the EM ended.

* :func:`dawid_skene`: Dawid & Skene (1979). Judges err independently given the true class; EM from the
  majority vote, no random start, so a fit is deterministic.
* :func:`family_dawid_skene`: judges that err together (one model under several prompts, a label derived
  from another judge's grades, a copy) are grouped into *families*. A family shares one latent opinion
  ``z`` per item, drawn from the true class through the family's confusion matrix; each member then
  reports ``z`` through a confusion matrix of its own (a two-level latent class model, Zhang 2004,
  "Hierarchical latent class models", JMLR 5). Families are independent given the true class, members
  given their family's opinion. A family of copies thus counts once, however many copies there are, and
  the parameters grow with the judges (``K x K`` each), not with their joint patterns (``K^m`` a family),
  so a few thousand items suffice. Dawid-Skene is the case where every family has one member.
  Unless given, families are grown by :func:`select_families`: the pairs :func:`judge_dependence` finds
  agreeing beyond independence are merged while the merge lowers the BIC.

Why hand-written rather than ``crowd-kit``: its Dawid-Skene is these few lines of EM, but it requires
``transformers`` (and ``nltk``) to install, which judgelab's core does not, and it has no dependent variant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

MISSING = -1
SMOOTHING = 0.01  # pseudo-count in every cell: no probability is exactly 0, so no verdict is impossible
MIN_DEPENDENCE = 0.1  # excess agreement (a kappa) below which two families are not even tried as one
TOL = 1e-5  # EM stops when no posterior probability moves by more than this
QUICK_ITER, QUICK_TOL = 200, 1e-4  # fits that only compare models (their BIC moves by far less than a penalty)
MIN_OVERLAP = 20  # items two judges must share before their dependence is measured


@dataclass(frozen=True)
class LatentClassFit:
    """What a latent-class fit found. ``confusion[j, c, k]``: P(judge j says k | true class c); for a
    member of a family it is the family's confusion matrix times the member's own."""

    posterior: np.ndarray  # (items, classes)
    confusion: np.ndarray  # (judges, classes, classes)
    priors: np.ndarray  # (classes,)
    families: tuple[tuple[int, ...], ...]
    iterations: int
    converged: bool
    log_likelihood: float
    coverage: np.ndarray  # verdicts per judge
    dependence: np.ndarray | None = None  # (judges, judges) excess agreement the families were formed from
    merges: tuple[dict[str, Any], ...] = ()  # the merges tried: first, second (judge columns), bic, against, accepted
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return int(self.posterior.shape[0])

    def accuracy(self) -> np.ndarray:
        """Each judge's modelled accuracy: sum over classes of prior x P(says that class | that class)."""
        return np.einsum("c,jcc->j", self.priors, self.confusion)

    def to_dict(self) -> dict[str, Any]:
        out = {"n": self.n, "iterations": self.iterations, "converged": self.converged,
               "log_likelihood": self.log_likelihood, "priors": self.priors.tolist(),
               "confusion": self.confusion.tolist(), "families": [list(f) for f in self.families],
               "coverage": self.coverage.tolist(), "merges": list(self.merges), "notes": list(self.notes)}
        return out | ({"dependence": self.dependence.tolist()} if self.dependence is not None else {})


# ---------------------------------------------------------------------------------------- public API


def vote_shares(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """(items, classes): the share of each item's verdicts that give each class (a row of zeros: none)."""
    counts = _one_hot(_checked(codes, n_classes), n_classes).sum(axis=1)
    total = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)


def dawid_skene(codes: np.ndarray, n_classes: int, *, max_iter: int = 500, tol: float = TOL) -> LatentClassFit:
    """Dawid-Skene by EM, started from the majority vote's shares (deterministic)."""
    codes = _checked(codes, n_classes)
    families = _singletons(codes.shape[1])
    return replace(_fit(codes, n_classes, families, max_iter, tol), notes=_identified(families))


def family_dawid_skene(codes: np.ndarray, n_classes: int, *, families: Sequence[Sequence[int]] | None = None,
                       min_dependence: float = MIN_DEPENDENCE, max_iter: int = 500,
                       tol: float = TOL) -> LatentClassFit:
    """Dawid-Skene over families of judges that err together (module docstring). ``families``: lists of
    judge columns (judges left out are families of one); default: :func:`select_families`. If every judge
    falls in one family the model is not identified: the fit is then Dawid-Skene's, with a note."""
    codes = _checked(codes, n_classes)
    n_judges = codes.shape[1]
    dependence = None
    merges: tuple[dict[str, Any], ...] = ()  # as select_families gives them
    notes: tuple[str, ...] = ()
    if families is None:
        dependence = judge_dependence(codes, n_classes)
        families, merges = select_families(codes, n_classes, dependence, min_dependence=min_dependence)
    families = _complete(families, n_judges)
    if len(families) == 1 and n_judges > 1:
        notes = ("every judge fell in one family, which cannot be told from the true class: "
                 "fitted as Dawid-Skene (independent judges)",)
        families = _singletons(n_judges)
    fit = _fit(codes, n_classes, families, max_iter, tol)
    return replace(fit, dependence=dependence, merges=merges, notes=notes + _identified(families))


def select_families(codes: np.ndarray, n_classes: int, dependence: np.ndarray, *,
                    min_dependence: float = MIN_DEPENDENCE, max_fits: int | None = None
                    ) -> tuple[tuple[tuple[int, ...], ...], tuple[dict[str, Any], ...]]:
    """Families grown greedily: the two families with the highest average :func:`judge_dependence` are
    merged when the merged model's BIC is lower (the data, not a threshold, decide that they err
    together); a pair whose merge does not lower it is not tried again. Only pairs at or above
    ``min_dependence`` are tried, at most ``max_fits`` (default 4 x judges) model fits. Also returns the
    merges tried, in order."""
    n_judges = codes.shape[1]
    families = _singletons(n_judges)
    best = _bic(_fit(codes, n_classes, families, QUICK_ITER, QUICK_TOL), families, n_classes)
    refused: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    tried: list[dict[str, Any]] = []
    budget = 4 * n_judges if max_fits is None else max_fits
    while budget > 0:
        pair = _most_dependent(families, dependence, min_dependence, refused)
        if pair is None:
            break
        merged = _merge(families, *pair)
        if len(merged) == 1:
            break
        bic = _bic(_fit(codes, n_classes, merged, QUICK_ITER, QUICK_TOL), merged, n_classes)
        budget -= 1
        tried.append({"first": list(pair[0]), "second": list(pair[1]), "bic": float(bic), "against": float(best),
                      "accepted": bool(bic < best)})
        if bic < best:
            families, best = merged, bic
        else:
            refused.add(pair)
    return families, tuple(tried)


def judge_dependence(codes: np.ndarray, n_classes: int, *, min_overlap: int = MIN_OVERLAP) -> np.ndarray:
    """(judges, judges): how much more two judges agree than independent errors would make them, as a
    kappa: ``(observed - expected) / (1 - expected)`` on the items both judged, where ``expected`` comes
    from a Dawid-Skene fit of the *other* judges (so a pair cannot explain its own agreement away by
    calling itself accurate) and each judge's confusion matrix against that fit. 0 for pairs sharing fewer
    than ``min_overlap`` items, and for every pair when there are fewer than 3 judges."""
    codes = _checked(codes, n_classes)
    n_judges = codes.shape[1]
    dependence = np.zeros((n_judges, n_judges))
    if n_judges < 3:
        return dependence
    onehot = _one_hot(codes, n_classes)
    for j in range(n_judges):
        for k in range(j + 1, n_judges):
            both = (codes[:, j] >= 0) & (codes[:, k] >= 0)
            if both.sum() >= min_overlap:
                others = [m for m in range(n_judges) if m not in (j, k)]
                truth = _held_out_posterior(codes[:, others], n_classes)
                dependence[j, k] = dependence[k, j] = _excess_agreement(truth, onehot[:, j], onehot[:, k], both)
    return dependence


# ---------------------------------------------------------------------------------------- the EM


def _fit(codes: np.ndarray, n_classes: int, families: tuple[tuple[int, ...], ...], max_iter: int,
         tol: float) -> LatentClassFit:
    """EM for the two-level model. A family of one is Dawid-Skene's judge: its opinion *is* its verdict
    (the member's confusion is the identity), which the steps below take as a shortcut."""
    onehot = _one_hot(codes, n_classes)
    seen = codes >= 0
    if not len(codes) or not seen.any(axis=1).all():
        raise ValueError("every item needs a verdict from at least one judge, and there must be items")
    posterior = vote_shares(codes, n_classes)
    opinions = [_family_votes(onehot[:, list(f)]) for f in families]  # start: each family's own vote
    params = _m_step(posterior, [posterior.T @ q for q in opinions], opinions, onehot, families)
    log_likelihood, converged, iterations = -np.inf, False, 0
    while iterations < max_iter and not converged:
        new, tops, opinions, log_likelihood = _e_step(params, onehot, seen, families)
        params = _m_step(new, tops, opinions, onehot, families)
        converged, posterior = bool(np.abs(new - posterior).max() < tol), new
        iterations += 1
    priors, tops, members = params
    confusion = np.stack([tops[g] @ members[j] for g, family in enumerate(families) for j in family])
    order = np.argsort([j for family in families for j in family])
    return LatentClassFit(posterior=posterior, confusion=confusion[order], priors=priors, families=families,
                          iterations=iterations, converged=converged, log_likelihood=float(log_likelihood),
                          coverage=seen.sum(axis=0))


def _e_step(params, onehot: np.ndarray, seen: np.ndarray, families):
    """The posterior over the true class; per family the expected (true class, opinion) counts and, for
    families of several, each item's posterior over the family's opinion."""
    priors, tops, members = params
    log_tops = [np.log(t) for t in tops]
    log_family: list[np.ndarray] = []
    log_opinion: list[np.ndarray | None] = []  # None for a family of one
    for family, lt in zip(families, log_tops, strict=True):
        if len(family) == 1:  # log P(verdict | c), 0 where the judge gave none
            log_family.append(onehot[:, family[0]] @ lt.T)
            log_opinion.append(None)
        else:  # log P(members' verdicts | c) = logsumexp_z [log P(z | c) + sum_j log P(verdict_j | z)]
            lo = sum(np.log(onehot[:, j] @ members[j].T + ~seen[:, j, None]) for j in family)
            log_family.append(logsumexp(lt[None, :, :] + lo[:, None, :], axis=2))
            log_opinion.append(lo)
    log_joint = np.log(priors)[None, :] + sum(log_family)
    norm = logsumexp(log_joint, axis=1, keepdims=True)
    log_posterior = log_joint - norm
    posterior = np.exp(log_posterior)
    counts: list[np.ndarray] = []
    opinions: list[np.ndarray | None] = []
    for family, lt, lo, lf in zip(families, log_tops, log_opinion, log_family, strict=True):
        if lo is None:
            counts.append(posterior.T @ onehot[:, family[0]])
            opinions.append(None)
            continue
        # a family with no verdict on an item adds no counts; any() over an axis of a 2-d array is an array
        # (numpy's stubs cannot tell the dimensions: a scalar, they say, or an array)
        observed = cast("npt.NDArray[np.bool_]", seen[:, list(family)].any(axis=1))
        r = np.exp(log_posterior[:, :, None] + lt[None] + lo[:, None, :] - lf[:, :, None]) * observed[:, None, None]
        counts.append(r.sum(axis=0))
        opinions.append(r.sum(axis=1))
    return posterior, counts, opinions, float(norm.sum())


def _m_step(posterior: np.ndarray, counts: list[np.ndarray], opinions: list, onehot: np.ndarray, families):
    """Priors, each family's confusion (true class -> opinion) and each member's (opinion -> verdict)."""
    n_classes = posterior.shape[1]
    members = {}
    for family, opinion in zip(families, opinions, strict=True):
        for j in family:
            members[j] = np.eye(n_classes) if len(family) == 1 else _normalised(opinion.T @ onehot[:, j])
    return _normalised(posterior.sum(axis=0)), [_normalised(c) for c in counts], members


# ---------------------------------------------------------------------------------------- dependence


def _held_out_posterior(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """Dawid-Skene posterior from these judges; items none of them judged get the fitted priors."""
    covered = (codes >= 0).any(axis=1)
    if not covered.any():
        return np.full((codes.shape[0], n_classes), 1.0 / n_classes)
    fit = _fit(codes[covered], n_classes, _singletons(codes.shape[1]), max_iter=100, tol=1e-4)
    posterior = np.tile(fit.priors, (codes.shape[0], 1))
    posterior[covered] = fit.posterior
    return posterior


def _excess_agreement(truth: np.ndarray, first: np.ndarray, second: np.ndarray, both: np.ndarray) -> float:
    """Kappa of the pair's agreement over what independent errors with these confusion matrices give."""
    confusions = [_normalised(truth.T @ onehot) for onehot in (first, second)]
    expected = float(np.mean(truth[both] @ (confusions[0] * confusions[1]).sum(axis=1)))
    observed = float(np.mean((first[both] * second[both]).sum(axis=1)))
    return (observed - expected) / (1.0 - expected) if expected < 1.0 else 0.0


# ---------------------------------------------------------------------------------------- helpers


def _checked(codes: Any, n_classes: int) -> np.ndarray:
    codes = np.asarray(codes)
    if codes.ndim != 2 or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError("codes: a 2-d integer array (items x judges), -1 where a judge gave no verdict")
    if n_classes < 2:
        raise ValueError("n_classes must be at least 2")
    if codes.size and (codes.min() < MISSING or codes.max() >= n_classes):
        raise ValueError(f"codes must lie in -1..{n_classes - 1}")
    return codes


def _one_hot(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """(items, judges, classes), all zeros where a verdict is missing."""
    out = np.zeros((*codes.shape, n_classes))
    rows, cols = np.nonzero(codes >= 0)
    out[rows, cols, codes[rows, cols]] = 1.0
    return out


def _family_votes(onehot: np.ndarray) -> np.ndarray:
    counts = onehot.sum(axis=1)
    total = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)


def _normalised(counts: np.ndarray) -> np.ndarray:
    smoothed = counts + SMOOTHING
    return smoothed / smoothed.sum(axis=-1, keepdims=True)


def _singletons(n_judges: int) -> tuple[tuple[int, ...], ...]:
    return tuple((j,) for j in range(n_judges))


def _complete(families: Sequence[Sequence[int]], n_judges: int) -> tuple[tuple[int, ...], ...]:
    """The families given, checked, plus a family of one for every judge they leave out."""
    listed = [int(j) for family in families for j in family]
    if len(set(listed)) != len(listed) or any(not 0 <= j < n_judges for j in listed):
        raise ValueError(f"families: each judge (0..{n_judges - 1}) at most once")
    given = [tuple(sorted(int(j) for j in family)) for family in families if len(family)]
    rest: list[tuple[int, ...]] = [(j,) for j in range(n_judges) if j not in set(listed)]
    return tuple(sorted(given + rest, key=lambda f: f[0]))


def _identified(families) -> tuple[str, ...]:
    if len(families) >= 3:
        return ()
    return (f"{len(families)} independent judges (or families) do not identify the latent classes (3 do): the result "
            "depends on the majority vote the EM starts from; majority or mean say the same more plainly",)


def _most_dependent(families, dependence: np.ndarray, least: float, refused: set):
    """The two families with the highest average dependence between their judges (at least ``least``)."""
    best, pair = least, None
    for a in range(len(families)):
        for b in range(a + 1, len(families)):
            value = float(dependence[np.ix_(families[a], families[b])].mean())
            if value >= best and (families[a], families[b]) not in refused:
                best, pair = value, (families[a], families[b])
    return pair


def _merge(families, first: tuple[int, ...], second: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    rest = [f for f in families if f not in (first, second)]
    return tuple(sorted([*rest, tuple(sorted(first + second))], key=lambda f: f[0]))


def _bic(fit: LatentClassFit, families, n_classes: int) -> float:
    """-2 log-likelihood + parameters x log(items): priors, a confusion matrix per family and per member
    of a family of several."""
    blocks = len(families) + sum(len(f) for f in families if len(f) > 1)
    parameters = (n_classes - 1) + blocks * n_classes * (n_classes - 1)
    return -2.0 * fit.log_likelihood + parameters * np.log(fit.n)


