"""Numeric command-line options, checked against the ranges the configs use (``judgelab.limits``), and
options that take one of a few words (``one_of``).

``typer.Option(None, "--samples", callback=checked("Samples"))``: a value out of range (``--limit -1``,
``--timeout inf``) is a ConfigError naming the option, the value and the range, so the CLI prints one
``error:`` line and exits 2 before anything is read, paid or written. typer's own ``min``/``max``
would let ``inf`` and ``nan`` through and print a usage panel; pydantic says why in one line.

The range is named, not imported: ``judgelab.limits`` and pydantic load with the first value checked,
so that ``judgelab --help`` loads neither (tests/unit/test_cli_startup.py checks every name exists).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from judgelab.errors import ConfigError


def checked(kind: str) -> Callable[[typer.CallbackParam, Any], Any]:
    """A typer callback that lets a value of ``judgelab.limits.<kind>`` (a constrained type) through, else
    raises an ArgumentError naming the option (``limits.checked_value``, which Python's verbs call with their
    arguments' names). The validator is built on the first value, not when the command is declared."""

    def check(param: typer.CallbackParam, value: Any) -> Any:
        if value is None:  # an optional option not given
            return None
        import judgelab.limits as limits

        return limits.checked_value(kind, value, max(param.opts, key=len))

    return check


def one_of(*choices: str) -> Callable[[typer.CallbackParam, Any], Any]:
    """A typer callback that lets one of ``choices`` through, else raises a ConfigError naming them, whatever
    else is given (a word checked only where it is used goes unchecked when that code does not run)."""

    def check(param: typer.CallbackParam, value: Any) -> Any:
        if value is not None and value not in choices:
            raise ConfigError(f"{max(param.opts, key=len)} {value!r}: choose {' or '.join(choices)}")
        return value

    return check
