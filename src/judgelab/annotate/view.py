"""How the item page shows a conversation (``messages``), its passages (``contexts``) and an agent's run
(``trajectory``): a chat of one bubble per message, the reply being rated marked; the passages beside the
answer; the steps folded one by one. An item without these fields gets no view: its page is as before.

The page shows these in place of the texts derived from them (docs/conversations.md): ``source`` when it
is the messages' rendering, ``context`` when it is the passages'; a text the item gives itself still shows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from judgelab.data.conversation import ChatMessage, Passage, last_reply, render_contexts, render_messages
from judgelab.data.item import Item

#: How many characters of a step's arguments its folded line shows (all of them inside, when cut).
STEP_ARGUMENTS = 80
ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool result"}


@dataclass(frozen=True)
class Bubble:
    """One message as the chat shows it: who said it, its text, the tools it called (``NAME(arguments)``)."""

    role: str
    label: str
    text: str | None
    calls: tuple[str, ...] = ()
    rated: bool = False


@dataclass(frozen=True)
class StepView:
    """One step of a trajectory: its folded line (``Step k: tool(arguments)``) and what unfolds."""

    number: int
    line: str
    arguments: str | None  # the whole arguments, when the line cuts them
    thought: str | None
    observation: str | None


@dataclass(frozen=True)
class ItemView:
    """What an item's conversation, passages and trajectory add to its page, and the texts they replace
    (``hidden``: the dom ids of the sections not shown)."""

    bubbles: tuple[Bubble, ...]
    passages: tuple[Passage, ...]
    steps: tuple[StepView, ...]
    hidden: frozenset[str]
    #: Two assistants' conversations compared (``messages_a``, ``messages_b``): each side's messages after the
    #: opening both share (which is ``bubbles``), side a then side b, each side's last reply marked ``rated``;
    #: ``replies`` the item's ``output_a`` and ``output_b``, to put each side under the reply the page shows.
    sides: tuple[tuple[Bubble, ...], tuple[Bubble, ...]] | None = None
    replies: tuple[str | None, str | None] = (None, None)

    def sides_shown(self, left: str | None, right: str | None) -> tuple[tuple[Bubble, ...], ...] | None:
        """The two sides in the order the page shows them, from the replies the app puts left and right (the
        annotator's order: output_b may be on the left); None when they cannot be told apart (then the page
        shows the two replies alone, never a conversation under the other side's reply)."""
        if self.sides is None:
            return None
        if self.sides[0] == self.sides[1]:
            return self.sides
        reply_a, reply_b = self.replies
        if reply_a != reply_b:
            order = {(reply_a, reply_b): (0, 1), (reply_b, reply_a): (1, 0)}.get((left, right))
        elif reply_a is not reply_b:  # the same words: the app hands over the item's own texts, so identity tells
            order = (0, 1) if left is reply_a and right is reply_b else (1, 0) if left is reply_b and right is reply_a \
                else None
        else:
            order = None
        return None if order is None else (self.sides[order[0]], self.sides[order[1]])


def item_view(item: Item) -> ItemView | None:
    """The view of ``item``'s messages, contexts and trajectory; None when it has none (or is a query and a
    passage, whose page shows those alone)."""
    if item.kind == "relevance" or not (item.messages or item.contexts or item.trajectory or item.messages_a):
        return None
    hidden: set[str] = set()
    bubbles: list[Bubble] = []
    if item.messages:
        messages = item.messages
        rated = _rated_reply(item)
        bubbles = _bubbles(messages, rated)
        history = messages if rated is None else messages[:rated]
        if item.kind == "pointwise":
            if rated is None:  # the output answers the messages: the last bubble, to rate
                bubbles.append(Bubble("assistant", "assistant", item.output, rated=True))
            hidden.add("output")
        if (item.kind == "pointwise" or item.instruction is None) and item.source in (
                render_messages(history), render_messages(messages)):
            hidden.add("source")
    if item.contexts and item.context == render_contexts(item.contexts):
        hidden.add("context")
    sides = None
    if item.messages_a and item.messages_b:  # the opening once (the page's chat), then each side beside the other
        shared = item.shared_opening
        bubbles = _bubbles(item.messages_a[:shared], None)
        sides = (_side(item.messages_a, shared), _side(item.messages_b, shared))
        if item.instruction is None and item.source == render_messages(item.messages_a[:shared]):
            hidden.add("source")
    return ItemView(tuple(bubbles), tuple(item.contexts or ()), tuple(_steps(item)), frozenset(hidden), sides,
                    (item.output_a, item.output_b))


def _side(messages: Sequence[ChatMessage], shared: int) -> tuple[Bubble, ...]:
    """One side of a comparison after the shared opening, its last reply marked (tool names read from the whole
    side, as a result may answer a call of the opening)."""
    return tuple(_bubbles(messages, last_reply(messages))[shared:])


def _rated_reply(item: Item) -> int | None:
    """The message that is the item's output (its last assistant reply), if one is."""
    if item.kind != "pointwise" or not item.messages:
        return None
    reply = last_reply(item.messages)
    return reply if reply is not None and item.messages[reply].content == item.output else None


def _bubbles(messages: Sequence[ChatMessage], rated: int | None) -> list[Bubble]:
    names = {call.id: call.function.name for message in messages for call in message.tool_calls or ()}
    bubbles = []
    for k, message in enumerate(messages):
        label = ROLES[message.role]
        said_by = names.get(message.tool_call_id or "") if message.role == "tool" else None
        if said_by or message.name:
            label += f" \u00b7 {said_by or message.name}"
        calls = tuple(f"{call.function.name}({call.function.arguments})" for call in message.tool_calls or ())
        bubbles.append(Bubble(message.role, label, message.content, calls, rated=k == rated))
    return bubbles


def _steps(item: Item) -> list[StepView]:
    steps = []
    for k, step in enumerate(item.trajectory or (), 1):
        arguments = "" if step.arguments is None else (
            step.arguments if isinstance(step.arguments, str) else json.dumps(step.arguments, ensure_ascii=False))
        cut = len(arguments) > STEP_ARGUMENTS
        shown = arguments[:STEP_ARGUMENTS - 1].rstrip() + "\u2026" if cut else arguments
        steps.append(StepView(k, f"Step {k}: {step.tool}({shown})", arguments if cut else None, step.thought,
                              step.observation))
    return steps
