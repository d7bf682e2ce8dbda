"""Errors a user can act on. The CLI prints them without a traceback and exits with code 2."""

from __future__ import annotations

from pathlib import Path

from judgelab.redact import redact

#: The most characters an error message keeps. Messages quote what they refuse (a value, a list of names),
#: and data can be any size: a 1 MB verdict made a 1,000,104-character error line.
MAX_MESSAGE = 2_000
_HEAD, _TAIL = 1_400, 500  # kept around the cut: the start names the file, line and field; the end what to do


#: How parameters are named in messages: as Python arguments (``human_ids``), or, while the command line runs
#: a command (``judgelab.cli.main``), as its flags (``--human-ids``). One message serves both fronts.
_naming = {"flags": False}
#: Python arguments whose flag is not ``--`` followed by the name with dashes.
FLAG_NAMES = {"data": "--data", "judgments": "--judgments", "source": "--from", "as_json": "--json", "levels": "--level",
              "judges": "--judge", "judge_costs": "--judge-cost", "floors": "--floor", "probes": "--probe"}


def term(name: str, flag: str | None = None) -> str:
    """The parameter ``name`` (as a Python argument) the way the caller knows it: ``human_ids`` in Python,
    ``--human-ids`` on the command line. ``flag``: its flag where another command's flag has that name
    (``budget`` is ``--budget`` to ``sample`` but ``--spend`` to a spend plan)."""
    if not _naming["flags"] or name.startswith("-"):  # a flag already
        return name
    return flag or FLAG_NAMES.get(name) or "--" + name.replace("_", "-")


def flags_named() -> bool:
    """Whether messages name parameters as command-line flags now (what a Ray worker is told to do the same)."""
    return _naming["flags"]


def name_flags(flags: bool) -> bool:
    """Name parameters as command-line flags (True) or Python arguments; returns the setting it replaced."""
    before, _naming["flags"] = _naming["flags"], flags
    return before


class JudgelabError(Exception):
    """Base class: a problem with the user's input or environment, not a bug.

    The message is redacted and bounded as it is made: an error is what a judgment records, a report
    shows and the CLI prints, so a key or password a server echoes goes no further (``judgelab.redact``),
    and a message past ``MAX_MESSAGE`` characters loses its middle (after the redaction: no cut can
    expose part of a secret).
    """

    exit_code = 2

    def __init__(self, *args: object):
        super().__init__(*(bounded(redact(arg)) if isinstance(arg, str) else arg for arg in args))


class DataError(JudgelabError):
    """Bad input data, located as precisely as we can: file, line (1-based), field."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None,
                 field: str | None = None):
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        # no placeholder for a file there is none of (items built in Python): the field and the detail
        where = [self.path if self.line is None else f"{self.path}:{self.line}" if self.path else f"line {self.line}"]
        if self.field:
            where.append(f"field '{self.field}'")
        return ": ".join([part for part in where if part] + [self.detail])


class ConfigError(JudgelabError):
    """An option, config file or model string that cannot be used."""


class ArgumentError(ConfigError, ValueError):
    """A number out of its range (``judgelab.limits``), named as the caller knows it: a flag on the command
    line (``--confidence``), an argument in Python (``confidence``). A ValueError, as Python callers expect of
    a bad argument, and a ConfigError, so the CLI prints its one line and exits 2."""


class BackendError(JudgelabError):
    """A model backend that cannot be reached after all retries: the run stops (a rerun resumes)."""


class RequestError(JudgelabError):
    """One request the backend cannot serve (too long for the context, rejected as invalid).

    Judges record it as that item's error and go on with the others.
    """


class CapabilityError(JudgelabError):
    """The request needs something the chosen backend cannot do (e.g. logprobs)."""


class StorageError(JudgelabError):
    """A file judgelab writes cannot be written: its disk is full, read-only, or closed to this user.
    Made by ``judgelab.files.unwritable``, which names the file and the disk."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, SIGHUP or another signal asking the process to end, handled like Ctrl-C (the CLI raises it
    from its signal handler): the run stops the same clean way (calls already sent finish into the cache,
    run.json says ``interrupted``); exit code 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP)."""

    def __init__(self, signum: int = 15):
        super().__init__()
        self.signum = signum
        self.exit_code = 128 + signum


def bounded(text: str) -> str:
    """``text``, or its start and end with what was left out between them when longer than ``MAX_MESSAGE``."""
    if len(text) <= MAX_MESSAGE:
        return text
    return f"{text[:_HEAD]} … [{len(text) - _HEAD - _TAIL:,} characters left out] … {text[-_TAIL:]}"


class DataWarning(UserWarning):
    """Data was repaired or something was dropped on read (e.g. a crash-truncated last line). Its message is
    redacted and bounded as an error's is: the CLI prints it as one ``warning:`` line."""

    def __init__(self, *args: object):
        super().__init__(*(bounded(redact(arg)) if isinstance(arg, str) else arg for arg in args))


class SourceNote(DataWarning):
    """What a reader of another tool's output left out or kept without a value (``source``: the tool). The
    CLI prints it as the tool's name and the note, as the reader's own account of the file, not a warning."""

    def __init__(self, source: str | None, note: str):
        super().__init__(f"{source}: {note}")
        self.source, self.note = source, str(self.args[0]).partition(": ")[2]
