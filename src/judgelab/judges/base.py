"""What every judge is: a frozen, serialisable config plus ``run(items, client) -> list[Judgment]``.

Configs are data, so optimisers can propose them, runs can record them, and
``judgelab judge --config best.yaml`` can reuse them. ``kind`` names the judge class.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_serializer,
)

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, JudgelabError, RequestError
from judgelab.files import LineOf, line_finder, private_dir, read_text, write_atomic
from judgelab.llm.client import Client
from judgelab.llm.location import check_server_url
from judgelab.llm.types import Completion, Request, Usage
from judgelab.parse import parse_questions
from judgelab.redact import redact_url

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

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


def _absolute_text(path: Path) -> str:
    """A path as dumped (digests, run records): absolute and without ``..``, so one file is one
    text however the config reached it (``saved/../weights`` from a file in ``saved/``, or a
    config file named by a relative path). ``abspath``: symbolic links are left as written."""
    return Path(os.path.abspath(path)).as_posix()


#: A file a fitted judge refers to (weights, an index): relative paths in a config file are
#: resolved against that file's folder, and ``save`` writes them relative to it again, so a
#: fitted judge's folder can be moved or shared as a whole.
ConfigPath = Annotated[Path, AfterValidator(_resolve_against_config), PlainSerializer(_absolute_text, when_used="json")]

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

    #: Fields added after configs of this kind were first saved, with their dumped default: left
    #: out of every dump at that default, so configs written before the field existed keep their
    #: digest (their run folders and caches still resume).
    omitted_at_default: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.registry_name:
            _REGISTRY[cls.registry_name] = cls

    @field_validator("model")
    @classmethod
    def _no_secret_in_model(cls, model: str | None) -> str | None:
        """A config is saved, copied into run folders and shown in reports: a server URL in it must hold no
        credentials (``check_server_url``). Raised as ValueError so the message names the file and line."""
        if model and model.startswith(("http://", "https://")):
            try:
                check_server_url(model)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return model

    @field_serializer("model")
    def _model_without_secret(self, model: str | None) -> str | None:
        """A server URL as it is recorded (``redact_url``): a key in its query, path or fragment is masked
        in every saved config, run.json and report (the run itself uses the URL as given)."""
        return redact_url(model) if model and model.startswith(("http://", "https://")) else model

    @model_serializer(mode="wrap")
    def _dump_without_late_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        for name, default in self.omitted_at_default.items():
            if name in data and data[name] == default:
                del data[name]
        return data

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

    # -- the contract every kind is checked against ---------------------------------------------
    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        """A small runnable example of this kind (config, items, the scripted model's replies) for
        the contract test, tests/unit/test_contract.py; files it needs go under ``folder``."""
        raise NotImplementedError(
            f"judge kind {cls.registry_name!r} ({cls.__name__}) gives the contract test nothing to check: define "
            f"the classmethod {cls.__name__}.contract_example(folder) -> judgelab.judges.contract.ContractExample "
            "(a config, three or more items and the scripted model's reply; see the other kinds)")

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
        """Write the config as YAML (or JSON for ``.json``). Every file path in it (weights, an
        ensemble's members, at any depth) is written relative to the file's folder, ``../`` where
        needed, so the config and what it refers to can be moved together (``load_judge`` resolves
        them against the folder again)."""
        path = Path(path)
        private_dir(path.parent)
        data = _relative_paths(self, self.model_dump(mode="json"), path.parent.resolve())
        text = json.dumps(data, indent=2) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
        return write_atomic(path, text)  # owner-only; a kill leaves the old file or the new one


def _relative_paths(model: BaseModel, data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``data`` (``model`` dumped as JSON) with each ``Path`` field of ``model`` and of the models
    nested in it relative to ``folder``. A relative path in memory is relative to the working
    directory (as ``open`` reads it), so it is resolved first."""
    for name, value in model:
        if isinstance(value, Path):
            data[name] = Path(os.path.relpath(value.resolve(), folder)).as_posix()
        elif isinstance(value, BaseModel) and isinstance(data.get(name), dict):
            data[name] = _relative_paths(value, data[name], folder)
        elif isinstance(value, (list, tuple)) and isinstance(data.get(name), list):
            data[name] = [_relative_paths(v, d, folder) if isinstance(v, BaseModel) and isinstance(d, dict) else d
                          for v, d in zip(value, data[name], strict=True)]
    return data


def judge_from_dict(data: dict[str, Any], source: str = "<config>", base_dir: Path | None = None,
                    line_of: LineOf | None = None) -> JudgeConfig:
    """A judge config from plain data; relative ``ConfigPath`` fields resolve against ``base_dir``.

    Errors name ``source`` and the field, and with ``line_of`` (a config file's) the line: ``x.yaml:4: field ...``.
    """
    import judgelab.judges  # noqa: F401 - importing the package registers every judge kind

    def place(loc: tuple[str | int, ...]) -> str:
        line = line_of(loc) if line_of is not None else None
        return f"{source}:{line}" if line is not None else source

    kind = data.get("kind")
    if kind not in _REGISTRY:
        raise ConfigError(f"{place(('kind',))}: field 'kind' must be one of {', '.join(sorted(_REGISTRY))}, "
                          f"got {kind!r}")
    try:
        return _REGISTRY[kind].model_validate(data, context={"base_dir": base_dir})
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        field = ".".join(str(part) for part in first["loc"])
        got = first.get("input")
        shown = f" (got {got!r})" if first["type"] != "missing" and isinstance(got, str | int | float | bool) else ""
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ConfigError(f"{place(first['loc'])}: field '{field}': {first['msg']}{shown}{more}") from exc


def load_judge(path: str | Path) -> JudgeConfig:
    """A judge config from YAML or JSON (as written by ``JudgeConfig.save`` or an optimiser).

    Errors name the file, the line and the field (``best.yaml:7: field 'strategy.scale': ...``).
    """
    path = Path(path)
    try:
        text = read_text(path)  # a regular file (a FIFO would block the read) within the input bound
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(f"{path}:{_yaml_error_line(exc)}: not valid YAML: {_yaml_problem(exc)}") from exc
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read judge config: {exc}") from exc
    except RecursionError:  # PyYAML's parser recurses once per level of nesting
        raise ConfigError(f"{path}: cannot read judge config: nested more deeply than Python's limit of about "
                          f"{sys.getrecursionlimit()} levels") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a judge config is a mapping with a 'kind' key")
    return judge_from_dict(data, str(path), base_dir=path.parent, line_of=line_finder(text))


def _yaml_error_line(exc: yaml.MarkedYAMLError) -> int | str:
    mark = exc.problem_mark or exc.context_mark
    return mark.line + 1 if mark is not None else "?"


def _yaml_problem(exc: yaml.MarkedYAMLError) -> str:
    problem = exc.problem or "cannot parse"
    if exc.context and exc.context_mark is not None:
        return f"{problem} ({exc.context} from line {exc.context_mark.line + 1})"
    return problem


def judge_class(kind: str) -> type[JudgeConfig]:
    """The config class of a registered judge kind."""
    import judgelab.judges  # noqa: F401

    if kind not in _REGISTRY:
        raise ConfigError(f"unknown judge kind {kind!r}; choose from {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[kind]


def judge_kinds(trainable_only: bool = False) -> list[str]:
    import judgelab.judges  # noqa: F401

    return sorted(kind for kind, cls in _REGISTRY.items() if cls.trainable or not trainable_only)
