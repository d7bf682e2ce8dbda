"""judgelab: build, tune and audit LLM judges.

The front door (docs/python.md)::

    import judgelab as jl

    items = jl.load("items.jsonl")                                   # a Dataset (or another tool's output)
    run = jl.judge(items, aspect="coherence", model="smollm2-135m")  # judge them with an LLM
    jl.meta(items, run)                                              # how far the judge agrees with humans
    jl.evaluate(items, run, human_ids="all")                         # systems ranked, with intervals
    jl.compare(items, run, baseline="v1", candidate="v2")            # is the candidate worse?
    jl.audit("comparisons.jsonl", "verdicts.jsonl")                  # a pairwise judge's biases
    jl.sample(items, 20)                                             # which items to label
    jl.plan_spend(items, ["a.jsonl", "b.jsonl"], 100, judge_costs={"a": 0.01, "b": 0.1},
                  label_cost=0.5, human_ids="pilot.txt")               # which judges to run, how many labels

Each verb takes files, lists of dicts or ``Item``/``Judgment`` objects, or pandas DataFrames, and returns
a result with ``.to_pandas()`` and an HTML view in Jupyter. The verbs only wrap the deep modules
(``judgelab.evaluate``, ``judgelab.metrics``, ``judgelab.audit``, ...), which stay importable as before;
``jl.evaluate`` and ``jl.audit`` are also those packages (``jl.evaluate.two_systems`` still works).

Nothing is imported until a verb is first used: ``import judgelab`` loads no numpy, pandas or model code.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from judgelab.lazy import lazy_exports

if TYPE_CHECKING:  # what type checkers and editors read: the real verbs and types behind the lazy loading
    # "x as x": an explicit re-export (PEP 484), for __all__ is built at run time
    from judgelab.api import audit as audit
    from judgelab.api import compare as compare
    from judgelab.api import evaluate as evaluate
    from judgelab.api import judge as judge
    from judgelab.api import load as load
    from judgelab.api import meta as meta
    from judgelab.api import plan_labels as plan_labels
    from judgelab.api import plan_spend as plan_spend
    from judgelab.api import sample as sample
    from judgelab.api.results import Audit as Audit
    from judgelab.api.results import Comparison as Comparison
    from judgelab.api.results import Evaluation as Evaluation
    from judgelab.api.results import JudgeRun as JudgeRun
    from judgelab.api.results import LabelPlan as LabelPlan
    from judgelab.api.results import MetaEvaluation as MetaEvaluation
    from judgelab.api.results import Sample as Sample
    from judgelab.api.results import Source as Source
    from judgelab.api.results import SpendPlan as SpendPlan
    from judgelab.data import Dataset as Dataset
    from judgelab.data import Item as Item
    from judgelab.data import Judgment as Judgment

    __version__: str

VERBS = ("judge", "meta", "evaluate", "compare", "audit", "sample", "load", "plan_labels", "plan_spend")
#: the results the verbs return, and the data types they take (for isinstance and type hints)
_TYPES = {"JudgeRun": "api.results", "MetaEvaluation": "api.results", "Evaluation": "api.results",
          "Comparison": "api.results", "Audit": "api.results", "Sample": "api.results", "Source": "api.results",
          "LabelPlan": "api.results", "SpendPlan": "api.results",
          "Item": "data", "Judgment": "data", "Dataset": "data"}
#: verbs that are also the name of a subpackage
_SHARED = ("evaluate", "audit")

__all__ = [*VERBS, *_TYPES, "__version__"]

_lazy_getattr, _lazy_dir = lazy_exports(__name__, {name: "api" for name in VERBS} | _TYPES)


class _VerbAndPackage:
    """``jl.evaluate`` and ``jl.audit``: called, the front door's verb (``judgelab.api``); read, the
    subpackage of that name (``jl.evaluate.two_systems.compare_systems``), imported on first use."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    @property
    def __wrapped__(self) -> Any:  # inspect.signature, help() and Jupyter's `?` show the verb
        return getattr(importlib.import_module("judgelab.api"), self._name)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self.__wrapped__.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(f"judgelab.{self._name}"), name)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(f"judgelab.{self._name}"))

    def __repr__(self) -> str:
        return f"<judgelab.{self._name}: the verb judgelab.api.{self._name}, and the package judgelab.{self._name}>"


class _Package(types.ModuleType):
    """judgelab's own module type: importing ``judgelab.evaluate`` (the package) binds it on the parent
    as Python does for every subpackage, which would hide the verb; here the name keeps both."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHARED:
            value = _VerbAndPackage(name)
        super().__setattr__(name, value)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from judgelab.version import installed_version

        globals()["__version__"] = installed_version()
        return globals()["__version__"]
    if name in _SHARED:
        setattr(sys.modules[__name__], name, None)  # becomes the verb-and-package
        return globals()[name]
    return _lazy_getattr(name)


def __dir__() -> list[str]:
    return _lazy_dir()


sys.modules[__name__].__class__ = _Package
