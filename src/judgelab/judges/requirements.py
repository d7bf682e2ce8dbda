"""Requirements: does an agent's run (or any answer) satisfy the requirements stated for its task?

As Agent-as-a-Judge does on DevAI (Zhuge et al. 2024), each task comes with a checklist of requirements,
and each is judged satisfied or not from what the agent did and what it delivered. One LLM stage per item,
over the one client (cache, resume and accounting come from it): all requirements of an item in one call
(``verify: batch``) or one call per requirement (``verify: each``) (``prompts/requirements/verify.j2``).

The requirements are the config's ``requirements`` (applying to every item) followed by the item's own
(``extra.requirements``: a list of texts, or of ``{id, criteria}`` objects). The model is shown the task
(the item's ``source``, ``instruction`` or ``query``), the agent's steps (its ``trajectory``, else its
``messages``) and the final ``output``. The score is the share of requirements satisfied (0-1, or mapped
linearly onto ``scale``); the unmet requirements are the explanation. A reply that gives no verdict for
some requirement makes the judgment ``unparsable`` with the reason and the replies: it is never scored.

Beside the verdicts, ``extra.trajectory`` holds facts read from the run without a model (heuristics, see
:func:`trajectory_facts`): the number of steps, the tool calls repeated with the same arguments, the
steps whose observation looks like an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from judgelab.data.conversation import last_reply, render_messages, render_trajectory
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.judges.base import OnJudgment
from judgelab.judges.checklist import ChecklistJudge, ItemState, parse_numbered, replies_to
from judgelab.llm.client import Client
from judgelab.llm.types import Request
from judgelab.prompts.render import environment

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Verdict = Literal["satisfied", "not satisfied"]


class Requirement(BaseModel):
    """One requirement: a text, or ``{id, criteria}`` (DevAI's ``requirement_id`` is read as the id; its
    other keys, such as ``category`` and ``prerequisites``, are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str | None = None
    criteria: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _text_or_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"criteria": value}
        if isinstance(value, dict) and "id" not in value and "requirement_id" in value:
            return {**value, "id": value["requirement_id"]}
        return value

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("criteria")
    @classmethod
    def _not_blank(cls, criteria: str) -> str:
        if not criteria.strip():
            raise ValueError("a requirement needs a text")
        return criteria.strip()


_REQUIREMENTS = TypeAdapter(list[Requirement])


def item_requirements(item: Item) -> list[Requirement]:
    """The item's ``extra.requirements``; [] when it has none. Raises ValueError naming the field when they are
    malformed (:func:`extra_list`)."""
    return extra_list(item, "requirements", _REQUIREMENTS, "texts or of {id, criteria} objects") or []


def extra_list(item: Item, key: str, adapter: TypeAdapter[list[Any]], entries: str) -> list[Any] | None:
    """The item's ``extra[key]``, a list (or its JSON text, as a CSV cell holds it) validated by ``adapter``; None
    when it is absent or empty. Raises ValueError naming the field (``extra.KEY.1.criteria: ...``) when it is
    malformed; ``entries`` says what the list holds."""
    given = item.extra.get(key)
    if isinstance(given, str) and given.strip().startswith("["):
        try:
            given = json.loads(given)
        except json.JSONDecodeError as exc:
            raise ValueError(f"extra.{key} is not valid JSON: {exc}") from None
    if given is None or given == []:
        return None
    if not isinstance(given, list):
        raise ValueError(f"extra.{key} must be a list of {entries}, got {type(given).__name__}")
    try:
        return adapter.validate_python(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in (f"extra.{key}", *first["loc"]))
        raise ValueError(f"{where}: {first['msg']}") from None


@dataclass(frozen=True)
class Listed:
    """A requirement as it is checked: its id (given, else its number in the list) and where it came from."""

    id: str
    criteria: str
    origin: Literal["config", "item"]


@dataclass(frozen=True)
class RunShown:
    """What the model is shown of an item's run."""

    task: str | None
    steps_name: str | None  # "Agent's steps" (the trajectory), "Conversation" (the messages) or None
    steps: str | None
    output: str

    @property
    def parts(self) -> list[str]:
        shown = ["task"] if self.task else []
        shown += [{"Agent's steps": "trajectory", "Conversation": "messages"}[self.steps_name]] if self.steps_name else []
        return [*shown, "output"]


def run_shown(item: Item) -> RunShown:
    """The task, the trajectory (else the messages before the final output) and the final output."""
    steps_name, steps = None, None
    if item.trajectory:
        steps_name, steps = "Agent's steps", render_trajectory(item.trajectory)
    elif item.messages:
        messages = item.messages
        reply = last_reply(messages)
        if reply is not None and messages[reply].content == item.output:
            messages = messages[:reply]  # the final output is shown on its own
        steps_name, steps = ("Conversation", render_messages(messages)) if messages else (None, None)
    task = item.prompt if item.prompt != steps else None  # a conversation's derived source is the conversation
    return RunShown(task, steps_name, steps, item.output or "")


@dataclass
class _Checked(ItemState):
    """One item's way through the stage: the requirements it is checked against, what the model is shown."""

    requirements: list[Listed] = field(default_factory=list)
    shown: RunShown | None = None


class RequirementsJudge(ChecklistJudge):
    """Requirement-level judging of an agent's run: the share of its requirements satisfied."""

    registry_name: ClassVar[str] = "requirements"
    kind: Literal["requirements"] = "requirements"

    #: The human score the judgments are compared with.
    aspect: str = "task_success"
    #: Requirements every item is checked against, before the item's own (``extra.requirements``).
    #: ``verify``, ``scale`` (the share satisfied mapped onto it), the sampling: ChecklistJudge's.
    requirements: tuple[Requirement, ...] = ()

    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        states = [self._start(item) for item in items]
        pending = [state for state in states if state.failure is None]
        (self._verify_each if self.verify == "each" else self._verify_batch)(pending, client)
        return [self.emit(self._judgment(state), on_judgment) for state in states]

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, pointwise_items, quality_in, user_text

        def reply(request: Request, _: int) -> str:
            """Quality q gets q - 1 of the two requirements satisfied."""
            quality = quality_in(user_text(request))
            return "\n".join(f"{k}. {'satisfied' if k < quality else 'not satisfied'}" for k in (1, 2))

        config = cls(requirements=(Requirement(criteria="The summary names the council."),
                                   Requirement(id="vote", criteria="The summary says what was voted on.")))
        return ContractExample(config, pointwise_items("task_success"), reply)

    # -- the stage -------------------------------------------------------------------------------
    def _start(self, item: Item) -> _Checked:
        state = _Checked(item)
        if item.kind != "pointwise":
            state.fail("error", "the requirements judge checks one run or answer (an item with an output), not a "
                                f"{item.kind} item")
            return state
        try:
            own = item_requirements(item)
        except ValueError as exc:
            state.fail("error", str(exc))
            return state
        given = [(r, "config") for r in self.requirements] + [(r, "item") for r in own]
        if not given:
            state.fail("error", "the item has no requirements to check: give them in its extra.requirements (a list "
                                "of texts or of {id, criteria}) or in the config's requirements")
            return state
        state.requirements = [Listed(r.id or str(k), r.criteria, origin)
                              for k, (r, origin) in enumerate(given, 1)]
        state.shown = run_shown(item)
        return state

    def _verify_batch(self, states: list[_Checked], client: Client) -> None:
        verify = _template()
        prompts = [verify.batch(run_text(verify, s.shown), [r.criteria for r in s.requirements]) for s in states]
        requests = [self._request(prompt, len(s.requirements)) for s, prompt in zip(states, prompts, strict=True)]
        for state, prompt, text in zip(states, prompts, replies_to(client, states, requests, "verification"), strict=True):
            if text is not None:
                state.replies["verification"] = text
                state.verdicts = parse_verdicts(text, [r.criteria for r in state.requirements], prompt)

    def _verify_each(self, states: list[_Checked], client: Client) -> None:
        verify = _template()
        asks: list[tuple[_Checked, int]] = []
        prompts: list[str] = []
        for state in states:
            shown = run_text(verify, state.shown)  # rendered once for all of the item's requirements
            asks += [(state, k) for k in range(len(state.requirements))]
            prompts += [verify.one(shown, requirement.criteria) for requirement in state.requirements]
        for state in states:
            state.verdicts = [None] * len(state.requirements)
        replies = replies_to(client, [s for s, _ in asks], [self._request(prompt) for prompt in prompts],
                             "verification")
        for (state, k), prompt, text in zip(asks, prompts, replies, strict=True):
            if text is not None:
                state.replies[f"requirement {k + 1}"] = text
                state.verdicts[k] = verdict_in(_answer(text, [state.requirements[k].criteria], prompt))

    # -- judgments ---------------------------------------------------------------------------------
    def _judgment(self, state: _Checked) -> Judgment:
        facts = trajectory_facts(state.item)
        if state.failure is None:
            missing = [str(k + 1) for k, verdict in enumerate(state.verdicts) if verdict is None]
            if missing:
                state.fail("unparsable", f"no verdict (satisfied / not satisfied) for requirement "
                                         f"{', '.join(missing)} of {len(state.requirements)}")
        if state.failure and state.failure[0] == "error":
            judgment = self.error(state.item, state.failure[1], state.usage)
            return judgment.model_copy(update={"extra": {"trajectory": facts}}) if facts else judgment
        extra = self._extra(state) | ({"trajectory": facts} if facts else {})
        common = dict(item_id=state.item.id, aspect=self.aspect, judge=self.name, usage=state.usage, extra=extra,
                      raw="\n".join(f"[{stage}] {text}" for stage, text in state.replies.items()))
        if state.failure:
            return Judgment(status="unparsable", reason=state.failure[1], **common)
        return Judgment(score=self._scaled(extra["satisfied_share"]),
                        explanation=explanation_of(state.requirements, state.verdicts), **common)

    @staticmethod
    def _extra(state: _Checked) -> dict[str, Any]:
        extra: dict[str, Any] = {
            "shown": state.shown.parts,
            "requirements": [{"id": r.id, "criteria": r.criteria, "from": r.origin, "verdict": v}
                             for r, v in zip(state.requirements, state.verdicts, strict=True)]}
        if state.failure is None:
            extra["satisfied_share"] = state.verdicts.count("satisfied") / len(state.requirements)
            extra["unmet"] = [r.id for r, v in zip(state.requirements, state.verdicts, strict=True) if v != "satisfied"]
        return extra


def explanation_of(requirements: Sequence[Listed], verdicts: Sequence[Verdict | None]) -> str:
    """The requirements not satisfied, or that every one is."""
    unmet = [f"- [{r.id}] {r.criteria}" for r, v in zip(requirements, verdicts, strict=True) if v != "satisfied"]
    if not unmet:
        return f"All {len(requirements)} requirement{'s are' if len(requirements) > 1 else ' is'} satisfied."
    return "\n".join([f"{len(unmet)} of {len(requirements)} requirements not satisfied:", *unmet])


# -- reading the replies ----------------------------------------------------------------------------
#: A numbered line: "1. ...", "2) ...", "**3.** ...", "Requirement 4: ...", "R5 - ...".
_NUMBERED = re.compile(r"^\s*[*_#]*\s*(?:(?:requirement|req\.?|r)\s*)?\(?(\d{1,3})[*_]*\s*[.):\]-]\s*(.*)$",
                       re.IGNORECASE)
_MET = r"(?:satisf(?:ied|ies|y)|met|meets?|fulfill?(?:ed|s)?)"
#: A verdict word; the negated forms are tried first, so "not satisfied" (or "not fully met", "isn't met",
#: "unsatisfied", "partially satisfied") is never read as satisfied.
_VERDICT = re.compile(rf"(?P<unmet>(?:\bnot|n't|\bnever)(?:[\s_-]+\w+){{0,2}}?[\s_-]+{_MET}\b|\b(?:un|dis)satisf\w*"
                      rf"|\bunmet\b|\bunfulfill?ed\b|\bpartial(?:ly)?(?:[\s_-]+{_MET})?\b)|(?P<met>\b{_MET}\b)", re.IGNORECASE)
#: Read only where no verdict word is: "yes" / "no" and the like.
_YES_NO = re.compile(r"\b(?:(?P<met>yes|true|pass(?:ed|es)?)|(?P<unmet>no|false|fail(?:ed|s)?))\b", re.IGNORECASE)


def verdict_in(text: str) -> Verdict | None:
    """The verdict a text gives (by its verdict words, else by yes / no), or None when it gives none, or
    both: "- satisfied: ... - not satisfied: ..." is no verdict."""
    for words in (_VERDICT, _YES_NO):
        given = {match.lastgroup for match in words.finditer(text or "")}
        if given:
            return None if len(given) > 1 else "satisfied" if given == {"met"} else "not satisfied"
    return None


def parse_verdicts(text: str, requirements: Sequence[str], prompt: str = "") -> list[Verdict | None]:
    """Each requirement's verdict from a batch reply to ``prompt`` (:func:`_answer`: what it repeats is no verdict)."""
    return parse_numbered(_answer(text, requirements, prompt), len(requirements), verdict_in, _NUMBERED)


#: A line's list mark: "- ", "* ", "**2.** ", "3) ".
_MARK = re.compile(r"^[\s*_#>-]*(?:\(?\d{1,3}[*_]*\s*[.):\]-])?\s*")


def _answer(text: str, requirements: Sequence[str], prompt: str) -> str:
    """What a reply says beyond repeating: without its lines that are lines of the prompt (list marks aside;
    small models repeat the verdicts' definitions) and without the requirements' texts it repeats ("1. The
    tests pass: not satisfied" gives no verdict on "pass"), whole words, the longest first."""
    shown = {_bare(line) for line in prompt.splitlines()} - {""}
    text = "\n".join(line for line in (text or "").splitlines() if _bare(line) not in shown)
    for requirement in sorted(requirements, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(requirement.rstrip('.'))}(?!\w)", " ", text, flags=re.IGNORECASE)
    return text


def _bare(line: str) -> str:
    return _MARK.sub("", line).strip().strip("*_").strip().lower()


# -- facts read from the run, no model ----------------------------------------------------------------
#: An observation that starts like an error: "Error: ...", "Traceback ...", "FileNotFoundError: ...",
#: "Exception ...", "fatal: ...", "Failed ...".
_ERROR = re.compile(r"\s*(?:(?i:\[?(?:error|errno|traceback|exception|fatal|failed|failure)\b)|[\w.]*(?:Error|Exception)\b)")


def trajectory_facts(item: Item) -> dict[str, Any] | None:
    """Heuristics on the agent's tool calls (its ``trajectory``, else the tool calls of its ``messages``), or
    None when it has neither: ``steps`` (tool calls), ``repeated_calls`` (calls identical to an earlier one:
    the same tool with the same arguments, key order aside; wasted steps, or a retry after an error),
    ``repeats`` (each such call with the steps it was made at) and ``error_steps`` (steps whose observation
    starts like an error). They read text only: a repeat may be a legitimate poll, and an error may be
    reported in words these miss."""
    calls = tool_calls_of(item)
    if calls is None:
        return None
    at: dict[tuple[str, str], list[int]] = {}
    for k, (tool, arguments, _) in enumerate(calls, 1):
        at.setdefault((tool, arguments), []).append(k)
    return {"from": "trajectory" if item.trajectory else "messages", "steps": len(calls),
            "repeated_calls": len(calls) - len(at),
            "repeats": [{"tool": tool, "arguments": arguments, "steps": steps}
                        for (tool, arguments), steps in at.items() if len(steps) > 1],
            "error_steps": [k for k, (_, _, observation) in enumerate(calls, 1)
                            if observation and _ERROR.match(observation)]}


def tool_calls_of(item: Item) -> list[tuple[str, str, str | None]] | None:
    """(tool, :func:`canonical_arguments`, observation) per tool call of the item's ``trajectory``, else of its
    ``messages`` (each call's result the tool message that answers it); None when it has neither."""
    if item.trajectory:
        return [(step.tool, canonical_arguments(step.arguments), step.observation) for step in item.trajectory]
    if not item.messages:
        return None
    results = {m.tool_call_id: m.content for m in item.messages if m.role == "tool"}
    return [(call.function.name, canonical_arguments(call.function.arguments), results.get(call.id))
            for m in item.messages for call in m.tool_calls or ()]


def canonical_arguments(arguments: Any) -> str:
    """Arguments as JSON text with sorted keys, so that equal arguments compare equal whatever their key order
    and spacing; a text that is not JSON stays as it is."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def run_text(verify: Any, shown: RunShown | None) -> str:
    """The run as a verification template (its ``run`` macro) shows it: task, steps, final output."""
    if shown is None:  # the stage's start sets it for every item it passes on: the AttributeError None.task raises
        raise AttributeError("no run to show")
    return verify.run(shown.task, shown.steps_name, shown.steps, shown.output)


def _template() -> Any:
    return environment().get_template("requirements/verify.j2").module
