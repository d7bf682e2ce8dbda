"""CLI commands, one module per command family, registered on the typer app here.

Each module exposes ``register(app)`` (or ``register(models_app)``); keeping them apart lets
several people add commands without editing one long file.
"""

from __future__ import annotations

import importlib

import typer

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
    ("judgelab.commands.compare", "app"),
    ("judgelab.commands.annotate", "app"),
    ("judgelab.commands.audit", "app"),
]


def register_all(app: typer.Typer, models_app: typer.Typer) -> None:
    targets = {"app": app, "models": models_app}
    for module_name, target in _COMMAND_MODULES:
        importlib.import_module(module_name).register(targets[target])
