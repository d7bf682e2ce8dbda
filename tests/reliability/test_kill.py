"""SIGKILL mid-run, then rerun: nothing lost, nothing judged or paid twice, the cache opens cleanly.

Two trials with kill points that surely land mid-run (after the first and after the fourth
judgment); bench/kill_trials.py runs 20 at random moments.
"""

from __future__ import annotations

import pytest

from tests.conftest import TEST_MODEL
from tests.reliability.kill import run_trial


def _after_lines(n: int):
    def kill_when(run_dir, _seconds) -> bool:
        path = run_dir / "judgments.jsonl"
        return path.exists() and path.read_bytes().count(b"\n") >= n
    return kill_when


@pytest.mark.timeout(900)
@pytest.mark.parametrize("lines", [1, 4])
def test_killed_judge_run_resumes_without_loss_or_double_payment(test_model_path, tmp_path, lines):
    trial = run_trial(tmp_path, n_items=8, model=TEST_MODEL, kill_when=_after_lines(lines))
    assert trial.killed and trial.lines_at_kill >= lines
    assert trial.integrity == "ok"
    assert trial.rerun_code == 0 and trial.ids_ok
    assert trial.cached_at_kill >= trial.lines_at_kill  # every written judgment's call was committed first
    assert trial.cached_at_kill + trial.rerun_calls == 8  # no finished call paid again, none lost
    assert trial.passed
