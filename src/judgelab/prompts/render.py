"""Turn (strategy, family, aspect, item, auxiliary texts) into chat messages.

The wording lives in template files: ``_base/`` holds the three components every pointwise
prompt is made of (task description TD, evaluation rules ER, input content IC) and each
family folder holds a ``family.j2`` of macros with that family's own phrases (what is judged,
how the input is shown, the auxiliary-stage prompts). Python only decides which pieces a
strategy asks for and in which order they go.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jinja2
from pydantic import BaseModel, ConfigDict

from judgelab.data.conversation import last_reply, render_contexts, render_messages, render_trajectory
from judgelab.data.fields import PROMPT_FIELD
from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.strategy import CotMode, ReferenceMode, Strategy

TEMPLATE_DIR = Path(__file__).parent

# Pointwise families render with a Strategy; pairwise has its own renderer (pairwise.py).
POINTWISE_FAMILIES = ("summarisation", "dialogue", "data2text", "story", "qa", "relevance", "generic", "conversation")
FAMILIES = (*POINTWISE_FAMILIES, "pairwise")

# Benchmarks under shared/benchmarks and the family whose wording fits them.
DATASET_FAMILIES = {
    "summeval": "summarisation",
    "qags_cnndm": "summarisation",
    "qags_xsum": "summarisation",
    "topical_chat": "dialogue",
    "sfhot": "data2text",
    "sfres": "data2text",
    "hanna": "story",
    "llmbar": "pairwise",
    "llmjudge_dev": "relevance",
    "trec_dl2019": "relevance",
}


def family_for(items: Sequence[Item], family: str | None = None) -> str:
    """``family`` if given, else the one that fits the items' benchmark (``dataset``), else relevance
    for query-passage pairs (the generic family shows an output they lack), else generic."""
    if family or items[0].dataset in DATASET_FAMILIES:
        return family or DATASET_FAMILIES[items[0].dataset]
    return "relevance" if items[0].kind == "relevance" else "generic"


# Forced start of the reply when the rating comes first: the next token is the rating, so
# its top logprobs give the logprob-weighted score.
RATING_PREFIX = "Rating: [["

Message = dict[str, str]


class AuxiliaryTexts(BaseModel):
    """Texts a strategy may embed, already resolved for this strategy and item.

    ``criteria`` is the human-written or the self-generated text, whichever the strategy asks
    for; ``autocot`` the steps generated for this aspect, scale and criteria source;
    ``reference`` the self-generated reference for this item; ``checklist`` this item's
    questions (at most 3); ``examples`` the in-context examples already on the strategy's scale.
    Texts a strategy does not use are ignored, so one object can serve many strategies.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    criteria: str | None = None
    autocot: str | None = None
    reference: str | None = None
    checklist: str | tuple[str, ...] | None = None
    examples: tuple[Any, ...] = ()


class RenderedPrompt(BaseModel):
    """Messages for one judge call plus what the parser needs to read the reply."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    # Start the assistant turn with this (when the backend can) and parse prefix + reply.
    assistant_prefix: str
    bounds: tuple[int, int]
    cot: CotMode
    # Which rating marker in the reply is the verdict: the first when the rating comes before
    # the explanation, the last when it comes after.
    pick: Literal["first", "last"]

    @property
    def prompt(self) -> str:
        """The user message (the whole prompt when there is no system message)."""
        return self.messages[-1]["content"]


@dataclass(frozen=True)
class PromptContext:
    """Everything a template may read, as ``c``. Family macros never see the Strategy itself."""

    aspect: str
    item: Item
    max: int = 5
    where: str = "below"
    cot: CotMode = "prefix"
    reference_mode: ReferenceMode = "none"
    task: str | None = None
    criteria: str | None = None
    autocot: str | None = None
    reference: str | None = None
    checklist: str | None = None
    examples: tuple[Any, ...] = ()

    # The item's conversation, passages and agent run as text, for templates (``c.item.messages`` etc.
    # hold the objects); None when the item has none. No shipped template reads them yet.
    @property
    def conversation(self) -> str | None:
        """Every message, one ``role: content`` line each (data.conversation.render_messages)."""
        return render_messages(self.item.messages) if self.item.messages else None

    @property
    def contexts(self) -> str | None:
        """The passages as ``[id] text``, a blank line between."""
        return render_contexts(self.item.contexts) if self.item.contexts else None

    @property
    def trajectory(self) -> str | None:
        """The steps as ``Step k: tool(arguments)`` with their thoughts and observations."""
        return render_trajectory(self.item.trajectory) if self.item.trajectory else None


# -- templates --------------------------------------------------------------------------------


@functools.cache
def environment() -> jinja2.Environment:
    # StrictUndefined: a template that reads a field nobody set is a bug, not an empty string.
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )
    env.globals["fail"] = _fail
    return env


def _fail(message: str) -> str:
    """Lets a template refuse an input it cannot phrase: ``{{ fail("...") }}``."""
    raise ConfigError(message)


@functools.cache
def family_module(family: str) -> Any:
    """The family's macros (``task``, ``source``, ``output``, ...) as a compiled module."""
    if family not in FAMILIES:
        raise ConfigError(f"unknown prompt family {family!r}; choose one of {', '.join(FAMILIES)}")
    return environment().get_template(f"{family}/family.j2").module


@functools.cache
def _component(name: str) -> jinja2.Template:
    return environment().get_template(f"_base/{name}.j2")


_COMPONENT_FILES = {"TD": "task_description", "ER": "evaluation_rules", "IC": "input_content"}


# -- pointwise judge prompt -------------------------------------------------------------------


def render_judge_prompt(
    strategy: Strategy,
    family: str,
    aspect: str,
    item: Item,
    aux: AuxiliaryTexts | None = None,
    *,
    task: str | None = None,
    system: str | None = None,
    use_prefix: bool = True,
) -> RenderedPrompt:
    """The pointwise judge prompt for ``item`` under ``strategy``.

    ``family`` picks the wording (see ``FAMILIES``); ``task`` is the user's task description
    for the ``generic`` family. ``aux`` must hold every text ``strategy.needs()`` names, or a
    ``ConfigError`` says which is missing. With ``use_prefix`` and a rating-first strategy the
    returned ``assistant_prefix`` is ``"Rating: [["``; otherwise it is empty.
    """
    if family == "pairwise":
        raise ConfigError("the pairwise family has its own renderer: render_pairwise_prompt")
    module = family_module(family)
    aux = aux or AuxiliaryTexts()
    _check_item(module, family, item)
    context = _judge_context(strategy, aspect, item, aux, task)
    parts = [
        _component(_COMPONENT_FILES[name]).render(c=context, f=module).strip()
        for name in strategy.components
    ]
    messages = _messages("\n\n".join(parts), system)
    prefix = RATING_PREFIX if use_prefix and strategy.rating_first else ""
    return RenderedPrompt(
        messages=messages,
        assistant_prefix=prefix,
        bounds=strategy.bounds,
        cot=strategy.cot,
        pick="last" if strategy.cot == "prefix" else "first",
    )


def _judge_context(
    strategy: Strategy, aspect: str, item: Item, aux: AuxiliaryTexts, task: str | None
) -> PromptContext:
    components = strategy.components
    # "displayed below/above": where the input sits relative to the instruction (seed templates).
    where = "below" if components.index("IC") > components.index("TD") else "above"
    return PromptContext(
        aspect=aspect,
        item=item,
        max=strategy.scale,
        where=where,
        cot=strategy.cot,
        reference_mode=strategy.reference,
        task=_clean(task),
        criteria=_needed(strategy.criteria != "none", aux.criteria, f"{strategy.criteria}-written criteria"),
        autocot=_needed(strategy.autocot, aux.autocot, "auto-CoT evaluation steps"),
        reference=_needed(strategy.reference == "self", aux.reference, "a self-generated reference"),
        checklist=_needed(strategy.metrics, format_checklist(aux.checklist), "checklist questions"),
        examples=_examples(strategy.examples, aux.examples),
    )


def _needed(wanted: bool, text: str | None, what: str) -> str | None:
    if not wanted:
        return None
    text = _clean(text)
    if text is None:
        raise ConfigError(f"the strategy asks for {what} but none was given (AuxiliaryTexts)")
    return text


def _examples(count: int, examples: Sequence[Any]) -> tuple[Any, ...]:
    if count == 0:
        return ()
    if len(examples) < count:
        raise ConfigError(f"the strategy asks for {count} in-context examples but {len(examples)} were given")
    return tuple(examples[:count])


def format_checklist(checklist: str | Sequence[str] | None) -> str | None:
    """Questions as numbered lines; a string is taken as already formatted."""
    if checklist is None or isinstance(checklist, str):
        return _clean(checklist)
    questions = [q.strip() for q in checklist if q and q.strip()]
    return "\n".join(f"{i}. {q}" for i, q in enumerate(questions, 1)) or None


# -- auxiliary-stage prompts ------------------------------------------------------------------


def render_criteria_prompt(family: str, aspect: str, scale: int, *, task: str | None = None) -> list[Message]:
    """Self-generated criteria: asked once per (family, aspect, scale)."""
    context = PromptContext(aspect=aspect, item=_NO_ITEM, max=scale, task=_clean(task))
    return _aux_messages(family, "criteria_generation", context)


def render_autocot_prompt(
    family: str, aspect: str, scale: int, criteria: str | None = None, *, task: str | None = None
) -> list[Message]:
    """G-Eval style evaluation steps: once per (family, aspect, scale, criteria text or none)."""
    context = PromptContext(aspect=aspect, item=_NO_ITEM, max=scale, criteria=_clean(criteria), task=_clean(task))
    return _aux_messages(family, "autocot_generation", context)


def render_reference_prompt(family: str, item: Item, *, task: str | None = None) -> list[Message]:
    """Self-generated reference: once per item (per source, in fact: it only reads the input)."""
    if family == "pairwise" and is_conversation_pair(item):
        return _conversation_pair_aux("reference_generation", item)
    module = family_module(family)
    _check_item(module, family, item, judged=False)
    return _aux_messages(family, "reference_generation", PromptContext(aspect="", item=item, task=_clean(task)))


def render_checklist_prompt(
    family: str, aspect: str, item: Item, criteria: str | None = None, *, task: str | None = None
) -> list[Message]:
    """LLMBar-style checklist (at most 3 questions): once per (item input, aspect)."""
    if family == "pairwise" and is_conversation_pair(item):
        return _conversation_pair_aux("checklist_generation", item)
    module = family_module(family)
    _check_item(module, family, item, judged=False)
    context = PromptContext(aspect=aspect, item=item, criteria=_clean(criteria), task=_clean(task))
    return _aux_messages(family, "checklist_generation", context)


# Criteria and auto-CoT prompts read no item; this placeholder keeps PromptContext total.
_NO_ITEM = Item(id="-", output="-")


def _aux_messages(family: str, macro: str, context: Any) -> list[Message]:
    module = family_module(family)
    if not hasattr(module, macro):
        raise ConfigError(f"the {family!r} family has no {macro.replace('_', ' ')} stage")
    text = str(getattr(module, macro)(context)).strip()
    # A family may pair a stage with a system message (LLMBar's auxiliary prompts do).
    return list(_messages(text, getattr(module, f"{macro}_system", None)))


#: Aspect names as the adjective a generation instruction uses ("Write a fluent summary").
ASPECT_ADJECTIVES = {
    "naturalness": "natural", "informativeness": "informative", "coherence": "coherent",
    "consistency": "factually consistent", "fluency": "fluent", "relevance": "relevant",
    "engagingness": "engaging", "groundedness": "grounded", "understandability": "understandable",
    "empathy": "empathetic", "surprise": "surprising", "complexity": "complex", "overall": "good",
    "answer_relevance": "relevant to the question",
}


def render_likelihood_prompt(family: str, aspect: str, item: Item, *, task: str | None = None,
                             instruction: str | None = None, likelihood_of: str = "output") -> list[Message]:
    """The user message a likelihood judge scores its reply against (prompts/likelihood/prompt.j2):
    with ``likelihood_of="output"`` an instruction and the input, the judged text being the reply;
    with ``"input"`` the judged text and an instruction to write the input, which is the reply.
    An aspect missing from ``ASPECT_ADJECTIVES`` is used as written ("Write a concise summary")."""
    if family == "pairwise":
        raise ConfigError("a likelihood judge scores one output; the pairwise family compares two")
    module = family_module(family)
    quality = ASPECT_ADJECTIVES.get(aspect.lower(), aspect)
    text = environment().get_template("likelihood/prompt.j2").render(
        family=family, quality=quality, item=item, task=task, instruction=instruction, fam=module,
        likelihood_of=likelihood_of)
    return list(_messages(text.strip(), None))


# -- pairwise judge prompt --------------------------------------------------------------------


class RenderedPairwise(BaseModel):
    """Messages for one pairwise call. ``swapped``: output_b was shown as "Output (a)"."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    swapped: bool
    cot: Literal["none", "prefix"]

    @property
    def prompt(self) -> str:
        return self.messages[-1]["content"]


@dataclass(frozen=True)
class PairwiseContext:
    instruction: str
    output_1: str
    output_2: str
    cot: str = "none"
    rules: bool = True
    checklist: str | None = None
    reference: str | None = None


def render_pairwise_prompt(
    item: Item,
    *,
    swap: bool = False,
    cot: Literal["none", "prefix"] = "none",
    rules: bool = True,
    checklist: str | Sequence[str] | None = None,
    reference: str | None = None,
    system: str | None = "default",
) -> RenderedPairwise:
    """LLMBar-style preference prompt for ``item.output_a`` vs ``item.output_b``.

    ``swap`` shows output_b first (run both orders to measure positional consistency);
    ``cot="prefix"`` asks for an explanation ending in "Therefore, Output (x) is better.";
    ``checklist``/``reference`` add LLMBar's Metrics/Reference blocks. ``system="default"`` uses
    LLMBar's system message, ``None`` sends none. An item with ``messages_a`` and ``messages_b`` is shown as two
    conversations after the opening they share (:data:`CONVERSATION_PAIR_TEMPLATE`), with the same options.
    """
    if is_conversation_pair(item):
        module = conversation_pair_module()
        _check_item(module, "pairwise", item)
        pair = _conversation_pair_context(item, swap=swap, cot=cot, rules=rules, checklist=format_checklist(checklist),
                                          reference=_clean(reference))
        system_text = module.judge_system if system == "default" else system
        return RenderedPairwise(messages=_messages(str(module.judge(pair)).strip(), system_text), swapped=swap, cot=cot)
    module = family_module("pairwise")
    _check_item(module, "pairwise", item)
    first, second = (item.output_b, item.output_a) if swap else (item.output_a, item.output_b)
    context = PairwiseContext(
        instruction=item.prompt or "",
        output_1=first or "",
        output_2=second or "",
        cot=cot,
        rules=rules,
        checklist=format_checklist(checklist),
        reference=_clean(reference),
    )
    text = str(module.judge(context)).strip()
    system_text = module.judge_system if system == "default" else system
    return RenderedPairwise(messages=_messages(text, system_text), swapped=swap, cot=cot)


# -- two assistants' conversations (pairwise/conversations.j2) --------------------------------

#: The pairwise family's template for items that compare two conversations (``messages_a``, ``messages_b``).
CONVERSATION_PAIR_TEMPLATE = "pairwise/conversations.j2"


def is_conversation_pair(item: Item) -> bool:
    """True when ``item`` compares two assistants' whole conversations: the pairwise prompts show both chats."""
    return bool(item.messages_a and item.messages_b)


@functools.cache
def conversation_pair_module() -> Any:
    """The macros of :data:`CONVERSATION_PAIR_TEMPLATE` (``judge``, the auxiliary stages)."""
    return environment().get_template(CONVERSATION_PAIR_TEMPLATE).module


@dataclass(frozen=True)
class ConversationPairContext:
    """What the conversations template reads: the user's goal when the item states one, the opening both
    conversations share (once), and each side's continuation in the order shown."""

    goal: str | None
    opening: str | None
    output_1: str = ""
    output_2: str = ""
    cot: str = "none"
    rules: bool = True
    checklist: str | None = None
    reference: str | None = None


def _conversation_pair_context(item: Item, *, swap: bool = False, **options: Any) -> ConversationPairContext:
    sides = [item.messages_a or [], item.messages_b or []]
    for letter, messages, output in (("a", sides[0], item.output_a), ("b", sides[1], item.output_b)):
        reply = last_reply(messages)
        # an item edited after validation (model_copy: the audit's swapped or padded outputs) would be judged on
        # conversations that do not hold the outputs it names: refused, rather than a verdict on something else
        if reply is None or messages[reply].content != output:
            raise ConfigError(f"item {item.id!r}: output_{letter} is not the last reply of messages_{letter} (the "
                              "item was changed after it was read): the prompt shows the conversations, not output_"
                              f"{letter}")
    shared = item.shared_opening
    opening = render_messages(sides[0][:shared]) or None
    # the item's own input text is the goal; the source derived from the opening is not shown twice
    given = item.source if item.source != opening else None
    first, second = (sides[1], sides[0]) if swap else (sides[0], sides[1])
    return ConversationPairContext(goal=_clean(item.instruction or item.query or given), opening=opening,
                                   output_1=render_messages(first[shared:]), output_2=render_messages(second[shared:]),
                                   **options)


def _conversation_pair_aux(macro: str, item: Item) -> list[Message]:
    module = conversation_pair_module()
    text = str(getattr(module, macro)(_conversation_pair_context(item))).strip()
    return list(_messages(text, getattr(module, f"{macro}_system", None)))


# -- helpers ----------------------------------------------------------------------------------


def _messages(prompt: str, system: str | None) -> tuple[Message, ...]:
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    return tuple(messages)


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return text or None


def _check_item(module: Any, family: str, item: Item, *, judged: bool = True) -> None:
    """Fail early, naming the field, when the item lacks text this family shows."""
    judged_fields = {"output", "passage", "output_a", "output_b"}
    for field in module.requires:
        if not judged and field in judged_fields:
            continue
        value = getattr(item, field)
        if not isinstance(value, str) or not value.strip():
            # "prompt" is the item's input under whichever name its kind gives it: name that one
            named = PROMPT_FIELD[item.kind] if field == "prompt" else field
            raise ConfigError(f"item {item.id!r} has no {named!r} text, which the {family!r} prompt shows")


_UNRENDERED = re.compile(r"\{\{|\{%|\{#")


def has_unrendered_markup(text: str) -> bool:
    """True when template syntax leaked into a prompt (used by tests and the doctor)."""
    return bool(_UNRENDERED.search(text))
