"""CLI commands, one module per command family, registered on the typer app here.

Each module exposes ``register(app)`` (or ``register(models_app)``); keeping them apart lets
several people add commands without editing one long file.

A command module imports at its top only what declaring its options needs (typer, rich, help texts);
whatever the command uses (data, models, statistics, numpy, pandas) it imports inside its function,
so that ``judgelab --help`` starts at once (tests/unit/test_cli_startup.py holds that).
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

# (module, attribute on which to register): add a line when you add a command module.
_COMMAND_MODULES = [
    ("judgelab.commands.models", "models"),
    ("judgelab.commands.generate", "app"),
    ("judgelab.commands.meta", "app"),
    ("judgelab.commands.judge", "app"),
    ("judgelab.commands.fit", "app"),
    ("judgelab.commands.demo", "app"),
    ("judgelab.commands.report", "app"),
    ("judgelab.commands.optimize", "app"),
    ("judgelab.commands.qrels", "app"),
    ("judgelab.commands.icl", "app"),
    ("judgelab.commands.similarity", "app"),
    ("judgelab.commands.train", "app"),
    ("judgelab.commands.evaluate", "app"),
    ("judgelab.commands.sample", "app"),
    ("judgelab.commands.compare", "app"),
    ("judgelab.commands.annotate", "app"),
    ("judgelab.commands.audit", "app"),
    ("judgelab.commands.combine", "app"),
    ("judgelab.commands.cascade", "app"),
    ("judgelab.commands.turns", "app"),
    ("judgelab.commands.passages", "app"),
]


def register_all(app: typer.Typer, models_app: typer.Typer) -> None:
    targets = {"app": app, "models": models_app}
    for module_name, target in _COMMAND_MODULES:
        importlib.import_module(module_name).register(targets[target])
    for info in (*app.registered_commands, *models_app.registered_commands):
        if info.cls in (None, TyperCommand):  # the default: no command asked for a class of its own
            info.cls = BareFlagsCommand


class _BareFlags:
    """Help that shows no type beside a flag. typer 0.29 prints one for every option, so that ``--debug``,
    ``--json`` and ``--help`` read ``<bool>`` as if they took a value; a flag takes none.

    And a ``--help`` not given is False, not None: typer checks a None flag through a pydantic validator
    it builds on the spot, which made ``judgelab evaluate --help`` load pydantic for the root's ``--help``."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None and option.default is None:
            option.default = False
        return option

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""  # what typer prints in the type column, when set
        super().format_help(ctx, formatter)  # type: ignore[misc]


class BareFlagsGroup(_BareFlags, TyperGroup):
    """The ``judgelab`` app and its sub-apps (``models``)."""


class BareFlagsCommand(_BareFlags, TyperCommand):
    """Every command."""
