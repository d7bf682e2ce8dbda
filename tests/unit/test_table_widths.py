"""Tables that read at any width (issue 39, item 5): at 60 to 200 columns no system name vanishes or
breaks mid-word. Each name appears whole in the table, or shortened there (``meta-lla…Instruct``) and
whole in the legend below it; numbers are never cut; the columns left out are named."""

from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from judgelab.commands._tables import ELLIPSIS, named_table, shortened
from judgelab.commands.evaluate import LEFT_OUT_FIRST, systems_tables
from judgelab.data import Item, Judgment
from judgelab.evaluate import evaluate

WIDTHS = (60, 80, 100, 120, 140, 200)
#: Names as leaderboards carry them: a hub id, a dated version, a slash, a one-letter one, two that share
#: their start and end (they must not shorten to the same text).
NAMES = ("gpt-4-1106-preview", "meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct",
         "Mistral-7B-Instruct-v0.2/eval_prompt_1", "claude-3-opus-20240229", "a", "Nous-Hermes-2-Mixtral-8x7B-DPO",
         "qwen2.5-coder-1.5b")


@pytest.fixture(scope="module")
def pointwise():
    rng = np.random.default_rng(0)
    systems = np.repeat(np.arange(len(NAMES)), 30)
    truth = np.linspace(1, 4, len(NAMES))
    human = np.clip(truth[systems] + rng.normal(0, .8, len(systems)), 1, 5)
    judge = np.clip(truth[systems] + rng.normal(0, 1., len(systems)), 1, 5)
    items = [Item(id=f"i{k}", system_id=NAMES[s], group_id=f"g{k % 30}", output="x", scores={"q": float(h)},
                  scale=(1, 5)) for k, (s, h) in enumerate(zip(systems, human, strict=True))]
    judgments = [Judgment(item_id=f"i{k}", score=float(v)) for k, v in enumerate(judge)]
    labelled = [f"i{k}" for s in range(len(NAMES)) for k in rng.choice(np.flatnonzero(systems == s), 12, replace=False)]
    return evaluate(items, judgments, aspect="q", human_ids=labelled, n_resamples=30)


@pytest.fixture(scope="module")
def comparisons():
    """Comparisons between the systems (win probability; judge, human, corrected, shrunk and the rank):
    evaluate's widest table, six columns."""
    rng = np.random.default_rng(1)
    strength = np.linspace(-1, 1, len(NAMES))
    items, judgments = [], []
    for k in range(1200):
        a, b = rng.choice(len(NAMES), 2, replace=False)
        win = rng.random() < 1 / (1 + np.exp(strength[b] - strength[a]))
        items.append(Item(id=f"c{k}", group_id=f"q{k}", system_a=NAMES[a], system_b=NAMES[b],
                          label="a" if win else "b"))
        judgments.append(Judgment(item_id=f"c{k}", label="a" if (rng.random() < 0.8) == win else "b"))
    return evaluate(items, judgments, human_ids="all", n_resamples=30)


def shown_at(report, width: int) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the console
    for part in systems_tables(report, width=width):
        console.print(part, soft_wrap=isinstance(part, str))
    return console.export_text().splitlines()


def assert_every_name_reads(lines: list[str], names, width: int) -> None:
    rows = [line for line in lines if line.startswith("│")]
    legend = dict(line.strip().split(" = ", 1) for line in lines if line.startswith("  ") and " = " in line)
    table_names = [row.split("│")[1].strip() for row in rows]
    assert len(table_names) == len(names), lines
    for name in names:
        if name in table_names:
            continue
        short = [short for short, full in legend.items() if full == name]
        assert short and short[0] in table_names, (name, width, lines)  # shortened in the table, whole below it
    assert all(len(row) <= width for row in rows), (width, lines)
    for row in rows:  # numbers whole: an ellipsis only inside a shortened name
        assert ELLIPSIS not in "│".join(row.split("│")[2:]), row


@pytest.mark.parametrize("width", WIDTHS)
def test_every_system_name_reads_whole_or_in_the_legend(pointwise, width):
    lines = shown_at(pointwise, width)
    assert_every_name_reads(lines, NAMES, width)
    header = next(line for line in lines if line.startswith("┃ system"))
    assert "corrected" in header or "shrunk" in header  # the estimate the table is ranked by stays
    if width >= 140:
        assert not any("left out" in line or "shortened" in line for line in lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_comparisons_table_keeps_names_and_says_what_it_left_out(comparisons, width):
    lines = shown_at(comparisons, width)
    assert_every_name_reads(lines, NAMES, width)
    header = next(line for line in lines if line.startswith("┃ system"))
    left_out = next((line for line in lines if line.startswith("left out at")), "")
    named = [name for name in LEFT_OUT_FIRST if name in left_out.split(":")[-1]]
    ranked_by = next(line for line in lines if "Systems, ranked by the" in line).split("ranked by the ")[1].split()[0]
    assert f" {ranked_by} " in header and " rank " in header  # the estimate ranked by, and the rank, always stay
    assert named == [name for name in LEFT_OUT_FIRST if f" {name} " not in header]
    if width <= 80:  # six columns cannot all fit: judge-only goes first
        assert "judge" in named
    if width >= 140:
        assert not left_out


def test_names_that_share_their_ends_shorten_to_distinct_texts():
    names = ["meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct", "short"]
    shown = shortened(names, 12)
    assert shown[2] == "short" and len(set(shown)) == 3 and all(len(s) <= 12 for s in shown[:2])
    assert shown[0].startswith("meta-") and shown[0].endswith("truct") and ELLIPSIS in shown[0]


def test_a_name_wider_than_the_terminal_still_has_its_row_and_legend():
    fitted = named_table(["x" * 150, "b"], [("value", ["1.000", "2.000"])], 60)
    console = Console(width=60, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(fitted.table)
    for line in fitted.notes(60):
        console.print(line, soft_wrap=True)
    lines = console.export_text().splitlines()
    assert_every_name_reads(lines, ["x" * 150, "b"], 60)
