"""CSV cells a spreadsheet will not run as formulas (OWASP, "CSV Injection"), and back.

Excel, LibreOffice and Google Sheets read a cell that starts with ``= + - @``, a tab or a carriage
return as a formula, so a system named ``=HYPERLINK(...)`` in an exported table would run when the
file is opened. Every CSV judgelab writes passes its text cells through ``safe_cell``, which puts a
single quote before such a text (spreadsheets show the text, without the quote); numbers are left
as they are, so ``-0.5`` stays a number. A text that already starts with quotes before such a
character gets one more, so ``read_cell`` (judgelab's CSV reader) gives every text back exactly.

The report tables (``safe_csv``: systems.csv, pairs.csv, similarity weights) also show control characters
as visible escapes (``\x1b``, as ``judgelab.printable`` does for the terminal): a system named with an
escape sequence would otherwise set a terminal's title or clear its screen when the file is printed. Tab,
line feed and carriage return stay (a CSV cell holds them, quoted). Data files (``save_items``) keep their
texts exact: they are read back, and a reader cannot tell an escape it wrote from a user's ``\x1b``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

_FORMULA_START = re.compile(r"'*[=+\-@\t\r]")
_TERMINAL = "\t\n\r"  # controls a CSV cell holds (quoted); the others a terminal acts on (ESC, BEL, C1 ...)


def safe_cell(value: Any) -> Any:
    """``value`` with a quote before it when it is a text a spreadsheet would run; anything else as is."""
    if isinstance(value, str) and _FORMULA_START.match(value):
        return "'" + value
    return value


def read_cell(text: str) -> str:
    """The text ``safe_cell`` was given (one quote less before a formula-like start)."""
    return text[1:] if text[:1] == "'" and _FORMULA_START.match(text, 1) else text


def shown_cell(value: Any) -> Any:
    """``safe_cell`` of ``value`` with its control characters (but tab and line breaks) as visible escapes."""
    from judgelab.printable import printable

    return safe_cell(printable(value, keep=_TERMINAL) if isinstance(value, str) else value)


def safe_csv(frame: pd.DataFrame, **to_csv: Any) -> str:
    """``frame.to_csv(**to_csv)`` with every text cell, row label and column name made safe (RFC 4180 line
    ends) and shown (``shown_cell``): a report table, read by people and spreadsheets, not read back."""
    from pandas.api.types import is_numeric_dtype

    frame = frame.copy()
    frame.index = frame.index.map(shown_cell)
    frame.columns = frame.columns.map(shown_cell)
    for column in range(frame.shape[1]):
        if not is_numeric_dtype(frame.dtypes.iloc[column]):  # numbers stay numbers
            frame.isetitem(column, frame.iloc[:, column].map(shown_cell))
    # "\r\n" (RFC 4180) also makes the writer quote a cell holding a lone "\r", which a "\n" ends
    # unquoted, so a reader would split the row there
    return frame.to_csv(**{"lineterminator": "\r\n", **to_csv})
