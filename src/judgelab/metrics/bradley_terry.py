"""Bradley-Terry strengths from weighted comparisons: ``P(a beats b) = sigmoid(beta_a - beta_b)``.

Each comparison ``c`` between systems ``a[c]`` and ``b[c]`` adds ``weight[c] * softplus(d) -
mass[c] * d`` to the loss, ``d = beta_a - beta_b``. With ``mass = weight * y`` and ``y`` the
preference for ``a`` (1 a wins, 0.5 tie, 0 b wins) this is the logistic likelihood with ties as
half a win; the prediction-powered fit (evaluate/preferences.py) uses other masses, some outside
``[0, weight]``, and the loss stays convex. The loss depends on the comparisons only through each
pair's totals, so the fit costs O(pairs), not O(comparisons): a million comparisons among 100
systems aggregate to 4,950 pairs first.

Why hand-written: scikit-learn's LogisticRegression takes neither fractional targets nor masses
outside [0, weight] and would refit on a million rows; scipy's trust-region Newton on the
aggregated convex loss converges in a few iterations. Strengths are centred (they sum to 0): only
differences are identified.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import expit
from threadpoolctl import threadpool_limits

#: A strength this large means a system won (or lost) all its comparisons: no finite maximum.
UNBOUNDED = 25.0


@dataclass(frozen=True)
class BradleyTerryFit:
    strength: np.ndarray  # (K,), centred
    converged: bool
    iterations: int

    def win_probability(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return expit(self.strength[a] - self.strength[b])


def fit_bradley_terry(n_systems: int, a: np.ndarray, b: np.ndarray, weight: np.ndarray,
                      mass: np.ndarray) -> BradleyTerryFit:
    """Minimise ``sum_c weight[c] softplus(beta_a - beta_b) - mass[c] (beta_a - beta_b)``."""
    i, j, total_weight, total_mass = pair_totals(n_systems, a, b, weight, mass)

    def loss(free: np.ndarray):
        beta = np.concatenate([[0.0], free])  # system 0 fixed at 0: the rest are identified
        d = beta[i] - beta[j]
        value = float(np.sum(total_weight * np.logaddexp(0.0, d) - total_mass * d))
        slope = total_weight * expit(d) - total_mass
        gradient = np.bincount(i, slope, n_systems) - np.bincount(j, slope, n_systems)
        return value, gradient[1:]

    def hessian(free: np.ndarray) -> np.ndarray:
        beta = np.concatenate([[0.0], free])
        p = expit(beta[i] - beta[j])
        return laplacian(n_systems, i, j, total_weight * p * (1 - p))[1:, 1:]

    scale = float(np.abs(total_weight).sum()) or 1.0  # the gradient grows with the weights: a relative tolerance
    try:
        result = optimize.minimize(loss, np.zeros(n_systems - 1), jac=True, hess=hessian, method="trust-exact",
                                   options={"gtol": 1e-10 * scale, "maxiter": 200})
        finite = bool(np.all(np.isfinite(result.x)))
    except (ValueError, np.linalg.LinAlgError):  # a system that wins everything: the Hessian vanishes on the way
        finite = False
    if not finite:  # bounded quasi-Newton instead; a strength at the bound is reported as unbounded below
        result = optimize.minimize(loss, np.zeros(n_systems - 1), jac=True, method="L-BFGS-B",
                                   bounds=[(-2 * UNBOUNDED, 2 * UNBOUNDED)] * (n_systems - 1))
    beta = np.concatenate([[0.0], result.x])
    beta -= beta.mean()
    # trust-exact reports failure when it cannot improve in the last digits; the gradient says whether it is there
    stationary = float(np.max(np.abs(loss(result.x)[1]), initial=0.0)) < 1e-6 * scale
    # a system that wins (or loses) all of its comparisons has no finite strength, though the gradient
    # vanishes on the way there and the optimiser stops somewhere large
    weight_of = np.bincount(i, total_weight, n_systems) + np.bincount(j, total_weight, n_systems)
    wins_of = np.bincount(i, total_mass, n_systems) + np.bincount(j, total_weight - total_mass, n_systems)
    tolerance = 1e-9 * scale
    extreme = (weight_of > 0) & ((wins_of <= tolerance) | (wins_of >= weight_of - tolerance))
    converged = stationary and not extreme.any() and bool(np.all(np.abs(beta) < UNBOUNDED))
    return BradleyTerryFit(beta, converged, int(result.nit))


def pair_totals(n_systems: int, a: np.ndarray, b: np.ndarray, weight: np.ndarray, mass: np.ndarray):
    """(i, j, weight, mass) per unordered pair i < j, the mass counted for ``i``."""
    flip = a > b
    i, j = np.where(flip, b, a), np.where(flip, a, b)
    mass_i = np.where(flip, weight - mass, mass)  # the preference for b is 1 - the preference for a
    key = i * n_systems + j
    keys, inverse = np.unique(key, return_inverse=True)
    return (keys // n_systems, keys % n_systems, np.bincount(inverse, weight, len(keys)),
            np.bincount(inverse, mass_i, len(keys)))


def laplacian(n_systems: int, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_c w[c] (e_a - e_b)(e_a - e_b)^T``: the Hessian's shape for any pairwise model."""
    out = np.zeros((n_systems, n_systems))
    out[np.diag_indices(n_systems)] = np.bincount(a, w, n_systems) + np.bincount(b, w, n_systems)
    cross = np.bincount(a * n_systems + b, w, n_systems * n_systems).reshape(n_systems, n_systems)
    return out - cross - cross.T


def side_gram(n_systems: int, a: np.ndarray, b: np.ndarray, va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    """``sum_c v_c v_c^T`` for vectors with ``va[c]`` at ``a[c]``, ``vb[c]`` at ``b[c]`` and 0 elsewhere."""
    out = np.zeros((n_systems, n_systems))
    out[np.diag_indices(n_systems)] = np.bincount(a, va * va, n_systems) + np.bincount(b, vb * vb, n_systems)
    cross = np.bincount(a * n_systems + b, va * vb, n_systems * n_systems).reshape(n_systems, n_systems)
    return out + cross + cross.T


def laplacian_inverse(matrix: np.ndarray) -> np.ndarray:
    """The pseudo-inverse of a connected graph's Laplacian: ``(L + J/k)^-1 - J/k``. ``np.linalg.pinv``
    keeps the null direction (all ones) when rounding leaves its eigenvalue at 1e-17 instead of 0,
    and then inflates every variance along it."""
    k = len(matrix)
    ones = np.full((k, k), 1.0 / k)
    return np.linalg.inv(matrix + ones) - ones


def fit_many(n_systems: int, i: np.ndarray, j: np.ndarray, weight: np.ndarray, mass: np.ndarray,
             start: np.ndarray, *, max_iter: int = 50, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Many fits on one set of pairs at once (the bootstrap's refits): ``weight``/``mass`` are
    ``(B, pairs)`` totals for the pairs ``i < j``, ``start`` the ``(K,)`` strengths to start from
    (the full data's fit: each resample's optimum is close to it, so a few Newton steps suffice).

    Newton's method on all B convex losses together: one batched ``(B, K, K)`` solve per step, with
    the step halved where it does not lower a fit's loss. ``(strengths (B, K) centred, converged
    (B,))``; a fit that has not converged (e.g. a system that wins all of its resampled comparisons)
    keeps where it stopped, clipped to +-UNBOUNDED."""
    n_fits = len(weight)
    beta = np.tile(np.asarray(start, dtype=float), (n_fits, 1))
    scale = np.abs(weight).sum(axis=1)
    scale[scale == 0] = 1.0
    ones = np.full((n_systems, n_systems), 1.0 / n_systems)  # the null direction: steps stay centred
    incidence = _incidence(n_systems, i, j)
    # one BLAS thread: B small (K, K) solves gain nothing from threads, and on a busy machine the
    # threads' waiting for each other made each batched solve 30x slower (0.22 s against 0.007 s)
    with threadpool_limits(limits=1, user_api="blas"):
        beta, done = _newton(beta, incidence, i, j, weight, mass, scale, ones, max_iter, tol)
    beta = np.clip(beta - beta.mean(axis=1, keepdims=True), -UNBOUNDED, UNBOUNDED)
    return beta, done


def _newton(beta, incidence, i, j, weight, mass, scale, ones, max_iter: int, tol: float):
    n_systems = beta.shape[1]
    done = np.zeros(len(beta), dtype=bool)
    for _ in range(max_iter):
        d = beta[:, i] - beta[:, j]
        slope = weight * expit(d) - mass
        gradient = np.asarray(incidence.T @ slope.T).T
        done = np.max(np.abs(gradient), axis=1) < tol * scale
        if done.all():
            break
        live = ~done
        p = expit(d[live])
        # + a ridge far below any pair's weight: a resample that disconnects the systems stays solvable
        hessian = _laplacians(n_systems, i, j, weight[live] * p * (1 - p)) + ones + (
            1e-12 * scale[live])[:, None, None] * np.eye(n_systems)
        step = np.linalg.solve(hessian, gradient[live][..., None])[..., 0]
        beta[live] = _halved(beta[live], step, i, j, weight[live], mass[live])
    return beta, done


def _loss(beta: np.ndarray, i: np.ndarray, j: np.ndarray, weight: np.ndarray, mass: np.ndarray) -> np.ndarray:
    d = beta[:, i] - beta[:, j]
    return np.sum(weight * np.logaddexp(0.0, d) - mass * d, axis=1)


def _halved(beta, step, i, j, weight, mass, tries: int = 30) -> np.ndarray:
    """``beta - t step`` with t = 1, 1/2, 1/4, ... per fit, the first that does not raise its loss."""
    before = _loss(beta, i, j, weight, mass)
    out, pending, t = beta.copy(), np.ones(len(beta), dtype=bool), 1.0
    for _ in range(tries):
        trial = beta[pending] - t * step[pending]
        ok = _loss(trial, i, j, weight[pending], mass[pending]) <= before[pending] + 1e-12 * np.abs(before[pending])
        rows = np.flatnonzero(pending)
        out[rows[ok]] = trial[ok]
        pending[rows[ok]] = False
        if not pending.any():
            break
        t /= 2
    return out


def _incidence(n_systems: int, i: np.ndarray, j: np.ndarray):
    """The (pairs, K) matrix with +1 at i and -1 at j of each pair (sparse)."""
    from scipy.sparse import csr_matrix

    rows = np.arange(len(i))
    return csr_matrix((np.concatenate([np.ones(len(i)), -np.ones(len(j))]),
                       (np.concatenate([rows, rows]), np.concatenate([i, j]))), shape=(len(i), n_systems))


def _laplacians(n_systems: int, i: np.ndarray, j: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``laplacian`` for each row of ``w`` (B, pairs): (B, K, K), by one bincount."""
    n_fits, k2 = len(w), n_systems * n_systems
    base = (np.arange(n_fits) * k2)[:, None]
    index = np.concatenate([base + i * n_systems + i, base + j * n_systems + j, base + i * n_systems + j,
                            base + j * n_systems + i], axis=1).ravel()
    values = np.concatenate([w, w, -w, -w], axis=1).ravel()
    return np.bincount(index, values, n_fits * k2).reshape(n_fits, n_systems, n_systems)
