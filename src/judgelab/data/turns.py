"""A conversation split into its turns: one item per assistant reply, so that the unit judged, labelled and
estimated is a turn rather than the whole conversation (docs/conversations.md, "Turn by turn").

Each turn is an ordinary item: its ``messages`` are the conversation up to and including that reply, so a
judge reads the history as ``source`` and the reply as ``output`` (item.py derives both), exactly as for a
one-reply conversation. Labels for the turns come from the conversation's ``extra.turn_scores`` (one entry
per reply, in order) or later from a labels file keyed by the turns' ids (``annotate``, ``--human``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from judgelab.data.conversation import ChatMessage, last_reply
from judgelab.data.item import Item
from judgelab.errors import DataError

#: A turn's id is its conversation's id, this, and the reply's number (1 for the first reply).
TURN_MARK = "#turn"
#: Where a conversation gives its turns' human values: a list, one entry per assistant reply.
TURN_SCORES = "turn_scores"


def split_turns(items: Iterable[Item]) -> list[Item]:
    """Every conversation of ``items`` as one item per assistant reply with text (see the module docstring).
    Refused, naming the item: an item without ``messages``, or ``extra.turn_scores`` that is not one entry
    (an object of aspect: number, or null) per reply."""
    return [turn for item in items for turn in _turns(item)]


def _turns(item: Item) -> list[Item]:
    if not item.messages:
        raise DataError(f"item {item.id!r} has no messages: turns are split from conversations (give each item "
                        "its chat as 'messages')")
    messages = _whole_conversation(item)
    replies = [k for k, message in enumerate(messages) if message.role == "assistant" and message.content]
    scores = _turn_scores(item, len(replies))
    extra = {k: v for k, v in item.extra.items() if k != TURN_SCORES}
    shared = item.model_dump(include={"dataset", "system_id", "scale", "contexts", "context", "reference"},
                             exclude_none=True)
    return [Item(**shared, id=f"{item.id}{TURN_MARK}{n}", messages=messages[: k + 1],
                 group_id=f"{item.group_id}{TURN_MARK}{n}" if item.group_id else None, scores=scores[n - 1],
                 extra=extra | {"conversation": item.id, "turn": n, "turns": len(replies),
                                **({"conversation_scores": item.scores} if item.scores else {})})
            for n, k in enumerate(replies, 1)]


def _whole_conversation(item: Item) -> list[ChatMessage]:
    """The messages with the reply judged last: an item that gives its ``output`` beside its messages (they
    are then the history it answers) gets that output as its last assistant message."""
    messages = list(item.messages or ())
    last = last_reply(messages)
    if item.output is not None and (last is None or messages[last].content != item.output):
        messages.append(ChatMessage(role="assistant", content=item.output))
    return messages


def _turn_scores(item: Item, replies: int) -> list[dict[str, Any]]:
    given = item.extra.get(TURN_SCORES)
    if given is None:
        return [{} for _ in range(replies)]
    where = f"item {item.id!r}, field 'extra.{TURN_SCORES}'"
    if not isinstance(given, list) or len(given) != replies:
        got = f"{len(given)} entries" if isinstance(given, list) else type(given).__name__
        raise DataError(f"{where}: one entry per assistant reply ({replies}) is needed, got {got}")
    out: list[dict[str, Any]] = []
    for n, entry in enumerate(given, 1):
        if entry is None:
            out.append({})
        elif isinstance(entry, Mapping) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                for v in entry.values()):
            out.append(dict(entry))
        else:
            raise DataError(f"{where}, entry {n}: an object of aspect: number (or null), got {entry!r}")
    return out


__all__ = ["TURN_MARK", "TURN_SCORES", "split_turns"]
