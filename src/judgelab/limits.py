"""Bounds on what the toolkit accepts: the bytes one input may bring in, and the range of each number.

**Bytes.** One bound on how many bytes a single input may bring into memory or send to a model.

It applies to a data file read whole (its size on disk; unpacked, for ``.gz``; uncompressed, for
Parquet), to one line of a streamed JSON-lines file, and to one request sent to a model. A 3 MB
gzip file of zeros unpacks to 3 GB, and an item of 200 MB would be sent whole to a server; both
are refused once they pass the bound, before the memory is taken or the request sent.

The default, 128 MiB, is above any model's context window (ten million tokens are about 40 MB of
text) and lets a data file be read whole into about a gigabyte of Python objects. Set the
environment variable ``JUDGELAB_MAX_INPUT_BYTES`` (bytes, or with a K, M or G suffix: ``512M``)
to raise or lower it; ``judge --stream`` reads larger JSON-lines files one line at a time. JSON is
bounded in values too, one per 8 bytes of the bound (``judgelab.files.JsonBudget``): 120 MB of ``{}``
would parse into 3 GB.

**Numbers.** The constrained types below are the one definition of each option's range: judge
configs declare their fields with them (pydantic refuses a bad value at load, naming file, line
and field) and the CLI checks its options against the same types (``judgelab.commands._numbers``).
Every float must be finite. The upper bounds stop values that would only hang or exhaust memory:
``samples: 100000000`` built that many cache keys before the first call.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Annotated, Any, Literal

from pydantic import Field

from judgelab.errors import ConfigError

MAX_INPUT_BYTES_VARIABLE = "JUDGELAB_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES = 128 * 2**20
_SIZE = re.compile(r"([0-9]+)\s*([KMG]?)(?:i?B)?", re.IGNORECASE)
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def max_input_bytes() -> int:
    """The bound in bytes: ``JUDGELAB_MAX_INPUT_BYTES`` when set, else 128 MiB (read on each call)."""
    raw = os.environ.get(MAX_INPUT_BYTES_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    match = _SIZE.fullmatch(raw)
    if match is None or int(match.group(1)) == 0:
        raise ConfigError(f"{MAX_INPUT_BYTES_VARIABLE}={raw!r}: give a positive number of bytes, e.g. 268435456 "
                          "or 256M")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def size_text(size: int) -> str:
    """``134217728`` -> ``128 MiB``; sizes that are no whole number of a unit stay in bytes."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size:,} bytes"


def over_limit(what: str, bound: int) -> str:
    """The refusal: ``{what} is over the 128 MiB limit ...`` with how to raise it."""
    return (f"{what} is over the {size_text(bound)} limit on one input ({MAX_INPUT_BYTES_VARIABLE}; "
            "set it higher to allow more)")


def checked_value(kind: str, value: Any, name: str) -> Any:
    """``value`` as the constrained type ``kind`` (a name below: ``"Coverage"``) lets it through, else an
    ArgumentError naming ``name`` (a flag for the CLI, an argument for Python), the value and the range."""
    from pydantic import TypeAdapter, ValidationError

    from judgelab.errors import ArgumentError, term

    try:
        return _adapter(kind, TypeAdapter).validate_python(value)
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]["msg"]
        raise ArgumentError(f"{term(name)} {value!r}: {problem[:1].lower()}{problem[1:]}") from None


def checked_arguments(**given: tuple[str, Any]) -> None:
    """Each ``name=(kind, value)`` through :func:`checked_value` (values of None are not given)."""
    for name, (kind, value) in given.items():
        if value is not None:
            checked_value(kind, value, name)


@functools.cache
def _adapter(kind: str, make):
    return make(globals()[kind])


MAX_SAMPLES = 100  # self-consistency: G-Eval draws 20
#: How many of something (items, workers, epochs, a batch): at least one.
Count = Annotated[int, Field(ge=1)]
#: Samples per request (self-consistency, ``n``).
Samples = Annotated[int, Field(ge=1, le=MAX_SAMPLES)]
#: Sampling temperature: 0 (greedy) to 2, the range of the OpenAI API and most servers.
Temperature = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
#: Tokens a reply may take.
MaxTokens = Annotated[int, Field(ge=1, le=1_000_000)]
#: A seed: numpy's generators and llama.cpp take unsigned 32-bit seeds (llama.cpp reads -1 as "random").
Seed = Annotated[int, Field(ge=0, le=2**32 - 1)]
#: A deadline in seconds (at most a day).
Seconds = Annotated[float, Field(gt=0, le=86_400, allow_inf_nan=False)]
#: A rate, a price per token, a learning rate, a regularisation strength, a step: above zero.
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
#: A price or a cost: zero or more.
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
#: A share: 0 to 1.
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
#: Bootstrap resamples (0: none).
Resamples = Annotated[int, Field(ge=0, le=100_000)]
#: ``--top-logprobs``: what OpenAI-compatible servers return at most (``Request.top_logprobs``).
TopLogprobs = Annotated[int, Field(ge=0, le=20)]
#: ``--confidence``: an interval's coverage.
Coverage = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]
#: ``--alpha``: an interval's error rate. Not below 1e-12: 1 - 1e-300 is 1 in floating point (a coverage
#: of 1 has no interval), and no error rate that small can be told from 0 by any data.
ErrorRate = Annotated[float, Field(ge=1e-12, lt=1, allow_inf_nan=False)]
#: ``--mix``: the uniform share of an active draw's probabilities.
Mix = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
#: An agreement with people a cascade guarantees: above chance for a/b, below certainty.
Agreement = Annotated[float, Field(gt=0.5, lt=1, allow_inf_nan=False)]
#: The share of groups held out for early stopping (``TrainedJudge.val_fraction``, ``--val-fraction``).
HeldOut = Annotated[float, Field(ge=0, lt=0.5, allow_inf_nan=False)]
#: A trained judge's encoder window in tokens (``TrainedJudge.max_length``, ``--max-length``).
EncoderWindow = Annotated[int, Field(ge=32, le=512)]
#: Encoder layers to fine-tune (0: the head only).
Layers = Annotated[int, Field(ge=0)]
#: ``--folds``: group-wise folds.
Folds = Annotated[int, Field(ge=2)]
#: ``icl-train --examples``: the numbers of in-context examples the prompts support.
ExampleCount = Literal[3, 5, 10]
#: ``--port``: a TCP port (0: any free one).
Port = Annotated[int, Field(ge=0, le=65_535)]
#: ``--concurrency``: calls in flight at once. vLLM batches up to 256 sequences by default; more only queues
#: at the server, and each call in flight may hold a reply of up to a 32nd of the input bound.
MAX_CONCURRENCY = 256
Concurrency = Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]
#: ``--threads``: the embedded model's llama.cpp threads (as ``JUDGELAB_THREADS``).
MAX_THREADS = 256
Threads = Annotated[int, Field(ge=1, le=MAX_THREADS)]
