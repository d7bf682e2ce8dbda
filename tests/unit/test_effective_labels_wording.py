"""Issue 41, item 11: the effective-labels line reads the right way round. "As narrow as human-only ones with
29 labels (30 labelled)" said the judge helped when it cost a label's worth; now that case says it did not."""

from __future__ import annotations

from judgelab.commands.evaluate import _effective_labels_line


def test_worth_more_than_was_labelled_says_how_much_more():
    line = _effective_labels_line(48.4, 30, "")
    assert "as narrow as human-only ones with [bold]48[/] labels where 30 were labelled" in line
    assert "worth about 18 more" in line


def test_worth_no_more_than_was_labelled_says_the_judge_did_not_narrow_them():
    for total in (29.2, 30.3):
        line = _effective_labels_line(total, 30, " (the 2 systems with t intervals)")
        assert line.startswith("the judge's verdicts did not narrow the t intervals (the 2 systems with t intervals)")
        assert "where 30 were labelled" not in line and "and 30 were labelled" in line
