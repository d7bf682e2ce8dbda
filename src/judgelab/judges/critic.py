"""Active-Critic (seed 004): a judge that infers its own evaluation protocol from labelled items.

``fit`` learns the protocol Φ = (task description, criteria, demonstrations):
1. task inference — mini-batches of labelled (source, response, score) items; the LLM writes
   observations, adds to its earlier ones or answers COMPLETE (early stop), at most
   ``max_rounds`` rounds; then one task description from all observations (seed Table 9);
2. criteria definition — ten proposed aspects as JSON, then 4-10 selected (Table 10);
3. demonstration search — ``draws`` random draws of demonstrations, each scored by
   Q = Pearson + Spearman + Kendall on the tuning items; the best is kept (judges.demos).

``run`` scores items with the protocol, in one of three variants:
* ``vanilla`` — overall score with explanation (OS-E) from the given (or a generic) task, no inference;
* ``coarse``  — OS-E with the inferred task and criteria;
* ``fine``    — per-criterion 0-100 scores with explanations in one JSON reply (McS-E, Table 11),
  then OS-E from those scores (Table 12).

Replies are JSON (grammar-constrained where the backend supports it); a reply that cannot be
read is asked for again once with a repair prompt, then recorded as unparsable with its text.
The model scores on 0-100; the judgment's ``score`` is that value mapped onto the human scale.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import jinja2
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judgelab.data.dataset import Dataset
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.split import split_by_group
from judgelab.errors import ConfigError, JudgelabError, RequestError
from judgelab.files import write_atomic
from judgelab.judges.base import JudgeConfig, OnJudgment, usage_of
from judgelab.judges.demos import search_demonstrations
from judgelab.limits import Seed, Temperature
from judgelab.llm.client import Client
from judgelab.llm.types import Completion, Request, ResponseFormat, Usage
from judgelab.parse import parse_json
from judgelab.prompts.render import TEMPLATE_DIR

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Variant = Literal["vanilla", "coarse", "fine"]
GENERIC_TASK = ("The evaluation task is to judge the overall quality of a machine-generated response "
                "given its source.")
#: Longest explanation a constrained reply may write per score (keeps small models from rambling
#: past ``max_tokens`` and cutting the JSON short).
_EXPLANATION_CHARS = 300
_OS_MAX_TOKENS = 256
_MCS_TOKENS_PER_CRITERION = 112


class CriticFitError(JudgelabError):
    """Task inference or criteria definition could not be completed (e.g. no readable JSON)."""


class Criterion(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    definition: str = ""


class Demonstration(BaseModel):
    """A labelled item shown in the prompt: its texts and its human score (own scale and 0-100)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str
    source: str | None = None
    context: str | None = None
    output: str
    score: float
    score_100: float

    @property
    def score_text(self) -> str:
        return f"{round(self.score_100)}"


class ActiveCriticJudge(JudgeConfig):
    """Active-Critic. Fit it on labelled items (``fit``) or give ``task`` and ``criteria`` yourself."""

    registry_name: ClassVar[str] = "active-critic"
    trainable: ClassVar[bool] = True
    kind: Literal["active-critic"] = "active-critic"

    #: The human score the protocol is tuned to (Q is measured against it).
    aspect: str = "overall"
    variant: Variant = "fine"
    # -- the protocol (what fit infers; may also be written by hand) -----------------------------
    task: str | None = None
    observations: str | None = None
    criteria: tuple[Criterion, ...] = ()
    demonstrations: tuple[Demonstration, ...] = ()
    #: [min, max] of the human scale, for items without their own ``scale``; fit reads it from the data.
    scale: tuple[float, float] | None = None
    # -- fitting options ---------------------------------------------------------------------------
    batch_size: int = Field(default=5, ge=1)
    max_rounds: int = Field(default=5, ge=1)
    min_criteria: int = Field(default=4, ge=1)
    max_criteria: int = Field(default=10, ge=1)
    draws: int = Field(default=11, ge=1)
    demos: tuple[int, int] = (3, 8)
    #: Share of the fit items (group-aware) the demonstration search draws from and scores on.
    tuning_fraction: float = Field(default=0.25, gt=0, le=1)
    #: Texts of examples and demonstrations are cut to this many characters (0: never); the judged item never is.
    max_text_chars: int = Field(default=1200, ge=0)
    #: Token budget of each task-inference and criteria reply.
    fit_max_tokens: int = Field(default=512, ge=16)
    # -- decoding ----------------------------------------------------------------------------------
    #: Grammar-constrained JSON replies: None = when the backend supports it, True = required, False = never.
    constrained: bool | None = None
    temperature: Temperature = 0.0
    seed: Seed = 0
    #: What fit found (rounds, early stop, search trajectory); informational, never read by run.
    fit_summary: dict[str, Any] = Field(default_factory=dict)

    @field_validator("criteria", mode="before")
    @classmethod
    def _criteria_from_text(cls, value: Any) -> Any:
        """``--criteria`` on the command line gives text: one ``name: definition`` per line."""
        if isinstance(value, str):
            lines = [line.strip().lstrip("-*").strip() for line in value.splitlines() if line.strip()]
            return [dict(zip(("name", "definition"), (p.strip() for p in line.split(":", 1)), strict=False))
                    for line in lines]
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ActiveCriticJudge:
        if self.min_criteria > self.max_criteria:
            raise ValueError(f"min_criteria {self.min_criteria} > max_criteria {self.max_criteria}")
        if not 0 <= self.demos[0] <= self.demos[1]:
            raise ValueError(f"demos must be [min, max] with 0 <= min <= max, got {list(self.demos)}")
        return self

    @property
    def fitted(self) -> bool:
        return self.variant == "vanilla" or (bool(self.task) and bool(self.criteria))

    # -- scoring ---------------------------------------------------------------------------------
    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        if not self.fitted:
            raise ConfigError(f"the {self.variant} Active-Critic variant needs a task description and criteria: "
                              f"fit it first (`judgelab fit --method active-critic ...`) or give 'task' and 'criteria'")
        constrained = self._use_constraints(client)
        judgments: list[Judgment | None] = [None] * len(items)
        scorable: list[int] = []
        for index, item in enumerate(items):
            if item.kind != "pointwise":
                judgments[index] = self.emit(self.error(item, "Active-Critic judges pointwise items "
                                                        "(source + output)"), on_judgment)
            else:
                scorable.append(index)
        per_criterion: dict[int, _Reply] = {}
        if self.variant == "fine":
            mcs = self._json_stage([self._mcs_messages(items[i]) for i in scorable], client, constrained,
                                   self._mcs_schema(), self._parse_criteria, self._mcs_max_tokens())
            for index, reply in zip(scorable, mcs, strict=True):
                if reply.value is None:
                    judgments[index] = self.emit(self._failed(items[index], reply, "multi-criteria scoring"), on_judgment)
                else:
                    per_criterion[index] = reply
            scorable = [index for index in scorable if index in per_criterion]
        prompts = [self._os_messages(items[i], per_criterion[i].value if i in per_criterion else None) for i in scorable]
        overall = self._json_stage(prompts, client, constrained, _OS_SCHEMA, _parse_overall, _OS_MAX_TOKENS)
        for index, reply in zip(scorable, overall, strict=True):
            judgments[index] = self.emit(self._judgment(items[index], reply, per_criterion.get(index)), on_judgment)
        return judgments  # type: ignore[return-value]

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, pointwise_items, quality_in, user_text

        def overall(request: Request, _: int) -> str:
            return json.dumps({"Explanation": "Clear.", "Score Of Overall": 20 * quality_in(user_text(request))})

        fitted = cls(variant="coarse", task="The evaluation task is to judge summaries of news articles.",
                     criteria=(Criterion(name="Coherence", definition="well organised"),))
        return ContractExample(fitted, pointwise_items("overall"), overall,
                               unfitted=fitted.model_copy(update={"task": None, "criteria": ()}))

    def _use_constraints(self, client: Client) -> bool:
        supported = client.backend.capabilities.json_schema
        if self.constrained and not supported:
            raise ConfigError(f"constrained: true, but {client.backend.identity} cannot constrain replies to JSON")
        return supported if self.constrained is None else self.constrained

    def _json_stage(self, prompts: Sequence[list[dict[str, str]]], client: Client, constrained: bool,
                    schema: dict[str, Any], parse: Callable[[str], _Parsed], max_tokens: int) -> list[_Reply]:
        """One JSON reply per prompt; unreadable replies get one repair round; two batches in all."""
        fmt = ResponseFormat(type="json_schema", json_schema=schema) if constrained else None
        first = [self._request(messages, max_tokens, fmt) for messages in prompts]
        replies = [_Reply.from_outcome(outcome, parse) for outcome in client.complete_all(first, errors="return")]
        retry = [i for i, reply in enumerate(replies) if reply.needs_repair]
        if retry:
            repairs = [self._request(_repair_messages(prompts[i], replies[i], schema), max_tokens, fmt) for i in retry]
            for i, outcome in zip(retry, client.complete_all(repairs, errors="return"), strict=True):
                replies[i] = replies[i].after_repair(outcome, parse)
        return replies

    def _request(self, messages: list[dict[str, str]], max_tokens: int, fmt: ResponseFormat | None = None) -> Request:
        return Request(messages=tuple(messages), temperature=self.temperature, max_tokens=max_tokens, seed=self.seed,
                       response_format=fmt)

    def _mcs_max_tokens(self) -> int:
        return 32 + _MCS_TOKENS_PER_CRITERION * len(self.criteria)

    def _mcs_schema(self) -> dict[str, Any]:
        entry = {"type": "object", "properties": {"Explanation": {"type": "string", "maxLength": _EXPLANATION_CHARS},
                                                  "Score": {"type": "integer"}},
                 "required": ["Explanation", "Score"]}
        return {"type": "object", "properties": {c.name: entry for c in self.criteria},
                "required": [c.name for c in self.criteria]}

    def _parse_criteria(self, text: str) -> _Parsed:
        parsed = parse_json(text)
        if not isinstance(parsed.data, dict):
            return _Parsed(reason=parsed.reason or "the reply is not a JSON object of criteria")
        by_key = {_normalised(key): value for key, value in parsed.data.items()}
        scores: dict[str, float | None] = {}
        explanations: dict[str, str] = {}
        for criterion in self.criteria:
            entry = by_key.get(_normalised(criterion.name))
            value, explanation = _score_and_explanation(entry)
            scores[criterion.name] = value
            if explanation:
                explanations[criterion.name] = explanation
        if all(v is None for v in scores.values()):
            return _Parsed(reason="no criterion has a score between 0 and 100")
        return _Parsed(value=scores, explanation=None, extra={"criteria_explanations": explanations})

    def _judgment(self, item: Item, reply: _Reply, criteria_reply: _Reply | None) -> Judgment:
        usage = reply.usage + (criteria_reply.usage if criteria_reply else Usage())
        extra: dict[str, Any] = {"variant": self.variant}
        if criteria_reply:
            extra |= criteria_reply.extra | {"criteria_raw": criteria_reply.raw}
            if criteria_reply.repaired:
                extra["repaired_stages"] = ["multi-criteria scoring"]
        if reply.value is None:
            return self._failed(item, reply, "overall scoring", usage, extra,
                                criteria_reply.value if criteria_reply else None)
        if reply.repaired:
            extra.setdefault("repaired_stages", []).append("overall scoring")
        score_100 = float(reply.value)
        extra["score_100"] = score_100
        low, high = self._scale_for(item)
        return Judgment(item_id=item.id, aspect=self.aspect, judge=self.name, score=low + (high - low) * score_100 / 100,
                        criteria=criteria_reply.value if criteria_reply else {}, explanation=reply.explanation,
                        raw=reply.raw, usage=usage, extra=extra)

    def _failed(self, item: Item, reply: _Reply, stage: str, usage: Usage | None = None,
                extra: dict[str, Any] | None = None, criteria: dict[str, float | None] | None = None) -> Judgment:
        """An error (the backend refused) or unparsable judgment; criteria already scored are kept."""
        usage = usage or reply.usage
        if reply.error:
            return self.error(item, f"{stage}: {reply.error}", usage)
        extra = (extra or {}) | {"variant": self.variant, "first_raw": reply.first_raw}
        return Judgment(item_id=item.id, aspect=self.aspect, judge=self.name, status="unparsable",
                        reason=f"{stage}: {reply.reason} (also after a repair prompt)", raw=reply.raw,
                        criteria=criteria or {}, usage=usage, extra=extra)

    def _scale_for(self, item: Item) -> tuple[float, float]:
        return item.aspect_scale(self.aspect) or self.scale or (0.0, 100.0)

    # -- prompts -------------------------------------------------------------------------------
    def _task_text(self) -> str | None:
        if self.variant == "vanilla":
            return self.task or GENERIC_TASK
        return self.task

    def _os_messages(self, item: Item, criteria_scores: dict[str, float | None] | None) -> list[dict[str, str]]:
        shown = {name: ("n/a" if v is None else f"{v:g}") for name, v in (criteria_scores or {}).items()}
        return _user(render("os.j2", task=self._task_text(), criteria=self.criteria, criteria_scores=shown,
                            demos=self.demonstrations, item=_texts(item), max_chars=self.max_text_chars))

    def _mcs_messages(self, item: Item) -> list[dict[str, str]]:
        return _user(render("mcs.j2", task=self._task_text(), criteria=self.criteria, demos=self.demonstrations,
                            item=_texts(item), max_chars=self.max_text_chars))

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, items: Sequence[Item], client: Client | None = None, *, out_dir: Path | None = None) -> ActiveCriticJudge:
        if client is None:
            raise ConfigError("fitting Active-Critic calls an LLM: pass a client (the CLI's --model)")
        labelled = [item for item in items if item.kind == "pointwise" and item.human_score(self.aspect) is not None]
        needed = self.demos[0] + 3
        if len(labelled) < needed:
            raise ConfigError(f"fitting Active-Critic needs at least {needed} pointwise items with a human "
                              f"{self.aspect!r} score ({self.demos[0]} demonstrations + 3 to score them on); "
                              f"got {len(labelled)}")
        judge = self.model_copy(update={"scale": self.scale or _observed_scale(labelled, self.aspect)})
        summary: dict[str, Any] = {"items": len(labelled)}
        if self.variant != "vanilla":
            judge, inferred = judge._infer_protocol(labelled, client)
            summary |= inferred
        tuning = judge._tuning_items(labelled)
        if len(tuning) < needed:
            raise ConfigError(f"the tuning share ({self.tuning_fraction:g} of {len(labelled)} items = {len(tuning)}) "
                              f"is too small for {self.demos[0]} demonstrations + 3 scored items; raise "
                              f"tuning_fraction or give more items")
        search = search_demonstrations(judge.with_demonstrations, tuning, client, aspect=self.aspect, k=self.draws,
                                       sizes=self.demos, seed=self.seed)
        summary |= {"tuning_items": [item.id for item in tuning], "best_draw": search.best_draw.index,
                    "best_q": search.best_draw.objective if search.defined else None, "search_defined": search.defined, "draws": [d.to_dict() for d in search.trajectory],
                    "search_usage": search.usage.model_dump()}
        fitted = search.best.model_copy(update={"fit_summary": summary})
        if out_dir is not None:
            write_atomic(out_dir / "active_critic_search.json", json.dumps(summary, indent=2))
        return fitted

    def with_demonstrations(self, demos: Sequence[Item]) -> ActiveCriticJudge:
        """This protocol with ``demos`` (labelled items) as its in-context demonstrations."""
        shown = tuple(self._demonstration(item) for item in demos)
        return self.model_copy(update={"demonstrations": shown})

    def _demonstration(self, item: Item) -> Demonstration:
        score = float(item.human_score(self.aspect))  # type: ignore[arg-type]
        low, high = self._scale_for(item)
        return Demonstration(item_id=item.id, source=item.prompt, context=item.context, output=item.output or "",
                             score=score, score_100=100 * (score - low) / (high - low))

    def _tuning_items(self, labelled: Sequence[Item]) -> list[Item]:
        if self.tuning_fraction >= 1:
            return list(labelled)
        data = Dataset(labelled)
        return list(split_by_group(data, {"tune": self.tuning_fraction, "rest": 1 - self.tuning_fraction},
                                   seed=self.seed)["tune"])

    def _infer_protocol(self, labelled: Sequence[Item], client: Client) -> tuple[ActiveCriticJudge, dict[str, Any]]:
        """Observations -> task description -> criteria; what is already given is kept, not re-inferred."""
        inference = _Inference(self, client)
        observations = inference.observe(labelled)
        task = self.task or inference.describe_task(observations.text)
        criteria = self.criteria or inference.define_criteria(task, observations.text)
        update = {"task": task, "observations": observations.text, "criteria": tuple(criteria)}
        summary = {"observation_rounds": observations.rounds, "stopped_early": observations.stopped_early,
                   "task_type": _task_type(task), "inference_usage": inference.usage.model_dump()}
        return self.model_copy(update=update), summary


# -- task inference ----------------------------------------------------------------------------------
@dataclass
class _Observations:
    text: str
    rounds: int
    stopped_early: bool


@dataclass
class _Inference:
    judge: ActiveCriticJudge
    client: Client
    usage: Usage = field(default_factory=Usage)

    def observe(self, labelled: Sequence[Item]) -> _Observations:
        """Observation rounds over shuffled mini-batches until COMPLETE or ``max_rounds``."""
        import numpy as np

        order = np.random.default_rng(self.judge.seed).permutation(len(labelled))
        batches = [[labelled[int(i)] for i in order[start:start + self.judge.batch_size]]
                   for start in range(0, len(order), self.judge.batch_size)][: self.judge.max_rounds]
        notes: list[str] = []
        for round_index, batch in enumerate(batches):
            examples = [self.judge._demonstration(item) for item in batch]
            prompt = render("observe.j2", examples=examples, prior="\n".join(notes),
                            max_chars=self.judge.max_text_chars)
            reply = self._ask(_user(prompt), f"observation round {round_index + 1}")
            complete, added = _complete_marker(reply)
            # COMPLETE judges the prior observations, so it ends the loop only when there were some.
            had_prior = bool(notes)
            if added:
                notes.append(added)
            if complete and had_prior:
                return _Observations("\n".join(notes), round_index + 1, stopped_early=round_index + 1 < len(batches))
        if not notes:
            raise CriticFitError("task inference: the model wrote no observations in "
                                 f"{len(batches)} round(s); try another model")
        return _Observations("\n".join(notes), len(batches), stopped_early=False)

    def describe_task(self, observations: str) -> str:
        task = self._ask(_user(render("task.j2", observations=observations, prior=None)), "task description").strip()
        if not task:
            raise CriticFitError("task inference: the model returned an empty task description")
        return task

    def define_criteria(self, task: str, observations: str) -> list[Criterion]:
        judge, task_type = self.judge, _task_type(task)
        constrained = judge._use_constraints(self.client)
        low = min(judge.min_criteria, 10)
        proposed = self._ask_criteria(render("propose.j2", task=task, observations=observations, task_type=task_type,
                                             output_format=_criteria_format(constrained)),
                                      "criteria proposal", _criteria_schema(low, 10) if constrained else None)[:10]
        listing = json.dumps({c.name: c.definition for c in proposed}, indent=1)
        selected = self._ask_criteria(render("select.j2", proposed=listing, task_type=task_type,
                                             min_criteria=judge.min_criteria, max_criteria=judge.max_criteria,
                                             output_format=_criteria_format(constrained)),
                                      "criteria selection",
                                      _criteria_schema(judge.min_criteria, judge.max_criteria) if constrained else None)
        return _within_bounds(selected, proposed, judge.min_criteria, judge.max_criteria)

    def _ask(self, messages: list[dict[str, str]], stage: str, fmt: ResponseFormat | None = None) -> str:
        request = self.judge._request(messages, self.judge.fit_max_tokens, fmt).model_copy(update={"temperature": 0.0})
        try:
            [completion] = self.client.complete(request)
        except RequestError as exc:
            raise RequestError(f"Active-Critic fit, {stage}: {exc}") from exc
        self.usage = self.usage + usage_of([completion])
        return completion.text

    def _ask_criteria(self, prompt: str, stage: str, schema: dict[str, Any] | None) -> list[Criterion]:
        """A JSON reply of criteria; one repair prompt, then a CriticFitError with the text."""
        fmt = ResponseFormat(type="json_schema", json_schema=schema) if schema else None
        messages = _user(prompt)
        text = self._ask(messages, stage, fmt)
        criteria = _criteria_of(text)
        if not criteria:
            problem = "it is not a JSON object with aspects as keys and descriptions as values"
            repair = messages + [{"role": "assistant", "content": text},
                                 {"role": "user", "content": render("repair.j2", problem=problem,
                                                                    expected='{"Aspect name": "description", ...}')}]
            text = self._ask(repair, f"{stage} (repair)", fmt)
            criteria = _criteria_of(text)
        if not criteria:
            raise CriticFitError(f"Active-Critic fit, {stage}: no readable JSON criteria after a repair prompt; "
                                 f"the model replied: {text[:500]!r}")
        return criteria


def _criteria_schema(low: int, high: int) -> dict[str, Any]:
    """Constrained criteria replies: a list of {aspect, description}, so that a small model cannot
    answer with one key (seen: {"description": "..."}) and the count is bounded by the grammar."""
    entry = {"type": "object", "properties": {"aspect": {"type": "string", "maxLength": 60},
                                              "description": {"type": "string", "maxLength": 240}},
             "required": ["aspect", "description"]}
    return {"type": "array", "items": entry, "minItems": low, "maxItems": high}


def _criteria_format(constrained: bool) -> str:
    if constrained:
        return 'Output in JSON format: a list of {"aspect": name, "description": description} objects.'
    return "Output in JSON format: aspect as key, description as value."  # the seed's wording (Table 10)


def _complete_marker(reply: str) -> tuple[bool, str]:
    """(said COMPLETE, the observations written besides it)."""
    complete = re.search(r"\bCOMPLETE\b", reply) is not None
    added = re.sub(r"['\"]?\bCOMPLETE\b['\"]?\.?", "", reply).strip()
    return complete, added


def _criteria_of(text: str) -> list[Criterion]:
    """Criteria from {name: description}, {name: {description: ...}} or [{name/aspect, description}]."""
    data = parse_json(text).data
    if isinstance(data, list):
        pairs = [(_first_of(entry, ("name", "aspect", "criterion")), _first_of(entry, ("description", "definition")))
                 for entry in data if isinstance(entry, dict)]
    elif isinstance(data, dict):
        pairs = [(name, value if isinstance(value, str) else _first_of(value, ("description", "definition")))
                 for name, value in data.items()]
    else:
        return []
    seen: set[str] = set()
    criteria = []
    for name, definition in pairs:
        name = str(name or "").strip()
        if name and _normalised(name) not in seen:
            seen.add(_normalised(name))
            criteria.append(Criterion(name=name, definition=str(definition or "").strip()))
    return criteria


def _first_of(entry: Any, keys: Sequence[str]) -> Any:
    if not isinstance(entry, dict):
        return None
    lowered = {str(k).lower(): v for k, v in entry.items()}
    return next((lowered[k] for k in keys if k in lowered), None)


def _within_bounds(selected: list[Criterion], proposed: list[Criterion], low: int, high: int) -> list[Criterion]:
    """Keep 4-10 criteria: cut a longer selection; top a shorter one up from the proposal, in its order."""
    chosen = selected[:high]
    names = {_normalised(c.name) for c in chosen}
    for criterion in proposed:
        if len(chosen) >= low:
            break
        if _normalised(criterion.name) not in names:
            chosen.append(criterion)
            names.add(_normalised(criterion.name))
    if len(chosen) < low:
        raise CriticFitError(f"criteria definition: only {len(chosen)} distinct criteria were proposed and selected; "
                             f"at least {low} are needed (min_criteria)")
    return chosen


def _task_type(task: str) -> str:
    """The task's name from the Table 9 summary ("The evaluation task is [X], ..."), for Table 10."""
    match = re.search(r"evaluation task is\s*\[?\s*([^\],.\n]{3,80})", task, re.IGNORECASE)
    return match.group(1).strip() if match else "the responses"


def _observed_scale(items: Sequence[Item], aspect: str) -> tuple[float, float]:
    scores = [float(item.human_score(aspect)) for item in items]  # type: ignore[arg-type]
    low, high = min(scores), max(scores)
    return (low, high) if high > low else (low, low + 1)


# -- replies ---------------------------------------------------------------------------------------
@dataclass
class _Parsed:
    value: Any = None
    explanation: str | None = None
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Reply:
    """One item's reply at one stage: what it means, or why not; after at most one repair."""

    raw: str | None = None
    value: Any = None
    explanation: str | None = None
    reason: str | None = None
    error: str | None = None  # the backend refused the request (no text to repair)
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    extra: dict[str, Any] = field(default_factory=dict)
    repaired: bool = False
    first_raw: str | None = None

    @classmethod
    def from_outcome(cls, outcome: list[Completion] | RequestError, parse: Callable[[str], _Parsed]) -> _Reply:
        if isinstance(outcome, RequestError):
            return cls(error=str(outcome))
        completion = outcome[0]
        parsed = parse(completion.text)
        return cls(raw=completion.text, value=parsed.value, explanation=parsed.explanation, reason=parsed.reason,
                   finish_reason=completion.finish_reason, usage=usage_of(outcome), extra=parsed.extra)

    @property
    def needs_repair(self) -> bool:
        return self.error is None and self.value is None

    def after_repair(self, outcome: list[Completion] | RequestError, parse: Callable[[str], _Parsed]) -> _Reply:
        second = _Reply.from_outcome(outcome, parse)
        if second.error:
            return _Reply(raw=self.raw, reason=f"{self.reason}; the repair request failed: {second.error}",
                          usage=self.usage, first_raw=self.raw)
        second.usage = self.usage + second.usage
        second.first_raw = self.raw
        second.repaired = second.value is not None
        return second


def _repair_messages(messages: list[dict[str, str]], reply: _Reply, schema: dict[str, Any]) -> list[dict[str, str]]:
    problem = reply.reason or "unreadable"
    if reply.finish_reason == "length":
        problem += " (the reply was cut off at the token limit: keep the explanations short)"
    expected = json.dumps(_example_of(schema))
    return messages + [{"role": "assistant", "content": reply.raw or ""},
                       {"role": "user", "content": render("repair.j2", problem=problem, expected=expected)}]


def _example_of(schema: dict[str, Any]) -> Any:
    """A filled-in example of a JSON schema, shown in the repair prompt."""
    kind = schema.get("type")
    if kind == "object":
        return {name: _example_of(sub) for name, sub in schema.get("properties", {}).items()}
    return "[your explanation]" if kind == "string" else "[integer from 0 to 100]"


_OS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"Explanation": {"type": "string", "maxLength": _EXPLANATION_CHARS},
                   "Score Of Overall": {"type": "integer"}},
    "required": ["Explanation", "Score Of Overall"],
}
_PLAIN_OVERALL = re.compile(r"score\s*of\s*overall\W*?(\d+(?:\.\d+)?)", re.IGNORECASE)


def _parse_overall(text: str) -> _Parsed:
    """The OS-E reply: JSON {"Explanation", "Score Of Overall"}, or the seed's plain
    ``Explanation: ... Score Of Overall: N`` layout from backends without constraints."""
    data = parse_json(text).data
    if isinstance(data, dict):
        score_key = next((k for k in data if "overall" in _normalised(k)), None) or \
            next((k for k in data if "score" in _normalised(k)), None)
        explanation_key = next((k for k in data if "explanation" in _normalised(k)), None)
        if score_key is not None:
            value = _score_0_100(data[score_key])
            explanation = str(data[explanation_key]).strip() if explanation_key else None
            if value is None:
                return _Parsed(reason=f"'{score_key}' is {data[score_key]!r}, not a score from 0 to 100")
            return _Parsed(value=value, explanation=explanation)
    plain = _PLAIN_OVERALL.search(text or "")
    if plain:
        value = _score_0_100(plain.group(1))
        if value is not None:
            return _Parsed(value=value, explanation=text[: plain.start()].replace("Explanation:", "").strip() or None)
    return _Parsed(reason="no 'Score Of Overall' from 0 to 100 in the reply")


def _score_and_explanation(entry: Any) -> tuple[float | None, str | None]:
    if isinstance(entry, dict):
        keys = {_normalised(k): v for k, v in entry.items()}
        explanation = keys.get("explanation")
        return _score_0_100(keys.get("score")), str(explanation).strip() if explanation else None
    return _score_0_100(entry), None


def _score_0_100(value: Any) -> float | None:
    """A number in [0, 100] from an int, float or text such as "75" or "[75]"; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        match = re.search(r"-?\d+(?:\.\d+)?", value)
        value = float(match.group()) if match else None
    if isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 100:
        return float(value)
    return None


def _normalised(name: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


# -- templates -------------------------------------------------------------------------------------
def _clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if not limit or len(text) <= limit else text[:limit].rstrip() + " [...]"


@functools.cache
def _environment() -> jinja2.Environment:
    # Same loader and strictness as the other families (prompts.render), plus the clip filter.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), undefined=jinja2.StrictUndefined,
                             autoescape=False, keep_trailing_newline=False)
    env.filters["clip"] = _clip
    return env


def render(name: str, **values: Any) -> str:
    """Render ``prompts/critic/<name>``."""
    return _environment().get_template(f"critic/{name}").render(**values).strip()


def _user(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


def _texts(item: Item) -> dict[str, str | None]:
    return {"source": item.prompt, "context": item.context, "output": item.output}
