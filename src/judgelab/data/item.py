"""The item: one thing a judge rates, with whatever human labels it carries.

One model covers the three shapes the benchmarks use, so a loader never has to guess a class:

* pointwise  — ``output`` answering ``source`` (optionally ``context``/``reference``), ``scores``;
* pairwise   — ``output_a`` vs ``output_b`` for ``instruction``/``source``, ``label`` "a"/"b"/"tie";
  a comparison between systems names them (``system_a``, ``system_b``, in the order shown) and
  may leave the texts out (Chatbot Arena's votes: who met whom, and who won);
* relevance  — ``passage`` (or just ``docid``) for ``query``/``qid``, graded ``label``.

Any of them may also carry a conversation (``messages``), the passages its answer should rest on
(``contexts``) and an agent's run (``trajectory``): see :mod:`judgelab.data.conversation`. An item
with ``messages`` but no ``output`` rates the last assistant reply: ``output`` and ``source`` are
derived from the messages, and ``context`` from the passages, so every judge reads them unchanged.
A pairwise item may compare two assistants' whole conversations (``messages_a``, ``messages_b``): its
``output_a``/``output_b`` are then each side's last assistant reply, and the pairwise judge shows both chats.

Columns a file has beyond these are kept in ``extra`` rather than rejected: user CSVs
routinely carry bookkeeping columns, and dropping them silently would lose data.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from judgelab.data.conversation import (
    ChatMessage,
    Contexts,
    Messages,
    Trajectory,
    check_contexts,
    check_messages,
    last_reply,
    render_contexts,
    render_messages,
)

ItemKind = Literal["pointwise", "pairwise", "relevance"]

#: The largest magnitude a score may have. Beyond it a number is no rating: the statistics square
#: and sum scores, so 1e308 overflows them (it crashed scikit-learn), and no rating scale,
#: probability or log-likelihood comes anywhere near it.
MAX_SCORE = 1e15


def _not_bool(value: Any) -> Any:
    # JSON true would be read as 1.0 (and Parquet booleans too): a verdict written as a flag is
    # a mistake in the file, not a rating of 1.
    if isinstance(value, bool):
        raise PydanticCustomError("bool_score", "true/false is neither a score nor a label")
    return value


def _bounded(value: float | int | str) -> float | int | str:
    if not isinstance(value, str) and abs(value) > MAX_SCORE:
        raise PydanticCustomError("score_too_large", "{value} is not a score: its magnitude is above {bound}",
                                  {"value": f"{float(value):.3g}", "bound": f"{MAX_SCORE:g}"})
    return value


#: A human or judge score: a finite number (not a boolean) of magnitude at most ``MAX_SCORE``.
#: NaN/inf are rejected by the type itself, so the error points at ``scores.<aspect>``.
Score = Annotated[float, BeforeValidator(_not_bool), Field(allow_inf_nan=False), AfterValidator(_bounded)]
#: A pairwise preference ("a"/"b"/"tie") or a graded relevance label (an int, bounded like a score).
Label = Annotated[int | str, BeforeValidator(_not_bool), AfterValidator(_bounded)]


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=False)

    id: str = Field(min_length=1)
    dataset: str | None = None
    group_id: str | None = None
    system_id: str | None = None
    # pointwise
    source: str | None = None
    context: str | None = None
    output: str | None = None
    reference: str | None = None
    scores: dict[str, Score] = Field(default_factory=dict)
    scale: tuple[Score, Score] | None = None
    # pairwise
    instruction: str | None = None
    subset: str | None = None
    output_a: str | None = None
    output_b: str | None = None
    system_a: str | None = None
    system_b: str | None = None
    # relevance
    qid: str | None = None
    docid: str | None = None
    query: str | None = None
    passage: str | None = None
    # pairwise preference ("a" / "b" / "tie") or graded relevance (int)
    label: Label | None = None
    # a conversation (OpenAI chat shape), retrieved passages, an agent's run (data/conversation.py)
    messages: Messages | None = None
    contexts: Contexts | None = None
    trajectory: Trajectory | None = None
    # two assistants' conversations compared (pairwise): each side's whole chat, checked as ``messages`` is
    messages_a: Messages | None = None
    messages_b: Messages | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _unknown_columns_to_extra(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if data.get("scores", 0) is None or data.get("extra", 0) is None:  # JSON null = nothing
            data = {k: v for k, v in data.items() if not (k in ("scores", "extra") and v is None)}
        known = cls.model_fields.keys()
        unknown = {k: v for k, v in data.items() if k not in known}
        if not unknown or not isinstance(data.get("extra") or {}, dict):
            return data  # nothing to move, or a bad 'extra' that validation will report
        kept = {k: v for k, v in data.items() if k in known}
        kept["extra"] = {**(kept.get("extra") or {}), **unknown}
        return kept

    @field_validator("id", "group_id", "system_id", "system_a", "system_b", "qid", "docid", mode="before")
    @classmethod
    def _ids_as_text(cls, value: Any) -> Any:
        # CSV/pandas readers turn "42" into 42; an id is a name, not a number.
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return value

    @field_validator("qid", "docid")
    @classmethod
    def _plain_trec_id(cls, value: str | None) -> str | None:
        # a TREC id goes to the C scorer (ir_measures), where a NUL would end it: "d1\0x" scored as "d1"
        if value is not None and any(unicodedata.category(ch) == "Cc" for ch in value):
            raise ValueError(f"{value!r} holds a control character; TREC ids are plain text")
        return value

    @field_validator("scale")
    @classmethod
    def _ordered_scale(cls, scale: tuple[float, float] | None) -> tuple[float, float] | None:
        if scale is not None and not scale[0] < scale[1]:
            raise ValueError(f"scale {list(scale)} must be [min, max] with min < max")
        return scale

    @model_validator(mode="after")
    def _texts_from_conversation(self) -> Item:
        """Checks across messages and passages, then the texts every judge reads, where the item lacks them:
        ``output`` the last assistant reply, ``source`` the messages before it (all of them when ``output``
        is given), ``context`` the passages with their ids. Runs before the completeness check below."""
        if self.contexts:
            check_contexts(self.contexts)
            if self.context is None:
                self.context = render_contexts(self.contexts)
        if self.messages:
            check_messages(self.messages)
        if not self.messages or self.qid is not None or self.docid is not None:
            return self
        history = self.messages
        if self.output is None and self.output_a is None and self.system_a is None:
            reply = last_reply(self.messages)
            if reply is not None:
                self.output, history = self.messages[reply].content, self.messages[:reply]
        if self.prompt is None and history:
            self.source = render_messages(history)
        return self

    @model_validator(mode="after")
    def _sides_from_conversations(self) -> Item:
        """Two assistants' conversations (``messages_a``, ``messages_b``): both given, each checked as
        ``messages`` is, ``output_a``/``output_b`` each side's last assistant reply (derived when absent, so
        every pairwise reader finds the two texts), and ``source``, absent, the opening both share."""
        if self.messages_a is None and self.messages_b is None:
            return self
        if self.messages is not None:
            raise PydanticCustomError("conversation", "an item carries one conversation (messages) or two to compare "
                                      "(messages_a and messages_b), not both", {"field": "messages"})
        if self.qid is not None or self.docid is not None:
            raise PydanticCustomError("conversation", "a relevance item (qid, docid) compares no conversations",
                                      {"field": "messages_a"})
        for side in ("a", "b"):
            self._take_side(side)
        opening = self.shared_opening
        if self.prompt is None and opening and self.messages_a:
            self.source = render_messages(self.messages_a[:opening])
        return self

    def _take_side(self, side: str) -> None:
        """One side of a comparison of conversations: present, valid, ending in a reply that is its output."""
        field = f"messages_{side}"
        messages: list[ChatMessage] | None = getattr(self, field)
        if messages is None:
            raise PydanticCustomError("incomplete_item", "required field is missing: a comparison of conversations "
                                      "needs both messages_a and messages_b", {"field": field})
        try:
            check_messages(messages)
        except PydanticCustomError as err:  # check_messages names 'messages.K...': name this side's field
            context = dict(err.context or {})
            context["field"] = field + str(context.get("field", "")).removeprefix("messages")
            raise PydanticCustomError(err.type, err.message_template, context) from None
        reply = last_reply(messages)
        if reply is None:
            raise PydanticCustomError("conversation", "conversation {side} has no assistant reply with text: there is "
                                      "nothing of its assistant to compare", {"field": field, "side": side})
        given = getattr(self, f"output_{side}")
        if given is None:
            setattr(self, f"output_{side}", messages[reply].content)
        elif given != messages[reply].content:
            # one text, two places: a given output_X that differs would show the judge one reply and a reader another
            raise PydanticCustomError(
                "conversation", "output_{side} is the last assistant reply of messages_{side} (derived from it when "
                "absent), and this one differs from it: leave output_{side} out, or end messages_{side} with it",
                {"field": f"output_{side}", "side": side})

    @property
    def shared_opening(self) -> int:
        """How many messages both conversations of a comparison open with, to show once: the longest common
        prefix of ``messages_a`` and ``messages_b``, stopped before either side's last assistant reply, so each
        side keeps the reply it is compared on. 0 for an item without both."""
        if not self.messages_a or not self.messages_b:
            return 0
        bound = min(last_reply(self.messages_a) or 0, last_reply(self.messages_b) or 0)
        shared = 0
        while shared < bound and self.messages_a[shared] == self.messages_b[shared]:
            shared += 1
        return shared

    @model_validator(mode="after")
    def _complete_for_its_kind(self) -> Item:
        # ctx["field"] names the missing field, so loaders can report it like any other field error.
        if self.system_a is not None or self.system_b is not None:
            _check_systems_compared(self)
        if self.output_a is not None or self.output_b is not None:
            missing = "output_b" if self.output_b is None else "output_a" if self.output_a is None else None
            if missing:
                raise PydanticCustomError(
                    "incomplete_item", "required field is missing: a pairwise item needs both output_a and output_b",
                    {"field": missing},
                )
        elif self.qid is not None or self.docid is not None:
            missing = "docid" if self.docid is None else "qid" if self.qid is None else None
            if missing:
                raise PydanticCustomError(
                    "incomplete_item", "required field is missing: a relevance item needs both qid and docid",
                    {"field": missing},
                )
        elif self.output is None and self.system_a is None:
            raise PydanticCustomError(
                "incomplete_item",
                "required field is missing: an item needs 'output' (pointwise; or 'messages' ending in an assistant "
                "reply), 'output_a'+'output_b' (pairwise) or 'qid'+'docid' (relevance)",
                {"field": "output"},
            )
        return self

    @model_validator(mode="after")
    def _scores_on_their_scales(self) -> Item:
        """A human score outside the scale the item declares (``scale``, or its aspect's entry in
        ``extra.aspect_scales``) is a mistake in the file: a 7 on a 1-5 scale would skew every
        correlation and normalised score without a word."""
        per_aspect = self.extra.get("aspect_scales")
        if per_aspect is not None:
            _check_aspect_scales(per_aspect)
        for aspect, value in self.scores.items():
            scale = self.aspect_scale(aspect)
            if scale is not None and not scale[0] <= value <= scale[1]:
                raise PydanticCustomError(
                    "score_off_scale", "score {value} is outside the item's {aspect} scale [{low}, {high}]",
                    {"field": f"scores.{aspect}", "value": f"{value:g}", "aspect": aspect, "low": f"{scale[0]:g}",
                     "high": f"{scale[1]:g}"},
                )
        return self

    @property
    def kind(self) -> ItemKind:
        if self.output_a is not None or self.system_a is not None:
            return "pairwise"
        if self.qid is not None:
            return "relevance"
        return "pointwise"

    @property
    def group(self) -> str:
        """The input this item answers: ``group_id``, else the query, else its input text (``source`` or
        ``instruction``, with ``context``), else the item itself. Items of several systems that answer the
        same question in a file without group_id are so paired by it, as a user expects (before, each item
        was its own input: no pairing, and 3 systems x 8 questions read as 24 inputs)."""
        if self.group_id or self.qid:
            return self.group_id or self.qid  # type: ignore[return-value]
        text = self.prompt
        if text is None:
            return self.id
        return TEXT_GROUP + _digest(text, self.context or "")

    @property
    def grouped_by(self) -> str:
        """What :attr:`group` was read from: ``group_id``, ``qid``, ``text`` or ``id``."""
        if self.group_id:
            return "group_id"
        if self.qid:
            return "qid"
        return "id" if self.prompt is None else "text"

    @property
    def prompt(self) -> str | None:
        """The text the output responds to, whatever the item's shape calls it."""
        return self.source or self.instruction or self.query

    @property
    def judged(self) -> str | None:
        """The one text a pointwise judge rates: the passage of a relevance item, else the output
        (None for a pairwise item, which has two)."""
        return self.passage if self.kind == "relevance" else self.output

    def aspect_scale(self, aspect: str) -> tuple[float, float] | None:
        """Per-aspect [min, max] (``extra.aspect_scales``, as topical_chat has), else ``scale``."""
        per_aspect = self.extra.get("aspect_scales") or {}
        if aspect in per_aspect:
            low, high = per_aspect[aspect]
            return (float(low), float(high))
        return self.scale

    def human_score(self, aspect: str | None) -> float | None:
        """The human score for ``aspect``; for relevance items the graded label (None: there is none, or no
        aspect is named)."""
        if aspect in self.scores:
            return self.scores[aspect]
        if self.kind == "relevance" and isinstance(self.label, int) and aspect in ("relevance", "label"):
            return float(self.label)
        return None


def with_outputs(item: Item, *, output_a: str | None = None, output_b: str | None = None) -> Item:
    """A copy of the pairwise ``item`` with ``output_a`` and/or ``output_b`` replaced (None: kept). On a
    comparison of conversations the new text also replaces that side's last assistant reply, so the copy is
    still valid (its output is that reply) and a judge that reads the conversations sees the change. The copy
    is validated as a read item is; an empty text for a conversation's reply is refused (ValueError)."""
    fields = item.model_dump()
    for side, text in (("a", output_a), ("b", output_b)):
        if text is None:
            continue
        fields[f"output_{side}"] = text
        messages = getattr(item, f"messages_{side}")
        reply = last_reply(messages) if messages else None
        if reply is None:
            continue
        if not text:  # an empty reply is no reply: the side's output would move to an earlier one
            raise ValueError(f"item {item.id!r}: output_{side} is the last reply of messages_{side}, which needs text")
        fields[f"messages_{side}"][reply]["content"] = text  # the dump's own copy: the item is untouched
    return Item.model_validate(fields)


#: The prefix of a group read from an item's input text (no group_id): the text's digest follows.
TEXT_GROUP = "text:"


def _digest(*texts: str) -> str:
    joined = "\x00".join(texts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(joined, digest_size=8).hexdigest()


#: A comparison's verdict: the first-shown system wins, the second does, or neither.
VERDICTS = ("a", "b", "tie")
#: Other names of a tie in published votes (Chatbot Arena's "both are bad"), read as a tie.
TIE_ALIASES = ("tie (bothbad)",)


def _check_systems_compared(item: Item) -> None:
    """A comparison between systems names two different systems, and its label is a verdict."""
    missing = "system_b" if item.system_b is None else "system_a" if item.system_a is None else None
    if missing:
        raise PydanticCustomError("incomplete_item", "required field is missing: a comparison between systems "
                                  "needs both system_a and system_b", {"field": missing})
    if item.system_a == item.system_b:
        raise PydanticCustomError("self_comparison", "system {system} is compared with itself",
                                  {"field": "system_b", "system": repr(item.system_a)})
    if isinstance(item.label, str) and item.label in TIE_ALIASES:
        item.extra.setdefault("label_as_published", item.label)
        item.label = "tie"
    if item.label is not None and item.label not in VERDICTS:
        raise PydanticCustomError("verdict", "{label} is not a verdict: a comparison's label is a, b or tie",
                                  {"field": "label", "label": repr(item.label)[:40]})


def _check_aspect_scales(per_aspect: Any) -> None:
    """``extra.aspect_scales``: ``{aspect: [min, max]}`` with finite numbers and min < max."""
    if not isinstance(per_aspect, Mapping):
        raise PydanticCustomError("aspect_scales", "must map each aspect to [min, max]",
                                  {"field": "extra.aspect_scales"})
    for aspect, scale in per_aspect.items():
        numbers = isinstance(scale, (list, tuple)) and len(scale) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in scale)
        if not numbers or not scale[0] < scale[1]:
            raise PydanticCustomError("aspect_scales", "must be [min, max], two finite numbers with min < max (got {got})",
                                      {"field": f"extra.aspect_scales.{aspect}", "got": repr(scale)[:60]})
