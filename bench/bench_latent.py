"""Several judges' labels combined (Dawid-Skene, families, vote, mean) against the humans, beside the best single judge chosen on other groups.

    python -m bench.bench_latent --write                       # HANNA's 20 raters (6 aspects), TREC DL 2019's 9 judges
    python -m bench.bench_latent --aspects coherence --no-trec # a quick look

HANNA: the 20 published LLM raters (5 models x 4 prompts), their ratings (means of 3 samples) rounded to
whole numbers and clipped to 1-5; the human value is the mean of 3 annotators, and accuracy is against that
mean rounded. TREC DL 2019: the 9 TREMA judges' 0-3 labels against the TREC labels, and the 37 runs ranked
by nDCG@10 under each. The combinations never see a human label, so each is fitted once on all items.

The best single judge is chosen on half of the groups (HANNA: story prompts; TREC: queries), for each
figure separately, and that figure is reported on the other half; the combinations are reported on the
same halves. Five random halvings: the mean and the standard deviation over them. "after the fact" is the
best single judge chosen on the half reported on, a bar no user can choose in advance.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import stats

from bench.common import command_line, describe_machine, log, write_doc_section

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SECTION = "## Combining judges' labels: Dawid-Skene, families, vote, mean (`bench/bench_latent.py`)"
ASPECTS = ("coherence", "relevance", "empathy", "surprise", "engagement", "complexity")
METHODS = ("dawid-skene", "family-dawid-skene", "majority", "mean")
SINGLE, AFTER = "best single judge (held out)", "best single judge (after the fact)"
HALVINGS = 5


# -- data -------------------------------------------------------------------------------------------------
def _rows(path: Path):
    with path.open(encoding="utf-8") as handle:
        yield from map(json.loads, handle)


def hanna(aspect: str) -> tuple[dict, dict[str, float], dict[str, str]]:
    """{judge: {item: rating 1-5}}, {item: human mean}, {item: group}."""
    from judgelab.data import load_items

    judges: dict[str, dict[str, int]] = {}
    for row in _rows(SHARED / "reference" / "hanna_llm_ratings.jsonl"):
        value = row["prediction"].get(aspect)
        if isinstance(value, (int, float)):
            judges.setdefault(row["judge"], {})[row["item_id"]] = min(5, max(1, math.floor(value + 0.5)))
    items = load_items(SHARED / "hanna.jsonl")
    return judges, {i.id: i.human_score(aspect) for i in items}, {i.id: i.group for i in items}


def trec() -> tuple[dict, dict[str, int], dict[str, str], dict[str, str]]:
    """{judge: {item: label 0-3}}, {item: TREC label}, {item: qid}, {item: docid}."""
    from judgelab.data import load_items

    judges: dict[str, dict[str, int]] = {}
    for row in _rows(SHARED / "reference" / "trema_outputs.jsonl"):
        if row["dataset"] == "trec_dl2019":
            value = row["prediction"]["label"] if isinstance(row["prediction"], dict) else row["prediction"]
            if value is not None:
                judges.setdefault(row["judge"], {})[row["item_id"]] = int(value)
    items = load_items(SHARED / "trec_dl2019.jsonl")
    return judges, {i.id: i.label for i in items}, {i.id: i.qid for i in items}, {i.id: i.docid for i in items}


def combined(judges: dict[str, dict[str, int]]) -> dict[str, dict[str, tuple[float, int]]]:
    """{method: {item: (score, label)}} through the library's own path (Judgment lists in, judgments out)."""
    from judgelab.data.judgment import Judgment
    from judgelab.metrics.combine import combine_judgments

    verdicts = {name: [Judgment(item_id=i, score=float(v)) for i, v in given.items()] for name, given in judges.items()}
    out = {}
    for method in METHODS:
        started = time.perf_counter()
        result = combine_judgments(verdicts, method)
        out[method] = {j.item_id: (j.score, j.label) for j in result.judgments if j.ok}
        families = [f for f in result.families() if len(f) > 1]
        log(f"{method}: {time.perf_counter() - started:.1f} s" + (f"; families {families}" if families else ""))
        if result.fit is not None and families:
            out.setdefault("_families", {})[method] = families
    return out


# -- figures ----------------------------------------------------------------------------------------------
def halvings(groups: list[str], n: int = HALVINGS, seed: int = 0) -> list[tuple[set[str], set[str]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        shuffled = list(rng.permutation(sorted(set(groups))))
        out.append((set(shuffled[: len(shuffled) // 2]), set(shuffled[len(shuffled) // 2:])))
    return out


def item_figures(score: np.ndarray, label: np.ndarray, human: np.ndarray, exact: np.ndarray) -> dict[str, float]:
    from sklearn.metrics import cohen_kappa_score

    return {"spearman": float(stats.spearmanr(score, human).statistic),
            "kendall": float(stats.kendalltau(score, human).statistic),
            "accuracy": float(np.mean(label == exact)),
            "kappa": float(cohen_kappa_score(exact.astype(int), label.astype(int)))}


def summarise(per_half: list[dict[str, dict[str, float]]], figures: tuple[str, ...]) -> dict[str, dict]:
    """{row: {figure: (mean, sd)}} and, for the held-out single judge, which judges were chosen."""
    rows = {}
    for row in per_half[0]:
        if not row.startswith("judge:"):
            rows[row] = {f: (np.mean([h[row][f] for h in per_half]), np.std([h[row][f] for h in per_half]))
                         for f in figures}
    return rows


def with_single_judges(cells: list[dict[str, dict[str, float]]], train: list[dict[str, dict[str, float]]],
                       figures: tuple[str, ...]) -> tuple[list[dict], Counter]:
    """Each halving's figures plus the single judge chosen on its train half (per figure) and after the fact."""
    chosen: Counter = Counter()
    out = []
    for test, fit in zip(cells, train, strict=True):
        judges = [name for name in test if name.startswith("judge:")]
        held, after = {}, {}
        for figure in figures:
            pick = max(judges, key=lambda n: fit[n][figure])
            chosen[pick.removeprefix("judge:")] += 1
            held[figure] = test[pick][figure]
            after[figure] = max(test[n][figure] for n in judges)
        out.append(test | {SINGLE: held, AFTER: after})
    return out, chosen


def hanna_rows(aspect: str) -> tuple[dict, Counter, dict]:
    judges, human, group = hanna(aspect)
    methods = combined(judges)
    ids = [i for i in human if all(i in methods[m] for m in METHODS)]
    truth = np.array([human[i] for i in ids])
    exact = np.floor(truth + 0.5)
    sources = {m: methods[m] for m in METHODS} | {f"judge:{n}": {i: (float(v), v) for i, v in g.items()}
                                                   for n, g in judges.items()}
    figures = ("spearman", "kendall", "accuracy")

    def on(keep: set[str]) -> dict[str, dict[str, float]]:
        mask = np.array([group[i] in keep for i in ids])
        out = {}
        for name, values in sources.items():
            got = np.array([i in values for i in ids]) & mask
            score = np.array([values[i][0] if i in values else np.nan for i in ids])
            label = np.array([values[i][1] if i in values else -1 for i in ids])
            out[name] = item_figures(score[got], label[got], truth[got], exact[got])
        return out

    split = halvings([group[i] for i in ids])
    cells, chosen = with_single_judges([on(b) for _, b in split], [on(a) for a, _ in split], figures)
    return summarise(cells, figures), chosen, methods.get("_families", {})


def trec_rows() -> tuple[dict, Counter, dict]:
    judges, human, qid, docid = trec()
    methods = combined(judges)
    ids = [i for i in human if all(i in methods[m] for m in METHODS)]
    truth = np.array([human[i] for i in ids])
    sources = {m: methods[m] for m in METHODS} | {f"judge:{n}": {i: (float(v), v) for i, v in g.items()}
                                                   for n, g in judges.items()}
    per_query = RunTable(ids, qid, docid)
    human_table = per_query.scores({i: human[i] for i in ids})
    tables = {name: per_query.scores({i: v[1] for i, v in values.items()}) for name, values in sources.items()}
    figures = ("accuracy", "kappa", "run tau")

    def on(keep: set[str]) -> dict[str, dict[str, float]]:
        mask = np.array([qid[i] in keep for i in ids])
        out = {}
        for name, values in sources.items():
            got = np.array([i in values for i in ids]) & mask
            label = np.array([values[i][1] if i in values else -1 for i in ids])
            figures_ = item_figures(label[got].astype(float), label[got], truth[got], truth[got])
            out[name] = {"accuracy": figures_["accuracy"], "kappa": figures_["kappa"],
                         "run tau": per_query.tau(human_table, tables[name], keep)}
        return out

    split = halvings([qid[i] for i in ids])
    cells, chosen = with_single_judges([on(b) for _, b in split], [on(a) for a, _ in split], figures)
    return summarise(cells, figures), chosen, methods.get("_families", {})


class RunTable:
    """nDCG@10 of the 37 runs per query under a set of labels; a ranking's tau on any subset of queries."""

    def __init__(self, ids: list[str], qid: dict[str, str], docid: dict[str, str]):
        from judgelab.metrics.ir import read_runs

        self.ids, self.qid, self.docid = ids, qid, docid
        self.runs = read_runs(SHARED / "trec_dl2019_runs")
        self.names = sorted(self.runs)
        self.queries = sorted({qid[i] for i in ids})

    def scores(self, labels: dict[str, int]) -> np.ndarray:
        """(queries, runs): NaN where a run retrieved nothing for the query, 0 where nothing is labelled."""
        import ir_measures

        from judgelab.metrics.ir import qrels_from_labels

        kept = [i for i in self.ids if i in labels]
        qrels = qrels_from_labels([self.qid[i] for i in kept], [self.docid[i] for i in kept], [labels[i] for i in kept])
        measure = ir_measures.parse_measure("nDCG@10")
        table = np.full((len(self.queries), len(self.names)), np.nan)
        for r, name in enumerate(self.names):
            values = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, self.runs[name])}
            retrieved = {doc.query_id for doc in self.runs[name]}
            table[:, r] = [values.get(q, 0.0) if q in retrieved else np.nan for q in self.queries]
        return table

    def tau(self, human: np.ndarray, judge: np.ndarray, keep: set[str]) -> float:
        rows = [k for k, q in enumerate(self.queries) if q in keep]
        return float(stats.kendalltau(np.nanmean(human[rows], axis=0), np.nanmean(judge[rows], axis=0)).statistic)


# -- the page ---------------------------------------------------------------------------------------------
ORDER = (*METHODS, SINGLE, AFTER)


def table(name: str, rows: dict, figures: tuple[str, ...]) -> list[str]:
    lines = [f"| {name} | " + " | ".join(figures) + " |", "|---|" + "---:|" * len(figures)]
    for row in ORDER:
        cells = [f"{rows[row][f][0]:.3f} ± {rows[row][f][1]:.3f}" for f in figures]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return lines


def worse_than_single(label: str, rows: dict, figures: tuple[str, ...]) -> list[str]:
    return [f"{label} {method} {figure} ({rows[method][figure][0]:.3f} < {rows[SINGLE][figure][0]:.3f})"
            for method in METHODS for figure in figures if rows[method][figure][0] < rows[SINGLE][figure][0]]


def doc(hanna_results: dict, trec_result, command: str, minutes: float) -> str:
    out = [f"Machine: {describe_machine()}. Command: `{command}` ({minutes:.1f} min). {HALVINGS} random halvings "
           "by group; each cell: mean ± standard deviation over them. The combinations are fitted once on all items "
           "(no human label); the single judge is chosen per figure on the other half (`held out`), or on the half "
           "reported (`after the fact`). Scores: the expected value (Dawid-Skene, families) or the mean of the "
           "votes (majority, mean); labels: the most probable class (majority: the commonest vote; mean: the "
           "rating nearest the mean).", ""]
    worse: list[str] = []
    figures = ("spearman", "kendall", "accuracy")
    for aspect, (rows, chosen, families) in hanna_results.items():
        out += [f"**HANNA {aspect}** (737 stories; 20 raters, their ratings rounded to 1-5; Spearman and Kendall of "
                "the score with the human mean, accuracy of the label against the rounded mean)", ""]
        out += table("combination", rows, figures)
        out += ["", f"Held-out single judges chosen: {_chosen(chosen)}. Families found: {_families(families)}.", ""]
        worse += worse_than_single(f"HANNA {aspect}", rows, figures)
    if trec_result is not None:
        rows, chosen, families = trec_result
        figures = ("accuracy", "kappa", "run tau")
        out += ["**TREC DL 2019** (5,353 query-passage pairs, 30 queries, 9 judges; accuracy and Cohen's kappa of "
                "the 0-3 label; Kendall's tau of the 37 runs ranked by nDCG@10 on the held-out queries)", ""]
        out += table("combination", rows, figures)
        out += ["", f"Held-out single judges chosen: {_chosen(chosen)}. Families found: {_families(families)}.", ""]
        worse += worse_than_single("TREC", rows, figures)
    out += [f"Where a combination does worse than the held-out best single judge ({len(worse)} cells): "
            + ("; ".join(worse) if worse else "none") + "."]
    return "\n".join(out)


def _chosen(chosen: Counter) -> str:
    return ", ".join(f"{name} ({n})" for name, n in chosen.most_common())


def _families(families: dict) -> str:
    listed = families.get("family-dawid-skene")
    return "none (every judge its own)" if not listed else "; ".join("{" + ", ".join(f) + "}" for f in listed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--aspects", nargs="*", default=list(ASPECTS))
    parser.add_argument("--no-trec", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    needed = [SHARED / "hanna.jsonl", SHARED / "reference" / "hanna_llm_ratings.jsonl", SHARED / "trec_dl2019.jsonl",
              SHARED / "reference" / "trema_outputs.jsonl", SHARED / "trec_dl2019_runs"]
    if not all(path.exists() for path in needed):
        print(f"skipped: the benchmark data is not in {SHARED}")
        return
    started = time.perf_counter()
    hanna_results = {}
    for aspect in args.aspects:
        log(f"HANNA {aspect}")
        hanna_results[aspect] = hanna_rows(aspect)
        print("\n".join(table(aspect, hanna_results[aspect][0], ("spearman", "kendall", "accuracy"))), flush=True)
    trec_result = None
    if not args.no_trec:
        log("TREC DL 2019")
        trec_result = trec_rows()
        print("\n".join(table("trec", trec_result[0], ("accuracy", "kappa", "run tau"))), flush=True)
    body = doc(hanna_results, trec_result, command_line("bench.bench_latent"), (time.perf_counter() - started) / 60)
    print(body.rsplit("\n", 1)[-1])
    if args.write:
        write_doc_section("bench_latent", body, heading=SECTION)


if __name__ == "__main__":
    main()
