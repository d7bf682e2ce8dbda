"""TREMA: criteria-decomposed relevance judging (Farzi & Dietz, seed 003).

Modes, each a sequence of LLM stages over the one client:

* ``four-prompts``     — grade each criterion 0-3 in its own prompt (Table 2), then aggregate the
  grades into a label with the configured aggregator (``judges.aggregate``: prompt, sum, naive
  Bayes, logistic, ordinal);
* ``cot``              — a yes/no relevance check (Table 5, Sun et al.) routes the item to the
  exactness+coverage grades and a 2-or-3 prompt, or to topicality+contextual-fit and a 0-or-1
  prompt (Algorithm 1);
* ``query-generation`` — write the query the passage answers, then grade its similarity to the
  real query 0-3 (Table 6); the similarity is the label.

Criteria are data (name + description), so any task can be decomposed, not only relevance.
With ``grade_score="logprob"`` a criterion grade is the expected grade under the model's
distribution over the grade tokens (G-Eval style, via ``judgelab.parse.logprob_score_for``):
small models tend to write one grade for everything greedily, while their distribution still
separates the items. Labels (prompt aggregation, CoT, similarity) stay the whole number written.
Every grade lands in ``Judgment.criteria``, so a person can see why a label was given. A reply
with no valid grade makes the judgment ``unparsable`` (raw replies kept); the seed's "assign 0"
is only used with ``on_invalid="zero"``.

Prompts for one item are sent one after another, and items of one query together, with the
shared text (query, passage) before the criterion: the embedded backend then reuses its KV cache
for everything up to the criterion.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, RequestError
from judgelab.judges.aggregate import (
    Aggregator,
    MissingGrades,
    NaiveBayesAggregator,
    PromptAggregator,
    _LearnedAggregator,
    aggregate_grades,
    fit_aggregator,
)
from judgelab.judges.base import JudgeConfig, OnJudgment, usage_of
from judgelab.judges.prompted import ScoreMode
from judgelab.limits import MaxTokens, Seed, Temperature
from judgelab.llm.client import Client
from judgelab.llm.types import Request, TokenLogprob, Usage
from judgelab.parse import ParsedScore, judged_texts_of, logprob_score_for, parse_rating
from judgelab.prompts.render import environment

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Mode = Literal["four-prompts", "cot", "query-generation"]


class Criterion(BaseModel):
    """One thing to grade separately: its name (shown to the LLM) and what a grade indicates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str

    @property
    def key(self) -> str:
        """The name as a ``Judgment.criteria`` key: ``Contextual Fit`` -> ``contextual_fit``."""
        return re.sub(r"\W+", "_", self.name.strip().lower()).strip("_")


#: The four relevance criteria of the seed, with its descriptions.
RELEVANCE_CRITERIA = (
    Criterion(name="Exactness", description="How precisely does the passage answer the query."),
    Criterion(name="Coverage", description="How much of the passage is dedicated to discussing the query and its related topics."),
    Criterion(name="Topicality", description="Is the passage about the same subject as the whole query (not only a single word of it)."),
    Criterion(name="Contextual Fit", description="Does the passage provide relevant background or context."),
)


class CotRoute(BaseModel):
    """One branch of TREMA-CoT: the criteria graded and the two labels the final prompt may give."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    criteria: tuple[str, ...]
    labels: tuple[int, int]


class TremaJudge(JudgeConfig):
    """TREMA relevance (or any criteria-decomposed) judge. Defaults: TREMA-4prompts."""

    registry_name: ClassVar[str] = "trema"
    omitted_at_default: ClassVar[dict[str, Any]] = {"grade_score": "parsed"}  # added after the first configs
    kind: Literal["trema"] = "trema"
    trainable: ClassVar[bool] = True

    aspect: str = "relevance"
    mode: Mode = "four-prompts"
    #: The criteria to grade; a list of {name, description}, or text with one ``Name: description``
    #: per line (``--criteria @file.txt``).
    criteria: tuple[Criterion, ...] = RELEVANCE_CRITERIA
    #: How four-prompts combines the grades (``cot`` always uses its two routed prompts).
    aggregator: Aggregator = PromptAggregator()
    grade_scale: tuple[int, int] = (0, 3)
    #: How a criterion grade is read. ``parsed``: the whole number the model wrote.
    #: ``logprob``: the expected grade under its top-20 distribution at that number (a float in
    #: ``grade_scale``; needs a backend with logprobs). ``score`` is accepted too: the name
    #: ``judgelab judge --score`` sets, as for the prompted judge.
    grade_score: ScoreMode = Field("parsed", validation_alias=AliasChoices("grade_score", "score"))
    labels: tuple[int, int] = (0, 3)
    #: TREMA-CoT routes, by criterion key: a "yes" grades ``relevant``, a "no" ``nonrelevant``.
    cot_relevant: CotRoute = CotRoute(criteria=("exactness", "coverage"), labels=(2, 3))
    cot_nonrelevant: CotRoute = CotRoute(criteria=("topicality", "contextual_fit"), labels=(0, 1))
    #: ``unparsable``: a reply with no valid grade/label/answer makes the judgment unparsable.
    #: ``zero``: the seed's fallback: that grade (or the label) becomes 0, noted in ``extra.fallbacks``.
    on_invalid: MissingGrades = "unparsable"
    #: How the item's two texts are named in the prompts (default: Query/Passage for relevance
    #: items, Input/Output for others).
    input_name: str | None = None
    output_name: str | None = None
    temperature: Temperature = 0.0
    #: Reply budget for a grade, label or yes/no (the prompts ask for the number alone; what a
    #: model writes after it is not read).
    max_tokens: MaxTokens = 12
    #: Budget for the generated query (its first line is the query; generation stops there).
    query_max_tokens: MaxTokens = 48
    #: Start each reply with the word the seed's prompt ends on ("Score: ", "Answer: "), on backends
    #: that can continue an assistant prefix: small models then give the grade instead of prose.
    prefill: bool = True
    seed: Seed = 0

    @field_validator("criteria", mode="before")
    @classmethod
    def _criteria_from_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        parsed = []
        for number, line in enumerate(value.splitlines(), 1):
            if not line.strip():
                continue
            name, sep, description = line.partition(":")
            if not sep or not name.strip() or not description.strip():
                raise ValueError(f"criteria line {number}: write 'Name: description', got {line!r}")
            parsed.append({"name": name.strip(), "description": description.strip()})
        return parsed

    @model_validator(mode="after")
    def _consistent(self) -> TremaJudge:
        keys = [c.key for c in self.criteria]
        if not keys or len(set(keys)) != len(keys):
            raise ValueError(f"criteria must be a non-empty list of distinct names, got {keys}")
        if self.mode == "cot":
            if not isinstance(self.aggregator, PromptAggregator):
                raise ValueError("mode 'cot' aggregates with its routed prompts (Algorithm 1); leave aggregator as prompt")
            for route in (self.cot_relevant, self.cot_nonrelevant):
                unknown = [k for k in route.criteria if k not in keys]
                if unknown:
                    raise ValueError(f"cot route criteria {unknown} are not among the criteria {keys}")
        if self.mode == "query-generation" and self.grade_score == "logprob":
            raise ValueError("mode 'query-generation' grades no criteria (its similarity is the label, a whole "
                             "number); grade_score 'logprob' applies to four-prompts and cot")
        return self

    # -- training ------------------------------------------------------------------------------
    @property
    def fitted(self) -> bool:
        return self.aggregator.fitted

    def fit(self, items: Sequence[Item], client: Client | None = None, *, out_dir: Path | None = None) -> TremaJudge:
        """Grade the criteria of labelled ``items`` with the LLM and train the aggregator on them."""
        if not isinstance(self.aggregator, _LearnedAggregator) or self.mode != "four-prompts":
            raise ConfigError(f"a trema judge with mode {self.mode!r} and aggregator {self.aggregator.method!r} has "
                              "nothing to learn; use mode four-prompts with aggregator naive-bayes, logistic or ordinal")
        if client is None:
            raise ConfigError("fitting a trema judge grades the training items: give it a client (--model)")
        labelled = [item for item in items if _human_label(item, self.aspect) is not None]
        if not labelled:
            raise DataError(f"none of the {len(items)} training items carries a '{self.aspect}' label to learn from")
        graded = self._grade_items(labelled, client, [tuple(c.key for c in self.criteria)] * len(labelled))
        rows = [g.grades for g in graded if g.final is None]
        labels = [_human_label(item, self.aspect) for item, g in zip(labelled, graded, strict=True) if g.final is None]
        names = [c.key for c in self.criteria]
        trained = fit_aggregator(self.aggregator, rows, labels, names, self.on_invalid)  # type: ignore[arg-type]
        return self.model_copy(update={"aggregator": trained})

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, quality_in, user_text

        items = [Item(id=f"r{k}", qid=f"q{k // 2}", docid=f"d{k}", query=f"query {k // 2}",
                      passage=f"Passage {k} of quality {grade}.", label=grade) for k, grade in enumerate([3, 0, 2, 1])]
        return ContractExample(cls(), items, lambda request, _: str(quality_in(user_text(request))),
                               unfitted=cls(aggregator=NaiveBayesAggregator()))

    # -- running -------------------------------------------------------------------------------
    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        if not self.fitted:
            raise ConfigError("this trema judge's aggregator is not trained: run `judgelab fit` or judge.fit first")
        order = sorted(range(len(items)), key=lambda i: (items[i].group, items[i].id))
        ordered = [items[i] for i in order]
        run_mode = {"four-prompts": self._four_prompts, "cot": self._cot, "query-generation": self._query_generation}
        judged = run_mode[self.mode](ordered, client)
        judgments: list[Judgment | None] = [None] * len(items)
        for index, judgment in zip(order, judged, strict=True):
            judgments[index] = self.emit(judgment, on_judgment)
        return judgments  # type: ignore[return-value]

    def _four_prompts(self, items: list[Item], client: Client) -> list[Judgment]:
        keys = tuple(c.key for c in self.criteria)
        graded = self._grade_items(items, client, [keys] * len(items))
        if isinstance(self.aggregator, PromptAggregator):
            low, high = self.labels
            system = self.aggregator.system or _template("aggregate").system(low, high)
            return self._final_prompt(items, graded, client, lambda item, g: self._messages(
                system, _template("aggregate").prompt(*self._texts(item), self._shown(g))), self.labels)
        labels = aggregate_grades(self.aggregator, [g.grades for g in graded], keys, self.on_invalid)
        return [self._aggregated(item, g, label) for item, g, label in zip(items, graded, labels, strict=True)]

    def _aggregated(self, item: Item, graded: _Graded, label: int | None) -> Judgment:
        if graded.final is not None:
            return graded.final
        if label is None:
            return self._unparsable(item, graded, graded.missing())
        return self._ok(item, graded, label)

    def _cot(self, items: list[Item], client: Client) -> list[Judgment]:
        checks = self._stage(items, client, lambda item: self._messages(
            None, _template("binary_check").prompt(*self._texts(item)[1::2])), prefix=_ANSWER)
        routes: list[tuple[str, ...]] = []
        graded: list[_Graded] = []
        for item, outcome in zip(items, checks, strict=True):
            current = _Graded(usage=outcome.usage, replies={"binary_check": outcome.text})
            answer = _yes_no(outcome.text) if outcome.error is None else None
            if outcome.error is not None:
                current.final = self.error(item, f"the binary check failed: {outcome.error}", outcome.usage)
            elif answer is None and self.on_invalid == "unparsable":
                current.final = self._unparsable(item, current, "the binary check answered neither yes nor no")
            elif answer is None:  # the seed's fallback: all grades null, label 0
                current.fallbacks.append("binary_check")
                current.final = self._ok(item, current, 0)
            current.route = answer
            graded.append(current)
            routes.append(self._route(answer).criteria if current.final is None else ())
        self._grade_items(items, client, routes, into=graded)

        def messages(item: Item, g: _Graded) -> list:
            route = self._route(g.route)
            relevant = g.route is True
            shown = [(c.name, _fmt(g.grades[c.key])) for c in self.criteria if c.key in route.criteria]
            return self._messages(_template("cot_grading").system(relevant, *route.labels), _template("cot_grading").prompt(
                relevant, *self._texts(item), shown, *route.labels))

        bounds = [self._route(g.route).labels for g in graded]
        return self._final_prompt(items, graded, client, messages, bounds)

    def _route(self, answer: bool | None) -> CotRoute:
        return self.cot_relevant if answer else self.cot_nonrelevant

    def _query_generation(self, items: list[Item], client: Client) -> list[Judgment]:
        generator = _template("query_generation")
        written = self._stage(items, client, lambda item: self._messages(
            generator.system(), generator.prompt(self._texts(item)[3])), max_tokens=self.query_max_tokens, stop=("\n",))
        graded = []
        for item, outcome in zip(items, written, strict=True):
            current = _Graded(usage=outcome.usage, replies={"query_generation": outcome.text})
            query = _first_line(outcome.text)
            current.generated_query = query
            if outcome.error is not None:
                current.final = self.error(item, f"query generation failed: {outcome.error}", outcome.usage)
            elif not query:
                current.final = self._unparsable(item, current, "query generation returned no query")
            graded.append(current)
        similarity = _template("similarity")
        return self._final_prompt(items, graded, client, lambda item, g: self._messages(
            similarity.system(*self.grade_scale), similarity.prompt(g.generated_query, item.prompt)),
            self.grade_scale, stage="similarity")

    # -- shared stages -------------------------------------------------------------------------
    def _grade_items(self, items: list[Item], client: Client, routes: Sequence[tuple[str, ...]],
                     into: list[_Graded] | None = None) -> list[_Graded]:
        """Grade ``routes[i]`` (criterion keys) of item i, one prompt each, in one batch."""
        graded = into if into is not None else [_Graded() for _ in items]
        by_key = {c.key: c for c in self.criteria}
        grading = _template("grading")
        slots = []
        for index, (item, keys) in enumerate(zip(items, routes, strict=True)):
            if graded[index].final is not None:
                continue
            try:
                texts = self._texts(item)
            except DataError as exc:
                graded[index].final = self.error(item, str(exc))
                continue
            for key in keys:
                messages = self._messages(grading.system(texts[0], texts[2], *self.grade_scale),
                                          grading.prompt(*texts, by_key[key], *self.grade_scale))
                slots.append((index, key, messages))
        outcomes = self._complete([messages for _, _, messages in slots], client, self.max_tokens, _SCORE,
                                  logprobs=self.grade_score == "logprob")
        for (index, key, _), outcome in zip(slots, outcomes, strict=True):
            current = graded[index]
            current.usage = current.usage + outcome.usage
            current.replies[key] = outcome.text
            if current.final is not None:
                continue
            if outcome.error is not None:
                current.final = self.error(items[index], f"grading {key} failed: {outcome.error}", current.usage)
                continue
            current.grades[key] = self._grade(outcome, items[index], current, key)
        return graded

    def _grade(self, outcome: _Outcome, item: Item, current: _Graded, key: str) -> float | None:
        """The criterion grade of one reply: the number written, or its expected value (``logprob``)."""
        parsed = _first_rating(outcome.text, self.grade_scale, item)
        if self.grade_score == "parsed":
            return self._whole_number(parsed, current, key)
        weighted = logprob_score_for(parsed, outcome.logprobs, self.grade_scale, outcome.prefix)
        current.parsed_grades[key] = parsed.score
        current.grade_mass[key] = weighted.mass
        if weighted.score is not None:
            return weighted.score
        current.invalid[key] = weighted.reason if parsed.span is not None else parsed.reason
        return self._fallback(current, key)

    def _final_prompt(self, items: list[Item], graded: list[_Graded], client: Client,
                      render: Callable[[Item, _Graded], list], bounds: Any, stage: str = "label") -> list[Judgment]:
        """The last LLM stage, whose reply is the label; items already failed or decided keep that."""
        per_item = bounds if isinstance(bounds, list) else [bounds] * len(items)
        todo = []
        for index, (item, current) in enumerate(zip(items, graded, strict=True)):
            if current.final is not None:
                continue
            if any(v is None for v in current.grades.values()):
                current.final = self._unparsable(item, current, current.missing())
                continue
            todo.append(index)
        outcomes = self._complete([render(items[i], graded[i]) for i in todo], client, self.max_tokens, _SCORE)
        for index, outcome in zip(todo, outcomes, strict=True):
            current, item = graded[index], items[index]
            current.usage = current.usage + outcome.usage
            current.replies[stage] = outcome.text
            if outcome.error is not None:
                current.final = self.error(item, f"the {stage} prompt failed: {outcome.error}", current.usage)
                continue
            label = self._read(outcome.text, per_item[index], item, current, stage)
            if label is None:
                current.final = self._unparsable(item, current, f"the {stage} reply holds no valid label "
                                                                f"{per_item[index][0]}-{per_item[index][1]}")
                continue
            if stage == "similarity":
                current.grades["similarity"] = label
            current.final = self._ok(item, current, int(label))
        return [g.final for g in graded]  # type: ignore[misc]

    def _read(self, text: str, bounds: tuple[int, int], item: Item, current: _Graded, stage: str) -> float | None:
        """A whole number within ``bounds``, or None (or 0 with the seed's fallback, noted)."""
        return self._whole_number(_first_rating(text, bounds, item), current, stage)

    def _whole_number(self, parsed: ParsedScore, current: _Graded, stage: str) -> float | None:
        """The rating read from a reply if it is a whole number, else ``_fallback``."""
        if parsed.ok and parsed.score is not None and float(parsed.score).is_integer():
            return parsed.score
        return self._fallback(current, stage)

    def _fallback(self, current: _Graded, stage: str) -> float | None:
        """No valid number from ``stage``: None, or 0 with the seed's fallback (noted in ``extra.fallbacks``)."""
        if self.on_invalid == "zero":
            current.fallbacks.append(stage)
            return 0.0
        return None

    def _stage(self, items: list[Item], client: Client, render: Callable[[Item], list],
               max_tokens: int | None = None, prefix: str = "", stop: tuple[str, ...] = ()) -> list[_Outcome]:
        """One request per item; an item whose texts are missing gets an error outcome."""
        messages, slots, outcomes = [], [], [_Outcome() for _ in items]
        for index, item in enumerate(items):
            try:
                messages.append(render(item))
                slots.append(index)
            except DataError as exc:
                outcomes[index] = _Outcome(error=str(exc))
        done = self._complete(messages, client, max_tokens or self.max_tokens, prefix, stop)
        for index, outcome in zip(slots, done, strict=True):
            outcomes[index] = outcome
        return outcomes

    def _complete(self, batch: list[list], client: Client, max_tokens: int, prefix: str = "",
                  stop: tuple[str, ...] = (), logprobs: bool = False) -> list[_Outcome]:
        """One request per message list; the reply text includes the forced start (``prefix``).

        ``logprobs``: ask for the top 20 alternatives per token; a backend without logprobs
        raises CapabilityError (from the client) before any call, as for the prompted judge.
        """
        if not batch:
            return []
        if not (self.prefill and client.backend.capabilities.assistant_prefix):
            prefix = ""
        requests = [Request(messages=tuple(m), assistant_prefix=prefix, temperature=self.temperature,
                            max_tokens=max_tokens, stop=stop, seed=self.seed, logprobs=logprobs,
                            top_logprobs=20 if logprobs else 0) for m in batch]
        results = []
        for result in client.complete_all(requests, errors="return"):
            if isinstance(result, RequestError):
                results.append(_Outcome(error=str(result)))
            else:
                results.append(_Outcome(text=prefix + result[0].text, usage=usage_of(result), prefix=prefix,
                                        logprobs=result[0].logprobs))
        return results

    # -- texts and judgments ---------------------------------------------------------------------
    def _names(self, item: Item) -> tuple[str, str]:
        relevance = item.kind == "relevance"
        return (self.input_name or ("Query" if relevance else "Input"),
                self.output_name or ("Passage" if relevance else "Output"))

    def _texts(self, item: Item) -> tuple[str, str, str, str]:
        """(input name, input text, output name, output text), or a DataError naming the missing field."""
        input_name, output_name = self._names(item)
        judged = item.judged
        if not item.prompt:
            raise DataError("the item has no query/source text to judge against", field="query")
        if not judged:
            raise DataError("the item has no passage/output text to judge (relevance items need 'passage')",
                            field="passage" if item.kind == "relevance" else "output")
        return input_name, item.prompt, output_name, judged

    def _shown(self, graded: _Graded) -> list[tuple[str, str]]:
        return [(c.name, _fmt(graded.grades.get(c.key))) for c in self.criteria]

    @staticmethod
    def _messages(system: str | None, user: str) -> list:
        return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]

    def _common(self, item: Item, graded: _Graded) -> dict[str, Any]:
        extra: dict[str, Any] = {"mode": self.mode, "replies": dict(graded.replies)}
        if graded.route is not None:
            extra["binary_check"] = "yes" if graded.route else "no"
        if graded.generated_query is not None:
            extra["generated_query"] = graded.generated_query
        if graded.fallbacks:
            extra["fallbacks"] = list(graded.fallbacks)
        if self.grade_score == "logprob":
            # the number each reply wrote and the probability on valid grades behind each expectation
            extra["parsed_grades"] = dict(graded.parsed_grades)
            extra["grade_mass"] = dict(graded.grade_mass)
        raw = "\n".join(f"[{stage}] {text}" for stage, text in graded.replies.items())
        return dict(item_id=item.id, aspect=self.aspect, judge=self.name, criteria=dict(graded.grades),
                    raw=raw, usage=graded.usage, extra=extra)

    def _ok(self, item: Item, graded: _Graded, label: int) -> Judgment:
        return Judgment(score=float(label), label=label, **self._common(item, graded))

    def _unparsable(self, item: Item, graded: _Graded, reason: str) -> Judgment:
        return Judgment(status="unparsable", reason=reason, **self._common(item, graded))


@dataclass
class _Outcome:
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    #: The forced start included in ``text``, and the reply's token logprobs (when asked for).
    prefix: str = ""
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass
class _Graded:
    """One item's progress through the stages; ``final`` holds its judgment once decided (or failed)."""

    grades: dict[str, float | None] = field(default_factory=dict)
    replies: dict[str, str] = field(default_factory=dict)
    #: ``logprob`` grading: the number each reply wrote, the mass on valid grades, why a grade is missing.
    parsed_grades: dict[str, float | None] = field(default_factory=dict)
    grade_mass: dict[str, float] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    fallbacks: list[str] = field(default_factory=list)
    route: bool | None = None
    generated_query: str | None = None
    final: Judgment | None = None

    def missing(self) -> str:
        """Why the item has no label: the criteria without a valid grade (and why, when known)."""
        keys = [k for k, v in self.grades.items() if v is None]
        return "no valid grade for " + ", ".join(f"{k} ({self.invalid[k]})" if k in self.invalid else k for k in keys)


_SCORE, _ANSWER = "Score: ", "Answer: "
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def _first_rating(text: str, bounds: tuple[int, int], item: Item) -> ParsedScore:
    """The first rating within ``bounds`` in a reply: how every TREMA stage reads its number (a
    grade, parsed or as the anchor of its logprob expectation, and the label)."""
    return parse_rating(text, bounds, pick="first", judged_texts=judged_texts_of(item))


def _yes_no(text: str) -> bool | None:
    """The first yes/no word of the reply (True for yes), or None when it has neither."""
    match = _YES_NO.search(text or "")
    return None if match is None else match.group(1).lower() == "yes"


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        cleaned = line.strip().strip("\"'`*").strip()
        cleaned = re.sub(r"^(?:generated\s+)?(?:search\s+)?query\s*:\s*", "", cleaned, flags=re.IGNORECASE).strip("\"' ")
        if cleaned:
            return cleaned
    return ""


def _fmt(value: float | None) -> str:
    """A grade as the aggregation prompts show it: whole numbers as written, expected grades to
    one decimal (finer digits are noise to a judge model and only lengthen the prompt)."""
    return "none" if value is None else f"{round(value, 1):g}"


def _human_label(item: Item, aspect: str) -> int | None:
    value = item.human_score(aspect)
    return None if value is None or not float(value).is_integer() else int(value)


def _template(name: str) -> Any:
    return environment().get_template(f"trema/{name}.j2").module
