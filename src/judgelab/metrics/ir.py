"""IR leaderboards under human and judge relevance labels (specs/metrics.md, seed 003).

Each run is scored with an ir_measures measure (nDCG@10 by default) once with the human qrels
and once with qrels built from the judge's labels; ``leaderboard_tau`` is scipy's Kendall tau-b
between the two per-run scores. Its interval resamples queries.

A run's score is the mean of the per-query values over the queries it retrieved for, among the
queries the human qrels judge (trec_eval's default averaging). A query the judge labelled no
document of counts as 0 under the judge qrels rather than disappearing from the average, so
both leaderboards average over the same queries.
"""

from __future__ import annotations

import math
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np

from judgelab.data.io import text_lines
from judgelab.data.trec import check_ids
from judgelab.errors import DataError
from judgelab.metrics.bootstrap import GroupBootstrap, percentile_ci
from judgelab.metrics.correlation import correlation, rowwise
from judgelab.metrics.results import Estimate, json_number

RUN_SUFFIXES = (".gz", ".run", ".txt", ".trec")  # stripped from file names to name runs


def qrels_from_labels(qids: Iterable[object], docids: Iterable[object], labels: Iterable
                      ) -> list[ir_measures.Qrel]:
    """Qrels from parallel id and graded-label arrays; labels must be whole numbers."""
    qrels = []
    for qid, docid, label in zip(qids, docids, labels, strict=True):
        value = float(label)
        if not value.is_integer():
            raise DataError(f"relevance label {label!r} for ({qid}, {docid}) is not a whole number; "
                            "qrels need graded integer labels")
        qrels.append(ir_measures.Qrel(str(qid), str(docid), int(value)))
    return qrels


def _run_name(path: Path) -> str:
    name = path.name
    for suffix in RUN_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def read_runs(directory: str | os.PathLike) -> dict[str, list[ir_measures.ScoredDoc]]:
    """Every TREC run file in ``directory`` (``qid Q0 docid rank score tag``, optionally gzipped),
    keyed by file name without its ``.run``/``.gz`` suffixes."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError("is not a directory of TREC run files", path=directory)
    runs = {}
    for path in sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith(".")):
        try:
            runs[_run_name(path)] = _read_run(path)
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
            raise DataError(f"not a TREC run file ({exc})", path=path) from exc
    if len(runs) < 2:
        raise DataError(f"found {len(runs)} run file(s); a leaderboard needs at least 2", path=directory)
    return runs


def _read_run(path: Path) -> list[ir_measures.ScoredDoc]:
    """A run file's lines, each checked (``ir_measures.read_trec_run`` names no line and lets a rank
    ``x``, a NaN score, a document listed twice for a query or a NUL in an id through)."""
    docs: list[ir_measures.ScoredDoc] = []
    seen: dict[tuple[str, str], int] = {}  # (qid, docid): the line it is first on
    for number, line in text_lines(path):  # line by line under the input bound: a gzip bomb stops at it
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise DataError(f"expected 6 columns 'qid Q0 docid rank score tag' (a TREC run line), got {len(parts)}", path, number)
        qid, _, docid, rank, score, _ = parts
        check_ids(qid, docid, path, number)
        if not re.fullmatch(r"\d+", rank):
            raise DataError(f"rank {rank!r} is not a whole number", path, number, "rank")
        try:
            value = float(score)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise DataError(f"score {score!r} is not a finite number", path, number, "score")
        if (qid, docid) in seen:
            raise DataError(f"document {docid!r} is listed twice for query {qid!r} (first on line "
                            f"{seen[qid, docid]})", path, number, "docid")
        seen[qid, docid] = number
        docs.append(ir_measures.ScoredDoc(qid, docid, value))
    return docs


def _per_query(measure, qrels, run, queries: list[str], unjudged_value: float) -> np.ndarray:
    """Per-query values in ``queries`` order: NaN where the run retrieved nothing for the query,
    ``unjudged_value`` where the qrels judge nothing for it."""
    by_query = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    run_queries = {doc.query_id for doc in run}
    return np.array([by_query.get(q, unjudged_value) if q in run_queries else np.nan for q in queries])


@dataclass(frozen=True)
class Leaderboard:
    measure: str
    run_names: tuple[str, ...]
    human: np.ndarray  # per-run score under the human qrels
    judge: np.ndarray  # per-run score under the judge qrels
    tau: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "leaderboard_tau": self.tau.to_dict(),
            "runs": {name: {"human": json_number(h), "judge": json_number(j)}
                     for name, h, j in zip(self.run_names, self.human, self.judge, strict=True)},
        }


def leaderboard(runs: Mapping[str, list], human_qrels: list, judge_qrels: list, *, measure: str = "nDCG@10",
                n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> Leaderboard:
    """Score every run under both qrels and correlate the two leaderboards (Kendall tau-b)."""
    parsed = ir_measures.parse_measure(measure)
    queries = sorted({q.query_id for q in human_qrels})
    names = tuple(sorted(runs))
    human_rows = np.stack([_per_query(parsed, human_qrels, runs[n], queries, np.nan) for n in names], axis=1)
    judge_rows = np.stack([_per_query(parsed, judge_qrels, runs[n], queries, 0.0) for n in names], axis=1)
    present = np.isfinite(human_rows)
    judge_rows[~present] = np.nan
    if not present.any(axis=0).all():
        missing = [n for n, ok in zip(names, present.any(axis=0), strict=True) if not ok]
        raise DataError(f"run(s) {', '.join(missing)} retrieve nothing for the judged queries")
    human_scores, judge_scores = np.nanmean(human_rows, axis=0), np.nanmean(judge_rows, axis=0)

    def resampled(counts):
        with np.errstate(invalid="ignore", divide="ignore"):
            drawn = counts @ present.astype(float)
            h = (counts @ np.nan_to_num(human_rows)) / drawn
            j = (counts @ np.nan_to_num(judge_rows)) / drawn
        return rowwise("kendall", h, j)

    resamples = GroupBootstrap(len(queries), n_resamples, seed).replicate(resampled)
    tau = Estimate(statistic="leaderboard_tau", level="system",
                   value=correlation("kendall", human_scores, judge_scores), n=len(names), n_groups=len(queries),
                   ci=percentile_ci(resamples, confidence), resamples=resamples)
    return Leaderboard(str(parsed), names, human_scores, judge_scores, tau)
