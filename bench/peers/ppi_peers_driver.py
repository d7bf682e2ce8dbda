"""Each system's 95% interval from the PPI libraries a user would pick instead of judgelab, on given label draws.

    <peer venv>/bin/python bench/peers/ppi_peers_driver.py IN.npz OUT.npz [PEER ...]

Runs in its own interpreter (truescore 0.7.4 and glide-py 0.11.0 need Python >= 3.12; see
bench/bench_ppi_peers.py for the venv); ``ppi_py`` also imports under judgelab's own .venv, where
bench_ppi_peers calls :func:`intervals` directly when the peer venv is missing. PEER: any of
``PEERS`` (default: all).

IN.npz holds *observations*: one per (unit, system) the system's mean averages over (an item of
that system; for Chatbot Arena each comparison twice, once as each side's score):
``system`` (O,) codes, ``unit`` (O,) indices into the draws, ``human`` (O,) the all-human value,
``judge`` (J, O) one row per judge, ``masks`` (D, U) the units labelled in each draw, ``n_systems``
and ``alpha``. OUT.npz: ``low``/``high`` (P, J, D, S), NaN where a peer gave no interval, and
``failures``: a JSON text, per judge {peer: {reason: count}}; ``versions``: a JSON text {distribution: version}.

Each peer is called as its README / docstrings show, per system, with its defaults except the level:

* ``ppi_py``: ``ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05)`` (its default alpha is 0.1) with
  the system's labelled human and judge values and the judge on all the system's items; PPI++
  power tuning (``lam=None``, the default). A normal (z) interval.
* ``truescore ppi``: ``truescore.ppi_estimate(judge, gold, gold_index)``, the corrected estimate of
  ``build_report`` (the README's Python example), run system by system: the judge on the system's
  items, the human values of its labelled ones and their positions. PPI++ with a normal interval,
  widened to Wilson's when the labels are binary with fewer than 5 of a class; needs 2 labels.
* ``truescore slices``: ``truescore.estimate_slices(judge, gold, gold_index, system)``, the
  README's per-segment correction (``truescore slices --by segment``), one call over all systems:
  ``ppi_estimate`` for each system with >= 20 labels (``min_gold``, its default) and at least two
  unlabelled items; the others get the judge's number only, no corrected interval.
* ``glide``: ``glide.estimators.PPIMeanEstimator().estimate(y_true, y_proxy)`` with the human
  values on the labelled items (NaN elsewhere) and the judge on all the system's items; power
  tuning on (its default). A normal (z) interval; raises when the labelled values (or the judge's)
  are all equal or fewer than 2 items are labelled or unlabelled.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from collections import Counter, defaultdict

import numpy as np

PEERS = ("ppi_py", "truescore ppi", "truescore slices", "glide")


def _reason(error: Exception) -> str:
    """An exception as a short reason, numbers replaced so that equal causes count together."""
    text = str(error).split(";")[0].split(". ")[0]
    return re.sub(r"\d+(\.\d+)?", "N", f"{type(error).__name__}: {text}")[:90]


def _callers(peers):
    """One function per peer: (human of the labelled items, judge on the system's items, labelled mask, alpha)
    -> (low, high); ``truescore slices`` is handled per draw over all systems at once."""
    calls = {}
    if "ppi_py" in peers:
        from ppi_py import ppi_mean_ci

        def ppi_py(y, f, labelled, alpha):
            low, high = ppi_mean_ci(y, f[labelled], f, alpha=alpha)
            return float(np.ravel(low)[0]), float(np.ravel(high)[0])

        calls["ppi_py"] = ppi_py
    if "truescore ppi" in peers:
        from truescore import ppi_estimate

        def truescore_ppi(y, f, labelled, alpha):
            found = ppi_estimate(f, y, np.flatnonzero(labelled), alpha=alpha)
            return found.low, found.high

        calls["truescore ppi"] = truescore_ppi
    if "glide" in peers:
        from glide.estimators import PPIMeanEstimator

        estimator = PPIMeanEstimator()

        def glide(y, f, labelled, alpha):
            y_true = np.full(len(f), np.nan)
            y_true[labelled] = y
            interval = estimator.estimate(y_true, f, confidence_level=1 - alpha).confidence_interval
            return interval.lower_bound, interval.upper_bound

        calls["glide"] = glide
    return calls


def intervals(data, peers=PEERS):
    """``low``, ``high`` (P, J, D, S) and, per judge, the failures' reasons, for the peers asked (see the module's
    doc)."""
    system, unit, human = data["system"], data["unit"], data["human"]
    judge, masks = np.atleast_2d(data["judge"]), data["masks"]
    n_systems, alpha = int(data["n_systems"]), float(data["alpha"])
    peers = [p for p in PEERS if p in peers]
    low = np.full((len(peers), judge.shape[0], masks.shape[0], n_systems), np.nan)
    high = low.copy()
    failures = [defaultdict(Counter) for _ in judge]
    calls = _callers(peers)
    if "truescore slices" in peers:
        from truescore import estimate_slices
    members = [np.flatnonzero(system == s) for s in range(n_systems)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            for d, mask in enumerate(masks):
                labelled = mask[unit]
                for j, f_all in enumerate(judge):
                    for p, peer in enumerate(peers):
                        if peer == "truescore slices":
                            try:
                                report = estimate_slices(f_all, human[labelled], np.flatnonzero(labelled), system,
                                                         alpha=alpha)
                            except Exception as error:  # noqa: BLE001 - a peer's refusal is a result here
                                failures[j][peer][_reason(error)] += n_systems
                                continue
                            for found in report.estimates:
                                if found.corrected is None:
                                    failures[j][peer][re.sub(r"\d+", "N", found.skipped_reason)] += 1
                                else:
                                    s = int(float(found.name))
                                    low[p, j, d, s], high[p, j, d, s] = found.corrected.low, found.corrected.high
                            continue
                        for s, rows in enumerate(members):
                            mine = labelled[rows]
                            try:
                                lo, hi = calls[peer](human[rows][mine], f_all[rows], mine, alpha)
                            except Exception as error:  # noqa: BLE001
                                failures[j][peer][_reason(error)] += 1
                                continue
                            if np.isfinite(lo) and np.isfinite(hi):
                                low[p, j, d, s], high[p, j, d, s] = lo, hi
                            else:
                                failures[j][peer]["a non-finite interval"] += 1
    return low, high, [{peer: dict(counts) for peer, counts in per_judge.items()} for per_judge in failures]


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": sys.version.split()[0]}
    for name in ("ppi-python", "truescore", "glide-py", "numpy", "scipy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            pass
    return found


def main(in_path: str, out_path: str, *peers: str) -> None:
    with np.load(in_path) as loaded:
        data = {key: loaded[key] for key in loaded.files}
    low, high, failures = intervals(data, peers or PEERS)
    np.savez(out_path, low=low, high=high, peers=np.array([p for p in PEERS if p in (peers or PEERS)]),
             failures=np.array(json.dumps(failures)), versions=np.array(json.dumps(versions())))


if __name__ == "__main__":
    main(*sys.argv[1:])
