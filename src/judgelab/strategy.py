"""The HPSS prompting strategy: one value for each of 8 factors (seed Table 1, specs/hpss.md).

A ``Strategy`` is plain data: frozen, hashable, serialisable to YAML/JSON. It says *what* the
prompt contains; ``judgelab.prompts.render_judge_prompt`` turns it into messages.

``FACTORS`` lists every factor's values in the published order, whose first value is the
MT-Bench starting point. Optimisers iterate over it; nothing else should hard-code the space.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, field_validator

Scale = Literal[5, 3, 10, 50, 100]
ExampleCount = Literal[0, 3, 5, 10]
CriteriaSource = Literal["human", "none", "self"]
ReferenceMode = Literal["none", "self", "dialectic"]
CotMode = Literal["prefix", "none", "suffix"]
Order = Literal["TD-ER-IC", "TD-IC-ER", "ER-TD-IC", "ER-IC-TD", "IC-TD-ER", "IC-ER-TD"]
Component = Literal["TD", "ER", "IC"]

FACTORS: dict[str, tuple[Any, ...]] = {
    "scale": get_args(Scale),
    "examples": get_args(ExampleCount),
    "criteria": get_args(CriteriaSource),
    "reference": get_args(ReferenceMode),
    "cot": get_args(CotMode),
    "autocot": (False, True),
    "metrics": (False, True),
    "order": get_args(Order),
}

# Names of the auxiliary texts a strategy may need before its prompt can be rendered.
AuxiliaryNeed = Literal["human_criteria", "self_criteria", "autocot", "self_reference", "checklist", "examples"]


class Strategy(BaseModel):
    """One point of the 12,960-strategy space. Defaults are the MT-Bench start point."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scale: Scale = 5
    examples: ExampleCount = 0
    criteria: CriteriaSource = "human"
    reference: ReferenceMode = "none"
    cot: CotMode = "prefix"
    autocot: bool = False
    metrics: bool = False
    order: Order = "TD-ER-IC"

    @field_validator("order", mode="before")
    @classmethod
    def _normalise_order(cls, value: Any) -> Any:
        # Accept the paper's spelling ("TD ER IC") and other separators as well as "TD-ER-IC".
        if isinstance(value, str):
            return "-".join(re.findall(r"[A-Za-z]+", value)).upper()
        if isinstance(value, list | tuple):
            return "-".join(str(part).upper() for part in value)
        return value

    @field_validator("autocot", "metrics", mode="before")
    @classmethod
    def _on_off(cls, value: Any) -> Any:
        # Specs and CLIs say "on"/"off"; YAML 1.1 already turns bare on/off into booleans.
        if isinstance(value, str) and value.lower() in ("on", "off"):
            return value.lower() == "on"
        return value

    # -- the space ----------------------------------------------------------------------------

    @classmethod
    def mt_bench(cls, native_scale: int | None = None) -> Strategy:
        """The MT-Bench start point: the first value of every factor.

        The paper starts Topical-Chat at its native 1-3 scale (seed Table 19); pass the dataset's
        native maximum to do the same. A native scale outside the space (SF-HOT's 1-6) keeps 5.
        """
        if native_scale is not None and native_scale in FACTORS["scale"]:
            return cls(scale=native_scale)
        return cls()

    @classmethod
    def space(cls) -> Iterator[Strategy]:
        """Every strategy, in the lexicographic order of ``FACTORS`` (12,960 of them)."""
        names = list(FACTORS)
        for values in itertools.product(*FACTORS.values()):
            yield cls.model_construct(**dict(zip(names, values, strict=True)))

    @classmethod
    def space_size(cls) -> int:
        size = 1
        for values in FACTORS.values():
            size *= len(values)
        return size

    def replace(self, **changes: Any) -> Strategy:
        """A copy with some factors changed, validated."""
        return type(self).model_validate({**self.model_dump(), **changes})

    def neighbours(self) -> list[Strategy]:
        """Every strategy that differs from this one in exactly one factor (20 of them)."""
        return [
            self.replace(**{name: value})
            for name, values in FACTORS.items()
            for value in values
            if value != getattr(self, name)
        ]

    # -- what the strategy implies for the prompt -----------------------------------------------

    @property
    def components(self) -> tuple[Component, Component, Component]:
        first, second, third = self.order.split("-")
        return first, second, third  # type: ignore[return-value]

    @property
    def bounds(self) -> tuple[int, int]:
        """The rating range the judge is asked for: always 1 to ``scale`` (seed Appendix B)."""
        return (1, self.scale)

    @property
    def rating_first(self) -> bool:
        """Whether the reply opens with the rating, so it can be forced with an assistant prefix.

        Dialectic asks the judge to write its own answer before rating, so the rating is never
        first there, whatever the CoT mode.
        """
        return self.cot != "prefix" and self.reference != "dialectic"

    def needs(self) -> frozenset[AuxiliaryNeed]:
        """The auxiliary texts this strategy's prompt contains (each generated or loaded once)."""
        needs: set[AuxiliaryNeed] = set()
        if self.criteria == "human":
            needs.add("human_criteria")
        elif self.criteria == "self":
            needs.add("self_criteria")
        if self.autocot:
            needs.add("autocot")
        if self.reference == "self":
            needs.add("self_reference")
        if self.metrics:
            needs.add("checklist")
        if self.examples:
            needs.add("examples")
        return frozenset(needs)

    # -- identity and files --------------------------------------------------------------------

    def key(self) -> str:
        """Readable, stable identity: ``scale=5,examples=0,...,order=TD-ER-IC``."""
        return ",".join(f"{name}={factor_text(getattr(self, name))}" for name in FACTORS)

    def digest(self) -> str:
        """Short stable hash of ``key()`` (12 hex digits), for file names and cache keys."""
        return hashlib.sha256(self.key().encode()).hexdigest()[:12]

    @classmethod
    def from_key(cls, key: str) -> Strategy:
        pairs = dict(part.split("=", 1) for part in key.split(","))
        return cls.model_validate({name: parse_factor_text(name, text) for name, text in pairs.items()})

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)

    @classmethod
    def from_yaml(cls, text: str) -> Strategy:
        data = yaml.safe_load(text) or {}
        # A judge config file may nest the strategy under its own key.
        if isinstance(data, dict) and isinstance(data.get("strategy"), dict):
            data = data["strategy"]
        return cls.model_validate(data)

    def save(self, path: str | Path) -> None:
        from judgelab.files import write_atomic

        path = Path(path)
        write_atomic(path, self.model_dump_json(indent=2) if path.suffix == ".json" else self.to_yaml())  # a file, owner-only

    @classmethod
    def load(cls, path: str | Path) -> Strategy:
        from judgelab.files import read_text

        path = Path(path)
        text = read_text(path)  # a regular file within the input bound
        return cls.model_validate_json(text) if path.suffix == ".json" else cls.from_yaml(text)


def factor_text(value: Any) -> str:
    """A factor value as a strategy key writes it (booleans as on/off)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def parse_factor_text(name: str, text: str) -> Any:
    """A factor value from its text in a strategy key (the inverse of ``factor_text``)."""
    if name in ("scale", "examples"):
        return int(text)
    return text
