"""Who may run into a run folder, and what a user reads when a run is resumed.

Two identical `judgelab judge` processes started together into one --out: the folder's lock lets
one judge while the other is refused with a clear message, so each call is paid once (without it
each process paid for every item). A rerun after a crash says how many items it resumed, and the
warning about the line the crash cut is one line, without Python's file and source line. A start
that fails before judging anything leaves an existing folder exactly as it was; a `.run.lock` that is
a symbolic link is refused, never followed; a stream's duplicate id is refused before any call.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from judgelab.data.io import save_items
from judgelab.llm.cache import CompletionCache
from tests.conftest import TEST_MODEL
from tests.e2e.cli import run_main_in_process
from tests.reliability.hostile_server import HostileServer
from tests.reliability.kill import CRITERIA, judge_command
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


# ---- a failed start leaves the folder as it was; the lock file is never a link ---------------------------------------
def _judge(capsys, data, server, folder, *options):
    return run_main_in_process(capsys, "judge", "--data", data, "--aspect", "coherence", "--model", server.base_url,
                               "--model-name", "m", "--criteria", CRITERIA, "--family", "summarisation",
                               "--strategy", "scale=5,cot=none", "--out", folder,
                               "--cache-path", folder.parent / "cache.sqlite", *options)


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry of the folder: a file's bytes, a link's target."""
    return {path.name: os.readlink(path) if path.is_symlink() else path.read_bytes() for path in folder.iterdir()}


@pytest.mark.parametrize("earlier", ["a finished run", "an empty folder"])
def test_a_failed_start_into_an_existing_folder_leaves_it_as_it_was(tmp_path, capsys, earlier):
    """The server refuses every call (401) before this run judges anything: the folder keeps its own
    run.json (before: overwritten with `failed`) and gains no judgments.jsonl or .run.lock."""
    items = make_items(3)
    folder = tmp_path / "run"
    with HostileServer("ok") as server:
        if earlier == "a finished run":
            code, err = _judge(capsys, save_items(items[:2], tmp_path / "first.jsonl"), server, folder)
            assert code == 0, err
            assert json.loads((folder / "run.json").read_text())["status"] == "finished"
        else:
            folder.mkdir()
        before = _snapshot(folder)
        server.mode, server.error_status = "echo_error", 401  # the key is refused: the run stops at once
        code, err = _judge(capsys, save_items(items, tmp_path / "items.jsonl"), server, folder)
    assert code == 2 and "HTTP 401" in err and "Traceback" not in err, err
    assert _snapshot(folder) == before


def test_a_planted_lock_link_is_refused_with_one_line_and_never_followed(tmp_path, capsys):
    folder, target = tmp_path / "run", tmp_path / "elsewhere.txt"
    folder.mkdir()
    (folder / ".run.lock").symlink_to(target)
    with HostileServer("ok") as server:
        code, err = _judge(capsys, save_items(make_items(2), tmp_path / "items.jsonl"), server, folder)
    assert code == 2 and server.posts == 0, err
    assert f"error: {folder / '.run.lock'} is a symbolic link, which judgelab does not follow" in err
    assert "internal error" not in err and len(err.strip().splitlines()) == 1
    assert not target.exists() and _snapshot(folder) == {".run.lock": str(target)}  # nothing created or written


# ---- a duplicate id in a stream is refused before any call --------------------------------------------------------
def test_a_duplicate_id_in_a_later_chunk_of_a_stream_is_refused_before_any_call(tmp_path, capsys):
    """Chunks of 2, the first id again on line 5: refused naming both lines before anything is judged
    (before: the first two chunks were judged and paid, then the run stopped)."""
    lines = save_items(make_items(4), tmp_path / "items.jsonl").read_text().splitlines()
    data = tmp_path / "stream.jsonl"
    data.write_text("\n".join([*lines, lines[0]]) + "\n")
    with HostileServer("ok") as server:
        code, err = _judge(capsys, data, server, tmp_path / "run", "--stream", "--chunk-size", "2")
    assert code == 2 and "Traceback" not in err, err
    assert f"{data}:5: field 'id': duplicate id 'it-0000' (first used on line 1)" in " ".join(err.split())
    assert server.posts == 0 and not (tmp_path / "run").exists()  # nothing paid, nothing written


def test_a_run_refused_by_the_lock_leaves_the_folder_it_did_not_claim(tmp_path):
    # both runs see the folder missing; the second is refused by the first's lock and must not remove it
    from judgelab.errors import ConfigError
    from judgelab.runner.run import RunFolder

    header = {"judge_digest": "d", "backend": "b"}
    first, second = RunFolder(tmp_path / "run", header), RunFolder(tmp_path / "run", header)
    assert first.created and second.created
    with first:
        first.resume(None)
        with pytest.raises(ConfigError, match="in use by another judgelab run"), second:
            second.resume(None)
        assert (tmp_path / "run" / "run.json").exists()
