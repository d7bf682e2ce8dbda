"""Read verdicts out of judge replies: ratings, preferences, logprob-weighted scores, JSON.

Only the judge's reply is ever parsed, never the prompt. A reply that yields no trustworthy
number is ``unparsable`` with a reason; nothing is clipped or guessed into range.

Rating extraction (``parse_rating``) ranks the markers small models produce, strongest first:

1. ``[[7]]`` (the format the prompts ask for, with or without ``Rating:``);
2. a label: ``Rating: 7``, ``**Score:** 7.5``, ``rating of 7``, ``Rating: [7]``;
3. a fraction of the scale's top or a rating verb: ``7/10``, ``7 out of 10``, ``I would rate it 7``;
4. a bold number: ``**7**``;
5. a bare number alone on the reply's first line (rating first) or last line (rating last).

The strongest kind present wins; among several of that kind, the first is taken when the rating
comes before the explanation (CoT none/suffix) and the last when it comes after (CoT prefix).
Markers are skipped when they are (a) the format example echoed from the instruction
(``for example: "Rating: [[10]]"``) or (b) quoted from a judged text: the marker also occurs in
the judged text and either sits between quotation marks or shares at least 8 more characters of
context with that text. A judge that merely writes the same rating as a quoted one is not
affected: a marker is only a quote if the text *around* it is a quote too. A marker a judged
text contains word for word yields to any the text does not contain, so an injected rating
never outvotes one the judge wrote itself.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import json_repair
from pydantic import BaseModel, ConfigDict

from judgelab.data.item import Item
from judgelab.llm.types import TokenLogprob

ParseStatus = Literal["ok", "unparsable"]
Pick = Literal["first", "last"]

# A number in ASCII digits, never cut short: "10" is not read as "1" followed by "0", "1e1" not as 1.
# Only 0-9: ``\d`` (and ``float``) also accept Arabic-Indic, full-width and other scripts' digits,
# which no prompt asks for; the look-aheads keep ``\d`` so "3٣" is no 3 either.
_NUM = r"-?[0-9]+(?:\.[0-9]+)?(?![\d.]*\d)(?![eE][+-]?\d)"
# A number that starts a range ("1 to 10", "1-5") is a scale description, not a rating.
_NOT_RANGE = r"(?!\s*(?:-|–|to)\s*\d)"
_NOT_MORE_DIGITS = r"(?![\d.]*\d)"

_TIERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("brackets", re.compile(rf"\[\[\s*(?P<num>{_NUM})\s*(?:/\s*(?P<den>[0-9]+)\s*)?\]\]")),
    (
        "label",
        re.compile(
            rf"\b(?:rating|score|grade)s?\b\s*(?:\*\*|__)?\s*(?:is|of|:|=|-|–|—)?\s*(?:\*\*|__)?\s*"
            rf"(?:a\s+)?\[{{0,2}}\s*(?P<num>{_NUM}){_NOT_RANGE}(?:\s*(?:/|out\s+of)\s*(?P<den>[0-9]+))?",
            re.IGNORECASE,
        ),
    ),
    (
        "fraction",
        re.compile(rf"(?<![\d/.])(?P<num>{_NUM})\s*(?:/|out\s+of)\s*(?P<den>[0-9]+)(?![\d/])", re.IGNORECASE),
    ),
    (
        "verb",
        re.compile(
            rf"\brat(?:e|es|ed)\b(?:\s+(?!(?:on|a\s+scale)\b)[A-Za-z']+){{0,4}}?\s+(?:a\s+|as\s+(?:a\s+)?)?"
            rf"(?P<num>{_NUM}){_NOT_RANGE}{_NOT_MORE_DIGITS}",
            re.IGNORECASE,
        ),
    ),
    ("bold", re.compile(rf"\*\*\s*(?P<num>{_NUM})\s*\*\*")),
)
# The fraction and verb markers are equally strong (tier 3 in the module docstring).
_TIER_RANK = {"brackets": 0, "label": 1, "fraction": 2, "verb": 2, "bold": 3, "bare": 4}

_BARE_LINE = re.compile(rf"^\W*?(?P<num>{_NUM})\W*$")
_QUOTES = "\"'“”‘’`«»"
_ECHO = re.compile(r"(?:for example|e\.g\.)[\s:,\"'“”]*(?:rating\s*:?\s*)?$", re.IGNORECASE)
_LABEL_BEFORE = re.compile(r"rating\s*:?\s*$", re.IGNORECASE)
_QUOTE_CONTEXT = 8


class ParsedScore(BaseModel):
    """A rating read from a reply. ``span`` locates the number in ``assistant_prefix + text``."""

    model_config = ConfigDict(frozen=True)

    score: float | None
    status: ParseStatus
    reason: str | None = None
    span: tuple[int, int] | None = None
    marker: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def judged_texts_of(item: Item) -> list[str]:
    """Every text of ``item`` a judge might quote: pass it as ``parse_rating(judged_texts=...)``."""
    fields = (item.output, item.output_a, item.output_b, item.passage, item.prompt, item.context, item.reference)
    return [text for text in fields if text]


def pick_for_cot(cot: str) -> Pick:
    """Which rating marker is the verdict: the last after an explanation (prefix CoT), else the first."""
    return "last" if cot == "prefix" else "first"


def parse_rating(
    text: str,
    bounds: tuple[float, float],
    *,
    pick: Pick = "last",
    assistant_prefix: str = "",
    judged_texts: Sequence[str | None] = (),
) -> ParsedScore:
    """The judge's rating in ``text`` on the scale ``bounds`` = (low, high), or why there is none.

    ``assistant_prefix`` is what the reply was forced to start with (``"Rating: [["``); it is
    parsed together with the reply. ``judged_texts`` (the output, source, ...) let markers quoted
    from them be recognised and skipped. Out-of-range ratings are unparsable, not clipped.
    """
    full = assistant_prefix + (text or "")
    if not full.strip():
        return _unparsable("empty reply")
    sources = [t for t in judged_texts if t]
    found = _candidates(full, pick)
    kept = _drop_quotes(full, found, sources)
    if not kept:
        reason = "only ratings quoted from the judged text or the instruction" if found else "no rating found"
        return _unparsable(reason)
    best_rank = min(_TIER_RANK[c.kind] for c in kept)
    best = [c for c in kept if _TIER_RANK[c.kind] == best_rank]
    chosen = best[0] if pick == "first" else best[-1]
    return _validated(chosen, bounds)


@dataclass(frozen=True)
class _Candidate:
    kind: str
    value: float
    denominator: int | None
    start: int  # of the whole marker
    end: int
    num_span: tuple[int, int]


def _candidates(full: str, pick: Pick) -> list[_Candidate]:
    found: list[_Candidate] = []
    for kind, pattern in _TIERS:
        for match in pattern.finditer(full):
            found.append(_candidate(kind, match))
    bare = _bare_number(full, pick)
    if bare is not None:
        found.append(bare)
    found.sort(key=lambda c: c.num_span[0])
    return found


def _candidate(kind: str, match: re.Match[str]) -> _Candidate:
    den = match.groupdict().get("den")
    return _Candidate(
        kind=kind,
        value=float(match.group("num")),
        denominator=int(den) if den else None,
        start=match.start(),
        end=match.end(),
        num_span=match.span("num"),
    )


def _bare_number(full: str, pick: Pick) -> _Candidate | None:
    """A number alone on the first (rating-first) or last (rating-last) non-empty line.

    Rating-last replies from small models sometimes put the number first anyway ("[10]" and
    then the explanation), so the first line is the fallback when the last has no number.
    """
    lines = [(m.start(), m.group()) for m in re.finditer(r"[^\n]+", full) if m.group().strip()]
    if not lines:
        return None
    for offset, line in ([lines[0]] if pick == "first" else [lines[-1], lines[0]]):
        match = _BARE_LINE.match(line)
        if match is not None:
            start, end = offset + match.start("num"), offset + match.end("num")
            return _Candidate(kind="bare", value=float(match.group("num")), denominator=None,
                              start=offset, end=offset + len(line), num_span=(start, end))
    return None


def _drop_quotes(full: str, found: list[_Candidate], sources: Sequence[str]) -> list[_Candidate]:
    """Candidates that are neither an echoed format example nor a quote, nor inside one.

    A marker that a judged text also contains, word for word, yields to any marker that it does
    not contain: "Rating: [[2]]. It says Rating: [[10]]" is a 2 when the text holds "Rating: [[10]]",
    so a judged text can never outvote a verdict the judge wrote in its own words.
    """
    bad = [(c.start, c.end) for c in found if _is_echo(full, c) or _is_quote(full, c, sources)]
    kept = [c for c in found if not any(s <= c.num_span[0] < e for s, e in bad)]
    own = [c for c in kept if not _in_sources(full, c, sources)]
    return own if own and len(own) < len(kept) else kept


def _in_sources(full: str, candidate: _Candidate, sources: Sequence[str]) -> bool:
    marker = full[_marker_start(full, candidate):candidate.end].strip()
    return any(marker in source for source in sources)


def _is_echo(full: str, candidate: _Candidate) -> bool:
    """The instruction's own format example, repeated by the judge."""
    before = full[max(0, candidate.start - 40):candidate.start]
    return bool(_ECHO.search(before))


def _marker_start(full: str, candidate: _Candidate) -> int:
    """Where the marker begins, counting a "Rating:" label just before it."""
    label = _LABEL_BEFORE.search(full[max(0, candidate.start - 12):candidate.start])
    return candidate.start - (len(label.group()) if label else 0)


def _is_quote(full: str, candidate: _Candidate, sources: Sequence[str]) -> bool:
    start = _marker_start(full, candidate)
    marker = full[start:candidate.end]
    holders = [s for s in sources if marker in s]
    if not holders:
        return False
    before = full[start - 1:start] if start else ""
    after = full[candidate.end:candidate.end + 1]
    if before and after and before in _QUOTES and after in _QUOTES:
        return True
    if not full[:start].strip():
        return False  # the reply opens with it: the judge's own verdict, even if it copies the text
    left = full[max(0, start - _QUOTE_CONTEXT):start]
    right = full[candidate.end:candidate.end + _QUOTE_CONTEXT]
    for source in holders:
        if len(left.strip()) >= 3 and left + marker in source:
            return True
        if len(right.strip()) >= 3 and marker + right in source:
            return True
    return False


def _validated(candidate: _Candidate, bounds: tuple[float, float]) -> ParsedScore:
    low, high = bounds
    span = candidate.num_span
    if candidate.denominator is not None and not math.isclose(candidate.denominator, high):
        return _unparsable(f"rating given out of {candidate.denominator}, the scale is {_fmt(low)}-{_fmt(high)}",
                           span, candidate.kind)
    if not low <= candidate.value <= high:
        return _unparsable(f"rating {_fmt(candidate.value)} is outside the scale {_fmt(low)}-{_fmt(high)}",
                           span, candidate.kind)
    return ParsedScore(score=candidate.value, status="ok", span=span, marker=candidate.kind)


def _unparsable(reason: str, span: tuple[int, int] | None = None, marker: str | None = None) -> ParsedScore:
    return ParsedScore(score=None, status="unparsable", reason=reason, span=span, marker=marker)


def _fmt(value: float) -> str:
    return f"{value:g}"


# -- explanation ------------------------------------------------------------------------------


def explanation_of(text: str, parsed: ParsedScore, assistant_prefix: str = "") -> str | None:
    """The reply without its rating line: what the judge said besides the number."""
    full = assistant_prefix + (text or "")
    if parsed.span is None:
        return full.strip() or None
    line_start = full.rfind("\n", 0, parsed.span[0]) + 1
    line_end = full.find("\n", parsed.span[1])
    line_end = len(full) if line_end == -1 else line_end
    rest = (full[:line_start] + full[line_end:]).strip()
    return rest or None


# -- logprob-weighted score -------------------------------------------------------------------


class LogprobScore(BaseModel):
    """Expected rating under the judge's token distribution at the rating position.

    ``mass`` is the probability that fell on valid ratings (before renormalising); ``score`` is
    the expectation over those ratings, renormalised. ``unavailable`` says why there is none.
    """

    model_config = ConfigDict(frozen=True)

    score: float | None
    mass: float
    status: Literal["ok", "unavailable"]
    reason: str | None = None
    distribution: dict[int, float] = {}

    @property
    def sd(self) -> float | None:
        """Standard deviation of the rating under the distribution: how unsure the judge was."""
        if self.score is None or not self.distribution:
            return None
        return math.sqrt(sum(p * (v - self.score) ** 2 for v, p in self.distribution.items()))


_INT_TOKEN = re.compile(r"^\s*([0-9]+)\s*\]*\s*$")  # ASCII digits, as _NUM
_ASCII_DIGIT = frozenset("0123456789")


def logprob_score(
    logprobs: Sequence[TokenLogprob], bounds: tuple[float, float], *, index: int = 0
) -> LogprobScore:
    """Expected rating from the top alternatives of token ``index`` (the rating's first token).

    Integer ratings only. Tokenisers differ in how they write numbers, so:

    * scales up to 9: each alternative that is a digit in range counts;
    * scale 10: "10" as one token counts as 10. On digit-splitting tokenisers (Qwen2.5 writes
      "10" as "1", "0") the "1" alternative is split between 1 and 10 by the next position's
      probability of "0" when the reply itself went through "1"; when it did not, that next
      distribution is unknown and the "1" mass is left out (it lowers ``mass``);
    * scales above 10 (50, 100): only tokenisers that write whole numbers as one token are
      supported; if the rating was split into digit tokens the score is ``unavailable``
      (an expectation over the first digit alone would not be an expected rating).
    """
    if not 0 <= index < len(logprobs):
        return _unavailable("no token at the rating position")
    low, high = int(math.ceil(bounds[0])), int(math.floor(bounds[1]))
    position = logprobs[index]
    probs = _alternatives(position)
    digits_split = _continues_with_digit(logprobs, index)
    if high > 10 and (digits_split or not _has_multidigit_token(probs)):
        return _unavailable(f"ratings up to {high} need whole-number tokens; this tokeniser splits digits")
    distribution: dict[int, float] = {}
    for value, p in probs.items():
        if high == 10 and value == 1:
            continue  # ambiguous "1": resolved below
        if low <= value <= high:
            distribution[value] = distribution.get(value, 0.0) + p
    if high == 10 and 1 in probs:
        _resolve_one_or_ten(distribution, probs, logprobs, index, low)
    mass = sum(distribution.values())
    if mass <= 0.0:
        return _unavailable("no probability on valid ratings at the rating position")
    normalised = {v: p / mass for v, p in sorted(distribution.items())}
    score = sum(v * p for v, p in normalised.items())
    return LogprobScore(score=score, mass=min(mass, 1.0), status="ok", distribution=normalised)


def _alternatives(position: TokenLogprob) -> dict[int, float]:
    """Probability per integer value among the chosen token and its top alternatives."""
    best: dict[str, float] = {position.token: position.logprob}
    for alt in position.top:
        best[alt.token] = max(best.get(alt.token, -math.inf), alt.logprob)
    probs: dict[int, float] = {}
    for token, logprob in best.items():
        match = _INT_TOKEN.match(token)
        if match:
            value = int(match.group(1))
            probs[value] = probs.get(value, 0.0) + math.exp(logprob)
    return probs


def _continues_with_digit(logprobs: Sequence[TokenLogprob], index: int) -> bool:
    token = logprobs[index].token.strip()
    if not token or not set(token) <= _ASCII_DIGIT or index + 1 >= len(logprobs):
        return False
    return logprobs[index + 1].token[:1] in _ASCII_DIGIT


def _has_multidigit_token(probs: dict[int, float]) -> bool:
    return any(value >= 10 for value in probs)


def _resolve_one_or_ten(
    distribution: dict[int, float],
    probs: dict[int, float],
    logprobs: Sequence[TokenLogprob],
    index: int,
    low: int,
) -> None:
    p_one = probs[1]
    if 10 in probs:  # the tokeniser writes "10" whole, so "1" is just 1
        if low <= 1:
            distribution[1] = distribution.get(1, 0.0) + p_one
        return
    if logprobs[index].token.strip() != "1" or index + 1 >= len(logprobs):
        return  # the continuation after "1" was not observed: leave its mass out
    after = _next_token_probs(logprobs[index + 1])
    distribution[10] = distribution.get(10, 0.0) + p_one * after["zero"]
    if low <= 1:
        distribution[1] = distribution.get(1, 0.0) + p_one * after["end"]


def _next_token_probs(position: TokenLogprob) -> dict[str, float]:
    best: dict[str, float] = {position.token: position.logprob}
    for alt in position.top:
        best[alt.token] = max(best.get(alt.token, -math.inf), alt.logprob)
    zero = end = 0.0
    for token, logprob in best.items():
        stripped = token.strip()
        if stripped.startswith("0"):
            zero += math.exp(logprob)
        elif stripped[:1] not in _ASCII_DIGIT and stripped[:1] != ".":
            end += math.exp(logprob)
    return {"zero": zero, "end": end}


def _unavailable(reason: str) -> LogprobScore:
    return LogprobScore(score=None, mass=0.0, status="unavailable", reason=reason)


def rating_token_index(logprobs: Sequence[TokenLogprob], char_offset: int) -> int | None:
    """Index of the token holding character ``char_offset`` of the completion text."""
    position = 0
    for index, token in enumerate(logprobs):
        position += len(token.token)
        if position > char_offset:
            return index
    return None


def logprob_score_for(
    parsed: ParsedScore,
    logprobs: Sequence[TokenLogprob] | None,
    bounds: tuple[float, float],
    assistant_prefix: str = "",
) -> LogprobScore:
    """The logprob score at the position of the rating ``parse_rating`` found in the same reply."""
    index = _token_at(logprobs, parsed.span, assistant_prefix, "rating")
    if isinstance(index, str):
        return _unavailable(index)
    return logprob_score(logprobs, bounds, index=index)  # type: ignore[arg-type]  # logprobs: checked non-empty


def _token_at(logprobs: Sequence[TokenLogprob] | None, span: tuple[int, int] | None, assistant_prefix: str,
              what: str) -> int | str:
    """Index of the token where the parsed ``span`` (in prefix + reply) starts, or why there is none."""
    if not logprobs:
        return "the backend returned no logprobs"
    if span is None:
        return f"no {what} position in the reply"
    offset = span[0] - len(assistant_prefix)
    if offset < 0:
        return f"the {what} lies in the assistant prefix"
    index = rating_token_index(logprobs, offset)
    if index is None:
        return f"logprobs do not cover the {what} position"
    return index


# -- pairwise preference ----------------------------------------------------------------------


class ParsedPreference(BaseModel):
    """Which output the judge preferred, in the item's terms ("a" = item.output_a)."""

    model_config = ConfigDict(frozen=True)

    label: Literal["a", "b"] | None
    status: ParseStatus
    reason: str | None = None
    span: tuple[int, int] | None = None


_OUTPUT_LABEL = re.compile(r"\boutput\s*\(?\s*(?P<label>[ab12])\s*\)?(?![\w])", re.IGNORECASE)
_VERDICT = re.compile(
    r"(?:therefore,?\s*)?\boutput\s*\(?\s*(?P<label>[ab12])\s*\)?\s*is\s+(?:the\s+)?better", re.IGNORECASE
)
_THEREFORE = re.compile(r"therefore,?\s*\boutput\s*\(?\s*(?P<label>[ab12])\s*\)?\s*is\s+(?:the\s+)?better",
                        re.IGNORECASE)
# The reply opens with its choice: "Output (a)", "**Output B**", "(a)", or is just "a".
_LEADING_LABEL = re.compile(
    r"[\W_]*(?:output\s*\(?\s*(?P<label>[ab12])\s*\)?(?!\w)|\((?P<paren>[ab])\)|(?P<alone>[ab])[\W_]*$)",
    re.IGNORECASE,
)


def parse_preference(text: str, *, cot: str = "none", swapped: bool = False) -> ParsedPreference:
    """The preferred output in an LLMBar-style reply ("Output (a)" / "Therefore, Output (b) is better.").

    With CoT the closing verdict counts (the last "Therefore, Output (x) is better."), else the
    last "Output (x) is better"; without CoT the reply's opening label counts. Otherwise a reply
    naming exactly one output is read as choosing it; one naming both is unparsable.
    ``swapped`` maps the shown order back to the item's (a shown first = output_b).
    """
    text = text or ""
    if not text.strip():
        return ParsedPreference(label=None, status="unparsable", reason="empty reply")
    match = _preference_match(text, cot)
    if match is None:
        named = {_letter(_label_group(m)) for m in _OUTPUT_LABEL.finditer(text)}
        reason = "names both outputs without a verdict" if len(named) > 1 else "no output named"
        return ParsedPreference(label=None, status="unparsable", reason=reason)
    shown = _letter(_label_group(match))
    label = {"a": "b", "b": "a"}[shown] if swapped else shown
    group = next(name for name in ("label", "paren", "alone") if match.groupdict().get(name))
    return ParsedPreference(label=label, status="ok", span=match.span(group))  # type: ignore[arg-type]


def _preference_match(text: str, cot: str) -> re.Match[str] | None:
    if cot == "prefix":
        for pattern in (_THEREFORE, _VERDICT):
            found = list(pattern.finditer(text))
            if found:
                return found[-1]
    else:
        leading = _LEADING_LABEL.match(text)
        if leading:
            return leading
        found = list(_VERDICT.finditer(text))
        if found:
            return found[0]
    mentions = list(_OUTPUT_LABEL.finditer(text))
    if mentions and len({_letter(m.group("label")) for m in mentions}) == 1:
        return mentions[0]
    return None


def _label_group(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return groups.get("label") or groups.get("paren") or groups.get("alone") or ""


def _letter(label: str) -> str:
    return {"1": "a", "2": "b"}.get(label.lower(), label.lower())


# -- pairwise preference from logprobs --------------------------------------------------------

#: Below half the probability on the letters, writing no verdict at the verdict position is likelier
#: than writing one: the ratio of the two letters is then no verdict.
MIN_LETTER_MASS = 0.5


class LetterProbability(BaseModel):
    """The judge's probability of preferring output_a, read at its verdict letter.

    ``p_a``: the softmax over the letters a and b (the parser's 1 and 2 count as a and b; either
    case), in the item's terms. ``mass``: the probability the letters got before renormalising.
    ``p_a`` is None, with a ``reason``, when the letter's position is unknown or ``mass`` is too low.
    """

    model_config = ConfigDict(frozen=True)

    p_a: float | None
    mass: float
    reason: str | None = None


def preference_probability(
    parsed: ParsedPreference,
    logprobs: Sequence[TokenLogprob] | None,
    *,
    assistant_prefix: str = "",
    swapped: bool = False,
    min_mass: float = MIN_LETTER_MASS,
) -> LetterProbability:
    """P(output_a preferred) at the letter ``parse_preference`` found in ``assistant_prefix`` + reply.

    Only the top alternatives the backend returned are seen: a letter outside them counts as 0.
    ``swapped`` maps the shown order back to the item's, as in ``parse_preference``.
    """
    index = _token_at(logprobs, parsed.span, assistant_prefix, "verdict")
    if isinstance(index, str):
        return LetterProbability(p_a=None, mass=0.0, reason=index)
    shown = _letter_probs(logprobs[index])  # type: ignore[index]
    mass = shown["a"] + shown["b"]
    if mass <= 0.0 or mass < min_mass:
        return LetterProbability(p_a=None, mass=mass, reason=f"the letters a and b got {mass:.2f} of the "
                                 f"probability at the verdict (below {min_mass:g})")
    first = shown["a"] / mass
    return LetterProbability(p_a=1.0 - first if swapped else first, mass=min(mass, 1.0))


def _letter_probs(position: TokenLogprob) -> dict[str, float]:
    """Probability of the shown letters a and b at one position (token variants: " a", "A", "(a", "1")."""
    best: dict[str, float] = {position.token: position.logprob}
    for alt in position.top:  # the chosen token is usually among the alternatives too: count it once
        best[alt.token] = max(best.get(alt.token, -math.inf), alt.logprob)
    probs = {"a": 0.0, "b": 0.0}
    for token, logprob in best.items():
        letter = _letter(token.strip().strip("()*").strip())
        if letter in probs:
            probs[letter] += math.exp(logprob)
    return probs


# -- JSON and lists ---------------------------------------------------------------------------


class ParsedJSON(BaseModel):
    model_config = ConfigDict(frozen=True)

    data: Any = None
    status: ParseStatus
    reason: str | None = None
    repaired: bool = False


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_json(text: str) -> ParsedJSON:
    """The first JSON object or array in a reply, repaired (json-repair) when malformed."""
    candidate = _json_candidate(text or "")
    if candidate is None:
        return ParsedJSON(status="unparsable", reason="no JSON object or array in the reply")
    try:
        return ParsedJSON(data=json.loads(candidate), status="ok")
    except json.JSONDecodeError:
        pass
    repaired = json_repair.repair_json(candidate, return_objects=True)
    if isinstance(repaired, dict | list) and repaired:
        return ParsedJSON(data=repaired, status="ok", repaired=True)
    return ParsedJSON(status="unparsable", reason="JSON could not be repaired")


def _json_candidate(text: str) -> str | None:
    fenced = _FENCE.search(text)
    if fenced and fenced.group(1).strip():
        return fenced.group(1).strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    closer = "}" if text[start] == "{" else "]"
    end = text.rfind(closer)
    return text[start:end + 1] if end > start else text[start:]


_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\(?\d+[.)]|\(?[a-z][.)]|Q\d+[:.)]|Question\s*\d+[:.)])\s*", re.IGNORECASE)


def parse_questions(text: str, limit: int = 3) -> list[str]:
    """Checklist questions from a generated list: list marks stripped, at most ``limit``.

    Lines ending in "?" are preferred; a reply with none keeps its non-empty lines.
    """
    lines = [_LIST_MARK.sub("", line).strip().strip("*").strip() for line in (text or "").splitlines()]
    lines = [line for line in lines if line]
    questions = [line for line in lines if line.endswith("?")]
    return (questions or lines)[:limit]
