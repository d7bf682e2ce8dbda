"""What an item may carry besides its texts: a conversation (``messages``), the passages an answer
should rest on (``contexts``) and an agent's run (``trajectory``), with their bounds and how each is
rendered as text (docs/conversations.md).

``messages`` take the OpenAI chat shape, so a chat log is pasted as it is. The checks that span several
messages (a tool result answers a call made before it) live in :func:`check_messages`, which the item
runs, so that an error names the exact field (``messages.3.tool_call_id``) as every item error does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, JsonValue
from pydantic_core import PydanticCustomError

from judgelab.limits import MAX_INPUT_BYTES_VARIABLE, max_input_bytes

#: The most messages one conversation, and steps one trajectory, may have: ten thousand is far beyond
#: any chat or agent run a judge can read, and a file of 10^5 tiny steps would otherwise be read, kept
#: and rendered into one prompt. The most passages of one item, likewise.
MAX_MESSAGES = 10_000
MAX_STEPS = 10_000
MAX_CONTEXTS = 10_000
#: One text (a message, a passage, an observation) may hold at most an 8th of the input bound: 16 Mi
#: characters by default, about four million tokens, more than a judge's context window holds.
TEXT_SHARE = 8


def max_text_chars() -> int:
    """The most characters one text of a conversation, context or trajectory may have."""
    return max_input_bytes() // TEXT_SHARE


def _bounded(text: str) -> str:
    bound = max_text_chars()
    if len(text) > bound:
        # a ValueError: the error then shows no 50 MB "got ..." excerpt
        raise ValueError(f"{len(text):,} characters, over the {bound:,} one text of a conversation, context or "
                         f"trajectory may have (an 8th of {MAX_INPUT_BYTES_VARIABLE}; set it higher to allow more)")
    return text


#: A text of a conversation, context or trajectory, bounded by :func:`max_text_chars`.
Text = Annotated[str, AfterValidator(_bounded)]


def _at_most(bound: int, what: str) -> Any:
    """A check run before the elements are validated: 10^5 steps are refused without reading each."""
    def check(value: Any) -> Any:
        if isinstance(value, Sequence) and not isinstance(value, str) and len(value) > bound:
            raise ValueError(f"{len(value):,} {what}: at most {bound:,} are read")
        return value
    return BeforeValidator(check)


def _json_text(value: Any) -> Any:
    # OpenAI sends a call's arguments as JSON text; Inspect and others keep the object: take both
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Function(_Part):
    name: str = Field(min_length=1)
    arguments: Annotated[Text, BeforeValidator(_json_text)] = ""


class ToolCall(_Part):
    id: str = Field(min_length=1)
    type: Literal["function"] = "function"
    function: Function


class ChatMessage(_Part):
    """One message of a chat, as the OpenAI API takes it."""

    role: Literal["system", "user", "assistant", "tool"]
    content: Text | None = None
    #: bounded as a trajectory's steps are: a reply of 10^5 calls is refused unread
    tool_calls: Annotated[list[ToolCall], _at_most(MAX_STEPS, "tool calls")] | None = None
    tool_call_id: str | None = None
    name: str | None = None


def _numbered(value: Any) -> Any:
    # a plain list of strings is the common shape (DeepEval's retrieval_context, RAGAS's contexts)
    if isinstance(value, list):
        return [{"id": str(k), "text": one} if isinstance(one, str) else one for k, one in enumerate(value, 1)]
    return value


class Passage(_Part):
    """A retrieved passage an answer should rest on."""

    id: Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, int) and not isinstance(v, bool) else v),
                  Field(min_length=1)]
    text: Text
    title: str | None = None
    source: str | None = None


class Step(_Part):
    """One step of an agent's run: the tool it called, with what, and what came back."""

    tool: str = Field(min_length=1)
    arguments: JsonValue = None
    observation: Text | None = None
    thought: Text | None = None


Messages = Annotated[list[ChatMessage], _at_most(MAX_MESSAGES, "messages")]
Contexts = Annotated[list[Passage], _at_most(MAX_CONTEXTS, "passages"), BeforeValidator(_numbered)]
Trajectory = Annotated[list[Step], _at_most(MAX_STEPS, "steps")]


def _error(field: str, message: str) -> PydanticCustomError:
    return PydanticCustomError("conversation", message, {"field": field})


def check_messages(messages: Sequence[ChatMessage]) -> None:
    """What no single message can check: content where it is due, tool calls on assistant messages, and
    each tool result answering a call made earlier (a result without its call cannot be shown to a judge)."""
    called: set[str] = set()
    for k, message in enumerate(messages):
        at = f"messages.{k}"
        if message.tool_calls and message.role != "assistant":
            raise _error(f"{at}.tool_calls", f"a {message.role} message makes no tool calls (only an assistant does)")
        if message.content is None and not message.tool_calls:
            raise _error(f"{at}.content", f"a {message.role} message needs content (only an assistant message that "
                                          "calls tools may have none)")
        for j, call in enumerate(message.tool_calls or ()):
            if call.id in called:
                raise _error(f"{at}.tool_calls.{j}.id", f"tool call id {call.id!r} is used twice")
            called.add(call.id)
        if message.role == "tool" and message.tool_call_id not in called:
            given = "no tool_call_id" if message.tool_call_id is None else f"{message.tool_call_id!r} names no call"
            raise _error(f"{at}.tool_call_id", f"a tool result must answer a tool call made earlier in the "
                                               f"conversation: {given} made before it")
        if message.role != "tool" and message.tool_call_id is not None:
            raise _error(f"{at}.tool_call_id", f"only a tool message answers a tool call, not a {message.role} one")


def check_contexts(contexts: Sequence[Passage]) -> None:
    """Passage ids are unique: an answer or a judge cites a passage by its id."""
    first: dict[str, int] = {}
    for k, passage in enumerate(contexts):
        if passage.id in first:
            raise _error(f"contexts.{k}.id", f"duplicate passage id {passage.id!r} (first used by contexts."
                                             f"{first[passage.id]})")
        first[passage.id] = k


# -- rendering ---------------------------------------------------------------------------------------


def render_messages(messages: Sequence[ChatMessage]) -> str:
    """One ``role: content`` line per message (a content of several lines stays whole); a tool call as
    ``assistant: [calls NAME(ARGUMENTS)]``."""
    lines = []
    for message in messages:
        if message.content:
            lines.append(f"{message.role}: {message.content}")
        lines += [f"{message.role}: [calls {call.function.name}({call.function.arguments})]"
                  for call in message.tool_calls or ()]
    return "\n".join(lines)


def render_contexts(contexts: Sequence[Passage]) -> str:
    """Each passage as ``[id] text`` (``[id] title`` then the text, when it has a title), a blank line between."""
    return "\n\n".join(f"[{p.id}] {p.title}\n{p.text}" if p.title else f"[{p.id}] {p.text}" for p in contexts)


def render_trajectory(steps: Sequence[Step]) -> str:
    """Each step as ``Step k: tool(arguments)`` with its thought and observation on their own lines."""
    blocks = []
    for k, step in enumerate(steps, 1):
        arguments = "" if step.arguments is None else _json_text(step.arguments)
        lines = [f"Step {k}: {step.tool}({arguments})"]
        lines += [f"Thought: {step.thought}"] if step.thought else []
        lines += [f"Observation: {step.observation}"] if step.observation is not None else []
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def last_reply(messages: Sequence[ChatMessage]) -> int | None:
    """The position of the last assistant message with text (the reply a judge rates), else None."""
    return next((k for k in range(len(messages) - 1, -1, -1)
                 if messages[k].role == "assistant" and messages[k].content), None)
