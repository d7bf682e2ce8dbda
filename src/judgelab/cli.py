"""The `judgelab` command. Thin on purpose: parse options, call the library, print.

User errors (``JudgelabError``) print one clear line and exit 2; tracebacks only with --debug.
Whatever is printed is redacted first (``judgelab.redact``): no key or password reaches the terminal.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
import traceback
import warnings
from typing import NoReturn

import typer
from rich.markup import escape

from judgelab.commands import BareFlagsGroup
from judgelab.commands._common import console, err_console
from judgelab.errors import JudgelabError, SourceNote, Terminated, bounded, name_flags
from judgelab.redact import redact

app = typer.Typer(
    cls=BareFlagsGroup,
    name="judgelab",
    help="Build, tune and audit LLM judges.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
models_app = typer.Typer(cls=BareFlagsGroup, help="List and install the embedded models.", no_args_is_help=True)
app.add_typer(models_app, name="models")

_state: dict = {"debug": False, "showwarning": warnings.showwarning}


def _version(value: bool) -> None:
    if value:
        import judgelab

        console.print(f"judgelab {judgelab.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
) -> None:
    _state["debug"] = debug


# Commands live in small modules under judgelab.commands so that this file stays an index.
from judgelab.commands import register_all  # noqa: E402

register_all(app, models_app)


def _is_usage_error(exc: Exception) -> bool:
    """A click usage error (missing option, bad value): it prints itself and has its exit code (2).
    Checked by shape: recent typer (0.29 here) raises its vendored click's errors (typer._click), which are
    not ``click.ClickException``, and older typer raises click's."""
    return callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: object = None, line: str | None = None) -> None:
    """A warning as one line for the user: Python's default adds the file and the source line that
    raised it, which says nothing to someone running a command (``--debug`` keeps them)."""
    if _state["debug"]:
        _state["showwarning"](message, category, filename, lineno, file, line)
    elif isinstance(message, SourceNote):  # a reader's note on a tool's file: printed as the commands always did
        err_console.print(f"[yellow]{message.source}[/]: {escape(message.note)}", soft_wrap=True)
    else:
        err_console.print(f"[yellow]warning:[/] {escape(str(message))}", highlight=False, soft_wrap=True)


def main() -> None:
    # Run folders, reports, configs and the cache hold the user's data: owner-only, whoever writes them.
    os.umask(0o077)
    _state["showwarning"], warnings.showwarning = warnings.showwarning, _show_warning
    _state.pop("signal_exit", None)
    in_main_thread = threading.current_thread() is threading.main_thread()  # where Python runs signal handlers
    handled = _stop_on_signals() if in_main_thread else {}
    naming = name_flags(True)  # library messages name --flags, not Python arguments (errors.term)
    try:
        # entering it resets which warnings were shown: each command run in one process shows its own (tests)
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            _main()
    finally:  # main() called in a process that goes on (tests) leaves warnings and signals as they were
        name_flags(naming)
        warnings.showwarning = _state["showwarning"]
        for signum, before in handled.items():
            signal.signal(signum, before)


#: Signals that ask a process to end, by default killing it on the spot: `kill` (TERM), a closed terminal
#: or SSH session (HUP), Ctrl-\ (QUIT), the user signals, timers and resource limits. Each stops a run as
#: cleanly as Ctrl-C. Not the faults (SEGV, BUS, FPE, ILL, ABRT): those are no request.
STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF",
                "SIGXCPU", "SIGXFSZ", "SIGPWR")


def _stop_on_signals() -> dict[int, object]:
    """Install ``_terminate`` for each stop signal left at its default (one the process started ignoring,
    as ``nohup`` ignores SIGHUP, stays ignored; one something else handles stays its); the handlers replaced."""
    replaced = {}
    for name in STOP_SIGNALS:
        signum = getattr(signal, name, None)  # not every platform has every signal
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
            replaced[signum] = signal.signal(signum, _terminate)
    return replaced


def _terminate(signum: int, frame: object) -> None:
    _state["signal_exit"] = 128 + signum  # the shell's code for a death by this signal; click says 130 (Ctrl-C)
    raise Terminated(signum)


def _main() -> None:
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:  # click returns (not raises) 130 after Ctrl-C, and after a stop signal
            sys.exit(_state.get("signal_exit", code) if code == 130 else code)
    except JudgelabError as exc:
        if _state["debug"]:
            _print_traceback(exc)
        # soft_wrap: never break the message inside a path, so file:line can be copied and grepped
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except (typer.Exit, SystemExit) as exc:
        code = getattr(exc, "exit_code", getattr(exc, "code", 0))
        sys.exit(code or 0)
    except typer.Abort:  # click's word for Ctrl-C (or a stop signal: errors.Terminated) outside a run
        err_console.print("aborted")
        sys.exit(_state.get("signal_exit", 130))
    except OSError as exc:
        if (message := _place_refused(exc)) is None:
            _internal_error(exc)
        if _state["debug"]:
            _print_traceback(exc)
        err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:
        if _is_usage_error(exc):
            exc.show()
            sys.exit(exc.exit_code)
        _internal_error(exc)


def _internal_error(exc: BaseException) -> NoReturn:
    if _state["debug"]:
        _print_traceback(exc)
    hint = "" if _state["debug"] else " (rerun with --debug)"
    err_console.print(f"[bold red]internal error:[/] {escape(bounded(redact(f'{type(exc).__name__}: {exc}')))}{hint}",
                      highlight=False, soft_wrap=True)
    sys.exit(1)


def _place_refused(exc: OSError) -> str | None:
    """A file a command writes that its place refuses (a full or read-only disk, no permission) is the
    user's to fix, not a bug: one line naming the file (and the disk), or None for any other OSError."""
    from judgelab.files import DISK_FULL, unwritable

    if exc.filename is None:
        return None
    if exc.errno in (*DISK_FULL, errno.EROFS):
        return str(unwritable(exc.filename, exc))
    if exc.errno in (errno.EACCES, errno.EPERM):
        return redact(f"{exc.filename}: permission denied")
    return None


def _print_traceback(exc: BaseException) -> None:
    """The --debug traceback, redacted: the chained exceptions hold what servers sent back, echoed keys included."""
    sys.stderr.write(redact("".join(traceback.format_exception(exc))))
    sys.stderr.flush()


if __name__ == "__main__":
    main()
