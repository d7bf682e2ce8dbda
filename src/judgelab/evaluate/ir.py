"""IR runs as an estimation problem: one unit per query, one system per run.

Each run is scored per query with an ir_measures measure (nDCG@10 by default) under the judge's
qrels and, for the queries a human labelled, under the human qrels. The estimand is a run's mean
per-query value under human qrels over all queries (trec_eval ``-c``: a query the run retrieved
nothing for counts 0), so labelling a query reveals the human value of every run on it.

Unjudged documents (in a run's ranking but in no qrels) are not silently non-relevant: by default
each run is *condensed* to its judged documents before scoring (Sakai's condensed lists; the
measure is computed on the judged documents in the run's order), and the share of unjudged
documents in each run's top k is reported. ``unjudged="nonrelevant"`` scores them 0 instead, as
trec_eval does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import ir_measures
import numpy as np

from judgelab.errors import ConfigError, term

UNJUDGED = ("condense", "nonrelevant")


@dataclass(frozen=True)
class RunScores:
    measure: str
    queries: tuple[str, ...]
    runs: tuple[str, ...]
    values: np.ndarray  # (Q, R) per-query values; NaN for a query the qrels do not cover
    unjudged_share: np.ndarray  # (R,) share of unjudged documents in the top k over the queries


def measure_of(measure: str):
    try:
        return ir_measures.parse_measure(measure)
    except (ValueError, NameError, TypeError) as exc:
        raise ConfigError(f"{term('measure')} {measure!r} is not an ir_measures measure (e.g. nDCG@10, P@5, AP): "
                          f"{exc}") from None


def score_runs(runs: Mapping[str, list], qrels: Sequence, queries: Sequence[str], *, measure: str = "nDCG@10",
               unjudged: str = "condense") -> RunScores:
    """Per-query values of every run under ``qrels``, over ``queries`` (NaN where the qrels judge
    nothing for a query); the share of unjudged documents in each run's top k (k: the measure's
    cutoff, else 10)."""
    if unjudged not in UNJUDGED:
        raise ConfigError(f"{term('unjudged')} {unjudged!r}: choose {', '.join(UNJUDGED)}")
    parsed = measure_of(measure)
    queries = tuple(map(str, queries))
    judged: dict[str, set[str]] = {}
    for qrel in qrels:
        judged.setdefault(str(qrel.query_id), set()).add(str(qrel.doc_id))
    names = tuple(sorted(runs))
    values = np.full((len(queries), len(names)), np.nan)
    share = np.zeros(len(names))
    depth = int(parsed.params.get("cutoff") or 10)
    position = {q: k for k, q in enumerate(queries)}
    for r, name in enumerate(names):
        run = [doc for doc in runs[name] if doc.query_id in position]
        share[r] = _unjudged_share(run, judged, depth)
        if unjudged == "condense":
            run = [doc for doc in run if doc.doc_id in judged.get(doc.query_id, ())]
        per_query = {m.query_id: m.value for m in ir_measures.iter_calc([parsed], qrels, run)}
        for q, k in position.items():
            if q in judged:
                values[k, r] = per_query.get(q, 0.0)  # -c: nothing retrieved (or nothing judged retrieved) is 0
    return RunScores(str(parsed), queries, names, values, share)


def _unjudged_share(run: list, judged: Mapping[str, set[str]], depth: int) -> float:
    by_query: dict[str, list] = {}
    for doc in run:
        by_query.setdefault(doc.query_id, []).append(doc)
    top = [doc for docs in by_query.values() for doc in sorted(docs, key=lambda d: -d.score)[:depth]]
    if not top:
        return float("nan")
    return sum(doc.doc_id not in judged.get(doc.query_id, ()) for doc in top) / len(top)


def runs_without_judgments(scores: RunScores) -> list[str]:
    """Runs none of whose top documents the qrels label: no value can be said about them."""
    return [name for name, share in zip(scores.runs, scores.unjudged_share, strict=True) if not share < 1.0]
