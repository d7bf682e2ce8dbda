"""What the judges that check a list entry by entry share: ``faithfulness`` (an answer's claims against its
evidence) and ``requirements`` (an agent's run against its task's requirements). Each item goes through one or
two LLM stages as an :class:`ItemState`; the calls of a stage go out in one batch (:func:`replies_to`); a reply
lists a verdict per entry, read by :func:`parse_numbered`; the settings are :class:`ChecklistJudge`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import field_validator

from judgelab.data.item import Item
from judgelab.errors import RequestError
from judgelab.judges.base import JudgeConfig, usage_of
from judgelab.limits import MaxTokens, Seed, Temperature
from judgelab.llm.client import Client
from judgelab.llm.types import Request, Usage

V = TypeVar("V")
VerifyMode = Literal["batch", "each"]


@dataclass
class ItemState:
    """One item's way through the stages; ``failure`` holds why it has no score, once it has none."""

    item: Item
    verdicts: list[Any] = field(default_factory=list)
    replies: dict[str, str] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    failure: tuple[Literal["error", "unparsable"], str] | None = None

    def fail(self, status: Literal["error", "unparsable"], reason: str) -> None:
        self.failure = self.failure or (status, reason)


class ChecklistJudge(JudgeConfig):
    """The settings of a judge that checks a list: how the entries are asked about, the score's scale and
    each call's sampling."""

    #: ``batch``: all entries of an item in one call; ``each``: one call per entry.
    verify: VerifyMode = "batch"
    #: [low, high]: the share of entries that pass mapped linearly onto it; None keeps the share (0-1).
    scale: tuple[float, float] | None = None
    temperature: Temperature = 0.0
    #: Reply budget of each call.
    max_tokens: MaxTokens = 512
    seed: Seed = 0

    @field_validator("scale")
    @classmethod
    def _ordered_scale(cls, scale: tuple[float, float] | None) -> tuple[float, float] | None:
        if scale is not None and not scale[0] < scale[1]:
            raise ValueError(f"scale {list(scale)} must be [low, high] with low < high")
        return scale

    def _request(self, prompt: str, listed: int | None = None) -> Request:
        """A user prompt; a reply that lists entries stops where it would start number ``listed + 1`` (small
        models go on numbering until the token budget is spent)."""
        return Request(messages=({"role": "user", "content": prompt},), temperature=self.temperature,
                       max_tokens=self.max_tokens, stop=(f"\n{listed + 1}.",) if listed else (), seed=self.seed)

    def _scaled(self, share: float) -> float:
        low, high = self.scale or (0.0, 1.0)
        return low + (high - low) * share


def replies_to(client: Client, states: Sequence[ItemState], requests: Sequence[Request], stage: str, *,
               fail: bool = True) -> list[str | None]:
    """The reply to each request (``states[k]``'s), in one batch, its cost added to its state; a failed call
    fails its state as an error naming the ``stage`` (its text None), or with ``fail=False`` leaves the state as
    it is (a call whose answer the judgment can do without)."""
    outcomes = client.complete_all(list(requests), errors="return") if requests else []
    texts: list[str | None] = []
    for state, outcome in zip(states, outcomes, strict=True):
        failed = isinstance(outcome, RequestError)
        if not failed:
            state.usage = state.usage + usage_of(outcome)
        elif fail:
            state.fail("error", f"{stage} failed: {outcome}")
        texts.append(None if failed else outcome[0].text)
    return texts


def parse_numbered(text: str, count: int, read: Callable[[str], V | None], numbered: re.Pattern[str]
                   ) -> list[V | None]:
    """Entry k's value (``read`` from the first line ``numbered`` k that gives one); a reply without numbers
    gives its values in order only when it gives exactly ``count``. None where an entry has no value."""
    by_number: list[V | None] = [None] * count
    in_order: list[V] = []
    for line in (text or "").splitlines():
        value = read(line)
        if value is None:
            continue
        number = numbered.match(line)
        if number is None:
            in_order.append(value)
        elif 0 < int(number.group(1)) <= count and by_number[int(number.group(1)) - 1] is None:
            by_number[int(number.group(1)) - 1] = value
    if all(value is None for value in by_number) and len(in_order) == count:
        return list(in_order)
    return by_number


__all__ = ["ChecklistJudge", "ItemState", "VerifyMode", "parse_numbered", "replies_to"]
