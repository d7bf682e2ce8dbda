"""Tool calls of an agent's run (docs/agents.md, "Tool calls"): were the right tools called?

Two kinds, as the agent-evaluation tools split them:

* ``tool_calls`` (no model): the calls made against the calls expected, ``extra.expected_tools`` (a list of tool
  names, or of ``{name, arguments}``; DeepEval's ``expectedTools`` is read into it). Matched by name, or by name
  and arguments (``match``); in any order (the share of the expected calls made, each expected call matched by
  at most one call), as a subsequence (the longest common subsequence over the number expected), or exactly
  (1 when the calls are the expected ones in order, else 0) (``order``); calls nobody expected ignored or
  counted against the score (``extra_calls``). DeepEval's ToolCorrectness and Judgment Labs' ExecutionOrder
  score so; they are reproduced here so that a judgment records which call was missing or extra.
* ``tool_use`` (one model): without expected calls, each call is shown to the model with the task and the run
  and judged correct (the right tool, with the right arguments, needed at that point) or not, as MLflow's
  ToolCallCorrectness does without expectations. The score is the share judged correct; the calls judged not
  correct, with the model's words, are the explanation. A reply without a verdict for some call makes the
  judgment unparsable: a partial reply is never scored.

The calls are read from the item's ``trajectory``, else from the tool calls of its ``messages``
(:func:`judgelab.judges.requirements.tool_calls_of`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.judges.base import JudgeConfig, OnJudgment
from judgelab.judges.checklist import ChecklistJudge, ItemState, parse_numbered, replies_to
from judgelab.judges.requirements import (
    RunShown,
    canonical_arguments,
    extra_list,
    run_shown,
    run_text,
    tool_calls_of,
)
from judgelab.llm.client import Client
from judgelab.llm.types import Request
from judgelab.prompts.render import environment

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

#: the most calls one run's tool_use judgment asks the model about (one prompt or reply line each)
MAX_CALLS = 100


class ExpectedTool(BaseModel):
    """One expected call: a tool name, or ``{name, arguments}`` (DeepEval's ``inputParameters`` read as the
    arguments). Without arguments it matches any call of that tool."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str = Field(min_length=1)
    arguments: Any = None

    @model_validator(mode="before")
    @classmethod
    def _name_or_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, dict) and "arguments" not in value and "inputParameters" in value:
            return {**value, "arguments": value["inputParameters"]}
        return value


_EXPECTED = TypeAdapter(list[ExpectedTool])


def expected_tools(item: Item) -> list[ExpectedTool]:
    """The item's ``extra.expected_tools`` (:func:`~judgelab.judges.requirements.extra_list`; an empty list: no
    call expected). Raises ValueError naming the field when it is missing or malformed."""
    if "expected_tools" not in item.extra:
        raise ValueError("the item has no extra.expected_tools (a list of tool names, or of {name, arguments}) to "
                         "compare its calls with; without them, judge the calls with kind: tool_use")
    return extra_list(item, "expected_tools", _EXPECTED, "tool names or of {name, arguments} objects") or []


# -- no model: the calls made against the calls expected ------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """A call as it is compared: the tool and its canonical arguments (None: any, for an expected call)."""

    tool: str
    arguments: str | None

    def matches(self, expected: Call, by_arguments: bool) -> bool:
        return self.tool == expected.tool and (not by_arguments or expected.arguments is None
                                               or self.arguments == expected.arguments)

    def shown(self) -> str:
        """``tool`` for an expected call of any arguments; ``tool(ARGUMENTS)`` else (``tool()``: none given)."""
        if self.arguments is None:
            return self.tool
        return f"{self.tool}({'' if self.arguments == 'null' else self.arguments})"


def _matched_any_order(made: Sequence[Call], expected: Sequence[Call], by_arguments: bool) -> list[int | None]:
    """For each expected call, the position of a distinct made call matching it (None: missing). Expected calls
    with arguments are placed first, so a name-only expectation does not take the call a precise one needs."""
    taken: set[int] = set()
    found: list[int | None] = [None] * len(expected)
    for k in sorted(range(len(expected)), key=lambda j: expected[j].arguments is None):
        found[k] = next((i for i, call in enumerate(made) if i not in taken and call.matches(expected[k], by_arguments)),
                        None)
        if found[k] is not None:
            taken.add(found[k])
    return found


def _matched_in_order(made: Sequence[Call], expected: Sequence[Call], by_arguments: bool) -> list[int | None]:
    """A longest common subsequence of the made and the expected calls: each expected call's made call, or None.
    Hand-written: difflib's SequenceMatcher matches equal elements, not an expected call's looser match."""
    rows, cols = len(expected), len(made)
    length = [[0] * (cols + 1) for _ in range(rows + 1)]
    for j in range(rows - 1, -1, -1):
        for i in range(cols - 1, -1, -1):
            length[j][i] = (length[j + 1][i + 1] + 1 if made[i].matches(expected[j], by_arguments)
                            else max(length[j + 1][i], length[j][i + 1]))
    found: list[int | None] = [None] * rows
    j = i = 0
    while j < rows and i < cols:
        if made[i].matches(expected[j], by_arguments) and length[j][i] == length[j + 1][i + 1] + 1:
            found[j], j, i = i, j + 1, i + 1
        elif length[j + 1][i] >= length[j][i + 1]:
            j += 1
        else:
            i += 1
    return found


class ToolCallsJudge(JudgeConfig):
    """No model: the share of the expected tool calls the run made (docs/agents.md, "Tool calls")."""

    registry_name: ClassVar[str] = "tool_calls"
    uses_llm: ClassVar[bool] = False
    kind: Literal["tool_calls"] = "tool_calls"
    aspect: str = "tool_correctness"
    #: ``name``: a call of the expected tool matches; ``arguments``: its arguments must be equal too (as JSON,
    #: key order aside) where the expected call gives them.
    match: Literal["name", "arguments"] = "name"
    #: ``any``: the share of expected calls made, in any order; ``sequence``: the longest run of them made in
    #: the expected order (other calls between allowed), over the number expected; ``exact``: 1 when the calls
    #: made are the expected ones in order, nothing else, else 0.
    order: Literal["any", "sequence", "exact"] = "any"
    #: ``ignore``: calls nobody expected do not count; ``count``: each lowers the score, as one more expected
    #: call missed would (matched / (expected + extra)).
    extra_calls: Literal["ignore", "count"] = "ignore"
    #: [low, high]: the share mapped linearly onto it; None keeps the share (0-1).
    scale: tuple[float, float] | None = None

    def run(self, items: Sequence[Item], client: Client | None = None, on_judgment: OnJudgment | None = None
            ) -> list[Judgment]:
        return [self.emit(self._judgment(item), on_judgment) for item in items]

    def _judgment(self, item: Item) -> Judgment:
        if item.kind != "pointwise":
            return self.error(item, f"the tool_calls judge compares one run's calls, not a {item.kind} item's")
        try:
            expected = [Call(e.name, None if e.arguments is None else canonical_arguments(e.arguments))
                        for e in expected_tools(item)]
        except ValueError as exc:
            return self.error(item, str(exc))
        made = [Call(tool, arguments) for tool, arguments, _ in tool_calls_of(item) or ()]
        by_arguments = self.match == "arguments"
        found = (_matched_any_order if self.order == "any" else _matched_in_order)(made, expected, by_arguments)
        used = {i for i in found if i is not None}
        missing = [e for e, i in zip(expected, found, strict=True) if i is None]
        extra_made = [c for i, c in enumerate(made) if i not in used]
        share = self._share(len(expected) - len(missing), len(expected), len(extra_made), len(made))
        low, high = self.scale or (0.0, 1.0)
        extra = {"expected": [c.shown() for c in expected], "made": [c.shown() for c in made],
                 "missing": [c.shown() for c in missing], "not_expected": [c.shown() for c in extra_made],
                 "matched_share": share, "from": "trajectory" if item.trajectory else "messages" if made else None}
        return Judgment(item_id=item.id, score=low + (high - low) * share, aspect=self.aspect, judge=self.name,
                        explanation=self._explanation(missing, extra_made, len(expected)), extra=extra)

    def _share(self, matched: int, expected: int, extra: int, made: int) -> float:
        if self.order == "exact":
            return float(matched == expected and made == expected)
        if self.extra_calls == "count":
            return matched / (expected + extra) if expected + extra else 1.0
        return matched / expected if expected else 1.0

    def _explanation(self, missing: list[Call], extra_made: list[Call], expected: int) -> str:
        parts = []
        if missing:
            parts.append(f"{len(missing)} of {expected} expected call(s) not made"
                         f"{' in order' if self.order != 'any' else ''}: {', '.join(c.shown() for c in missing)}")
        if extra_made and (self.extra_calls == "count" or self.order == "exact"):
            parts.append(f"{len(extra_made)} call(s) not expected: {', '.join(c.shown() for c in extra_made)}")
        return ". ".join(parts) + "." if parts else f"All {expected} expected call(s) made."

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample

        def run(k: int, tools: list[str]) -> Item:
            return Item.model_validate({"id": f"t{k}", "source": f"Task {k}: report the weather.", "output": "Sunny.",
                                        "trajectory": [{"tool": t, "arguments": {"city": "Oslo"}} for t in tools],
                                        "extra": {"expected_tools": ["geocode", "forecast"]}})

        items = [run(0, ["geocode", "forecast"]), run(1, ["forecast"]), run(2, ["search"])]
        return ContractExample(cls(), items)


# -- one model: each call judged correct or not ----------------------------------------------------------------
Verdict = Literal["correct", "not correct"]
#: A verdict word, the negated forms first: "not correct", "incorrect", "wrong", "unneeded" are never "correct".
_VERDICT = re.compile(r"(?P<bad>\b(?:not|n't)(?:\s+\w+){0,2}?\s+(?:correct|needed|necessary|appropriate)\b"
                      r"|\bincorrect\w*|\bwrong\b|\bun(?:needed|necessary)\b|\binappropriate\b|\bredundant\b)"
                      r"|(?P<good>\bcorrect\b)", re.IGNORECASE)
_YES_NO = re.compile(r"\b(?:(?P<good>yes)|(?P<bad>no))\b", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*[*_#]*\s*(?:(?:call|step|tool call)\s*)?\(?(\d{1,3})[*_]*\s*[.):\]-]\s*(.*)$",
                       re.IGNORECASE)


def call_verdict(text: str) -> Verdict | None:
    """The verdict a line gives (its verdict words, else yes / no), None when it gives none, or both."""
    for words in (_VERDICT, _YES_NO):
        given = {match.lastgroup for match in words.finditer(text or "")}
        if given:
            return None if len(given) > 1 else "correct" if given == {"good"} else "not correct"
    return None


@dataclass
class _Calls(ItemState):
    calls: list[tuple[str, str, str | None]] | None = None
    shown: RunShown | None = None


class ToolUseJudge(ChecklistJudge):
    """One model: the share of a run's tool calls it judges correct (docs/agents.md, "Tool calls")."""

    registry_name: ClassVar[str] = "tool_use"
    kind: Literal["tool_use"] = "tool_use"
    aspect: str = "tool_correctness"
    #: A run with more calls gets an error judgment, not a truncated check.
    max_calls: int = Field(default=MAX_CALLS, ge=1, le=10_000)

    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        states = [self._start(item) for item in items]
        pending = [state for state in states if state.failure is None]
        (self._verify_each if self.verify == "each" else self._verify_batch)(pending, client)
        return [self.emit(self._judgment(state), on_judgment) for state in states]

    def _start(self, item: Item) -> _Calls:
        state = _Calls(item)
        if item.kind != "pointwise":
            state.fail("error", f"the tool_use judge checks one run's tool calls, not a {item.kind} item's")
            return state
        state.calls = tool_calls_of(item) or []
        if not state.calls:
            state.fail("error", "the item has no tool calls to check (none in its trajectory or its messages)")
        elif len(state.calls) > self.max_calls:
            state.fail("error", f"{len(state.calls)} tool calls: the tool_use judge checks at most {self.max_calls} "
                                "a run (raise max_calls in the config, or split the run)")
        state.shown = run_shown(item)
        return state

    def _listed(self, state: _Calls) -> list[str]:
        """Each call as ``tool(ARGUMENTS)``: its observation is in the run shown above it, not repeated."""
        return [f"{tool}({arguments})" for tool, arguments, _ in state.calls or ()]

    def _verify_batch(self, states: list[_Calls], client: Client) -> None:
        verify = _template()
        prompts = [verify.batch(run_text(verify, s.shown), self._listed(s)) for s in states]
        requests = [self._request(prompt, len(s.calls or ())) for s, prompt in zip(states, prompts, strict=True)]
        for state, text in zip(states, replies_to(client, states, requests, "verification"), strict=True):
            if text is not None:
                state.replies["verification"] = text
                state.verdicts = parse_numbered(text, len(state.calls or ()), call_verdict, _NUMBERED)

    def _verify_each(self, states: list[_Calls], client: Client) -> None:
        verify = _template()
        asks: list[tuple[_Calls, int]] = []
        prompts: list[str] = []
        for state in states:
            shown = run_text(verify, state.shown)  # rendered once for all of the run's calls
            listed = self._listed(state)
            asks += [(state, k) for k in range(len(listed))]
            prompts += [verify.one(shown, call, k + 1) for k, call in enumerate(listed)]
        for state in states:
            state.verdicts = [None] * len(state.calls or ())
        replies = replies_to(client, [s for s, _ in asks], [self._request(p) for p in prompts], "verification")
        for (state, k), text in zip(asks, replies, strict=True):
            if text is not None:
                state.replies[f"call {k + 1}"] = text
                state.verdicts[k] = call_verdict(text)

    def _judgment(self, state: _Calls) -> Judgment:
        if state.failure is None:
            missing = [str(k + 1) for k, verdict in enumerate(state.verdicts) if verdict is None]
            if missing:
                state.fail("unparsable", f"no verdict (correct / not correct) for call {', '.join(missing)} of "
                                         f"{len(state.verdicts)}")
        if state.failure and state.failure[0] == "error":
            return self.error(state.item, state.failure[1], state.usage)
        listed = self._listed(state)
        extra: dict[str, Any] = {"calls": [{"call": c, "verdict": v} for c, v in zip(listed, state.verdicts, strict=True)]}
        common = dict(item_id=state.item.id, aspect=self.aspect, judge=self.name, usage=state.usage,
                      raw="\n".join(f"[{stage}] {text}" for stage, text in state.replies.items()))
        if state.failure:
            return Judgment(status="unparsable", reason=state.failure[1], extra=extra, **common)
        share = state.verdicts.count("correct") / len(state.verdicts)
        wrong = [f"- {k}. {c}" for k, (c, v) in enumerate(zip(listed, state.verdicts, strict=True), 1) if v != "correct"]
        explanation = (f"All {len(listed)} tool call(s) judged correct." if not wrong else
                       "\n".join([f"{len(wrong)} of {len(listed)} tool call(s) judged not correct:", *wrong]))
        return Judgment(score=self._scaled(share), explanation=explanation,
                        extra=extra | {"correct_share": share}, **common)

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, quality_in, user_text

        def reply(request: Request, _: int) -> str:
            """Quality q: its first q - 1 of two calls correct."""
            quality = quality_in(user_text(request))
            return "\n".join(f"{k}. {'correct' if k < quality else 'not correct'}" for k in (1, 2))

        items = [Item.model_validate({"id": f"u{q}", "source": f"Report the weather, of quality {q}.",
                                      "output": "Sunny.", "trajectory": [{"tool": "geocode", "arguments": {"city": "Oslo"}},
                                                                          {"tool": "forecast", "arguments": {"day": q}}]})
                 for q in (1, 2, 3)]
        return ContractExample(cls(), items, reply)


def _template() -> Any:
    return environment().get_template("tool_use/verify.j2").module


__all__ = ["Call", "ExpectedTool", "ToolCallsJudge", "ToolUseJudge", "call_verdict", "expected_tools"]
