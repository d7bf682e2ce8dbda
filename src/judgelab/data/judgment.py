"""The judgment: what a judge said about one item, including when it said nothing usable."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judgelab.data.item import Label, Score
from judgelab.llm.types import Usage

JudgmentStatus = Literal["ok", "unparsable", "error"]

# A criterion grade is a number or None (not given / not parsed), never NaN: NaN would poison means.
CriterionScore = Score | None


class Judgment(BaseModel):
    """One verdict. ``score is None`` whenever ``status != "ok"``: a failed parse is never a 0."""

    model_config = ConfigDict(extra="forbid")

    item_id: str = Field(min_length=1)
    score: Score | None = None
    label: Label | None = None
    criteria: dict[str, CriterionScore] = Field(default_factory=dict)
    explanation: str | None = None
    raw: str | None = None
    status: JudgmentStatus = "ok"
    reason: str | None = None
    aspect: str | None = None
    judge: str | None = None
    # the content digest of the item judged (data/digest.py), written by a run so that a rerun into its
    # folder judges an edited item again; None in judgments from older runs and other tools
    item_digest: str | None = None
    usage: Usage = Field(default_factory=Usage)
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _null_dicts_as_empty(cls, data: Any) -> Any:
        # JSON null (or a missing cell) for a dict field means "nothing", as an absent key does.
        if isinstance(data, dict) and any(data.get(k, 0) is None for k in ("criteria", "usage", "extra")):
            return {k: v for k, v in data.items() if not (k in ("criteria", "usage", "extra") and v is None)}
        return data

    @field_validator("item_id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _no_score_without_success(self) -> Judgment:
        if self.status != "ok" and self.score is not None:
            raise ValueError(f"a judgment with status {self.status!r} cannot carry a score")
        if self.status != "ok" and not self.reason:
            raise ValueError(f"a judgment with status {self.status!r} needs a reason")
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ok"
