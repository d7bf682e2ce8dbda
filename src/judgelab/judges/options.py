"""A judge config from options, as ``judgelab judge``/``fit``/``optimize`` and the Python front door build it:
a config (a file, a dict or a config object) or a default judge of a kind, with single options laid over it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgelab.errors import ConfigError, term
from judgelab.judges.base import JudgeConfig, judge_from_dict, load_judge
from judgelab.judges.pairwise import PairwiseJudge  # noqa: F401 - registers the 'pairwise' kind
from judgelab.judges.prompted import PromptedJudge  # noqa: F401 - registers the 'prompted' kind
from judgelab.strategy import Strategy


def judge_config_from_options(config: str | Path | Mapping[str, Any] | JudgeConfig | None, method: str | None,
                              aspect: str | None, **overrides: Any) -> JudgeConfig:
    """``config`` (a YAML/JSON file, a dict, or a config object; else a default judge of kind ``method``,
    ``prompted`` when None) with ``aspect`` and the ``overrides`` that are not None laid over it
    (``strategy``: HPSS factors as a key, e.g. ``"scale=10,cot=none"``, merged into the config's)."""
    if config is not None and method:
        raise ConfigError(f"give either {term('config')} or {term('method')}: the config file names its own kind")
    where, base_dir = "command-line options", None
    if isinstance(config, JudgeConfig):
        base, where = config.model_dump(mode="json"), "the given judge config"
    elif isinstance(config, Mapping):
        base, where = dict(config), "the given judge config"
    elif config is not None:
        # As JSON: the file paths in it are then absolute, so resolving them again below leaves them be.
        base, where, base_dir = load_judge(config).model_dump(mode="json"), str(config), Path(config).parent
    else:
        base = {"kind": method or "prompted"}
    if aspect:
        base["aspect"] = aspect
    if base.get("kind", "prompted") == "prompted" and not base.get("aspect"):
        raise ConfigError(f"say which aspect to judge: {term('aspect')} NAME (or 'aspect' in the config)")
    strategy = overrides.pop("strategy", None)
    if strategy:
        try:
            base["strategy"] = {**(base.get("strategy") or {}), **Strategy.from_key(strategy).model_dump(exclude_unset=True)}
        except (ValueError, ValidationError) as exc:
            raise ConfigError(f"{term('strategy')} {strategy!r}: {exc}") from exc
    base.update({key: value for key, value in overrides.items() if value is not None})
    return judge_from_dict(base, where, base_dir=base_dir)


#: How a prompted judge built from options rates with an embedded model: the rating first, read from the
#: model's probabilities over the scale. On a CPU an explanation first (HPSS's MT-Bench start) costs a long
#: generation per item for no better agreement (bench/bench_default_strategy.py, docs/judges.md).
EMBEDDED_DEFAULT = {"cot": "none", "score": "logprob"}


def with_embedded_default(judge_config: JudgeConfig, model: str | None, *, from_options: bool,
                          strategy: str | None, score: str | None) -> tuple[JudgeConfig, bool]:
    """``judge_config`` with :data:`EMBEDDED_DEFAULT` when the judge runs on an embedded model and nothing
    chose its chain of thought or score: a prompted judge built from options (not a config), no ``cot`` in
    ``strategy``, no ``score``. Returns the config and whether the default was applied."""
    from judgelab.llm.models import DEFAULT_MODEL
    from judgelab.llm.resolve import runs_embedded

    chosen = score is not None or (strategy and "cot" in Strategy.from_key(strategy).model_fields_set)
    if not from_options or chosen or not isinstance(judge_config, PromptedJudge):
        return judge_config, False
    if not runs_embedded(model or judge_config.model or DEFAULT_MODEL):
        return judge_config, False
    settings = judge_config.model_dump(mode="json", exclude_unset=True)
    settings["strategy"] = {**settings.get("strategy", {}), "cot": EMBEDDED_DEFAULT["cot"]}
    settings["score"] = EMBEDDED_DEFAULT["score"]
    return judge_from_dict(settings, "command-line options"), True
