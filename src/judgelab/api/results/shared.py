"""What every result class of the front door shares: copying a deep result into its subclass, and a table."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any


def wrap(cls: type, result: Any, **extra: Any) -> Any:
    """``result`` as ``cls``, its subclass here: the same field values, and ``extra`` for the new fields."""
    values = {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.init}
    return cls(**values, **extra)


def frame(rows: list[dict[str, Any]], columns: Sequence[str] | None = None):
    """``rows`` as a pandas DataFrame (pandas loaded here, when a result is first shown as a table)."""
    import pandas as pd

    return pd.DataFrame.from_records(rows, columns=columns)
