"""Plots as inline SVG strings, drawn here rather than with a plotting library.

Why hand-made: the report must open offline as one file. matplotlib is not a dependency (and
its SVGs embed every glyph as a path: ~100 kB a plot); a JS chart library would have to be
vendored into every page. Five chart shapes over a few thousand points are a page of code.
Every text placed in an SVG goes through ``escape`` (markupsafe's, after ``printable``); the result is ``Markup``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from markupsafe import Markup
from markupsafe import escape as _escape

from judgelab.printable import printable


def escape(text: object) -> Markup:
    """A label as SVG text: escaped, its control characters (a model's name with an ESC) shown as escapes."""
    return _escape(printable(text, keep="\n\t"))


WIDTH, HEIGHT = 460, 300
MARGIN = {"left": 52, "right": 14, "top": 26, "bottom": 42}
PALETTE = ("#3366cc", "#dc7633", "#2e8b57", "#8e44ad", "#c0392b", "#16a085")


@dataclass(frozen=True)
class Axes:
    """Maps data coordinates to pixels inside the plot margins."""

    x_range: tuple[float, float]
    y_range: tuple[float, float]
    width: int = WIDTH
    height: int = HEIGHT

    def x(self, value: float) -> float:
        low, high = self.x_range
        span = self.width - MARGIN["left"] - MARGIN["right"]
        return MARGIN["left"] + (value - low) / ((high - low) or 1.0) * span

    def y(self, value: float) -> float:
        low, high = self.y_range
        span = self.height - MARGIN["top"] - MARGIN["bottom"]
        return self.height - MARGIN["bottom"] - (value - low) / ((high - low) or 1.0) * span


def _padded(values: Sequence[float], pad: float = 0.05) -> tuple[float, float]:
    low, high = float(np.min(values)), float(np.max(values))
    if low == high:
        return low - 0.5, high + 0.5
    margin = (high - low) * pad
    return low - margin, high + margin


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values inside [low, high] (1, 2 or 5 times a power of ten apart)."""
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** np.floor(np.log10(raw)) if raw > 0 else 1.0
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    start = np.ceil(low / step) * step
    return [float(v) for v in np.arange(start, high + step * 1e-9, step)]


def _label(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3g}"


def _frame(axes: Axes, title: str, x_label: str, y_label: str, body: list[str],
           x_ticks: bool = True) -> Markup:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" viewBox="0 0 {axes.width} '
             f'{axes.height}" width="{axes.width}" height="{axes.height}"><title>{escape(title)}</title>',
             f'<text x="{axes.width / 2}" y="16" class="plot-title" text-anchor="middle">{escape(title)}</text>']
    bottom, left = axes.height - MARGIN["bottom"], MARGIN["left"]
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{axes.width - MARGIN["right"]}" y2="{bottom}" class="axis"/>')
    parts.append(f'<line x1="{left}" y1="{MARGIN["top"]}" x2="{left}" y2="{bottom}" class="axis"/>')
    for tick in _ticks(*axes.y_range):
        y = axes.y(tick)
        parts.append(f'<line x1="{left - 4}" y1="{y:.1f}" x2="{axes.width - MARGIN["right"]}" y2="{y:.1f}" '
                     f'class="grid"/><text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(tick)}</text>')
    if x_ticks:
        for tick in _ticks(*axes.x_range):
            x = axes.x(tick)
            parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{_label(tick)}</text>')
    parts.append(f'<text x="{axes.width / 2}" y="{axes.height - 6}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text transform="translate(13 {axes.height / 2}) rotate(-90)" text-anchor="middle">'
                 f'{escape(y_label)}</text>')
    parts.extend(body)
    parts.append("</svg>")
    return Markup("".join(parts))


def scatter(xs: Sequence[float], ys: Sequence[float], *, title: str, x_label: str, y_label: str,
            jitter: float = 0.0, seed: int = 0) -> Markup:
    """Points with optional uniform jitter (ratings are discrete: without it they stack on a grid)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if jitter:
        rng = np.random.default_rng(seed)
        x = x + rng.uniform(-jitter, jitter, len(x))
        y = y + rng.uniform(-jitter, jitter, len(y))
    axes = Axes(_padded(x), _padded(y))
    dots = [f'<circle cx="{axes.x(a):.1f}" cy="{axes.y(b):.1f}" r="2.6" class="dot"/>' for a, b in zip(x, y, strict=True)]
    return _frame(axes, title, x_label, y_label, dots)


def histogram(series: dict[str, Sequence[float]], *, title: str, x_label: str, bins: int = 20,
              mark: float | None = None) -> Markup:
    """Overlaid histograms on shared bins; ``mark`` draws a vertical line (e.g. the mean)."""
    values = {name: np.asarray(v, dtype=float) for name, v in series.items() if len(v)}
    edges = np.histogram_bin_edges(np.concatenate(list(values.values())), bins=bins)
    if edges[0] == edges[-1]:
        edges = np.array([edges[0] - 0.5, edges[0] + 0.5])
    counts = {name: np.histogram(v, bins=edges)[0] for name, v in values.items()}
    axes = Axes((float(edges[0]), float(edges[-1])), (0.0, float(max(c.max() for c in counts.values())) * 1.08))
    body = []
    for index, (name, count) in enumerate(counts.items()):
        colour = PALETTE[index % len(PALETTE)]
        for left, right, n in zip(edges[:-1], edges[1:], count, strict=True):
            if n:
                top = axes.y(n)
                body.append(f'<rect x="{axes.x(left):.1f}" y="{top:.1f}" width="{max(axes.x(right) - axes.x(left) - 1, 1):.1f}" '
                            f'height="{axes.y(0) - top:.1f}" fill="{colour}" fill-opacity="0.55"><title>'
                            f'{escape(name)}: {int(n)} in [{left:.3g}, {right:.3g})</title></rect>')
    if mark is not None:
        body.append(f'<line x1="{axes.x(mark):.1f}" y1="{MARGIN["top"]}" x2="{axes.x(mark):.1f}" '
                    f'y2="{axes.y(0):.1f}" class="mark"/>')
    body.extend(_legend(list(counts), axes))
    return _frame(axes, title, x_label, "count", body)


def _legend(names: list[str], axes: Axes) -> list[str]:
    if len(names) < 2:
        return []
    right = axes.width - MARGIN["right"] - 110
    return [f'<rect x="{right}" y="{MARGIN["top"] + 4 + 16 * i}" width="10" height="10" '
            f'fill="{PALETTE[i % len(PALETTE)]}" fill-opacity="0.7"/><text x="{right + 14}" '
            f'y="{MARGIN["top"] + 13 + 16 * i}">{escape(name)}</text>' for i, name in enumerate(names)]


def bars(labels: Sequence[str], values: Sequence[float], *, title: str, y_label: str) -> Markup:
    """One bar per label (negative values hang below zero)."""
    vals = np.asarray(values, dtype=float)
    low, high = min(0.0, float(vals.min())), max(0.0, float(vals.max()))
    axes = Axes((0.0, float(len(vals))), (low, high) if low != high else (0.0, 1.0),
                width=max(WIDTH, 40 + 34 * len(vals)))
    body = []
    for index, (label, value) in enumerate(zip(labels, vals, strict=True)):
        top, zero = axes.y(max(value, 0.0)), axes.y(min(value, 0.0))
        x = axes.x(index + 0.15)
        body.append(f'<rect x="{x:.1f}" y="{top:.1f}" width="{axes.x(index + 0.85) - x:.1f}" height="{max(zero - top, 0.5):.1f}" '
                    f'fill="{PALETTE[0]}"><title>{escape(label)}: {value:.4g}</title></rect>')
        centre = axes.x(index + 0.5)
        body.append(f'<text x="{centre:.1f}" y="{axes.height - MARGIN["bottom"] + 14}" text-anchor="end" '
                    f'transform="rotate(-30 {centre:.1f} {axes.height - MARGIN["bottom"] + 14})" class="small">'
                    f'{escape(label[:18])}</text>')
    return _frame(axes, title, "", y_label, body, x_ticks=False)


def heatmap(labels: Sequence[object], matrix: Sequence[Sequence[int]], *, title: str, row_label: str,
            column_label: str) -> Markup:
    """A confusion matrix: rows are the humans' labels, columns the judge's, counts in the cells."""
    size = len(labels)
    cell = max(28, min(60, 300 // max(size, 1)))
    left, top = 80, 40
    width, height = left + cell * size + 20, top + cell * size + 40
    peak = max((max(row) for row in matrix), default=0) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}"><title>{escape(title)}</title>',
             f'<text x="{width / 2}" y="16" class="plot-title" text-anchor="middle">{escape(title)}</text>']
    for r, row in enumerate(matrix):
        for c, count in enumerate(row):
            shade = count / peak
            parts.append(f'<rect x="{left + c * cell}" y="{top + r * cell}" width="{cell - 1}" height="{cell - 1}" '
                         f'fill="{PALETTE[0]}" fill-opacity="{0.08 + 0.85 * shade:.2f}"/>'
                         f'<text x="{left + c * cell + cell / 2}" y="{top + r * cell + cell / 2 + 4}" text-anchor="middle" '
                         f'class="{"light" if shade > 0.55 else ""}">{int(count)}</text>')
    for i, label in enumerate(labels):
        parts.append(f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" text-anchor="end">{escape(str(label))}</text>')
        parts.append(f'<text x="{left + i * cell + cell / 2}" y="{top - 6}" text-anchor="middle">{escape(str(label))}</text>')
    parts.append(f'<text x="{left + cell * size / 2}" y="{height - 10}" text-anchor="middle">{escape(column_label)} '
                 f'(columns)</text><text x="8" y="{top + cell * size + 24}">{escape(row_label)} (rows)</text></svg>')
    return Markup("".join(parts))


def trajectory(steps: Sequence[float], scores: Sequence[float | None], best: Sequence[float | None], *,
               title: str, y_label: str) -> Markup:
    """An optimiser's search: each evaluation as a dot, the best so far as a step line."""
    known = [v for v in (*scores, *best) if v is not None]
    axes = Axes(_padded(steps, 0.02), _padded(known))
    body = [f'<circle cx="{axes.x(s):.1f}" cy="{axes.y(v):.1f}" r="2.6" class="dot"/>'
            for s, v in zip(steps, scores, strict=True) if v is not None]
    path, last = [], None
    for s, b in zip(steps, best, strict=True):
        if b is None:
            continue
        if last is not None:
            path.append(f"L{axes.x(s):.1f},{axes.y(last):.1f}")
        path.append(f"{'L' if path else 'M'}{axes.x(s):.1f},{axes.y(b):.1f}")
        last = b
    if path:
        body.append(f'<path d="{" ".join(path)}" class="best"/>')
    body.extend(_legend(["evaluation", "best so far"], axes))
    return _frame(axes, title, "evaluations", y_label, body)


def calibration(expected: Sequence[float], observed: Sequence[float], counts: Sequence[int], *, title: str,
                x_label: str, y_label: str) -> Markup:
    """Mean human value per bin of the judge's expected score, both on [0, 1]; the diagonal is perfect."""
    axes = Axes((0.0, 1.0), (0.0, 1.0))
    peak = max(counts) or 1
    body = [f'<line x1="{axes.x(0)}" y1="{axes.y(0)}" x2="{axes.x(1)}" y2="{axes.y(1)}" class="mark"/>']
    points = " ".join(f"{axes.x(e):.1f},{axes.y(o):.1f}" for e, o in zip(expected, observed, strict=True))
    body.append(f'<polyline points="{points}" class="best"/>')
    for e, o, n in zip(expected, observed, counts, strict=True):
        body.append(f'<circle cx="{axes.x(e):.1f}" cy="{axes.y(o):.1f}" r="{2.5 + 5 * (n / peak) ** 0.5:.1f}" '
                    f'class="dot"><title>{n} items: judge {e:.2f}, human {o:.2f}</title></circle>')
    return _frame(axes, title, x_label, y_label, body)


def forest(systems: Sequence[str], series: dict[str, tuple[Sequence[float], Sequence[float], Sequence[float]]], *,
           title: str, x_label: str, x_range: tuple[float, float] | None = None, number: str = "{:.3f}") -> Markup:
    """Per-system estimates with intervals, one row per system and one colour per estimator.
    ``x_range``: the axis (default: the values', padded); ``number``: how a tooltip writes them."""
    size, kinds = len(systems), len(series)
    row = 10 + 8 * kinds
    left, top = 150, 30
    height = top + row * size + 60
    values = [v for triple in series.values() for part in triple for v in part if v is not None and np.isfinite(v)]
    low_x, high_x = x_range or _padded(values or [0.0, 1.0])
    width = WIDTH + 120
    span = width - left - MARGIN["right"]

    def x(value: float) -> float:
        return left + (value - low_x) / ((high_x - low_x) or 1.0) * span

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}"><title>{escape(title)}</title>',
             f'<text x="{width / 2}" y="16" class="plot-title" text-anchor="middle">{escape(title)}</text>']
    bottom = top + row * size
    for tick in _ticks(low_x, high_x):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" y2="{bottom}" class="grid"/>'
                     f'<text x="{x(tick):.1f}" y="{bottom + 14}" text-anchor="middle">{_label(tick)}</text>')
    for i, system in enumerate(systems):
        y0 = top + i * row
        parts.append(f'<text x="{left - 6}" y="{y0 + row / 2 + 4:.1f}" text-anchor="end">{escape(str(system))}</text>')
        for k, (name, (mid, low, high)) in enumerate(series.items()):
            if mid[i] is None or not np.isfinite(mid[i]):
                continue
            y = y0 + 6 + 8 * k
            colour = PALETTE[k % len(PALETTE)]
            shown = number.format(mid[i])
            if low[i] is not None and high[i] is not None and np.isfinite(low[i]) and np.isfinite(high[i]):
                parts.append(f'<line x1="{x(low[i]):.1f}" y1="{y}" x2="{x(high[i]):.1f}" y2="{y}" stroke="{colour}" '
                             f'stroke-width="2"/>')
                shown += f" [{number.format(low[i])}, {number.format(high[i])}]"
            parts.append(f'<circle cx="{x(mid[i]):.1f}" cy="{y}" r="3" fill="{colour}"><title>{escape(name)} '
                         f'{escape(str(system))}: {escape(shown)}</title></circle>')
    for k, name in enumerate(series):
        parts.append(f'<rect x="{left + 110 * k}" y="{height - 18}" width="10" height="10" '
                     f'fill="{PALETTE[k % len(PALETTE)]}"/><text x="{left + 14 + 110 * k}" y="{height - 9}" '
                     f'class="small">{escape(name)}</text>')
    parts.append(f'<text x="{(left + width) / 2}" y="{bottom + 28}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def rank_sets(systems: Sequence[str], series: dict[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
              *, title: str, x_label: str = "rank (1 = best)") -> Markup:
    """Each system's point rank (dot) and rank set (bar from its best to its worst possible rank),
    one colour per estimator: a forest plot on the rank axis, 1 on the left."""
    return forest(systems, series, title=title, x_label=x_label, x_range=(0.5, len(systems) + 0.5), number="{:.0f}")


def significance(labels: Sequence[str], matrix: Sequence[Sequence[int]], *, title: str) -> Markup:
    """Which system beats which: +1 row significantly above column, -1 below, 0 not separable."""
    size = len(labels)
    cell = max(12, min(36, 420 // max(size, 1)))
    left, top = 150, 40
    width, height = left + cell * size + 20, top + cell * size + 40
    colours = {1: "#2e8b57", -1: "#c0392b", 0: "#e4e4e8"}
    words = {1: "above", -1: "below", 0: "not separable from"}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}"><title>{escape(title)}</title>',
             f'<text x="{width / 2}" y="16" class="plot-title" text-anchor="middle">{escape(title)}</text>']
    for r, row in enumerate(matrix):
        for c, sign in enumerate(row):
            if r == c:
                continue
            parts.append(f'<rect x="{left + c * cell}" y="{top + r * cell}" width="{cell - 1}" height="{cell - 1}" '
                         f'fill="{colours[int(sign)]}"><title>{escape(str(labels[r]))} {words[int(sign)]} '
                         f'{escape(str(labels[c]))}</title></rect>')
    for i, label in enumerate(labels):
        parts.append(f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" text-anchor="end" class="small">'
                     f'{escape(str(label))}</text>')
        parts.append(f'<text x="{left + i * cell + cell / 2}" y="{top - 6}" text-anchor="middle" class="small">'
                     f'{i + 1}</text>')
    parts.append(f'<text x="8" y="{height - 10}" class="small">green: row system significantly above the column '
                 f'system (Holm-adjusted); red: below; grey: not separable. Columns numbered as the rows.</text></svg>')
    return Markup("".join(parts))
