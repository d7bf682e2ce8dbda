"""The PPI libraries side by side: each system's coverage of judgelab, ppi-python, truescore and glide-py.

    # once: the peers' venv (truescore and glide-py need Python >= 3.12; judgelab's .venv is 3.11)
    /root/.pyenv/versions/3.12.1/bin/python -m venv ~/.cache/judgelab/ppi-peers-venv
    ~/.cache/judgelab/ppi-peers-venv/bin/pip install truescore==0.7.4 glide-py==0.11.0 ppi-python==0.2.3

    nice -n 10 .venv/bin/python -m bench.bench_ppi_peers --draws 300 --write        # everything, resumable
    .venv/bin/python -m bench.bench_ppi_peers --draws 20 --sets topical_chat:overall --no-arena   # a quick look
    # HANNA with 10 of its 20 raters (each LLM with prompts 1 and 2): about 2 of the 4 hours on 2 busy cores
    nice -n 10 .venv/bin/python -m bench.bench_ppi_peers --draws 300 --hanna-raters eval_prompt_1 eval_prompt_2 --write

The same label draws as bench/bench_per_system.py (its helpers are imported): for items, a stratified
random sample of each set's items, ``draw(problem, budget, seed=k)`` for draw k, at 5/10/20/40% of
the items (HANNA with each of its 20 LLM raters, Topical-Chat with UniEval, six aspects each); for
Chatbot Arena, ``n`` comparisons drawn uniformly (one generator seeded 0 per group, as
bench_per_system's arena group) at 200/500/1,000/2,000 labels, with each of three judges. Each
system's estimand is its all-human value over the data's units (``target="items"``: the mean rating
of its items; for Arena its win probability, ties half, over the comparisons it takes part in).

Every draw gives each system a 95% interval from:

* judgelab: ``human_only`` and ``corrected`` with their defaults and ``target="items"``, and again with
  the CLI's default ``target="population"`` (checked against the items' value all the same); for Arena
  ``preferences.estimate(data, "human" | "corrected")`` likewise;
* the peers, in bench/peers/ppi_peers_driver.py (its docstring says how each is called): ppi-python's
  ``ppi_mean_ci`` (PPI++ power tuning, ``alpha=0.05``), truescore's ``ppi_estimate`` per system (what
  ``build_report`` calls "corrected") and its per-segment ``estimate_slices`` (which declines a system with
  fewer than 20 labels), glide-py's ``PPIMeanEstimator``. Each gets, per system, the human values of its
  labelled items and the judge on all its items. None of the three has an estimator for pairwise
  comparisons or win rates; a system's win probability is the mean of its side scores (its preference in
  each comparison it takes part in: 1 win, 0.5 tie, 0 loss), so on Arena each peer estimates that mean,
  per system, from the side scores of the system's labelled comparisons and the judge's on all of them.
  The peers run in the peer venv's interpreter (``--peer-python``), alongside judgelab's estimators; without
  that venv only ppi-python runs (it imports under .venv too), and the run says so.

Per (set, judge, budget) cell and estimator: each system's coverage over the draws, the worst single
system, the mean over systems, the share of (system, draw) pairs without an interval (a peer raising,
or declining, counts there), the mean width, and the width against judgelab's ``corrected`` on the
(system, draw) pairs where both gave one; and the width *at the same per-system coverage*: each
estimator's intervals for a system scaled (both arms from its point estimate, by one factor) until they
cover that system in exactly 95% of the draws, an oracle's comparison of intervals that do not cover
alike (:func:`stretch`), split by the kind of interval judgelab's rule gave the system. With 300
draws a system whose interval truly covers 0.95 shows under 0.93 with probability about 0.04, so the
rows also count the (judge, system) pairs *significantly* under 0.95 (one-sided binomial p < 0.01),
as bench_per_system does.

Every finished (set, judge, budget) cell is appended to ``--results`` (~/.cache/judgelab/
bench_ppi_peers.jsonl); a rerun skips the cells there (``--fresh`` starts over). ``--write`` puts the
section into docs/benchmarks.md (``bench.common.write_doc_section``: only this section is replaced).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.bench_evaluate import item_problem, judges_of, truth_of
from bench.bench_per_system import (
    ARENA_SIZES,
    BUDGETS,
    GOAL,
    ITEM_SETS,
    arena_groups,
    scale_of,
    significantly_under,
    upper_bound,
)
from bench.common import command_line, describe_machine, log, write_doc_section
from bench.peers import ppi_peers_driver as driver
from judgelab.evaluate import draw
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.problem import Problem

SECTION = "## PPI libraries side by side: each system's coverage (`bench/bench_ppi_peers.py`)"
DOC_NAME = "bench_ppi_peers"
RESULTS = Path.home() / ".cache" / "judgelab" / "bench_ppi_peers.jsonl"
PEER_PYTHON = Path.home() / ".cache" / "judgelab" / "ppi-peers-venv" / "bin" / "python"
DRIVER = Path(__file__).resolve().parent / "peers" / "ppi_peers_driver.py"
ALPHA = 0.05
JUDGELAB = ("judgelab human", "judgelab corrected", "judgelab human population", "judgelab corrected population")
PEER_NAMES = {"ppi_py": "ppi-python ppi_mean_ci", "truescore ppi": "truescore ppi_estimate",
              "truescore slices": "truescore estimate_slices", "glide": "glide PPIMeanEstimator"}
ESTIMATORS = JUDGELAB + tuple(PEER_NAMES.values())
REFERENCE = "judgelab corrected"
MIN_STRETCH_DRAWS = 100  # a system's 95% stretch from fewer intervals rests on under 5 of them
LABELS_ONLY = ("judgelab human", "judgelab human population")  # no judge: one cell per (set, budget)
SHORT = {"judgelab human": "jl human", "judgelab corrected": "jl corrected", "judgelab human population": "jl human pop",
         "judgelab corrected population": "jl corrected pop", "ppi-python ppi_mean_ci": "ppi-python",
         "truescore ppi_estimate": "truescore ppi", "truescore estimate_slices": "truescore slices",
         "glide PPIMeanEstimator": "glide"}
BETTING_FALLBACK_SINCE = "2026-11-27T19:44"  # e511de3: corrected's betting systems get the labels' own interval
NO_VERDICT = 0.5  # an Arena comparison without the judge's verdict: its tie, as judgelab's corrected estimate


# -- one group of cells: a set and a budget over its judges, the same draws for all --------------------
class Tally:
    """Per estimator and system: hits, intervals given, summed widths, zero-width intervals, and the widths
    summed over the draws where judgelab's corrected gave an interval too (and its widths there)."""

    FIELDS = ("hits", "given", "width", "zero", "paired_width", "paired_ref")

    def __init__(self, size: int):
        self.sums = defaultdict(lambda: {f: np.zeros(size) for f in self.FIELDS})
        self.stretches = defaultdict(lambda: [[] for _ in range(size)])  # per system, draw by draw: see stretch()
        self.t_draws = defaultdict(lambda: np.zeros(size))  # per system, the draws judgelab's rule gave it t
        self.methods = defaultdict(lambda: defaultdict(int))
        self.reference = []  # judgelab corrected's intervals, draw by draw (the peers' widths are paired with them)

    def add(self, name: str, ci: np.ndarray, truth: np.ndarray, reference: np.ndarray,
            center: np.ndarray | None = None) -> None:
        """``center``: the point estimates (default: the intervals' midpoints, as the peers' normal ones are)."""
        ok = np.all(np.isfinite(ci), axis=1)
        center = ci.mean(axis=1) if center is None else center
        width = np.where(ok, ci[:, 1] - ci[:, 0], 0.0)
        ref_ok = np.all(np.isfinite(reference), axis=1)
        both = ok & ref_ok
        s = self.sums[name]
        s["hits"] += ok & (ci[:, 0] <= truth + 1e-9) & (truth - 1e-9 <= ci[:, 1])
        s["given"] += ok
        s["width"] += width
        s["zero"] += ok & (width <= 1e-12)
        s["paired_width"] += np.where(both, width, 0.0)
        s["paired_ref"] += np.where(both, reference[:, 1] - reference[:, 0], 0.0)
        for system in np.flatnonzero(ok):
            self.stretches[name][system].append(stretch(ci[system], center[system], truth[system]))

    def add_estimates(self, name: str, est, truth: np.ndarray, reference: np.ndarray) -> None:
        self.add(name, est.ci, truth, reference, center=est.value)
        for system, method in enumerate(est.info.get("per_system", ())):
            self.methods[name][method] += 1
            self.t_draws[name][system] += method == "t"

    def as_dict(self) -> dict:
        return {name: {f: v.tolist() for f, v in s.items()} | {"stretch95": stretch_at(self.stretches[name])}
                | ({"t_draws": self.t_draws[name].tolist()} if name in self.t_draws else {})
                for name, s in self.sums.items()}


def stretch(ci: np.ndarray, center: float, truth: float) -> float:
    """The factor by which ``ci``'s two arms (from the point estimate ``center`` to each end) must be scaled
    to reach ``truth`` (<= 1: it covers; inf: an arm of zero length on the truth's side). Arms, not the
    half-width, because a betting interval is not symmetric about its estimate."""
    center = min(max(center, ci[0]), ci[1])
    arm, off = (ci[1] - center, truth - center) if truth >= center else (center - ci[0], center - truth)
    return off / arm if arm > 1e-12 else (0.0 if off <= 1e-9 else np.inf)


def stretch_at(per_system: list[list[float]], coverage: float = 1 - ALPHA) -> list[float]:
    """Per system, the smallest factor that makes ``coverage`` of its intervals cover (NaN: under
    MIN_STRETCH_DRAWS intervals). An oracle's device (it uses the truth), to compare widths at equal
    per-system coverage: each system's intervals so scaled cover it exactly ``coverage`` of the time."""
    return [float(np.quantile(r, coverage, method="higher")) if len(r) >= MIN_STRETCH_DRAWS else np.nan
            for r in per_system]


def item_data(problems: dict, budget: float, draws: int) -> dict:
    """Observations (one per item), the draws' labelled masks, the truth and what judgelab needs."""
    first = next(iter(problems.values()))
    units, systems = np.nonzero(first.present)
    judge = np.array([p.judge[units, systems] for p in problems.values()])
    if np.isnan(judge).any():
        raise SystemExit(f"{int(np.isnan(judge).sum())} items without a judge value: the peers need one on every item")
    designs = [draw(first, budget, seed=k).design for k in range(draws)]
    masks = np.array([d.labelled for d in designs])
    return {"system": systems, "unit": units, "human": first.human[units, systems], "judge": judge, "masks": masks,
            "n_systems": len(first.systems), "alpha": ALPHA, "truth": truth_of(first), "designs": designs,
            "systems": first.systems}


def arena_data(problems: dict, n: int, draws: int) -> dict:
    """Observations (each comparison twice: a's side score and b's), the masks of bench_per_system's arena
    draws (one generator seeded 0, ``n`` comparisons a draw), the truth and the comparisons."""
    from judgelab.evaluate.preferences import estimate

    first = next(iter(problems.values()))
    rng = np.random.default_rng(0)
    masks = np.zeros((draws, first.n), dtype=bool)
    for k in range(draws):
        masks[k, rng.choice(first.n, n, replace=False)] = True
    rows = np.arange(first.n)
    judge = np.array([np.concatenate([np.nan_to_num(p.judge, nan=NO_VERDICT),
                                      1 - np.nan_to_num(p.judge, nan=NO_VERDICT)]) for p in problems.values()])
    return {"system": np.concatenate([first.a, first.b]), "unit": np.concatenate([rows, rows]),
            "human": np.concatenate([first.human, 1 - first.human]), "judge": judge, "masks": masks,
            "n_systems": len(first.systems), "alpha": ALPHA, "truth": estimate(first, "human", target="items").value,
            "systems": first.systems}


def judgelab_items(problems: dict, data: dict, tallies: dict) -> None:
    truth, first = data["truth"], next(iter(problems.values()))
    for k, design in enumerate(data["designs"]):
        hidden = np.where(design.labelled[:, None], first.human, np.nan)
        human = {"judgelab human": human_only(first.with_human(hidden), design, target="items", seed=k),
                 "judgelab human population": human_only(first.with_human(hidden), design, seed=k)}
        for name, problem in problems.items():
            known = problem.with_human(hidden)
            found = {"judgelab corrected": corrected(known, design, target="items", seed=k),
                     "judgelab corrected population": corrected(known, design, seed=k)} | human
            reference = found[REFERENCE].ci
            for estimator, est in found.items():
                tallies[name].add_estimates(estimator, est, truth, reference)
            tallies[name].reference.append(reference)


def judgelab_arena(problems: dict, data: dict, tallies: dict) -> None:
    from judgelab.evaluate.preferences import estimate

    truth, first = data["truth"], next(iter(problems.values()))
    for k, mask in enumerate(data["masks"]):
        labelled = replace(first, human=np.where(mask, first.human, np.nan))
        human = {"judgelab human": estimate(labelled, "human", target="items", seed=k),
                 "judgelab human population": estimate(labelled, "human", seed=k)}
        for name, full in problems.items():
            known = replace(full, human=np.where(mask, full.human, np.nan))
            found = {"judgelab corrected": estimate(known, "corrected", target="items", seed=k),
                     "judgelab corrected population": estimate(known, "corrected", seed=k)} | human
            reference = found[REFERENCE].ci
            for estimator, est in found.items():
                tallies[name].add_estimates(estimator, est, truth, reference)
            tallies[name].reference.append(reference)


def start_peers(data: dict, peer_python: Path, workdir: Path):
    """The peer driver started on the group's draws in the peer venv (it runs while judgelab's estimators do),
    or None when that interpreter is missing."""
    if not peer_python.exists():
        return None
    np.savez(workdir / "in.npz", **{k: data[k] for k in ("system", "unit", "human", "judge", "masks", "n_systems",
                                                           "alpha")})
    return subprocess.Popen([str(peer_python), str(DRIVER), str(workdir / "in.npz"), str(workdir / "out.npz")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_peers(process, data: dict, workdir: Path) -> tuple[list[str], np.ndarray, np.ndarray, dict, dict]:
    if process is None:  # ppi-python alone, in this interpreter
        low, high, failures = driver.intervals(data, ("ppi_py",))
        return ["ppi_py"], low, high, failures, driver.versions()
    out, err = process.communicate()
    if process.returncode:
        raise SystemExit(f"the peer driver failed ({process.returncode}):\n{err[-3000:]}")
    with np.load(workdir / "out.npz") as found:
        return ([str(p) for p in found["peers"]], found["low"], found["high"], json.loads(str(found["failures"])),
                json.loads(str(found["versions"])))


def group(kind: str, spec: str, budget: float, problems: dict, draws: int, peer_python: Path) -> list[dict]:
    """Every judge's cell of one (set, budget): judgelab and the peers on the same draws."""
    started = time.perf_counter()
    data = (arena_data if kind == "arena" else item_data)(problems, budget, draws)
    truth, size = data["truth"], data["n_systems"]
    tallies = {name: Tally(size) for name in problems}
    with tempfile.TemporaryDirectory(prefix="ppi-peers-") as tmp:
        process = start_peers(data, peer_python, Path(tmp))
        (judgelab_arena if kind == "arena" else judgelab_items)(problems, data, tallies)
        peers, low, high, failures, versions = finish_peers(process, data, Path(tmp))
    for j, name in enumerate(problems):
        for p, peer in enumerate(peers):
            for k in range(draws):
                tallies[name].add(PEER_NAMES[peer], np.stack([low[p, j, k], high[p, j, k]], axis=1), truth,
                                  tallies[name].reference[k])
    labelled = np.array([np.bincount(data["system"][mask[data["unit"]]], minlength=size) for mask in data["masks"]])
    seconds = time.perf_counter() - started
    return [{"set": spec, "judge": name, "budget": budget, "draws": draws, "systems": list(data["systems"]),
             "labels": float(data["masks"].sum(axis=1).mean()), "labels_per_system": labelled.mean(axis=0).tolist(),
             "truth": truth.tolist(), "estimators": tallies[name].as_dict(),
             "methods": {k: dict(v) for k, v in tallies[name].methods.items()},
             "failures": failures[j],
             "peers": peers, "versions": versions, "group_seconds": seconds,
             "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())} for j, name in enumerate(problems)]


# -- the groups, resumable --------------------------------------------------------------------------------
def rater_names(dataset: str, judges: int | None, raters: list[str] | None) -> list[str]:
    """A set's judges: all of them, the first ``judges`` by name, or those whose name contains one of ``raters``."""
    names = judges_of(dataset)[: judges or None]
    return [n for n in names if not raters or any(r in n for r in raters)]


def groups(sets: list[str], judges: int | None, raters: list[str] | None, budgets, arena: bool,
           arena_judges: list[str], sizes):
    """(kind, set, budget, {cell label: judge}, load) in the order they run: Arena, then the items' sets;
    ``load(judges)`` -> {cell label: problem}, called only for cells not in the results yet."""
    from bench.bench_pairwise import JUDGES

    if arena:
        shorts = {f"chatbot_arena@{JUDGES[short]}": short for short in arena_judges}
        comparisons = {}

        def load_arena(wanted):
            missing = [shorts[label] for label in wanted if label not in comparisons]
            if missing:
                for _, _, problems in arena_groups(missing, (sizes[0],)):
                    comparisons.update(problems)
            return {label: comparisons[label] for label in wanted}

        for n in sizes:
            yield "arena", "chatbot_arena", n, shorts, load_arena
    for spec in sets:
        dataset, _, aspect = spec.partition(":")
        names = rater_names(dataset, judges, raters if dataset == "hanna" else None)
        labels = {f"{dataset}@{name}:{aspect}": name for name in names}  # bench_per_system's cell labels
        cache = {}

        def load(wanted, dataset=dataset, aspect=aspect, labels=labels, cache=cache):
            scale = scale_of(dataset, aspect)
            for label in wanted:
                if label not in cache:
                    cache[label] = Problem(**{**item_problem(dataset, aspect, labels[label]).__dict__, "scale": scale})
            return {label: cache[label] for label in wanted}

        for budget in (b for b in BUDGETS if b in set(budgets)):
            yield "items", spec, budget, labels, load


def run(todo, draws: int, results: Path, fresh: bool, peer_python: Path) -> list[dict]:
    done = {}
    if results.exists() and not fresh:
        for line in results.open(encoding="utf-8"):
            row = json.loads(line)
            done[(row["set"], row["judge"], row["budget"], row["draws"])] = row
    results.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with results.open("w" if fresh else "a", encoding="utf-8") as sink:
        for kind, spec, budget, labels, load in todo:
            pending = [label for label in labels if (spec, label, budget, draws) not in done]
            if pending:
                rows = group(kind, spec, budget, load(pending), draws, peer_python)
                for row in rows:
                    sink.write(json.dumps(row) + "\n")
                    done[(spec, row["judge"], budget, draws)] = row
                sink.flush()
                log(f"{spec} {budget:g}: {len(pending)} judge(s), {rows[0]['group_seconds']:.0f}s")
            out += [done[(spec, label, budget, draws)] for label in labels]
    return out


# -- the summary --------------------------------------------------------------------------------------------
def _set_name(row: dict) -> str:
    return row["set"]


def _judge(label: str) -> str:
    """A cell's judge as a reader knows it: ``hanna@Beluga-13B/eval_prompt_1:coherence`` -> ``Beluga-13B/eval_prompt_1``."""
    name = label.partition("@")[2] or label
    return name.rpartition(":")[0] if ":" in name else name


def summary(rows: list[dict]) -> list[dict]:
    """One line per (set, budget) and estimator, over the set's judges (every (judge, system) pair)."""
    grouped = defaultdict(list)
    for row in rows:
        grouped[(_set_name(row), row["budget"])].append(row)
    out = []
    for (name, budget), members in grouped.items():
        for estimator in ESTIMATORS:
            if estimator not in members[0]["estimators"]:
                continue
            s = {f: np.concatenate([np.array(r["estimators"][estimator][f]) for r in members]) for f in Tally.FIELDS}
            pairs = [(r["judge"], system) for r in members for system in r["systems"]]
            with np.errstate(invalid="ignore", divide="ignore"):
                coverage = np.where(s["given"] > 0, s["hits"] / np.maximum(s["given"], 1), np.nan)
            worst = int(np.nanargmin(coverage)) if np.isfinite(coverage).any() else None
            total = members[0]["draws"] * len(coverage)
            out.append({
                "set": name, "budget": budget, "estimator": estimator, "judges": len(members),
                "labels_per_system": float(np.mean([np.mean(r["labels_per_system"]) for r in members])),
                "worst": float(coverage[worst]) if worst is not None else np.nan,
                "worst_pair": pairs[worst] if worst is not None else None,
                "worst_bound": upper_bound(s["hits"][worst], s["given"][worst]) if worst is not None else np.nan,
                "mean": float(s["hits"].sum() / s["given"].sum()) if s["given"].sum() else np.nan,
                "under_goal": int(np.nansum(coverage < GOAL)), "pairs": int(np.isfinite(coverage).sum()),
                "significantly_under": int(sum(significantly_under(h, g) for h, g in zip(s["hits"], s["given"],
                                                                                          strict=True))),
                "declined": float(1 - s["given"].sum() / total),
                "zero": float(s["zero"].sum() / max(s["given"].sum(), 1)),
                "width": float(s["width"].sum() / s["given"].sum()) if s["given"].sum() else np.nan,
                "width_ratio": float(s["paired_width"].sum() / s["paired_ref"].sum()) if s["paired_ref"].sum() else np.nan,
            } | equal_coverage_widths(members, estimator))
    return out


def equal_coverage_widths(members: list[dict], estimator: str) -> dict:
    """The estimator's mean width with each system's intervals scaled to cover it exactly 95% of the draws,
    against judgelab corrected's so scaled, over the (judge, system) pairs where both can be (all of them;
    those judgelab's rule gave a t interval in most draws; those it gave betting), and how many pairs no scaling brings to 95% (zero-width intervals beside the truth in over
    5% of the draws)."""
    def scaled(row: dict, name: str) -> np.ndarray:
        found = row["estimators"].get(name, {})
        if "stretch95" not in found:
            return np.full(len(row["systems"]), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            width = np.array(found["width"]) / np.array(found["given"])
        return width * np.array(found["stretch95"], dtype=float)

    mine = np.concatenate([scaled(r, estimator) for r in members])
    ref = np.concatenate([scaled(r, REFERENCE) for r in members])
    t_mostly = np.concatenate([np.array(r["estimators"][REFERENCE].get("t_draws", np.full(len(r["systems"]), np.nan)))
                               > r["draws"] / 2 for r in members])
    both = np.isfinite(mine) & np.isfinite(ref)

    def ratio(where: np.ndarray) -> float:
        return float(mine[where].sum() / ref[where].sum()) if where.any() else np.nan

    return {"equal_coverage_ratio": ratio(both), "equal_coverage_t": ratio(both & t_mostly),
            "equal_coverage_betting": ratio(both & ~t_mostly),
            "cannot_reach": int(np.isinf(mine).sum())}


def cells(rows: list[dict]) -> list[dict]:
    """Per (set, judge, budget) cell and estimator: the worst system, the mean, the share declined, the width."""
    out = []
    for row in rows:
        for estimator in ESTIMATORS:
            s = row["estimators"].get(estimator)
            if s is None:
                continue
            hits, given = np.array(s["hits"]), np.array(s["given"])
            with np.errstate(invalid="ignore", divide="ignore"):
                coverage = np.where(given > 0, hits / np.maximum(given, 1), np.nan)
            worst = int(np.nanargmin(coverage)) if np.isfinite(coverage).any() else None
            paired_ref = float(np.sum(s["paired_ref"]))
            out.append({"set": row["set"], "judge": row["judge"], "budget": row["budget"], "estimator": estimator,
                        "worst": float(coverage[worst]) if worst is not None else np.nan,
                        "worst_system": row["systems"][worst] if worst is not None else None,
                        "mean": float(hits.sum() / given.sum()) if given.sum() else np.nan,
                        "declined": float(1 - given.sum() / (row["draws"] * len(given))),
                        "width": float(np.sum(s["width"]) / given.sum()) if given.sum() else np.nan,
                        "width_ratio": float(np.sum(s["paired_width"]) / paired_ref) if paired_ref else np.nan})
    return out


def _budget(budget: float) -> str:
    return f"{budget:.0%}" if budget < 1 else f"{budget:g} labels"


def _number(value: float, digits: int = 3) -> str:
    return "-" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def summary_line(r: dict) -> str:
    pair = "" if r["worst_pair"] is None else f" ({r['worst_pair'][1]}" + (
        f", {_judge(r['worst_pair'][0])})" if r["judges"] > 1 else ")")
    cells_ = [r["set"], _budget(r["budget"]), f"{r['labels_per_system']:.1f}", r["estimator"], str(r["judges"]),
              _number(r["worst"]) + pair, _number(r["worst_bound"]), _number(r["mean"]),
              f"{r['under_goal']}/{r['pairs']}", str(r["significantly_under"]), _number(r["declined"], 2),
              _number(r["zero"], 2), _number(r["width"]), _number(r["width_ratio"], 2)]
    return "| " + " | ".join(cells_) + " |"


SUMMARY_HEAD = ["set", "budget", "labels per system", "estimator", "judges", "worst system",
                "its upper 98% bound", "mean", "(judge, system) pairs under 0.93", "significantly under 0.95",
                "share without interval", "share zero width", "mean width", "width / judgelab corrected"]


def side_by_side(lines: list[dict], field: str, digits: int = 3, skip_empty: bool = False) -> list[str]:
    """One row per (set, budget), one column per estimator; with the share without an interval if any
    (``skip_empty``: leave out the rows with no value at all)."""
    order = [e for e in ESTIMATORS if any(r["estimator"] == e for r in lines)]
    by = defaultdict(dict)
    for r in lines:
        by[(r["set"], r["budget"], round(r["labels_per_system"], 1))][r["estimator"]] = r
    head = ["set", "budget", "labels per system"] + [SHORT[e] for e in order]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (name, budget, per_system), found in by.items():
        values = []
        for e in order:
            r = found.get(e)
            if r is None:
                values.append("")
                continue
            text = _number(r.get(field, np.nan), digits)
            if field == "equal_coverage_ratio" and r.get("cannot_reach"):
                text += f" ({r['cannot_reach']} cannot)"
            if field == "worst" and r["declined"] > 0.005:
                text += f" ({r['declined']:.0%} none)"
            values.append(text)
        if skip_empty and all(v in ("", "-") for v in values):
            continue
        out.append("| " + " | ".join([name, _budget(budget), f"{per_system:.1f}"] + values) + " |")
    return out


def equal_coverage_summary(lines: list[dict]) -> str:
    """The equal-coverage tables in a sentence: the peers' range against judgelab corrected, by kind of system."""
    peers = [r for r in lines if r["estimator"] in PEER_NAMES.values()]

    def span(field: str, keep=lambda r: True) -> str:
        found = [r[field] for r in peers if keep(r) and np.isfinite(r.get(field, np.nan))]
        return f"{min(found):.2f}-{max(found):.2f}" if found else "-"

    few = lambda r: r["labels_per_system"] < 10  # noqa: E731
    narrower = sorted({f"{r['set']} at {_budget(r['budget'])}" for r in peers
                       if not few(r) and r.get("equal_coverage_betting", np.nan) < 1})
    return (f"In short, the peers' width at the same per-system coverage against judgelab corrected's: under 10 "
            f"labels a system {span('equal_coverage_ratio', few)} (and some systems no scaling brings to 95%); from "
            f"10 on, {span('equal_coverage_t', lambda r: not few(r))} on the systems judgelab gave a t interval and "
            f"{span('equal_coverage_betting', lambda r: not few(r))} on those it gave a betting interval. The peers "
            f"were narrower on betting systems in {len(narrower)} rows ({', '.join(narrower) or 'none'}): a system "
            "whose ratings sit at an end of the scale, where a normal interval around them can be narrow and still "
            "cover because these data put the truth at that end too; an interval valid for every bounded "
            "distribution cannot be that narrow (docs/benchmarks.md, \"One interval per system\", says why).")


def cell_overview(rows: list[dict]) -> list[str]:
    """Per estimator over every (set, judge, budget) cell: how many cells' worst system is under 0.93."""
    per, seen = defaultdict(list), set()
    for c in cells(rows):
        if c["estimator"] in LABELS_ONLY:  # the same for every judge of a (set, budget): counted once
            if (c["estimator"], c["set"], c["budget"]) in seen:
                continue
            seen.add((c["estimator"], c["set"], c["budget"]))
        per[c["estimator"]].append(c)
    out = ["| estimator | cells | cells whose worst system < 0.93 | median worst system | lowest worst system "
           "(cell) | mean share without interval |", "|---|---|---|---|---|---|"]
    for estimator in ESTIMATORS:
        found = [c for c in per.get(estimator, []) if np.isfinite(c["worst"])]
        if not per.get(estimator):
            continue
        worst = min(found, key=lambda c: c["worst"]) if found else None
        where = (f"{_number(worst['worst'])} ({worst['set']}, {_judge(worst['judge'])}, {_budget(worst['budget'])}, "
                 f"{worst['worst_system']})") if worst else "-"
        out.append(f"| {estimator} | {len(per[estimator])} | {sum(c['worst'] < GOAL for c in found)} | "
                   f"{_number(float(np.median([c['worst'] for c in found])) if found else np.nan)} | {where} | "
                   f"{np.mean([c['declined'] for c in per[estimator]]):.2f} |")
    return out


def failure_lines(rows: list[dict]) -> list[str]:
    """Why the peers gave no interval, counted over every (system, draw) of the run."""
    counts = defaultdict(lambda: defaultdict(int))
    for row in rows:
        for peer, reasons in row["failures"].items():
            for reason, n in reasons.items():
                counts[PEER_NAMES.get(peer, peer)][reason] += n
    out = []
    for peer, reasons in counts.items():
        top = sorted(reasons.items(), key=lambda kv: -kv[1])[:4]
        out.append(f"- {peer}: " + "; ".join(f"{reason} ({n:,})" for reason, n in top))
    return out


def doc(rows: list[dict], args, minutes: float) -> str:
    lines = summary(rows)
    versions = next((r["versions"] for r in rows if r.get("versions")), {})
    peers = sorted({p for r in rows for p in r["peers"]})
    judges = sorted({(r["set"].partition(":")[0], _judge(r["judge"])) for r in rows})
    hanna = len({j for d, j in judges if d == "hanna"})
    arena = [j for d, j in judges if d == "chatbot_arena"]
    raters = sorted({j for d, j in judges if d == "hanna"})
    covered = ([f"HANNA with {hanna} of its 20 LLM raters"
                + ("" if hanna >= 20 else f" ({', '.join(raters)}; all 20: the same command without "
                   "`--hanna-raters`, which keeps the finished cells)")] if hanna else [])
    covered += ["Topical-Chat with UniEval"] if any(d == "topical_chat" for d, _ in judges) else []
    covered += [f"Chatbot Arena: each system's win probability (ties half) with {len(arena)} judge(s) "
                f"({', '.join(arena)})"] if arena else []
    out = [
        f"Machine: {describe_machine()}; peers in Python {versions.get('python', '?')} with "
        + ", ".join(f"{k} {v}" for k, v in versions.items() if k != "python")
        + f". Command: `{args.command}` ({minutes:.0f} min of compute summed over the cells, on 2 cores shared "
        f"with another benchmark; resumable, finished cells are read from the results file). {args.draws} label draws per (set, judge, budget) cell, the same draws "
        "for every estimator and the same as bench_per_system's; 95% intervals; truth: each system's all-human "
        f"value over the data's items. {'; '.join(covered)}. Peers run: {', '.join(PEER_NAMES[p] for p in peers)}; each called per system with its defaults except "
        "the level (ppi-python's default alpha is 0.1): the system's labelled human values and the judge on all "
        "its items (bench/peers/ppi_peers_driver.py). `jl`: judgelab (`human_only`, `corrected`, "
        "`target=\"items\"`; `pop`: the CLI's default `target=\"population\"`).", "",
        "None of the three peers has an estimator for pairwise comparisons or win rates (truescore's pairwise "
        "tools test position bias; ppi-python's and glide's are for means, quantiles and regressions); on Arena "
        "each estimates a system's win probability as the mean of its side scores, per system. "
        "truescore's `estimate_slices` (its per-segment correction) declines a system with fewer than 20 labels "
        "(its `min_gold`), so it gives intervals only where systems have that many.", "",
        "**Worst single system's coverage** (over every (judge, system) pair of the row; in brackets the share of "
        "(system, draw) pairs left without an interval):", ""]
    out += side_by_side(lines, "worst")
    if any(r["set"] != "chatbot_arena" and r.get("measured_at", "") < BETTING_FALLBACK_SINCE for r in rows):
        out += ["", "Item cells measured before commit e511de3 (2026-11-27 19:43 UTC), when `corrected` gave a system "
                "that falls to betting the prediction-powered rectifier: today that is `--intervals betting`; the "
                "default gives such a system the labels' own interval, whose coverage is `jl human`'s column. "
                "`--fresh` remeasures them."]
    out += ["", "**Mean coverage** over systems and draws:", ""]
    out += side_by_side(lines, "mean")
    out += ["", "**Mean width against judgelab's corrected** (`target=\"items\"`) on the (system, draw) pairs where "
            "both gave an interval:", ""]
    out += side_by_side(lines, "width_ratio", 2)
    out += ["", "**Width at the same per-system coverage.** The widths above compare intervals that do not cover "
            "alike. Here each estimator's intervals for one system are scaled by the "
            "factor that makes them cover that system in exactly 95% of the draws (both arms, from the point "
            "estimate to each end, by the same factor; an oracle's device: it needs the truth, so no estimator can "
            "do it; it removes each one's over- or under-coverage system by system and leaves how far its point "
            "estimates fall from the truth, measured in its own arms). Mean scaled "
            "width against judgelab corrected's scaled the same way, over the (judge, system) pairs where both "
            "have at least 100 intervals; in brackets the pairs no scaling brings to 95% (zero-width intervals "
            "beside the truth in more than 5% of draws):", ""]
    out += side_by_side(lines, "equal_coverage_ratio", 2)
    out += ["", "The same, over the (judge, system) pairs judgelab's rule gave a t interval in most draws (the "
            "systems away from the ends of the scale):", ""]
    out += side_by_side(lines, "equal_coverage_t", 2, skip_empty=True)
    out += ["", "And over those it gave a betting interval in most draws (a system near an end of the scale, or "
            "under 10 labels):", ""]
    out += side_by_side(lines, "equal_coverage_betting", 2, skip_empty=True)
    out += ["", equal_coverage_summary(lines)]
    out += ["", "Per (set, judge, budget) cell (the issue's unit): how often each estimator's worst system falls "
            "under 0.93 (with 300 draws about 4% of systems that truly cover 0.95 do so by chance; a cell holds "
            "6 to 20 systems). judgelab's human-only intervals do not use the judge: one cell per (set, budget).", ""]
    out += cell_overview(rows)
    fails = failure_lines(rows)
    if fails:
        out += ["", "Why the peers gave no interval ((system, draw) pairs, the most frequent reasons):", ""] + fails
    out += ["", "<details><summary>Every row: worst pair, its Wilson upper bound, pairs under 0.93 and "
            "significantly under 0.95, zero-width intervals, mean width</summary>", "",
            "| " + " | ".join(SUMMARY_HEAD) + " |", "|" + "---|" * len(SUMMARY_HEAD)]
    out += [summary_line(r) for r in lines]
    out += ["", "</details>"]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="*", default=sorted(ITEM_SETS, key=lambda spec: spec.startswith("hanna")),
                        help="items' sets, dataset:aspect (default: Topical-Chat's six, then HANNA's six)")
    parser.add_argument("--judges", type=int, default=None, help="only the first N judges of each set (HANNA: 20)")
    parser.add_argument("--hanna-raters", nargs="*", default=None,
                        help="only HANNA's raters whose name contains one of these (e.g. eval_prompt_1)")
    parser.add_argument("--budgets", nargs="*", type=float, default=list(BUDGETS))
    parser.add_argument("--no-arena", dest="arena", action="store_false")
    parser.add_argument("--arena-judges", nargs="*", default=["gpt-4", "claude-3-opus", "gpt-3.5"])
    parser.add_argument("--arena-sizes", nargs="*", type=int, default=list(ARENA_SIZES))
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--peer-python", type=Path, default=Path(os.environ.get("JUDGELAB_PEER_PYTHON", PEER_PYTHON)))
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--cells", action="store_true", help="also print every (set, judge, budget) cell")
    parser.add_argument("--write", action="store_true", help="write the section into docs/benchmarks.md")
    args = parser.parse_args()
    args.command = command_line("bench.bench_ppi_peers")
    if not args.peer_python.exists():
        log(f"no peer interpreter at {args.peer_python}: ppi-python only (see this module's docstring for the venv)")
    for spec in args.sets:
        dataset, _, aspect = spec.partition(":")
        if dataset not in ("hanna", "topical_chat") or not aspect:
            raise SystemExit(f"--sets {spec}: give hanna:ASPECT or topical_chat:ASPECT")
        scale_of(dataset, aspect)  # an unknown aspect stops here, before any work
        judges_of(dataset)
    todo = groups(args.sets, args.judges, args.hanna_raters, args.budgets, args.arena, args.arena_judges,
                  args.arena_sizes)
    rows = run(todo, args.draws, args.results, args.fresh, args.peer_python)
    print("| " + " | ".join(SUMMARY_HEAD) + " |")
    for r in summary(rows):
        print(summary_line(r), flush=True)
    if args.cells:
        for c in cells(rows):
            print(f"{c['set']} {_judge(c['judge'])} {_budget(c['budget'])} {c['estimator']}: worst {_number(c['worst'])} "
                  f"({c['worst_system']}), mean {_number(c['mean'])}, none {c['declined']:.2f}, "
                  f"width {_number(c['width'])} (x{_number(c['width_ratio'], 2)})")
    print("\n".join(cell_overview(rows)))
    print("\n".join(failure_lines(rows)))
    if args.write and rows:
        spent = {(r["set"], r["budget"], r["group_seconds"]) for r in rows}
        write_doc_section(DOC_NAME, doc(rows, args, sum(seconds for *_, seconds in spent) / 60), heading=SECTION)
        log(f"wrote {SECTION}")
    print(f"python {sys.version.split()[0]}", file=sys.stderr)


if __name__ == "__main__":
    main()
