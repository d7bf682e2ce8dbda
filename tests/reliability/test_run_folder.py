"""Who may run into a run folder, and what a user reads when a run is resumed.

Two identical `judgelab judge` processes started together into one --out: the folder's lock lets
one judge while the other is refused with a clear message, so each call is paid once (without it
each process paid for every item). A rerun after a crash says how many items it resumed, and the
warning about the line the crash cut is one line, without Python's file and source line.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from judgelab.data.io import save_items
from judgelab.llm.cache import CompletionCache
from tests.conftest import TEST_MODEL
from tests.reliability.kill import judge_command
from tests.reliability.scenario import judged_ids, make_items


@pytest.mark.timeout(900)
def test_two_identical_runs_into_one_folder_pay_each_call_once(test_model_path, tmp_path):
    items = make_items(8)
    command = judge_command(save_items(items, tmp_path / "items.jsonl"), tmp_path, TEST_MODEL)
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    outputs = [process.communicate(timeout=600) for process in processes]
    paid = []
    for process, (out, err) in zip(processes, outputs, strict=True):
        if process.returncode == 2:  # refused at once: it judged nothing and paid nothing
            assert "in use by another judgelab run" in err and "Traceback" not in err, err
        else:  # or it came after the other had finished, and resumed everything
            assert process.returncode == 0, err
            paid.append(int(re.search(r"(\d+) paid calls", out).group(1)))
    assert sum(paid) == len(items)  # each call paid once
    assert sorted(judged_ids(tmp_path / "run")) == sorted(item.id for item in items)
    with CompletionCache(tmp_path / "cache.sqlite") as cache:
        assert len(cache) == len(items)


@pytest.mark.timeout(900)
def test_a_rerun_says_what_it_resumed_and_a_warning_is_one_line(test_model_path, tmp_path):
    items = make_items(3)
    command = judge_command(save_items(items, tmp_path / "items.jsonl"), tmp_path, TEST_MODEL)
    assert subprocess.run(command, capture_output=True, text=True, timeout=600).returncode == 0
    judgments = tmp_path / "run" / "judgments.jsonl"
    with judgments.open("ab") as handle:
        handle.write(b'{"item_id": "it-00')  # what a kill in the middle of a write leaves
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "3 resumed from the run folder, 0 judged now" in " ".join(again.stdout.split())
    warned = [line for line in again.stderr.splitlines() if "dropped a partial last line" in line]
    assert warned == [f"warning: {judgments}: dropped a partial last line (18 bytes), left by an interrupted write"]
    assert "warnings.warn" not in again.stderr and "DataWarning" not in again.stderr and ".py:" not in again.stderr
