"""Issue 41, item 11: the effective-labels line reads the right way round. "As narrow as human-only ones with
29 labels (30 labelled)" said the judge helped when it cost a label's worth; now that case says it did not."""

from __future__ import annotations

from judgelab.commands.evaluate import _effective_labels_line


def test_worth_more_than_was_labelled_says_how_much_more():
    line = _effective_labels_line(48.4, 30, 3, 3)
    assert "as narrow as human-only ones with [bold]48[/] labels where 30 were labelled" in line
    assert "worth about 18 more" in line


def test_worth_no_more_than_was_labelled_says_the_judge_did_not_narrow_them():
    for total in (29.2, 30.3):
        line = _effective_labels_line(total, 30, 3, 3)
        assert line.startswith("the judge's verdicts did not narrow the t intervals: the corrected ones")
        assert "where 30 were labelled" not in line and "and 30 were labelled" in line


def test_when_some_systems_have_no_t_interval_the_line_says_whose_labels_it_counts():
    """Issue 45, item 6: "... and 20 were labelled" when 30 were (10 of them on a system with a betting
    interval, which is not counted). The count stays over the systems with t intervals (the width ratio
    is what measures the judge's worth; a betting interval's width is set by the scale), and says so."""
    line = _effective_labels_line(20.4, 20, 2, 3)
    assert line == ("the judge's verdicts did not narrow the t intervals (2 of 3 systems have them): the corrected "
                    "ones are as narrow as human-only ones with 20 labels, and those 2 systems have 20")
    assert "were labelled" not in line
    more = _effective_labels_line(48.4, 30, 2, 3)
    assert "(2 of 3 systems have them) are as narrow as human-only ones with [bold]48[/] labels where those 2 " \
           "systems have 30: the judge's verdicts were worth about 18 more" in more


def test_the_cli_and_the_report_count_the_same_labels_those_of_the_systems_with_t_intervals():
    """Before, the CLI summed the labels of the t systems and systems.json (the report) every label: with one
    system on betting the two said "30 labelled" and "40 labelled" for the same total."""
    import numpy as np

    from judgelab.evaluate.system_estimates import SystemEstimates
    from judgelab.evaluate.systems import SystemsReport

    def estimates(name, se, methods):
        size = len(se)
        return SystemEstimates(estimator=name, systems=("a", "b", "c"), value=np.zeros(size),
                               ci=np.zeros((size, 2)), n_units=np.full(size, 40), n_labelled=np.array([15, 15, 10]),
                               reason=(None,) * size, confidence=0.95, cov=np.diag(np.square(se)),
                               info={"per_system": methods})

    report = SystemsReport(kind="items", aspect="x", measure=None, pairs={}, labels={"n_labelled": 40}, coverage={},
                           estimates={"judge": estimates("judge", [1, 1, 1], ("t",) * 3),
                                      "human": estimates("human", [2.0, 2.0, 2.0], ("t", "t", "betting")),
                                      "corrected": estimates("corrected", [1.0, 2.0, 1.0], ("t", "t", "betting"))})
    assert report.effective_labels() == {"a": 60.0, "b": 15.0, "c": None}
    assert report.effective_labels_total() == (75.0, 30.0, 2)
    stored = report.to_dict()["effective_labels"]
    assert (stored["total"], stored["labelled"], stored["systems_counted"]) == (75.0, 30.0, 2)


def test_the_report_reads_the_stored_counts_as_the_cli_does():
    from judgelab.report.systems_view import _effective

    stored = {"per_system": {"a": 60.0, "b": 15.0, "c": None}, "total": 75.0, "labelled": 30.0, "systems_counted": 2}
    assert _effective(stored, 3) == {**stored, "narrowed": True, "where": " (2 of 3 systems have them)",
                                     "given": "those 2 systems have 30"}
    assert _effective(stored | {"total": 29.6}, 2)["narrowed"] is False
    assert _effective(stored | {"total": 29.6}, 2)["where"] == ""
    assert _effective(stored | {"total": 29.6}, 2)["given"] == "30 were labelled"
    assert _effective({"per_system": {"a": None}, "total": None, "labelled": None, "systems_counted": 0}, 1) is None
