"""The front door's vocabulary, and the glue its verbs share (:mod:`judgelab.api.verbs` re-exports the
public part): the choices of the verbs' word options as ``Literal`` types, :class:`Note` (what a verb chose for
its caller) and :class:`OptionsRefused`; and the helpers that read what several verbs take alike (data with its
verdicts, ``human``, ``human_ids``, ``scale``, the files a result names)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from judgelab.errors import ConfigError

#: The choices of the verbs' word options, spelled out for editors and type checkers (the library checks them
#: against its own lists: evaluate/calibrate.py CHOICES, design_variance.TARGETS, ...).
Calibration = Literal["auto", "isotonic", "linear", "identity", "stack"]
Target = Literal["population", "items"]
Variance = Literal["pooled", "system"]
Intervals = Literal["auto", "betting", "t", "sequence"]
Unjudged = Literal["condense", "nonrelevant"]
Estimand = Literal["win-prob", "bradley-terry", "baseline-win-rate"]
RankMethod = Literal["auto", "max-t", "bonferroni", "holm"]
GateEstimator = Literal["auto", "corrected", "human", "judge"]
Pairing = Literal["auto", "paired", "unpaired"]
#: ``judge``'s: a pointwise judge's score (judges/prompted.py ScoreMode) or a pairwise judge's (label, logprob)
Score = Literal["parsed", "logprob", "label"]
Reduce = Literal["mean", "sum", "min"]  # judges/likelihood.py Reduce
LikelihoodOf = Literal["output", "input"]  # judges/likelihood.py Direction
Engine = Literal["local", "ray"]  # runner/run.py ENGINES


class Note(UserWarning):
    """What a verb chose for its caller that the caller did not say (comparisons judged pairwise, an embedded
    model's default strategy): no problem, a note. The command line prints it as a plain line on stderr;
    ``warnings.filterwarnings("ignore", category=Note)`` silences it in Python."""


class OptionsRefused(ConfigError):
    """Options the judge takes none of; ``options``: them, named as the caller knows them (the command line
    adds the command to type without them)."""

    def __init__(self, message: str, options: Sequence[str]):
        super().__init__(message)
        self.options = list(options)


# -- glue the verbs share ---------------------------------------------------------------------------------
def _inputs(data: Any, judgments: Any, source: str | None, field: str | None, partial: bool = False):
    """Items and verdicts as the commands read them (judgelab.data.sources.read_inputs), and the tool whose
    output they were (as named, or detected); a reader's notes become warnings."""
    from judgelab.data.sources import read_inputs

    inputs = read_inputs(data, judgments, source, field=field, partial=partial)
    _warn(inputs.source, inputs.notes)
    return inputs.items, inputs.judgments, inputs.source


def _warn(source: str | None, notes: Iterable[str]) -> None:
    from judgelab.errors import SourceNote

    for note in notes:
        warnings.warn(SourceNote(source, note), stacklevel=4)


def _human(human: Any, items, aspect: str | None) -> tuple[Mapping[str, Any] | None, str | None]:
    """``human=``: ``{item id: value}`` as it is, or a labels file (or list of labels) read for these items."""
    if human is None or isinstance(human, Mapping):
        return human, aspect
    from judgelab.data.labels import values_for_items

    return values_for_items(human, items, aspect)


def _human_ids(human_ids: Any, name: str = "human_ids"):
    """``human_ids=``: ``"all"``, a sample file, a drawn sample (its probabilities weight the labels), or ids.
    ``name``: the argument, as a refusal names it (``exclude`` of :func:`sample` takes the same ids but no "all")."""
    from judgelab.data.given import is_path
    from judgelab.evaluate import ALL, SampleFile, read_sample

    if human_ids is None or (name == "human_ids" and isinstance(human_ids, str) and human_ids == ALL):
        return human_ids, None
    if is_path(human_ids):
        if not Path(human_ids).exists():
            raise _ids_refused(name, human_ids, "no such file; ")
        human_ids = read_sample(human_ids)
    if isinstance(human_ids, SampleFile):
        return human_ids.ids, human_ids
    if not isinstance(human_ids, Iterable):  # human_ids=5, meant as a count
        raise _ids_refused(name, human_ids)
    return [str(unit) for unit in human_ids], None


def _ids_refused(name: str, value: Any, problem: str = ""):
    """The ConfigError for ids given in a form ``name`` does not take, naming the forms it does take."""
    from judgelab.errors import ConfigError

    text = str(value)
    count = text if text.isascii() and text.isdigit() and int(text) > 0 else "20"  # human_ids=5: meant as a count?
    forms = ("the ids (a list, or a file with one id per line) or jl.sample's draw" if name == "exclude" else
             f'"all" (every item\'s own human score is a label), the ids (a list, or a file with one id per line) '
             f"or jl.sample's draw (jl.sample(data, {count}) draws {count} to label)")
    return ConfigError(f"{name}={value!r}: {problem}give {forms}")


def _scale(scale: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if scale is None else (float(scale[0]), float(scale[1]))


def _named(value: Any) -> str | None:
    """A path as the report records it; data given as objects is recorded as given in Python."""
    from judgelab.data.given import is_path

    return str(value) if is_path(value) else None


def _named_files(value: Any) -> str | list[str] | None:
    """:func:`_named`, and several judges' files as the list of their paths (evaluate's report names each)."""
    from judgelab.data.given import is_path

    if isinstance(value, (list, tuple)) and value and all(is_path(one) for one in value):
        return [str(one) for one in value]
    return _named(value)


