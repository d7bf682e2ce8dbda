"""A faithfulness judge's claims on the item page (``annotate --show-judge RUN``, docs/annotate.md): each claim
with its verdict in the judge's panel, and the answer's sentences marked by the verdicts of the claims drawn
from them, so an adjudicator sees which sentence the judge found unsupported beside the passages.

A claim is the judge's own sentence, not a span of the answer: it is placed on the answer's sentence that
shares most words with it (:func:`judgelab.judges.citations.attribute`, the rule that also carries an answer's
citations to its claims), and a claim that shares too few with every sentence is listed but marks none.
A sentence with several claims shows the worst verdict (contradicted, then not found, then supported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from judgelab.judges.citations import Citations, attribute

#: from the worst verdict to the best: a sentence shows the worst of its claims'
VERDICTS = ("contradicted", "not found", "supported")
#: a sentence ends at . ! ? before white space, or at a line break; the white space stays with the sentence
#: before it, so the pieces put together are the answer exactly
_PIECE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class Piece:
    """A run of the answer's text as the page shows it: its verdict (None: no claim placed on it) and the
    claims placed on it."""

    text: str
    verdict: str | None = None
    claims: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClaimsShown:
    """The claims of a judgment (``(claim, verdict)`` each) and the answer cut into pieces marked by them."""

    claims: tuple[tuple[str, str], ...]
    pieces: tuple[Piece, ...]


def claims_of(judgment: Any) -> list[tuple[str, str]]:
    """``(claim, verdict)`` of a faithfulness judgment's ``extra.claims``; [] for any other judgment."""
    listed = (getattr(judgment, "extra", None) or {}).get("claims")
    if not isinstance(listed, list):
        return []
    return [(str(c["claim"]), str(c["verdict"])) for c in listed
            if isinstance(c, dict) and c.get("claim") and c.get("verdict") in VERDICTS]


def pieces_of(text: str) -> list[str]:
    """``text`` cut after each sentence end (its white space kept): ``"".join(pieces_of(t)) == t``."""
    pieces, start = [], 0
    for end in _PIECE_END.finditer(text):
        pieces.append(text[start:end.end()])
        start = end.end()
    return [*pieces, text[start:]] if start < len(text) else pieces


def claims_shown(output: str | None, judgment: Any) -> ClaimsShown | None:
    """The judgment's claims and ``output`` marked by them; None when the judgment lists no claim."""
    claims = claims_of(judgment)
    if not claims or not output:
        return None
    texts = pieces_of(output)
    candidates = [(text.strip(), Citations(())) for text in texts]
    placed: dict[int, list[tuple[str, str]]] = {}
    for claim, verdict in claims:
        best = attribute(claim, [c for c in candidates if c[0]])
        if best is not None:
            placed.setdefault(next(k for k, c in enumerate(candidates) if c is best), []).append((claim, verdict))
    pieces = tuple(Piece(text, min((v for _, v in placed[k]), key=VERDICTS.index), tuple(c for c, _ in placed[k]))
                   if k in placed else Piece(text) for k, text in enumerate(texts))
    return ClaimsShown(tuple(claims), pieces)


__all__ = ["VERDICTS", "ClaimsShown", "Piece", "claims_of", "claims_shown", "pieces_of"]
