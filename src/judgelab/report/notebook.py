"""HTML for Jupyter: what the front door's results show as ``_repr_html_``.

Where report.html has a section for a result, the notebook shows that very section: the blocks of
report.html.j2 (``accounting``, ``agreement``, ``comparison``, ``systems``, ``judgments``) rendered from
the same rows the report builds, so a table reads the same in a notebook and on the page. Results the
report has no section for (an audit, a two-system comparison, a sample) are shown as plain tables. Every
text from a dataset or a model is escaped, as in the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from markupsafe import Markup

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.report.html import (
    _ENV,
    SHOWN_JUDGMENTS,
    Scan,
    _dropped_groups,
    _join_items,
    _row,
    agreement_context,
    comparison_rows,
)

#: the report's blocks whose heading stands outside them on the page
HEADINGS = {"accounting": "Accounting", "agreement": "Agreement with humans", "judgments": "Judgments"}


def _blocks(names: Sequence[str], **variables: Any) -> list[tuple[str | None, Markup]]:
    """(heading, HTML) for each named block of report.html.j2, rendered with ``variables`` as the page's
    own render passes them."""
    template = _ENV.get_template("report.html.j2")
    context = template.new_context(variables)
    return [(HEADINGS.get(name), Markup("".join(template.blocks[name](context)))) for name in names]


def view(title: str, *, sections: Sequence[tuple[str | None, Markup]] = (), lines: Iterable[str] = (),
         tables: Iterable[tuple[str | None, Sequence[str], Iterable[Sequence[Any]]]] = ()) -> str:
    """One result as an HTML fragment: a title, report blocks (``sections``), notes, and plain tables
    (``(heading, columns, rows)``: a float shows three decimals, a pair of numbers as an interval)."""
    return _ENV.get_template("notebook.html.j2").render(
        title=title, sections=sections, lines=list(lines),
        tables=[(heading, list(columns), [list(row) for row in rows]) for heading, columns, rows in tables])


def meta_view(metrics: Mapping[str, Any], title: str) -> str:
    """A meta-evaluation (``MetaReport.to_dict()``, what metrics.json holds): the report's agreement table,
    and its judge-minus-baseline table when there is a baseline."""
    sections = _blocks(("agreement", "comparison"), metrics=metrics, **agreement_context(metrics),
                       coverage=metrics.get("coverage"), dropped=_dropped_groups(metrics),
                       comparison=comparison_rows(metrics), record={})
    return view(title, sections=sections)


def systems_view(systems: Mapping[str, Any], title: str) -> str:
    """A system evaluation (``SystemsReport.to_dict()``, what systems.json holds): the report's Systems
    section, its table and plots."""
    from judgelab.report.systems_view import SystemsFile, systems_section

    checked = SystemsFile.model_validate(dict(systems)).model_dump()  # as the report reads systems.json
    return view(title, sections=_blocks(("systems",), systems=systems_section(checked)))


def run_view(judgments: Sequence[Judgment], counts: Mapping[str, int], usage: Mapping[str, Any],
             metrics: Mapping[str, Any] | None, items: Iterable[Item] | None, aspect: str | None, title: str) -> str:
    """A judge run: the report's accounting cards, agreement table and judgments table (the first
    ``SHOWN_JUDGMENTS``, with the items' human values beside them)."""
    rows = [_row(judgment.model_dump()) for judgment in list(judgments)[:SHOWN_JUDGMENTS]]
    if items is not None:
        _join_items(rows, items, aspect)
    scan = Scan(total=len(judgments), statuses=Counter(counts), rows=rows)
    total = sum(counts.values())
    record = {"items": len(judgments), "unparsable_share": counts.get("unparsable", 0) / total if total else 0.0}
    names = ("accounting", "agreement", "judgments") if metrics else ("accounting", "judgments")
    sections = _blocks(names, record=record, usage=usage, scan=scan, shown=rows, metrics=metrics,
                       **agreement_context(metrics), coverage=(metrics or {}).get("coverage"),
                       dropped=_dropped_groups(metrics))
    return view(title, sections=sections)
