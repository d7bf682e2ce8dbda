"""Render RUN_DIR/report.html from the run's files: one self-contained page, no network needed.

Reads run.json, metrics.json, judgments.jsonl and, when present, an optimiser's
trajectory.jsonl / optimizer.json; the human labels come from the items passed in or from the
data file run.json names. Judgments are read one line at a time and a uniform sample of at most
``SAMPLE`` of them (all of them for smaller runs) feeds the plots and tables, so a report on a
million-item streamed run takes the memory of a small one. Every text from a dataset or a model
is escaped (jinja2 autoescape; plots escape their own labels) and cut to ``TEXT_LIMIT`` characters;
the page's Content-Security-Policy lets only its own script run, named by its SHA-256.
"""

from __future__ import annotations

import base64
import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import yaml
from markupsafe import Markup

from judgelab.data.io import iter_jsonl, load_items
from judgelab.data.item import Item
from judgelab.errors import ConfigError, DataError
from judgelab.files import read_json, read_run_record, write_atomic
from judgelab.metrics.align import human_value
from judgelab.metrics.compare import sides
from judgelab.metrics.correlation import correlation
from judgelab.printable import printable
from judgelab.report import plots
from judgelab.report.card import card_mismatch, card_section, run_card
from judgelab.report.systems_view import read_systems, systems_section

#: Characters of one text (a judged output, a reply, an id, a reason) the page shows; all of it is in
#: the run's files. A 200 MB item once made a 205 MB page.
TEXT_LIMIT = 10_000


def _clip(value: Any) -> Any:
    """Applied to every ``{{ ... }}`` of the page: long plain texts are cut, and their control characters
    (an ESC or BEL in a model's name) shown as escapes, which autoescape leaves raw (markup the code built,
    such as the plots, is not text from a dataset and is left whole; the plots escape their own labels)."""
    if not isinstance(value, str) or isinstance(value, Markup):
        return value
    if len(value) > TEXT_LIMIT:
        value = f"{value[:TEXT_LIMIT]}… [{len(value) - TEXT_LIMIT:,} more characters, in the run's files]"
    return printable(value, keep="\n\t")


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("judgelab.report", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    trim_blocks=True, lstrip_blocks=True, finalize=_clip,
)
#: The page's one script and the hash its Content-Security-Policy allows (no 'unsafe-inline').
_SCRIPT = Markup(_ENV.get_template("sort_tables.js.j2").render())
_SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
SAMPLE = 5000  # judgments drawn for plots and tables (uniformly, reproducibly) on larger runs
TOP_DISAGREEMENTS = 15
SHOWN_JUDGMENTS = 200
_NOT_ESTIMATES = ("kind", "aspect", "preset", "judge", "coverage", "bootstrap",
                  "comparison")  # judge minus baseline: its own table (comparison_rows)


@dataclass
class Row:
    """One sampled judgment joined with its item's human value (and texts for the tables)."""

    id: str
    status: str
    score: float | None
    label: Any
    explanation: str | None
    raw: str | None
    reason: str | None
    criteria: dict[str, float | None]
    extra: dict[str, Any]
    human: Any = None
    group: str | None = None
    scale: tuple[float, float] | None = None
    text: str | None = None

    @property
    def verdict(self) -> Any:
        return self.score if self.score is not None else self.label

    @property
    def shown_explanation(self) -> str | None:
        """The judge's explanation; for a pairwise tie that the two orders made (each order named a different
        output), that, since either order's reply names one output ("Output (a)")."""
        verdicts = self.extra.get("verdicts")
        if self.label == "tie" and isinstance(verdicts, Mapping) and len({str(v) for v in verdicts.values()}) > 1:
            orders = ", ".join(f"{order} order: {verdict}" for order, verdict in verdicts.items())
            return f"A tie: the verdict changed when the two outputs swapped places ({orders})."
        return self.explanation


@dataclass
class Scan:
    total: int = 0
    statuses: Counter = field(default_factory=Counter)
    rows: list[Row] = field(default_factory=list)
    judges: set[str | None] = field(default_factory=set)  # the judge names of every line

    @property
    def sampled(self) -> bool:
        return self.total > len(self.rows)


def write_report(folder: str | Path, items: Iterable[Item] | None = None) -> Path:
    folder = Path(folder)
    return write_atomic(folder / "report.html", render_report(folder, items))  # owner-only


def render_report(folder: str | Path, items: Iterable[Item] | None = None) -> str:
    folder = Path(folder)
    record = read_run_record(folder)
    if record is None:
        raise ConfigError(f"{folder} is not a run folder: no run.json")
    metrics = read_json(folder / "metrics.json")
    systems = read_systems(folder / "systems.json")
    judge = record.get("judge") or {}
    aspect = judge.get("aspect") or (metrics or {}).get("aspect")
    scan = _scan_judgments(folder / "judgments.jsonl")
    wanted = {row.id for row in scan.rows}
    _join_items(scan.rows, items if items is not None else _items_of(record, wanted), aspect)
    judge_scale = _judge_scale(judge)
    return _ENV.get_template("report.html.j2").render(
        title=folder.name, record=record, usage=record.get("usage") or {}, judge_yaml=_judge_yaml(judge, record),
        score_note=_score_note(judge, judge_scale),
        metrics=metrics, **agreement_context(metrics), coverage=(metrics or {}).get("coverage"),
        comparison=comparison_rows(metrics), dropped=_dropped_groups(metrics),
        scan=scan, sample_size=SAMPLE, figures=_figures(scan, metrics, judge, judge_scale),
        criteria=_criteria_rows(scan.rows), disagreements=_disagreements(scan.rows, judge_scale),
        gap_note=_gap_note(scan.rows, judge_scale),
        shown=scan.rows[:SHOWN_JUDGMENTS], optimizer=_optimizer(folder), systems=systems_section(systems),
        card=_card(folder, scan.judges),
        script=_SCRIPT, script_hash=_SCRIPT_HASH,
    )


# -- reading --------------------------------------------------------------------------------------
def _card(folder: Path, judges: set[str | None]) -> dict[str, Any] | None:
    """The judge card the run holds (RUN/card.json), as the fragment card.html shows, with its identity; checked
    against ``judges``, the names the scan of the run's verdicts found."""
    card = run_card(folder)
    if card is None:
        return None
    return {"judge": (card.get("identity") or {}).get("judge"), "html": Markup(card_section(card)),
            "mismatch": card_mismatch(folder, card, judges)}


def _scan_judgments(path: Path) -> Scan:
    """Status counts over every line, and a reservoir sample of ``SAMPLE`` rows (file order kept)."""
    scan = Scan()
    if not path.is_file():
        return scan
    rng = random.Random(0)
    reservoir: list[tuple[int, dict[str, Any]]] = []
    for line_number, data in iter_jsonl(path):
        scan.total += 1
        scan.statuses[data.get("status", "ok")] += 1
        scan.judges.add(data.get("judge"))
        if len(reservoir) < SAMPLE:
            reservoir.append((line_number, data))
        elif (slot := rng.randrange(scan.total)) < SAMPLE:
            reservoir[slot] = (line_number, data)
    reservoir.sort(key=lambda pair: pair[0])
    scan.rows = [_row(data) for _, data in reservoir]
    return scan


def _row(data: Mapping[str, Any]) -> Row:
    return Row(id=str(data.get("item_id")), status=data.get("status", "ok"), score=data.get("score"),
               label=data.get("label"), explanation=data.get("explanation"), raw=data.get("raw"),
               reason=data.get("reason"), criteria=data.get("criteria") or {}, extra=data.get("extra") or {})


def _items_of(record: Mapping[str, Any], wanted: set[str]) -> Iterator[Item]:
    """The run's items from the data file run.json names, streamed when it is JSON lines."""
    from judgelab.data.stream import iter_items, streamable

    data = record.get("data")
    if not data or not Path(data).is_file():
        return iter(())
    try:
        return iter_items(data, only=wanted) if streamable(data) else iter(load_items(data))
    except DataError:
        return iter(())


def _join_items(rows: list[Row], items: Iterable[Item], aspect: str | None) -> None:
    wanted = {row.id: row for row in rows}
    try:
        for item in items:
            row = wanted.get(item.id)
            if row is None:
                continue
            row.human = human_value(item, aspect)
            row.group = item.group
            row.scale = item.aspect_scale(aspect) if aspect else item.scale
            row.text = item.output if item.output is not None else _pair_text(item)
    except DataError:
        pass  # the data file changed since the run: the report is drawn without human labels


def _pair_text(item: Item) -> str | None:
    if item.output_a is not None:
        return f"A: {item.output_a}\n\nB: {item.output_b}"
    if item.system_a is not None:  # a comparison between systems without its texts (Arena votes)
        return f"A: {item.system_a}\n\nB: {item.system_b}"
    return item.passage


def _judge_scale(judge: Mapping[str, Any]) -> tuple[float, float] | None:
    scale = (judge.get("strategy") or {}).get("scale")
    return (1.0, float(scale)) if isinstance(scale, (int, float)) else None


def _judge_yaml(judge: Mapping[str, Any], record: Mapping[str, Any]) -> str:
    """The judge config as YAML; a config that leaves the model open shows the run's, marked as such
    (``model: null`` beside a header naming the model read as if no model had run)."""
    text = yaml.safe_dump(dict(judge), sort_keys=False)
    model = record.get("model")
    if "model" in judge and judge["model"] is None and isinstance(model, str) and model:
        line = yaml.safe_dump({"model": model}, sort_keys=False).rstrip("\n")
        text = text.replace("model: null\n", f"{line}  # the run's model: the config names none\n", 1)
    return text


def _score_note(judge: Mapping[str, Any], scale: tuple[float, float] | None) -> str | None:
    """What a logprob score is, for the tables that show it beside the reply (whose rating differs)."""
    if judge.get("score") != "logprob":
        return None
    ratings = f"{scale[0]:g}-{scale[1]:g}" if scale else "on the scale"
    return (f"The judge's score is its expected rating (score: logprob): each rating {ratings} weighted by the "
            "probability the model gave it at the rating token. The reply shows only the rating the model wrote, "
            "its most likely one, so a reply of 5 can sit beside a score of 3.7.")


# -- metrics tables ---------------------------------------------------------------------------------
#: What each correlation level asks, for a first reader (docs/metrics.md, "Correlation levels").
LEVELS = {
    "dataset": "every item in one correlation: does the judge score items across inputs as the humans do?",
    "group": "a correlation within each group (the outputs for one input, e.g. one article's summaries), averaged "
             "over the groups: does the judge order the outputs for the same input as the humans do?",
    "system": "one point per system, its mean judge score against its mean human score: does the judge rank the "
              "systems as the humans do?",
    "pairwise_agreement": "over every two outputs for the same input: the share where judge and humans agree on "
                          "which is better, or that they tie (n: the pairs).",
}
#: The number to read first, in this order of preference, and what it says.
READ_FIRST = (
    ("group", "spearman", "does the judge order the outputs for the same input as the humans do? What choosing "
                          "between outputs, and comparing systems on the same inputs, rests on (1: the same order; "
                          "0: unrelated)."),
    ("dataset", "spearman", "does the judge order all the items as the humans do? (1: the same order; 0: unrelated)."),
    ("pairwise", "accuracy", "how often the judge picks the output the humans preferred (0.5: a coin's rate)."),
)
#: Below this many systems a system-level correlation is flagged: a few points make it swing by chance.
FEW_SYSTEMS = 10


def agreement_context(metrics: Mapping[str, Any] | None) -> dict[str, Any]:
    """The agreement table's rows with how to read them: the row to read first (marked), the levels
    present in plain words, and a caution when the system level rests on few systems."""
    rows = list(estimate_rows(metrics))
    first, why = next(((row, text) for level, statistic, text in READ_FIRST for row in rows  # "accuracy (half)"
                       if row["level"] == level and row["statistic"].split(" (")[0] == statistic), (None, None))
    for row in rows:
        row["first"] = row is first
    levels = [(level, text) for level, text in LEVELS.items() if any(row["level"] == level for row in rows)]
    return {"estimate_rows": rows, "read_first": {"row": first, "why": why} if first else None,
            "levels": levels, "system_caution": _system_caution(rows)}


def _system_caution(rows: list[dict[str, Any]]) -> str | None:
    """A system-level correlation over fewer than FEW_SYSTEMS systems, said plainly with its interval."""
    system = [row for row in rows if row["level"] == "system" and isinstance(row["n"], int)]
    if not system or system[0]["n"] >= FEW_SYSTEMS:
        return None
    row = next((row for row in system if row["statistic"] == "spearman"), system[0])
    ci = row["ci"] if row["ci"] and row["ci"][0] is not None else None
    spread = f" (its {row['statistic']} interval here: {ci[0]:.2f} to {ci[1]:.2f})" if ci else ""
    return (f"The system level rests on {row['n']} systems: a correlation over so few points swings widely by "
            f"chance{spread}. Read it as a hint; it says much only from about {FEW_SYSTEMS} systems on.")


def estimate_rows(metrics: Mapping[str, Any] | None) -> Iterator[dict[str, Any]]:
    """Every estimate (value + CI) in metrics.json, named by its section path."""
    for name, section in (metrics or {}).items():
        if name not in _NOT_ESTIMATES:
            yield from _walk(section, (name,))


def _walk(section: Any, path: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    if isinstance(section, Mapping) and "value" in section and "ci" in section:
        skipped = section.get("skipped") or {}
        statistic = " / ".join(path[1:]) or path[0]
        if isinstance(section.get("rule"), str):
            statistic += f" ({section['rule']})"  # e.g. how pairwise accuracy counts ties
        yield {"level": path[0], "statistic": statistic, "value": section["value"],
               "ci": section.get("ci"), "n": section.get("n"), "groups": section.get("n_groups"),
               "note": "; ".join([f"{len(v)} {k}" for k, v in skipped.items()] + [section.get("reason") or ""]).strip("; ")}
    elif isinstance(section, Mapping):
        for key, value in section.items():
            yield from _walk(value, (*path, key))


def _dropped_groups(metrics: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``dropped_groups`` of metrics.json (figures that left out groups because a side was
    constant), for the warning above the agreement table; malformed entries are left out."""
    entries = (metrics or {}).get("dropped_groups") or []
    keys = ("figure", "n_groups", "n_used", "n_dropped", "share_dropped", "by_reason")
    return [e for e in entries if isinstance(e, Mapping) and all(k in e for k in keys)
            and isinstance(e["by_reason"], Mapping)] if isinstance(entries, list) else []


def comparison_rows(metrics: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The ``comparison`` section (``meta --baseline``): judge minus baseline per level and statistic,
    with the paired-bootstrap interval, or the reason there is none. Entries of another shape (a
    hand-edited metrics.json) are left out rather than failing the page."""
    rows = []
    for level, by_statistic in ((metrics or {}).get("comparison") or {}).items():
        for statistic, c in (by_statistic.items() if isinstance(by_statistic, Mapping) else ()):
            judge, baseline = sides(c) if isinstance(c, Mapping) else (None, None)
            if isinstance(judge, Mapping) and isinstance(baseline, Mapping):
                ci = c.get("ci") if isinstance(c.get("ci"), list) and len(c["ci"]) == 2 else [None, None]
                rows.append({"level": level, "statistic": statistic, "judge": _numeric(judge.get("value")),
                             "baseline": _numeric(baseline.get("value")), "difference": _numeric(c.get("difference")),
                             "ci": [_numeric(v) for v in ci], "p": _numeric(c.get("p_value")),
                             "n": judge.get("n"), "note": "; ".join(t for t in (c.get("note"), c.get("reason"))
                                                                   if isinstance(t, str))})
    return rows


# -- figures ----------------------------------------------------------------------------------------
def _numeric(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _paired(rows: list[Row]) -> list[tuple[Row, float, float]]:
    pairs = []
    for row in rows:
        human, verdict = _numeric(row.human), _numeric(row.verdict)
        if row.status == "ok" and human is not None and verdict is not None:
            pairs.append((row, human, verdict))
    return pairs


def _figures(scan: Scan, metrics: Mapping[str, Any] | None, judge: Mapping[str, Any],
             judge_scale: tuple[float, float] | None) -> list[dict[str, Any]]:
    rows, figures = scan.rows, []
    pairs = _paired(rows)
    note = f" (sample of {len(rows)})" if scan.sampled else ""
    if pairs:
        figures.append({"id": "scatter", "svg": plots.scatter(
            [h for _, h, _ in pairs], [v for _, _, v in pairs], jitter=_jitter([h for _, h, _ in pairs]),
            title=f"judge vs human{note}", x_label="human (jittered)", y_label="judge")})
    judge_scores = [s for r in rows if r.status == "ok" and (s := _numeric(r.verdict)) is not None]
    if judge_scores:
        figures.append({"id": "judge-histogram", "svg": plots.histogram(
            {"judge": judge_scores}, title=f"judge scores{note}", x_label="judge score",
            mark=float(np.mean(judge_scores)))})
    human_scores = [h for r in rows if (h := _numeric(r.human)) is not None]
    if human_scores:
        figures.append({"id": "human-histogram", "svg": plots.histogram(
            {"human": human_scores}, title=f"human scores{note}", x_label="human score",
            mark=float(np.mean(human_scores)))})
    if not scan.sampled and (per_group := _per_group_correlations(pairs)):
        figures.append({"id": "group-correlations", "svg": plots.histogram(
            {"spearman": per_group}, bins=min(20, max(5, len(per_group) // 2)), mark=float(np.mean(per_group)),
            title=f"Spearman per group ({len(per_group)} groups; line: mean)", x_label="Spearman within a group")})
    if (confusion := _confusion(metrics, rows)) is not None:
        figures.append({"id": "confusion", "svg": plots.heatmap(
            confusion["labels"], confusion["matrix"], title="confusion matrix", row_label="human",
            column_label="judge")})
    if judge.get("score") == "logprob" and (points := _calibration(pairs, judge_scale)):
        figures.append({"id": "calibration", "svg": plots.calibration(
            *points, title=f"calibration of expected scores{note}", x_label="judge expected score (0-1 of its scale)",
            y_label="mean human score (0-1)")})
    return figures


def _jitter(values: list[float]) -> float:
    """A third of the smallest gap between distinct human values (0 for continuous ones)."""
    distinct = np.unique(values)
    if len(distinct) < 2 or len(distinct) > 25:
        return 0.0
    return float(np.min(np.diff(distinct))) / 3


def _per_group_correlations(pairs: list[tuple[Row, float, float]]) -> list[float]:
    groups: dict[str, list[tuple[float, float]]] = {}
    for row, human, verdict in pairs:
        if row.group is not None:
            groups.setdefault(row.group, []).append((human, verdict))
    values = []
    for members in groups.values():
        if len(members) >= 3:
            value = correlation("spearman", [h for h, _ in members], [v for _, v in members])
            if not np.isnan(value):
                values.append(value)
    return values


def _confusion(metrics: Mapping[str, Any] | None, rows: list[Row]) -> dict[str, Any] | None:
    """The meta-evaluation's confusion matrix (graded labels), else one over pairwise verdicts."""
    found = ((metrics or {}).get("agreement") or {}).get("confusion_matrix")
    if found:
        return found
    labelled = [(r.human, r.label) for r in rows if r.status == "ok" and isinstance(r.human, str) and r.label is not None]
    if not labelled:
        return None
    labels = sorted({str(v) for pair in labelled for v in pair})
    counts = Counter((str(h), str(j)) for h, j in labelled)  # scikit-learn warns when there is one label
    return {"labels": labels, "matrix": [[counts[(h, j)] for j in labels] for h in labels]}


def _unit(value: float, scale: tuple[float, float] | None, observed: tuple[float, float]) -> float:
    low, high = scale or observed
    return min(1.0, max(0.0, (value - low) / ((high - low) or 1.0)))


def _calibration(pairs: list[tuple[Row, float, float]], judge_scale: tuple[float, float] | None,
                 bins: int = 8) -> tuple[list[float], list[float], list[int]] | None:
    """(mean expected score, mean human score, count) per bin of the expected score, both on [0, 1]."""
    if len(pairs) < 2:
        return None
    humans, verdicts = [h for _, h, _ in pairs], [v for _, _, v in pairs]
    human_range, judge_range = (min(humans), max(humans)), (min(verdicts), max(verdicts))
    expected = np.array([_unit(v, judge_scale, judge_range) for v in verdicts])
    observed = np.array([_unit(h, row.scale, human_range) for row, h, _ in pairs])
    # Equal-count bins over the expected scores: a judge's expected scores often sit in a narrow
    # band, where fixed-width bins would put every item into one point.
    order = np.argsort(expected, kind="stable")
    points: tuple[list[float], list[float], list[int]] = ([], [], [])
    for members in np.array_split(order, max(2, min(bins, len(order) // 10))):  # about 10+ items a point
        points[0].append(float(expected[members].mean()))
        points[1].append(float(observed[members].mean()))
        points[2].append(len(members))
    return points


# -- tables -----------------------------------------------------------------------------------------
def _criteria_rows(rows: list[Row]) -> list[dict[str, Any]]:
    """Per criterion of a multi-criteria judge: how often graded, its mean, Spearman with the humans."""
    names = sorted({name for row in rows for name in row.criteria})
    table = []
    for name in names:
        graded = [(row, v) for row in rows if (v := row.criteria.get(name)) is not None]
        with_human = [(h, v) for row, v in graded if (h := _numeric(row.human)) is not None]
        rho = correlation("spearman", *zip(*with_human, strict=True)) if len(with_human) >= 3 else float("nan")
        table.append({"name": name, "n": len(graded), "mean": float(np.mean([v for _, v in graded])) if graded else None,
                      "spearman": None if np.isnan(rho) else rho})
    return table


def _disagreements(rows: list[Row], judge_scale: tuple[float, float] | None) -> list[dict[str, Any]]:
    """The items where judge and human differ most (both on [0, 1]; pairwise: opposite verdicts)."""
    pairs = _paired(rows)
    found = []
    if pairs:
        humans, verdicts = [h for _, h, _ in pairs], [v for _, _, v in pairs]
        human_range, judge_range = (min(humans), max(humans)), (min(verdicts), max(verdicts))
        for row, human, verdict in pairs:
            gap = abs(_unit(verdict, judge_scale, judge_range) - _unit(human, row.scale, human_range))
            found.append((gap, row))
    else:
        found = [(1.0, r) for r in rows if r.status == "ok" and isinstance(r.human, str) and r.label is not None
                 and str(r.label) != r.human]
    found.sort(key=lambda pair: -pair[0])
    return [{"gap": gap, "row": row} for gap, row in found[:TOP_DISAGREEMENTS] if gap > 0]


def _gap_note(rows: list[Row], judge_scale: tuple[float, float] | None) -> str:
    """What the disagreements table's gap measures, on which scale."""
    if not _paired(rows):
        return "gap 1: the judge's verdict differs from the humans' (pairwise: the other output, or a tie)."
    judge = f"its {judge_scale[0]:g}-{judge_scale[1]:g} scale" if judge_scale else "the range of its scores here"
    return ("gap: how far apart judge and human are once each is put on 0-1 of its own scale (the judge on "
            f"{judge}, the human on the items' scale, else the range of the labels here): 0 = the same place, "
            "1 = opposite ends, 0.25 = a quarter of the scale (one point on a 1-5 scale).")


# -- optimiser runs ---------------------------------------------------------------------------------
def _optimizer(folder: Path) -> dict[str, Any] | None:
    """The search trajectory (trajectory.jsonl: step, score, best) and per-factor advantages."""
    steps, scores, best = [], [], []
    path = folder / "trajectory.jsonl"
    if path.is_file():
        for _, entry in iter_jsonl(path):
            if entry.get("kind", "evaluation") != "evaluation":
                continue  # an optimiser's proposals (rewritten prompts) are not evaluations
            steps.append(float(entry.get("step", len(steps) + 1)))
            scores.append(_numeric(entry.get("score")))
            best.append(_numeric(entry.get("best")))
    summary = read_json(folder / "optimizer.json") or {}
    advantages = _advantages(summary.get("advantages") or summary.get("factor_advantages") or {})
    if not steps and not advantages:
        return None
    found: dict[str, Any] = {"summary": {k: v for k, v in summary.items() if k not in ("advantages", "factor_advantages")
                                         and isinstance(v, (str, int, float))}}
    if steps and any(v is not None for v in (*scores, *best)):
        found["trajectory"] = plots.trajectory(steps, scores, best, title=f"search: {len(steps)} evaluations",
                                               y_label="dev score")
    if advantages:
        found["advantages"] = plots.bars([name for name, _ in advantages], [value for _, value in advantages],
                                         title="per-factor advantage", y_label="advantage")
        found["advantage_rows"] = advantages
    return found


def _advantages(data: Mapping[str, Any]) -> list[tuple[str, float]]:
    """``{factor: advantage}`` or ``{factor: {value: advantage}}`` as (name, advantage) pairs."""
    flat = []
    for factor, value in data.items():
        if isinstance(value, Mapping):
            flat.extend((f"{factor}={option}", float(v)) for option, v in value.items() if _numeric(v) is not None)
        elif _numeric(value) is not None:
            flat.append((str(factor), float(value)))
    return flat

