"""The optimisers by name, as ``judgelab optimize METHOD`` and ``make_optimizer`` know them."""

from __future__ import annotations

import inspect
from typing import Any

from judgelab.errors import ConfigError, term
from judgelab.llm.client import Client
from judgelab.optimize.base import Optimizer
from judgelab.optimize.baselines import Greedy, RandomSearch, StepwiseGreedy
from judgelab.optimize.hpss import HPSS
from judgelab.optimize.llm_search import APE, OPRO
from judgelab.optimize.names import METHOD_SUMMARIES
from judgelab.optimize.rewrite import PromptRewrite

_CLASSES: dict[str, type[Optimizer]] = {"hpss": HPSS, "greedy": Greedy, "stepwise": StepwiseGreedy,
                                        "random": RandomSearch, "ape": APE, "opro": OPRO, "rewrite": PromptRewrite}
#: name -> (class, whether the LLM proposes, one-line summary); the names and summaries are
#: ``optimize.names``' (what the command's help prints without loading the optimisers)
METHODS: dict[str, tuple[type[Optimizer], bool, str]] = {
    name: (_CLASSES[name], *summary) for name, summary in METHOD_SUMMARIES.items()}


def make_optimizer(method: str, client: Client | None = None, *, seed: int = 0, **options: Any) -> Optimizer:
    """An optimiser by name; LLM-proposing ones need the ``client`` that proposes."""
    if method not in METHODS:
        raise ConfigError(f"unknown optimiser {method!r}; choose from {', '.join(METHODS)}")
    cls, proposes, _ = METHODS[method]
    _check_settings(method, cls, options)
    if proposes:
        if client is None:
            raise ConfigError(f"{method} asks an LLM for proposals: pass a client")
        return cls(client, seed=seed, **options)  # type: ignore[call-arg]
    return cls(seed=seed, **options)


def _check_settings(method: str, cls: type[Optimizer], options: dict[str, Any]) -> None:
    """A setting the optimiser does not take is named, with the ones it does take (not a TypeError)."""
    known = [name for name, parameter in inspect.signature(cls.__init__).parameters.items()
             if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "seed"]
    for name in options:
        if name not in known:
            hint = (f" ({term('space')} confines strategy searches: hpss, greedy, stepwise, random, opro)"
                    if name == "space" else "")
            raise ConfigError(f"{method} has no setting {name!r}{hint}; its settings are {', '.join(known)}")
