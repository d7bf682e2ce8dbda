"""Options that name a file of ids (``--human-ids``, ``sample --exclude``, ``annotate --ids``).

``typer.Option("--human-ids", callback=ids_file("--human-ids"))``: a value that names no file is a
ConfigError before anything is read, saying which forms the option takes. ``--human-ids 5`` (meant as "label
5") said only "5: no such file". A file that exists is left to its reader, which names the line of a bad id.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from judgelab.errors import ConfigError

DEFAULT_BUDGET = "20"  # the draw a message suggests when the value given is no count


def _budget(value: str) -> str:
    """``value`` when it reads as a count (``5``): what the user probably meant to draw; else DEFAULT_BUDGET."""
    return value if value.isascii() and value.isdigit() and int(value) > 0 else DEFAULT_BUDGET


def _draw_hint(ctx: typer.Context, value: str) -> str:
    """``judgelab sample --data ITEMS --budget N --out ids.txt``, with the command's own --data when it was read."""
    data = ctx.params.get("data") or "ITEMS"
    budget = _budget(value)
    return f"judgelab sample --data {data} --budget {budget} --out ids.txt draws {budget}"


def _forms(option: str, ctx: typer.Context, value: str) -> str:
    """What ``option`` takes, as the message after "no such file" says it."""
    if option == "--human-ids":
        return (f"give 'all' (every item's own human score is a label) or a file of ids (query ids for runs), "
                f"one per line ({_draw_hint(ctx, value)})")
    if option == "--exclude":
        return "give a file of the ids already labelled, one per line (as judgelab sample --out wrote them)"
    return (f"give a file of item ids, one per line ({_draw_hint(ctx, value)}), or --sample {_budget(value)} for "
            "that many items at random")


def ids_file(option: str) -> Callable[[typer.Context, typer.CallbackParam, Any], Any]:
    """A typer callback for ``option``: lets None, an existing path (and ``all`` for --human-ids) through, else
    raises a ConfigError naming the value and the forms ``option`` takes."""

    def check(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is None or (option == "--human-ids" and value == "all") or Path(value).exists():
            return value
        raise ConfigError(f"{option} {value}: no such file; {_forms(option, ctx, str(value))}")

    return check
