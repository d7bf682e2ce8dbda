"""What every judge is: a frozen, serialisable config plus ``run(items, client) -> list[Judgment]``.

Configs are data, so optimisers can propose them, runs can record them, and
``judgelab judge --config best.yaml`` can reuse them. ``kind`` names the judge class.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, ValidationInfo

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, JudgelabError, RequestError
from judgelab.llm.client import Client
from judgelab.llm.types import Completion, Request, Usage
from judgelab.parse import parse_questions

#: Called with each judgment as soon as it is final (for streaming writes and progress).
OnJudgment = Callable[[Judgment], None]
#: Renders the messages of one per-item auxiliary stage ("reference" or "checklist").
StageRenderer = Callable[[Item, str], list]
_AUX_MAX_TOKENS = 512


@dataclass
class ItemTexts:
    """What the per-item auxiliary stages produced for one item, and what they cost."""

    reference: str | None = None
    checklist: tuple[str, ...] | None = None
    usage: Usage = field(default_factory=Usage)


def usage_of(completions: Sequence[Completion]) -> Usage:
    """What these completions cost one item: paid calls and tokens, or cache hits."""
    total = Usage()
    for c in completions:
        if c.cached:
            total = total + Usage(cache_hits=1)
        else:
            total = total + Usage(calls=1, prompt_tokens=c.prompt_tokens, completion_tokens=c.completion_tokens,
                                  latency_s=c.latency_s)
    return total

def _resolve_against_config(path: Path, info: ValidationInfo) -> Path:
    base_dir = (info.context or {}).get("base_dir")
    return path if path.is_absolute() or base_dir is None else Path(base_dir) / path


#: A file a fitted judge refers to (weights, an index): relative paths in a config file are
#: resolved against that file's folder, and ``save`` writes them relative to it again, so a
#: fitted judge's folder can be moved or shared as a whole.
ConfigPath = Annotated[Path, AfterValidator(_resolve_against_config)]

_REGISTRY: dict[str, type[JudgeConfig]] = {}


class JudgeConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    #: Optional default model string; the CLI's --model and run(client=...) override it.
    model: str | None = None

    registry_name: ClassVar[str] = ""
    #: False for judges that never call an LLM (e.g. the similarity scorer): commands then give
    #: them a client whose backend raises if called, so no model is ever loaded for them.
    uses_llm: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.registry_name:
            _REGISTRY[cls.registry_name] = cls

    def run(self, items: Sequence[Item], client: Client, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        raise NotImplementedError

    # -- learning from labelled items (judges that do override both) ---------------------------
    #: True for judges with something to learn from labelled items (``fit``).
    trainable: ClassVar[bool] = False

    def fit(self, items: Sequence[Item], client: Client | None = None, *, out_dir: Path | None = None) -> JudgeConfig:
        """A new config with what was learned from ``items`` (human labels) inside it.

        Small learned state lives in the config's fields; weights go to files under ``out_dir``
        referred to by ``ConfigPath`` fields. The original config is left unchanged (configs are frozen).
        """
        raise ConfigError(f"judges of kind {self.kind!r} have nothing to learn from labelled items")

    @property
    def fitted(self) -> bool:
        """False when ``run`` needs ``fit`` first (then ``run`` raises a ConfigError saying so)."""
        return True

    # -- helpers every judge uses ------------------------------------------------------------
    @property
    def name(self) -> str:
        """``kind/digest``: what judgments record as their judge."""
        return f"{self.kind}/{self.digest()}"

    def error(self, item: Item, reason: str, usage: Usage | None = None) -> Judgment:
        return Judgment(item_id=item.id, aspect=getattr(self, "aspect", None), judge=self.name, status="error",
                        reason=reason, usage=usage or Usage())

    @staticmethod
    def emit(judgment: Judgment, on_judgment: OnJudgment | None) -> Judgment:
        if on_judgment:
            on_judgment(judgment)
        return judgment

    def aux_request(self, messages: list) -> Request:
        """Auxiliary texts are written greedily, so every strategy that reuses them sees the same."""
        return Request(messages=tuple(messages), temperature=0.0, max_tokens=_AUX_MAX_TOKENS,
                       seed=getattr(self, "seed", 0))

    def item_stages(self, items: Sequence[Item], client: Client, stages: Sequence[str],
                    render: StageRenderer) -> list[ItemTexts | Judgment]:
        """Per-item reference / checklist texts, in one batch; an item whose stage fails gets an error judgment.

        Identical prompts (a stage that depends only on the source) are paid for once.
        """
        prepared: list[ItemTexts | Judgment] = [ItemTexts() for _ in items]
        requests, slots = [], []
        for index, item in enumerate(items):
            try:
                for stage in stages:
                    requests.append(self.aux_request(render(item, stage)))
                    slots.append((index, stage))
            except JudgelabError as exc:
                prepared[index] = self.error(item, str(exc))
        if not requests:
            return prepared
        for (index, stage), outcome in zip(slots, client.complete_all(requests, errors="return"), strict=True):
            current = prepared[index]
            if isinstance(current, Judgment):
                continue
            if isinstance(outcome, RequestError):
                prepared[index] = self.error(items[index], f"the {stage} stage failed: {outcome}", current.usage)
                continue
            current.usage = current.usage + usage_of(outcome)
            text = outcome[0].text
            if stage == "reference":
                current.reference = text.strip() or None
            else:
                current.checklist = tuple(parse_questions(text, limit=3)) or None
            if getattr(current, stage) is None:
                prepared[index] = self.error(items[index], f"the {stage} stage returned nothing usable", current.usage)
        return prepared

    # -- identity and files -------------------------------------------------------------------
    def digest(self) -> str:
        """Stable 12-hex id of what the judge does (the model is excluded: the cache keys on it)."""
        payload = json.dumps(self.model_dump(mode="json", exclude={"model"}), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:12]

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)

    def save(self, path: str | Path) -> Path:
        """Write the config as YAML (or JSON for ``.json``); file paths inside its folder become relative."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.model_dump(mode="json")
        folder = path.parent.resolve()
        for name, value in self:
            if isinstance(value, Path) and value.resolve().is_relative_to(folder):
                data[name] = value.resolve().relative_to(folder).as_posix()
        text = json.dumps(data, indent=2) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path


def judge_from_dict(data: dict[str, Any], source: str = "<config>", base_dir: Path | None = None) -> JudgeConfig:
    """A judge config from plain data; relative ``ConfigPath`` fields resolve against ``base_dir``."""
    import judgelab.judges  # noqa: F401 - importing the package registers every judge kind

    kind = data.get("kind")
    if kind not in _REGISTRY:
        raise ConfigError(f"{source}: 'kind' must be one of {', '.join(sorted(_REGISTRY))}, got {kind!r}")
    try:
        return _REGISTRY[kind].model_validate(data, context={"base_dir": base_dir})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"{source}: field '{field}': {first['msg']}") from exc


def load_judge(path: str | Path) -> JudgeConfig:
    """A judge config from YAML or JSON (as written by ``JudgeConfig.save`` or an optimiser)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read judge config: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a judge config is a mapping with a 'kind' key")
    return judge_from_dict(data, str(path), base_dir=path.parent)


def judge_kinds(trainable_only: bool = False) -> list[str]:
    import judgelab.judges  # noqa: F401

    return sorted(kind for kind, cls in _REGISTRY.items() if cls.trainable or not trainable_only)
