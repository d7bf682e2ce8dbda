"""The runner with the real embedded model: Ctrl-C on a real CLI run, and the Ray engine on a real
local Ray cluster (a worker killed mid-shard is retried; results equal the single-process run)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from importlib.resources import files
from pathlib import Path

import pytest

from judgelab.data import load_items, save_items
from judgelab.data.io import load_judgments
from judgelab.judges.base import load_judge
from judgelab.llm.resolve import make_client
from judgelab.runner import run_judge
from tests.conftest import TEST_MODEL

EXAMPLES = files("judgelab") / "examples"
# One thread and no KV-prefix reuse: each prompt is computed the same way in any process, so
# the Ray workers' judgments can be compared exactly with the single-process run.
DETERMINISTIC = {"n_threads": 1, "prefix_reuse": False}


def _demo(n: int) -> tuple[list, object]:
    items = list(load_items(Path(str(EXAMPLES / "demo_summaries.jsonl"))))[:n]
    judge = load_judge(Path(str(EXAMPLES / "demo_judge.yaml"))).model_copy(update={"score": "parsed"})
    return items, judge


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_sigint_stops_a_real_run_cleanly_and_the_rerun_resumes(tmp_path, test_model_path):
    # The run must still be judging when the first line appears, on a fast quiet machine too.
    # Lines reach the file in batches (every 0.5 s), so a run that judges everything within
    # 0.5 s shows its first line only when it is done: with one-token ratings, 24 items did that
    # on a quiet CI machine. A 40-token explanation after each rating keeps it judging for seconds.
    n = 24
    items, judge = _demo(n)
    judge = judge.model_copy(update={"strategy": judge.strategy.model_copy(update={"cot": "suffix"}),
                                     "max_tokens": 40})
    data, config = save_items(items, tmp_path / "items.jsonl"), judge.save(tmp_path / "judge.yaml")
    run = tmp_path / "run"
    args = [sys.executable, "-m", "judgelab.cli", "judge", "--data", str(data), "--config", str(config),
            "--model", TEST_MODEL, "--out", str(run), "--cache-path", str(tmp_path / "cache.sqlite")]
    # A shell's background job (`make test &`) starts with SIGINT ignored, and Python then keeps it
    # ignored: give the child the default disposition, as a terminal's Ctrl-C finds it.
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while _lines(run / "judgments.jsonl") < 1 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None, f"finished before it could be interrupted: {process.communicate()}"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "resume" in stderr
    record = json.loads((run / "run.json").read_text())
    kept = load_judgments(run / "judgments.jsonl")
    assert record["status"] == "interrupted" and 1 <= len(kept) < n
    assert sum(record["counts"].values()) == len(kept)

    again = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "finished" and record["usage"]["resumed_items"] == len(kept)
    assert record["usage"]["calls"] + record["usage"]["cache_hits"] == n - len(kept)
    batch = load_judgments(run / "judgments.jsonl")
    assert [j.item_id for j in batch] == [item.id for item in items]

    # The same judge streamed in chunks of 5 from the file: every call is served from the cache.
    streamed = subprocess.run([*args[:-4], "--out", str(tmp_path / "streamed"), *args[-2:], "--stream",
                               "--chunk-size", "5"], capture_output=True, text=True, timeout=600)
    assert streamed.returncode == 0, streamed.stderr
    record = json.loads((tmp_path / "streamed" / "run.json").read_text())
    assert record["usage"]["calls"] == 0 and record["usage"]["cache_hits"] == n
    by_id = {j.item_id: (j.status, j.score, j.raw) for j in load_judgments(tmp_path / "streamed" / "judgments.jsonl")}
    assert by_id == {j.item_id: (j.status, j.score, j.raw) for j in batch}


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="needs the 'ray' extra")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _kill_first_shard_worker(killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the first Ray worker seen running a shard (Ray titles it ``ray::judge_shard``)."""
    while not stop.is_set() and not killed:
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if title.startswith(b"ray::judge_shard"):
                time.sleep(1.0)  # let it finish a call or two first, so the retry can reuse them
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
                return
        time.sleep(0.1)


def test_ray_engine_matches_one_process_and_retries_a_killed_worker(tmp_path, test_model_path, ray_cluster):
    items, judge = _demo(8)
    with make_client(TEST_MODEL, cache=tmp_path / "local.sqlite", backend_options=DETERMINISTIC) as client:
        local = run_judge(judge, items, client, tmp_path / "local")

    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_first_shard_worker, args=(killed, stop), daemon=True)
    killer.start()
    with make_client(TEST_MODEL, cache=tmp_path / "ray.sqlite", backend_options=DETERMINISTIC) as client:
        distributed = run_judge(judge, items, client, tmp_path / "ray", engine="ray", workers=2)
    stop.set()
    assert killed, "no shard worker was seen running"

    def verdicts(result):
        return [(j.item_id, j.status, j.score, j.raw) for j in result.judgments]

    assert verdicts(distributed) == verdicts(local)
    record = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert record["engine"] == "ray" and record["status"] == "finished" and record["counts"] == local.counts
    # The retried shard paid only for what the killed worker had not finished (the rest were cache hits).
    usage = distributed.usage
    assert usage["calls"] + usage["cache_hits"] == len(items) and usage["calls"] <= len(items)
    with make_client(TEST_MODEL, cache=tmp_path / "ray.sqlite", backend_options=DETERMINISTIC) as client:
        assert len(client.cache) == len(items)
