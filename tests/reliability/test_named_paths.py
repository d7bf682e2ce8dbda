"""Every path a user names is a regular file, or missing for an output, and is read under the input bound
(issue 40, item 8): a FIFO given to ``--human-ids``, ``--exclude``, annotate's ``--ids``, ``--criteria
@FILE``, annotate's ``--out`` or ``compare --markdown`` hung for ever (SIGTERM cannot end a process
blocked in ``open()``), and ``/dev/zero`` was read until memory was gone.

Each case runs the real CLI in a separate process with a timeout and ``ulimit -v 2G``: exit 2, one line
naming the path, nothing written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judgelab.data.io import save_items
from tests.e2e.cli import write_jsonl
from tests.reliability.capped import run_capped
from tests.reliability.scenario import make_items


def _data(folder: Path) -> dict[str, Path]:
    """Items of two systems answering six inputs, with human scores; a judge's verdicts on them."""
    items = [item.model_copy(update={"system_id": f"s{k % 2}", "group_id": f"g{k // 2}"})
             for k, item in enumerate(make_items(12))]
    data = save_items(items, folder / "items.jsonl")
    judgments = write_jsonl(folder / "judgments.jsonl", [{"item_id": item.id, "score": 1 + k % 5}
                                                         for k, item in enumerate(items)])
    return {"items": data, "judgments": judgments}


def _command(option: str, path: Path, data: dict[str, Path], out: Path) -> list[object]:
    items, judgments = data["items"], data["judgments"]
    evaluate = ["evaluate", "--data", items, "--judgments", judgments, "--bootstrap", "50"]
    annotate = ["annotate", "--data", items, "--aspect", "coherence", "--port", "0"]
    compare = ["compare", "--data", items, "--judgments", judgments, "--baseline", "s0", "--candidate", "s1",
               "--bootstrap", "100"]
    return {
        "--human-ids": [*evaluate, "--human-ids", path],
        "--exclude": ["sample", "--data", items, "--budget", "4", "--out", out, "--exclude", path],
        "annotate --ids": [*annotate, "--out", out, "--ids", path],
        "judge --criteria": ["judge", "--data", items, "--aspect", "coherence", "--criteria", f"@{path}",
                             "--model", "smollm2-135m", "--out", out],
        "annotate --criteria": [*annotate, "--out", out, "--criteria", f"@{path}"],
        "annotate --out": [*annotate, "--out", path],
        "compare --markdown": [*compare, "--markdown", path],
        "compare --junit": [*compare, "--junit", path],
    }[option]


OPTIONS = ("--human-ids", "--exclude", "annotate --ids", "judge --criteria", "annotate --criteria",
           "annotate --out", "compare --markdown", "compare --junit")


@pytest.mark.parametrize("special", ["fifo", "zero"])
@pytest.mark.parametrize("option", OPTIONS)
def test_a_fifo_or_a_device_is_refused_at_once_in_one_line(option, special, tmp_path):
    data = _data(tmp_path)
    path = tmp_path / ("named.pipe" if special == "fifo" else "zero.txt")
    if special == "fifo":
        os.mkfifo(path)  # no writer, no reader: opening it blocks for ever
    else:
        path.symlink_to("/dev/zero")  # never ends: read whole, it ends in a MemoryError
    out = tmp_path / "out.txt"
    before = sorted(p.name for p in tmp_path.iterdir())
    done = run_capped(*_command(option, path, data, out), timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert len(done.lines()) == 1 and done.lines()[0].startswith("error: ") and str(path) in done.lines()[0], \
        done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written beside


def test_the_python_readers_and_writers_follow_the_same_rule(tmp_path):
    """The rule is in ``files.py``, so the API keeps it too: a strategy file (read and written), a sample
    file and a judge config named by a FIFO are refused, not opened."""
    from judgelab.errors import JudgelabError
    from judgelab.evaluate import read_sample, write_sample
    from judgelab.judges.base import load_judge
    from judgelab.strategy import Strategy

    fifo = tmp_path / "named.pipe"
    os.mkfifo(fifo)
    for call in (lambda: Strategy.load(fifo), lambda: Strategy(scale=5).save(fifo), lambda: read_sample(fifo),
                 lambda: write_sample(fifo, ["a"], [0.5], {}), lambda: load_judge(fifo)):
        with pytest.raises(JudgelabError, match="FIFO"):
            call()
