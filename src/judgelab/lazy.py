"""Package attributes that load on first use (PEP 562), so that importing one light submodule
(``judgelab.llm.models``, ``judgelab.optimize.names``: what ``judgelab --help`` prints) does not load
the whole package. ``from judgelab.llm import Client`` works as before; only its cost moves to the
first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, homes: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose name ``X`` lives in submodule ``homes[X]``.
    Each name is imported once, on its first use, and kept in the package's namespace."""
    module = importlib.import_module(package)

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*vars(module), *homes})

    return __getattr__, __dir__
