"""`judgelab judge` when a disk fills up mid-run (issue 50, item 17), on a real 5 MB tmpfs (root only;
skipped elsewhere) against a ``HostileServer`` that counts every request: what the user pays for.

Before: with the run folder's disk full, an internal error (exit 1), run.json left `running`, and calls
in flight cancelled and paid again (42 paid for 40 items); with the cache's disk full, the first reply
that could not be cached stopped everything, no run folder was kept, and the rerun paid again for all
(56 paid for 40). Now: exit 2 with one line naming the file and its disk, run.json `failed` with the
reason, the calls in flight finish (into the cache, or the run folder), and the rerun pays for no call twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgelab.data.io import save_items
from tests.reliability.disks import fill, small_disk
from tests.reliability.hostile_server import HostileServer
from tests.reliability.kill import CRITERIA
from tests.reliability.scenario import judged_ids, make_items

N_ITEMS = 40


def _judge(data: Path, out: Path, cache: Path, url: str) -> list[str]:
    return [sys.executable, "-m", "judgelab.cli", "judge", "--data", str(data), "--aspect", "coherence",
            "--model", url, "--model-name", "m", "--family", "summarisation", "--criteria", CRITERIA,
            "--strategy", "scale=5,cot=none", "--out", str(out), "--cache-path", str(cache), "--concurrency", "2"]


def _fill_mid_run(command: list[str], server: HostileServer, disk: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """Run ``command``; once 6 calls were sent, fill ``disk``. The finished process and the filler."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ends = time.monotonic() + 60
    while server.posts < 6 and process.poll() is None and time.monotonic() < ends:
        time.sleep(0.01)
    filler = fill(disk)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(command, process.returncode, out, err), filler


@pytest.mark.timeout(300)
@pytest.mark.parametrize("full", ["run folder", "cache"])
def test_a_disk_that_fills_mid_run_stops_it_in_one_line_and_nothing_is_paid_twice(tmp_path, full):
    data = save_items(make_items(N_ITEMS), tmp_path / "items.jsonl")
    with small_disk(tmp_path / "disk") as disk, HostileServer("ok", delay=0.3) as server:
        out = (disk if full == "run folder" else tmp_path) / "run"
        cache = (disk if full == "cache" else tmp_path) / "cache.sqlite"
        command = _judge(data, out, cache, server.base_url)
        first, filler = _fill_mid_run(command, server, disk)
        lines = first.stderr.strip().splitlines()
        assert first.returncode == 2 and len(lines) == 1, first.stderr
        full_file = out / "judgments.jsonl" if full == "run folder" else cache
        assert lines[0].startswith(f"error: the disk holding {full_file} is full (the file system mounted at {disk}")
        record = json.loads((out / "run.json").read_text())
        assert record["status"] == "failed" and "is full" in record["error"]
        paid_first = server.posts
        judged_first = judged_ids(out)  # every line whole: each parses
        assert 0 < len(judged_first) < N_ITEMS and len(set(judged_first)) == len(judged_first)

        filler.unlink()  # space is back
        rerun = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        print(f"{full}: {paid_first} calls paid before the stop, {server.posts} in all for {N_ITEMS} items")
        assert server.posts == N_ITEMS  # no call paid twice (before: 42 and 56)
        assert sorted(judged_ids(out)) == sorted(item.id for item in make_items(N_ITEMS))
        assert json.loads((out / "run.json").read_text())["status"] == "finished"
        assert not (out / ".run.spare").exists()


# ---- issue 50, item 20: read-only or full output folders were internal errors (exit 1) ----------------------------
def _outputs(tmp_path: Path, disk: Path, url: str) -> dict[str, list[object]]:
    """Each command that writes, with its output on ``disk``."""
    from tests.e2e.cli import judge_run_folder

    items = [item.model_copy(update={"system_id": f"s{k % 3}"}) for k, item in enumerate(make_items(12))]
    data = save_items(items, tmp_path / "items.jsonl")
    run = judge_run_folder(tmp_path / "run", [{"item_id": item.id, "score": 1 + k % 5, "status": "ok"}
                                              for k, item in enumerate(items)], {"calls": 12})
    return {
        "judge": _judge(data, disk / "run", tmp_path / "cache.sqlite", url)[3:],
        "evaluate": ["evaluate", "--data", data, "--judgments", run, "--out", disk / "eval"],
        "report": ["report", disk / "copied-run"],
        "annotate": ["annotate", "--data", data, "--aspect", "coherence", "--out", disk / "labels.jsonl", "--port", "0"],
    }


@pytest.mark.timeout(300)
@pytest.mark.parametrize("state", ["read-only", "full"])
def test_an_output_on_a_read_only_or_full_disk_is_one_line_and_exit_2(tmp_path, state):
    import shutil

    from tests.e2e.cli import run_cli

    with small_disk(tmp_path / "disk", "1m") as disk, HostileServer("ok") as server:
        commands = _outputs(tmp_path, disk, server.base_url)
        shutil.copytree(tmp_path / "run", disk / "copied-run")
        if state == "full":
            fill(disk)
        else:
            subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        for name, command in commands.items():
            if name == "annotate" and state == "full":
                continue  # it starts: the labels file takes no room until an answer (then: 507, test_labelling_app)
            result = run_cli(*command, timeout=120)
            lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("warning:")]
            assert result.returncode == 2 and len(lines) == 1, (name, result.stderr)
            assert "internal error" not in lines[0] and str(disk) in lines[0], (name, lines[0])
            assert ("is full" if state == "full" else "read-only file system") in lines[0], (name, lines[0])
        assert server.posts == 0  # judge stopped before paying for anything
