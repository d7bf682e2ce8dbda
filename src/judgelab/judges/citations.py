"""Citation markers in an answer, read without a model: which of the item's passages it cites, and which ids it
cites that the item has no passage for (hallucinated citations). The faithfulness judge's ``citations`` option
builds on it; the ``citations`` judge kind scores the share of valid citations without a model.

The rule (docs/faithfulness.md, "Citations"): a citation marker is a bracketed list of ids, ``[2]``,
``[1][3]``, ``[1, 3]``, ``[doc2; doc5]``, outside code. Each comma- or semicolon-separated token must be
either one of the item's passage ids (exactly, else ignoring case and spaces when that names one passage) or
look like an id: digits, or a prefix plus digits whose letters are those of a prefix of the item's ids
(``doc9`` when the item has ``doc1``; any digits when it has none). A bracket with a token that is neither
(``[sic]``, ``[citation needed]``, ``[^1]``, ``[1, p. 5]``) is text, not a citation; so are a markdown link's
text (``[text](url)``, ``![alt](url)``) and a link definition (``[1]: https://...`` opening a line).

:func:`segments` and :func:`attribute` find the part of an answer a claim comes from, and so the markers that
cite it, for claims a model listed without the markers it was asked to keep.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.judges.base import JudgeConfig, OnJudgment
from judgelab.llm.client import Client

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

# code spans and fenced blocks are blanked first: ``xs[1]`` in code indexes a list, it cites nothing
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
# a bracket group not followed by "(" (a markdown link or image); no nesting, no line break, bounded length
_GROUP = re.compile(r"\[([^\[\]\n]{1,200})\](?!\()")
_SEPARATOR = re.compile(r"\s*[,;]\s*")
_DIGITS = re.compile(r"\d{1,9}")
_PREFIXED = re.compile(r"(.*?)\d{1,9}")


@dataclass(frozen=True)
class Marker:
    """One citation marker as written (brackets included), where it is, and the ids it names."""

    text: str
    start: int
    end: int
    #: the item's passage ids it names, spelt as the item spells them
    known: tuple[str, ...]
    #: tokens that look like ids but name no passage of the item
    unknown: tuple[str, ...]


@dataclass(frozen=True)
class Citations:
    """The citation markers of one text, in order, against the ids of one item's passages."""

    markers: tuple[Marker, ...]

    @property
    def cited(self) -> list[str]:
        """The passage ids cited, each once, in order of first citation."""
        return list(dict.fromkeys(i for m in self.markers for i in m.known))

    @property
    def unknown(self) -> list[str]:
        """The ids cited that name no passage of the item (hallucinated citations), each once."""
        return list(dict.fromkeys(i for m in self.markers for i in m.unknown))

    @property
    def count(self) -> int:
        """Every id of every marker, repeats included (``[1] ... [1]`` is two citations)."""
        return sum(len(m.known) + len(m.unknown) for m in self.markers)

    @property
    def valid(self) -> int:
        return sum(len(m.known) for m in self.markers)

    @property
    def valid_share(self) -> float | None:
        """The share of citations that name a passage of the item; None when the text cites nothing."""
        return self.valid / self.count if self.count else None

    def as_dict(self) -> dict[str, Any]:
        return {"markers": [m.text for m in self.markers], "cited": self.cited, "unknown": self.unknown,
                "count": self.count, "valid": self.valid}


class _Ids:
    """An item's passage ids, and how to tell which tokens name one or look like one."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.exact = set(ids)
        loose: dict[str, list[str]] = {}
        for one in ids:
            loose.setdefault(_loose(one), []).append(one)
        # ignoring case and spaces only where that still names one passage ("Doc2" for "doc2", not for "doc2"/"DOC2")
        self.loose = {key: found[0] for key, found in loose.items() if len(found) == 1}
        self.prefixes = {p for p in (_prefix_letters(one) for one in ids) if p}

    def known(self, token: str) -> str | None:
        return token if token in self.exact else self.loose.get(_loose(token))

    def looks_like_one(self, token: str) -> bool:
        if _DIGITS.fullmatch(token):
            return True
        letters = _prefix_letters(token)
        return bool(letters) and letters in self.prefixes


def _loose(token: str) -> str:
    return "".join(token.split()).casefold()


def _prefix_letters(token: str) -> str:
    """The letters before a token's closing digits, lower case ("doc" for "Doc-12"); "" when it does not end
    in digits or has no letter before them."""
    match = _PREFIXED.fullmatch(token)
    return "".join(ch for ch in match.group(1).casefold() if ch.isalpha()) if match else ""


def find_citations(text: str | None, ids: Sequence[str]) -> Citations:
    """The citation markers of ``text`` against the passage ids ``ids`` (see the module's rule)."""
    text = text or ""
    blanked = _CODE.sub(lambda m: " " * len(m.group(0)), text)  # same length: the spans stay the text's
    table = _Ids(ids)
    markers = []
    for match in _GROUP.finditer(blanked):
        if _is_link_definition(blanked, match):
            continue
        tokens = [t for t in _SEPARATOR.split(match.group(1).strip()) if t]
        known = [table.known(t) for t in tokens]
        if not tokens or not all(k is not None or table.looks_like_one(t) for t, k in zip(tokens, known, strict=True)):
            continue
        markers.append(Marker(text[match.start():match.end()], match.start(), match.end(),
                              tuple(k for k in known if k is not None),
                              tuple(t for t, k in zip(tokens, known, strict=True) if k is None)))
    return Citations(tuple(markers))


def _is_link_definition(text: str, match: re.Match[str]) -> bool:
    """``[1]: https://...`` opening a line defines a markdown reference link; it cites nothing."""
    line_start = text.rfind("\n", 0, match.start()) + 1
    return not text[line_start:match.start()].strip() and text[match.end():match.end() + 1] == ":"


def passage_ids(item: Item) -> list[str]:
    return [p.id for p in item.contexts or ()]


def citations_of(item: Item) -> Citations:
    """The citation markers of the item's output against its passages' ids (none when it has no ``contexts``:
    then every id-like citation is unknown)."""
    return find_citations(item.output, passage_ids(item))


def without_markers(text: str, citations: Citations) -> str:
    """``text`` with its citation markers taken out, and the space left before punctuation closed up
    ("in 1889 [2]." becomes "in 1889.")."""
    for marker in reversed(citations.markers):
        text = text[:marker.start] + text[marker.end:]
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()


# -- which part of the output a claim comes from ----------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+")
#: words that say nothing of what a claim is about (a claim and a piece sharing only these are not matched)
_FILLER = frozenset("a an and are as at be by for from has have in is it its of on or that the their this to was "
                    "were which with".split())


def segments(text: str, ids: Sequence[str]) -> list[tuple[str, Citations]]:
    """The output cut at its sentence ends and after each run of markers, each piece with the markers that end it
    ("It was finished in 1889 [1]" with ``[1]``; "1889. [1]" too; a sentence ending without a marker with none)."""
    found = find_citations(text, ids)
    pieces: list[tuple[str, Citations]] = []
    start, k = 0, 0
    markers = found.markers
    while k <= len(markers):
        run_start = markers[k].start if k < len(markers) else len(text)
        run = []
        while k < len(markers) and (not run or not text[run[-1].end:markers[k].start].strip()):
            run.append(markers[k])
            k += 1
        sentences = _SENTENCE_END.split(text[start:run_start].rstrip())
        pieces += [(sentence, Citations(())) for sentence in sentences[:-1]]
        pieces.append((sentences[-1], Citations(tuple(run))))
        if not run:
            break
        start = run[-1].end
    return [(piece.strip(), cites) for piece, cites in pieces if _words(piece)]


def attribute(claim: str, pieces: Sequence[tuple[str, Citations]]) -> tuple[str, Citations] | None:
    """The piece of the output (:func:`segments`) sharing the most words with ``claim`` (filler words aside; on a
    tie the one with the larger share of its own words shared, then the first), if they share at least half the
    words of the shorter of the two: a claim says "The Eiffel Tower" where the answer says "It". Else None."""
    words = _words(claim)

    def overlap(piece: tuple[str, Citations]) -> tuple[int, float]:
        theirs = _words(piece[0])
        return len(words & theirs), len(words & theirs) / len(theirs)

    best = max(pieces, key=overlap, default=None)
    if best is None or not words or 2 * overlap(best)[0] < min(len(words), len(_words(best[0]))):
        return None
    return best


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _FILLER}


class CitationsJudge(JudgeConfig):
    """No model: the share of an output's citations that name one of the item's passages."""

    registry_name: ClassVar[str] = "citations"
    uses_llm: ClassVar[bool] = False
    kind: Literal["citations"] = "citations"
    aspect: str = "citations"

    def run(self, items: Sequence[Item], client: Client | None = None, on_judgment: OnJudgment | None = None
            ) -> list[Judgment]:
        return [self.emit(self._judgment(item), on_judgment) for item in items]

    def _judgment(self, item: Item) -> Judgment:
        if item.kind != "pointwise" or item.output is None:
            return self.error(item, "the citations judge reads the citations of an item's output, and this item has none")
        found = citations_of(item)
        extra = found.as_dict() | {"passages": len(item.contexts or ())}
        # as ALCE's precision, an answer that cites nothing scores 0: a RAG answer is asked to cite
        share = found.valid_share or 0.0
        if not found.count:
            explanation = "The output cites no passage."
        elif found.unknown:
            explanation = (f"{found.count - found.valid} of {found.count} citations name no passage of the item: "
                           f"{', '.join(found.unknown)}")
        else:
            explanation = f"All {found.count} citations name passages of the item."
        return Judgment(item_id=item.id, score=share, aspect=self.aspect, judge=self.name, explanation=explanation,
                        extra=extra)

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample

        passages = [{"id": "1", "text": "The council met on Monday."}, {"id": "2", "text": "It voted on the budget."}]
        outputs = ["The council met [1] and voted [2].", "The council met [1] and voted [7].", "It met [sic] [9]."]
        items = [Item.model_validate({"id": f"c{k}", "group_id": "g", "source": "What did the council do?",
                                      "output": output, "contexts": passages}) for k, output in enumerate(outputs)]
        return ContractExample(cls(), items)


__all__ = ["Citations", "CitationsJudge", "Marker", "attribute", "citations_of", "find_citations", "passage_ids",
           "segments", "without_markers"]
