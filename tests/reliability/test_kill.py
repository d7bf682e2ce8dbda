"""SIGKILL mid-run, then rerun: nothing lost, nothing judged or paid twice, the cache opens cleanly.

Two `judgelab judge` trials with kill points that surely land mid-run (after the first and after
the fourth judgment) and one `judgelab optimize` trial killed after its first evaluation;
bench/kill_trials.py runs 20 at random moments.
"""

from __future__ import annotations

import pytest

from tests.conftest import TEST_MODEL
from tests.reliability.kill import Reference, run_optimize_trial, run_trial


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


def _after_evaluations(n: int):
    def kill_when(run_dir, _seconds) -> bool:
        path = run_dir / "trajectory.jsonl"
        return path.exists() and path.read_bytes().count(b"\n") >= n
    return kill_when


@pytest.mark.timeout(900)  # generous: a shared, loaded machine runs it many times slower
def test_killed_optimize_run_resumes_its_trajectory_without_loss_or_double_payment(test_model_path, tmp_path):
    """HPSS, 3 evaluations of 3 items: an uninterrupted run, then a run killed after its first evaluation and
    rerun. The rerun must give the same trajectory (each step once, in order, the same configs), the same
    best.yaml, and pay exactly the calls the killed run had not committed."""
    clean = run_optimize_trial(tmp_path / "clean", 3, TEST_MODEL, kill_when=lambda *_: False)
    assert not clean.killed and clean.rerun_calls == 0  # a rerun of a finished search replays it all
    reference = Reference.of(tmp_path / "clean")
    assert len(reference.digests) == 3 and len(set(reference.digests)) == 3
    assert reference.distinct_requests == 9  # 3 configs x 3 items, each call paid once

    trial = run_optimize_trial(tmp_path / "killed", 3, TEST_MODEL, kill_when=_after_evaluations(1),
                               reference=reference)
    assert trial.killed and trial.lines_at_kill >= 1
    assert trial.integrity == "ok" and trial.rerun_code == 0
    assert trial.steps == [1, 2, 3] and trial.digests == reference.digests
    assert trial.best_yaml == reference.best_yaml
    assert trial.cached_at_kill >= 3 * trial.lines_at_kill  # a recorded evaluation's calls were committed first
    assert trial.rerun_calls == trial.rerun_calls_recorded  # the client and the trajectory agree
    assert trial.cached_at_kill + trial.rerun_calls == 9 == trial.cached_after  # none paid twice, none lost
    assert trial.passed
