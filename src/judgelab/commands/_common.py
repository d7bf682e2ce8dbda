"""Pieces several commands share: the consoles, building the client from the model options, printing a
run, --human. Commands print through ``console`` / ``err_console`` here (``cli.py`` imports them from
here too), so no command imports the ``cli`` module that registers it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from judgelab.errors import ConfigError
from judgelab.printable import printable
from judgelab.tools import SOURCES

if TYPE_CHECKING:  # loaded by the commands that run: `judgelab --help` loads no data, model or runner code
    from judgelab.data.item import Item
    from judgelab.llm.client import Client
    from judgelab.runner.run import RunResult

HUMAN_HELP = ("Human labels to use instead of the items' scores (annotate's labels.jsonl, or any file with "
              "item_id and value/score/label); the mean over annotators per item.")


class DataConsole(Console):
    """A console that prints data as written: no ``:emoji:`` shortcodes (a file named ``:thumbs_up:.jsonl``
    is not "👍.jsonl", a system named ``:white_check_mark: PASS`` no check mark), and control characters
    from data (a system named ``\\x1b[2J``) shown as escapes instead of moving the terminal's cursor.
    Every string printed, table cells and titles included, goes through ``render_str``. Nor does it highlight:
    rich's highlighter runs regular expressions over every line, and on a 200,000-character system name one
    of them backtracked for more than ten minutes (and it colours numbers inside names as if they were data)."""

    def __init__(self, **options: Any):
        super().__init__(emoji=False, highlight=False, **options)

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(printable(text, keep="\n\t"), **options)


console = DataConsole()
err_console = DataConsole(stderr=True)
# 256: judgelab.limits.MAX_CONCURRENCY, written out so that --help loads no pydantic (a test holds them equal)
CONCURRENCY_HELP = ("Calls to a server in flight at once, 1 to 256 (default 8; the embedded model "
                    "answers one at a time).")
# 256: judgelab.limits.MAX_THREADS, written out likewise
THREADS_HELP = ("Threads for the embedded model, 1 to 256 (default: JUDGELAB_THREADS, else the cores other "
                "processes leave free when the model loads: on a busy machine fewer threads wait less for each "
                "other).")
TIMEOUT_HELP = ("Seconds one request attempt to a server may take, connecting to the last byte of the reply "
                "(default 120); past it the attempt is retried.")


def client_from_options(*args: Any, **kwargs: Any) -> Client:
    """:func:`judgelab.llm.resolve.client_from_options` (its arguments), imported only when a command builds its
    client: importing judgelab.llm loads httpx and the backends, which ``--help`` should not wait for."""
    from judgelab.llm.resolve import client_from_options as build

    return build(*args, **kwargs)


@contextmanager
def notes_printed(category: type[Warning]) -> Iterator[None]:
    """Warnings of ``category`` (what a verb chose for its caller: ``judgelab.api.verbs.Note``) printed as plain
    lines on stderr, not as ``warning:`` lines; every other warning shown as the command line shows it."""
    import warnings

    from rich.markup import escape

    shown = warnings.showwarning

    def show(message: Warning | str, kind: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(kind, category):
            err_console.print(escape(str(message)), highlight=False, soft_wrap=True)
        else:
            shown(message, kind, *args, **kwargs)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def print_run(console: Console, result: RunResult) -> None:
    counts = result.counts
    resumed = result.usage.get("resumed_items") or 0
    rejudged = result.usage.get("rejudged_changed_items") or 0
    console.print(f"[bold]{len(result.judgments)} judgments[/]: {counts['ok']} ok, "
                  f"{counts['unparsable']} unparsable, {counts['error']} errors"
                  + (f" ({resumed} resumed from the run folder, {len(result.judgments) - resumed} judged now"
                     + (f", {rejudged} of them again because the item changed" if rejudged else "") + ")"
                     if resumed or rejudged else ""))
    usage = result.usage
    cost = "unknown" if usage.get("cost_usd") is None else f"${usage['cost_usd']:.4f}"
    console.print(f"{usage['calls']} paid calls, {usage['cache_hits']} cache hits, "
                  f"{usage['prompt_tokens']}+{usage['completion_tokens']} tokens, cost {cost}, "
                  f"{usage['wall_s']:.1f}s, {usage['retries']} retries")
    if result.metrics and "unavailable" in result.metrics:
        console.print(f"no agreement figures: {result.metrics['unavailable']}")
    elif result.metrics:
        console.print(metrics_table(result.metrics))
    if result.folder:
        console.print(f"run folder: {result.folder}")


def whole_number_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]],
                       text: Sequence[str] = ()) -> Table:
    """A table whose numbers stay whole in a narrow (80-column) terminal: every column but those
    named in ``text`` is as wide as its widest cell and never cut; the ``text`` columns (names,
    notes) wrap to give up the width. Rich alone shrinks every column, numbers included ("0.45…").
    No vertical rules: the two characters each costs are better spent on the names."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for k, name in enumerate(columns):
        if name in text:
            table.add_column(name, overflow="fold")
        else:
            width = max([len(row[k]) for row in rows] or [len(name)])
            table.add_column(name, no_wrap=True, min_width=width, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def statistic_label(name: str, estimate: dict[str, Any]) -> str:
    """A statistic's name with the rule it counts by, when it has one ("accuracy (ties count half)")."""
    return f"{name} ({estimate['rule']})" if estimate.get("rule") else name


def metrics_table(metrics: dict[str, Any]) -> Table:
    """The estimates of a meta-evaluation (correlation levels, pairwise accuracy, ...) as one table."""
    rows = []
    for section in ("dataset", "group", "system", "pairwise", "pairwise_agreement", "agreement"):
        block = metrics.get(section)
        estimates = {"": block} if _is_estimate(block) else (block or {})
        for statistic, estimate in estimates.items():
            if _is_estimate(estimate):
                rows.append((section, statistic_label(statistic, estimate), *_estimate_cells(estimate)))
    return whole_number_table("agreement with humans", ("section", "statistic", "value", "95% CI", "n"), rows,
                              text=("section", "statistic"))


def _is_estimate(value: Any) -> bool:
    return isinstance(value, dict) and "value" in value


def _estimate_cells(estimate: dict[str, Any]) -> tuple[str, str, str]:
    ci = estimate.get("ci") or [None, None]
    ci_text = "—" if ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    value = estimate["value"]
    return ("—" if value is None else f"{value:.3f}"), ci_text, str(estimate.get("n", ""))


def human_labelled(items: list[Item], human: Path | None, aspect: str | None, *,
                   labelled_only: bool) -> tuple[list[Item], str | None]:
    """``--human LABELS``: the items with the file's labels as their human values for the aspect
    (``--aspect``, else the one the file names), and that aspect. ``labelled_only`` drops the items
    nobody labelled (what learning and searching need); without ``human``, the items as given."""
    if human is None:
        return items, aspect
    from judgelab.data.labels import labels_aspect, load_labels, with_human_labels
    from judgelab.metrics.align import human_value

    labels = load_labels(human)
    aspect = labels_aspect(labels, aspect)
    relabelled = with_human_labels(items, labels, aspect)
    if labelled_only:
        relabelled = [item for item in relabelled if human_value(item, aspect) is not None]
    return relabelled, aspect


FROM_HELP = (f"The tool that wrote --data: {', '.join(SOURCES)} (its items and judgments are read from it; "
             "docs/sources.md). Detected from the file when --judgments is not given.")
PARTIAL_HELP = ("Read a run that did not finish (an Inspect log stopped mid-way, or ended in an error) as far as it "
                "got; without it such a run is refused, saying how many samples it holds.")


def read_inputs(data: Path, judgments: Path | None, source: str | None, *, field: str | None = None,
                partial: bool = False):
    """The items and the judge's verdicts of --data, --judgments and --from, for every command that reads
    them (:func:`judgelab.data.sources.read_inputs`). What a reader left out or kept without a value goes to stderr."""
    from rich.markup import escape

    from judgelab.data.sources import read_inputs as read

    inputs = read(data, judgments, source, field=field, partial=partial)
    for note in inputs.notes:  # a path may hold [brackets]: printed as written, not as markup
        err_console.print(f"[yellow]{inputs.source}[/]: {escape(note)}", soft_wrap=True)
    return inputs.items, inputs.judgments


def key_values(pairs: list[str], flag: str, form: str) -> list[tuple[str, str]]:
    """``KEY=VALUE`` texts split at the first ``=`` (a pair without a key or ``=`` is named)."""
    split = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} {pair!r}: write {form}")
        split.append((key.strip(), value))
    return split
