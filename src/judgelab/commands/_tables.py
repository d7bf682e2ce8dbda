"""Tables of named rows (systems, runs) that read at any terminal width.

A name never wraps and never vanishes: its column is as wide as the longest name. When the terminal
is narrower than the table, a name longer than the room left is shortened in its middle
(``meta-lla…Instruct``) and written out whole in a legend below the table; and while that room is
under ``NAME_LEAST`` cells, or more than half of the names would be shortened, columns are left out
first, in the order the caller states (each command documents its order). rich alone shrinks the name column to two characters at 80 columns and folds the
names into fragments (issue 39, item 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from judgelab.printable import printable

#: Cells a name column gets before any other column is left out for it (longer names are shortened).
NAME_LEAST = 12
#: Cells the names should have before a table trades detail for them (evaluate's ± half-widths).
NAME_ROOM = 24
ELLIPSIS = "…"


@dataclass
class NamedTable:
    """The table, the columns left out (in the order they were), and the shortened names (shown -> full)."""

    table: Table
    left_out: list[str] = field(default_factory=list)
    legend: dict[str, str] = field(default_factory=dict)

    def notes(self, width: int, noun: str = "names") -> list[str]:
        """Lines to print below the table (each with ``soft_wrap``: a name in them is never broken)."""
        lines = []
        if self.left_out:
            lines.append(f"[dim]left out at {width} columns, to keep the {noun} whole: "
                         f"{', '.join(map(escape, self.left_out))} (a wider terminal or --json shows them)[/]")
        if self.legend:
            lines.append(f"{noun} shortened in the table:")
            lines += [f"  {escape(short)} = {escape(_capped(full))}" for short, full in self.legend.items()]
        return lines


#: The most of a name a legend line shows: a 200,000-character name held the console's highlighter (a regex
#: that backtracks over the whole line) for more than ten minutes; --json and the report have it whole.
LEGEND_MOST = 240


def _capped(name: str) -> str:
    if len(name) <= LEGEND_MOST:
        return name
    return f"{name[:160]}…{name[-60:]} ({len(name):,} characters; --json has it whole)"


def named_table(names: Sequence[str], columns: Sequence[tuple[str, Sequence[str]]], width: int, *,
                name_header: str = "system", left_out_first: Sequence[str] = (), wrap: Sequence[str] = (),
                **options: Any) -> NamedTable:
    """A table whose first column is ``names`` (raw: escaped here) and then ``columns`` as (header, cells)
    pairs of rich markup, fitted to ``width`` cells. Each column stays unwrapped (numbers whole) but those
    named in ``wrap`` (texts, which wrap at spaces, never inside a word); the columns named in
    ``left_out_first`` are left out in that order while the names lack ``NAME_LEAST`` cells (or the
    longest name's width, if less) or more than half of them would be shortened; names still too long
    are shortened. ``options`` go to
    ``rich.table.Table`` (title, box, ...)."""
    if options.get("title") and "min_width" not in options:  # wide enough for its title on one line, if it can
        options["min_width"] = min(width, Text.from_markup(options["title"]).cell_len)
    texts = [printable(name) for name in names]  # as the console shows them (control characters escaped)
    longest = max([cell_len(text) for text in texts] + [cell_len(name_header)])
    wanted = min(longest, max(NAME_LEAST, cell_len(name_header)))
    kept = list(columns)
    left_out: list[str] = []
    droppable = [header for header in left_out_first if any(header == h for h, _ in columns)]
    room = _room(kept, width, wrap, options)

    def crowded(room: int) -> bool:
        return room < wanted or 2 * sum(cell_len(text) > room for text in texts) > len(texts)

    while crowded(room) and droppable:
        header = droppable.pop(0)
        kept = [column for column in kept if column[0] != header]
        left_out.append(header)
        room = _room(kept, width, wrap, options)
    shown = shortened(texts, max(room, cell_len(name_header), len(ELLIPSIS) + 2))
    legend = {short: text for text, short in zip(texts, shown, strict=True) if short != text}
    # the room the names leave, shared among the wrapping columns (up to their widest cell): rich itself
    # would squeeze them evenly, cutting a long word in the narrowest
    spare = room - max(cell_len(short) for short in [*shown, name_header])
    extents = {header: _extent(header, cells) for header, cells in kept if header in wrap}
    widths = {header: least for header, (least, _) in extents.items()}
    while spare > 0 and any(widths[header] < most for header, (_, most) in extents.items()):
        for header, (_, most) in extents.items():
            if spare > 0 and widths[header] < most:
                widths[header] += 1
                spare -= 1
    return NamedTable(_table(shown, kept, name_header, widths, options), left_out, legend)


def name_room(columns: Sequence[tuple[str, Sequence[str]]], width: int, **options: Any) -> int:
    """The cells a name column would get beside all of ``columns`` (unwrapped) in ``width`` (negative: none)."""
    return _room(columns, width, (), options)


def shortened_words(texts: Sequence[str], room: int) -> tuple[list[str], dict[str, str]]:
    """``texts`` for a column that wraps at spaces, ``room`` cells wide: each word longer than that (a system
    name in a statistic's label) shortened as ``shortened`` does; and the legend (shown -> whole)."""
    long = sorted({word for text in texts for word in text.split() if cell_len(word) > room})
    short = dict(zip(long, shortened(long, max(room, len(ELLIPSIS) + 2)), strict=True))
    return ([" ".join(short.get(word, word) for word in text.split(" ")) for text in texts],
            {shown: word for word, shown in short.items()})


def shortened(names: Sequence[str], room: int) -> list[str]:
    """Each name cut in its middle to ``room`` cells (``meta-lla…Instruct``), the shortened ones kept
    distinct from each other and from the names shown whole (a number before the tail where two meet)."""
    shown = [_middle(name, room) for name in names]
    taken = {name for name, short in zip(names, shown, strict=True) if name == short}
    for k, (name, short) in enumerate(zip(names, shown, strict=True)):
        if short == name:
            continue
        number = 1
        while short in taken:
            short = _middle(name, room, ellipsis=f"{ELLIPSIS}{number}{ELLIPSIS}")
            number += 1
        taken.add(short)
        shown[k] = short
    return shown


def _middle(name: str, room: int, ellipsis: str = ELLIPSIS) -> str:
    if cell_len(name) <= room:
        return name
    keep = max(room - cell_len(ellipsis), 2)
    head, tail = _cells_from_start(name, (keep + 1) // 2), _cells_from_start(name[::-1], keep // 2)[::-1]
    return head + ellipsis + tail


def _cells_from_start(text: str, cells: int) -> str:
    taken, used = [], 0
    for char in text:
        used += cell_len(char)
        if used > cells:
            break
        taken.append(char)
    return "".join(taken)


def _extent(header: str, cells: Sequence[str]) -> tuple[int, int]:
    """The fewest cells a column takes wrapped at spaces (its longest word) and the most (its widest cell)."""
    texts = [header, *(Text.from_markup(cell).plain for cell in cells)]
    return (max(cell_len(word) for text in texts for word in text.split() or [""]),
            max(cell_len(line) for text in texts for line in text.splitlines() or [""]))


def _table(names: Sequence[str], columns: Sequence[tuple[str, Sequence[str]]], name_header: str,
           widths: dict[str, int], options: dict[str, Any]) -> Table:
    """``widths``: the columns that wrap, at these widths; the others unwrapped."""
    table = Table(**options)
    table.add_column(name_header, no_wrap=True)
    for header, _ in columns:
        table.add_column(header, no_wrap=header not in widths, width=widths.get(header))
    for k, name in enumerate(names):
        table.add_row(Text(name), *(cells[k] for _, cells in columns))
    return table


def _room(columns: Sequence[tuple[str, Sequence[str]]], width: int, wrap: Sequence[str], options: dict[str, Any]) -> int:
    """``width`` minus what the table takes at least besides its name column: the rules and padding, and the
    other columns, whole (those in ``wrap``: their longest word)."""
    probe = Console(width=100_000)
    layout = {key: value for key, value in options.items() if key != "min_width"}  # rules and padding only
    bare = _table(["x"], [(str(k), ["x"]) for k in range(len(columns))], "x", {}, layout)
    overhead = Measurement.get(probe, probe.options, bare).maximum - (len(columns) + 1)
    return width - overhead - sum(_extent(header, cells)[0 if header in wrap else 1] for header, cells in columns)
