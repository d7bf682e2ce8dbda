"""Text from data made safe to show: a system name, an id or a path can neither move a terminal's cursor,
end a Markdown table row nor make a JUnit file that is not well-formed XML.

``printable`` writes control characters (C0, DEL, C1: a carriage return, an escape sequence, NUL), lone
surrogates and the noncharacters XML refuses (U+FFFE, U+FFFF) as visible escapes, as Python's ``repr``
does (``\\r``, ``\\x1b``, ``\\ud800``, ``\\uffff``); ``markdown_text`` also puts a backslash before each
mark that starts or ends markup in the middle of a line, which CommonMark then shows as itself: no link,
image, HTML, entity, emphasis, code span, table cell, heading end, GitHub emoji (``:x:``), mention or math
can start in the text. Marks that act only at the start of a line (``-``, ``+``, ``=``, ``1.``) are left:
the text is one line inside a heading or a table cell.
"""

from __future__ import annotations

import functools
import re

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# CommonMark lets a backslash make any ASCII punctuation literal; these act mid-line (":" before a name: emoji)
_MARKUP = re.compile(r"[\\`*_~\[\]!<>&|#@$]|:(?=[\w+-])")


@functools.cache
def _hidden(keep: str) -> re.Pattern[str]:
    kept = "".join(re.escape(c) for c in keep)
    return re.compile(f"(?![{kept}])[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]" if kept else
                      "[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(text: object, keep: str = "") -> str:
    """``str(text)`` with its control characters, lone surrogates and U+FFFE/U+FFFF as visible escapes
    (``keep``: characters to leave, e.g. the line breaks of a message of several lines)."""
    return _hidden(keep).sub(_escaped, str(text))


def markdown_text(text: object) -> str:
    """``text`` for a Markdown (CommonMark, GitHub) document, shown as itself on one line."""
    return _MARKUP.sub(lambda mark: "\\" + mark.group(), printable(text))
