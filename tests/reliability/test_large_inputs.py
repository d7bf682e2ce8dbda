"""Small files that asked for gigabytes (issue 40, items 2, 3, 4 and 9): one long system name or group
id, every pair of 150 systems for ``sample``, 4,000 systems x 25 items for a judge-only ``evaluate``,
and a gzip bomb among TREC run files.

Each case runs the real CLI in a separate process under ``ulimit -v 2G`` (``capped.run_capped``) and
checks its peak resident memory; ``pytest -s`` prints each figure (docs/reliability.md quotes them).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.e2e.cli import write_jsonl
from tests.reliability.capped import run_capped

LONG = 2_000_000  # characters: numpy's str arrays made every row this wide (149 GiB for 20,000 rows)


# ---- 2. one long system name or group id ---------------------------------------------------------------------
def _comparisons(folder: Path, n: int, long_name: str) -> tuple[Path, Path]:
    """``n`` comparisons among five systems, the first one against ``long_name``; a judge's a/b verdicts."""
    rng = random.Random(0)
    systems = [f"s{k}" for k in range(5)]
    rows, verdicts = [], []
    for i in range(n):
        a, b = rng.sample(systems, 2)
        rows.append({"id": f"c{i}", "system_a": a, "system_b": long_name if i == 0 else b,
                     "output_a": "x", "output_b": "y"})
        verdicts.append({"item_id": f"c{i}", "label": rng.choice("ab")})
    return write_jsonl(folder / "comparisons.jsonl", rows), write_jsonl(folder / "verdicts.jsonl", verdicts)


def _pointwise(folder: Path, n: int, long_group: str) -> tuple[Path, Path]:
    """``n`` items of four systems answering shared inputs; the first item's group_id is ``long_group``."""
    rows = [{"id": f"i{i}", "output": "x", "system_id": f"s{i % 4}", "group_id": long_group if i == 0 else f"g{i // 4}",
             "scores": {"quality": 1 + i % 5}} for i in range(n)]
    verdicts = [{"item_id": f"i{i}", "score": 1 + (3 * i) % 5} for i in range(n)]
    return write_jsonl(folder / "items.jsonl", rows), write_jsonl(folder / "judgments.jsonl", verdicts)


def test_one_long_system_name_among_20000_comparisons(tmp_path):
    """The issue's case: ``MemoryError: Unable to allocate 149. GiB ... <U2000000``, exit 1. Names are
    coded as integers from the Python strings: the leaderboard names all six systems, in little memory."""
    data, verdicts = _comparisons(tmp_path, 20_000, "L" * LONG)
    done = run_capped("evaluate", "--data", data, "--judgments", verdicts, "--bootstrap", "0", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(json.loads(done.stdout)["systems"], key=len)[-1] == "L" * LONG
    assert done.peak_mib < 600, f"peak RSS {done.peak_mib:.0f} MiB"


@pytest.mark.parametrize("command", ["evaluate", "meta"])
def test_one_long_group_id_among_20000_items(command, tmp_path):
    """The same with one long ``group_id`` among pointwise items: the clusters of ``evaluate`` and the
    groups of ``meta``'s group-level figures."""
    data, judgments = _pointwise(tmp_path, 20_000, "G" * LONG)
    done = run_capped(command, "--data", data, "--judgments", judgments, "--bootstrap", "20", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.peak_mib < 600, f"peak RSS {done.peak_mib:.0f} MiB"


def test_a_long_system_name_as_the_candidate_of_compare(tmp_path):
    """``compare`` on comparisons codes the names the same way (the candidate is the long one)."""
    data, verdicts = _comparisons(tmp_path, 20_000, "L" * LONG)
    done = run_capped("compare", "--data", data, "--judgments", verdicts, "--baseline", "s0",
                      "--candidate", "s1", "--json")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert json.loads(done.stdout)["decision"] in ("worse", "not worse", "better")
    assert done.peak_mib < 600, f"peak RSS {done.peak_mib:.0f} MiB"
