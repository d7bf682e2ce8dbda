"""Small files that asked for gigabytes (issue 40, items 2, 3, 4 and 9): one long system name or group
id, every pair of 150 systems for ``sample``, 4,000 systems x 25 items for a judge-only ``evaluate``,
and a gzip bomb among TREC run files; and issue 50's items 7 and 8, other tools' files that unpacked or
parsed into gigabytes: `.eval` members inflating past what they declare, JSON of millions of empty objects.

Each case runs the real CLI in a separate process under ``ulimit -v 2G`` (``capped.run_capped``) and
checks its peak resident memory; ``pytest -s`` prints each figure (docs/reliability.md quotes them).
"""

from __future__ import annotations

import csv
import json
import random
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from judgelab.data.sources import inspect as inspect_reader
from judgelab.errors import DataError
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


def test_one_long_system_name_on_the_board_prints_at_once(tmp_path):
    """Issue 50, item 12: a 200,000-character name among 2,000 comparisons held the board for more than ten
    minutes (rich's highlighter backtracking over the legend line). The board highlights nothing, and the
    legend shows a capped name."""
    _, verdicts = _comparisons(tmp_path, 2_000, "y" * 200_000)
    rng = random.Random(1)
    rows = [dict(row, label=rng.choice("ab")) for row in map(json.loads, (tmp_path / "comparisons.jsonl").open())]
    data = write_jsonl(tmp_path / "labelled.jsonl", rows)
    done = run_capped("evaluate", "--data", data, "--judgments", verdicts, "--human-ids", "all", "--bootstrap", "0",
                      timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(200,000 characters; --json has it whole)" in done.stdout


@pytest.mark.parametrize("command", ["evaluate", "meta"])
def test_one_long_group_id_among_20000_items(command, tmp_path):
    """The same with one long ``group_id`` among pointwise items: the clusters of ``evaluate`` and the
    groups of ``meta``'s group-level figures."""
    data, judgments = _pointwise(tmp_path, 20_000, "G" * LONG)
    done = run_capped(command, "--data", data, "--judgments", judgments, "--bootstrap", "50", "--json")
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


# ---- 3. sample on comparisons: every pair of 150 systems ---------------------------------------------------------
def _every_pair(folder: Path, n_systems: int, times: int) -> Path:
    """Every unordered pair of ``n_systems`` systems compared ``times`` times (150 systems once: 0.8 MB)."""
    rows = [{"id": f"c{a}-{b}-{t}", "system_a": f"s{a}", "system_b": f"s{b}", "output_a": "x", "output_b": "y"}
            for a in range(n_systems) for b in range(a + 1, n_systems) for t in range(times)]
    return write_jsonl(folder / "comparisons.jsonl", rows)


def test_sample_refuses_a_budget_short_of_the_pairs_at_once(tmp_path):
    """150 systems, every pair once: 11,175 strata of one comparison. ``sample`` built a dense
    (comparisons x pairs) matrix (18 s, 2.3 GB) before refusing a budget that cannot give each pair two
    labels; the refusal now comes first, and no such matrix is built."""
    data = _every_pair(tmp_path, 150, 1)
    done = run_capped("sample", "--data", data, "--budget", "100", "--out", tmp_path / "ids.txt")
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.lines()) == 1 and "11175 pairs of systems" in done.lines()[0], done.stderr
    assert not (tmp_path / "ids.txt").exists()
    assert done.peak_mib < 400, f"peak RSS {done.peak_mib:.0f} MiB"


def test_sample_draws_from_every_pair_of_150_systems(tmp_path):
    """Every pair three times (33,525 comparisons) and a budget of two per pair: drawn and written, where the
    dense matrix (33,525 x 11,175) did not fit."""
    data = _every_pair(tmp_path, 150, 3)
    done = run_capped("sample", "--data", data, "--budget", "22350", "--out", tmp_path / "ids.txt")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in (tmp_path / "ids.txt").read_text().splitlines() if not line.startswith("#")]
    assert len(lines) == 22350 and all(line.endswith("\t" + repr(2 / 3)) for line in lines), lines[:3]
    assert done.peak_mib < 600, f"peak RSS {done.peak_mib:.0f} MiB"


# ---- 4. judge-only evaluate on 4,000 systems x 25 items ----------------------------------------------------------
def _many_systems(folder: Path, n_systems: int, per_system: int) -> tuple[Path, Path]:
    rows = [{"id": f"s{s}-{k}", "output": "x", "system_id": f"sys{s}", "group_id": f"src{k}"}
            for s in range(n_systems) for k in range(per_system)]
    verdicts = [{"item_id": row["id"], "score": 1 + k % 5} for k, row in enumerate(rows)]
    return write_jsonl(folder / "items.jsonl", rows), write_jsonl(folder / "judgments.jsonl", verdicts)


def test_evaluate_refuses_a_table_of_items_x_systems_past_the_bound(tmp_path):
    """4,000 systems x 25 items (10 MB): a MemoryError for a (100,000 x 4,000) array. evaluate's estimators
    hold one table of every item against every system; past the input bound (8 bytes a cell) it is refused
    in one line that names the setting, before any table is built."""
    data, judgments = _many_systems(tmp_path, 4000, 25)
    done = run_capped("evaluate", "--data", data, "--judgments", judgments, "--bootstrap", "100")
    assert done.returncode == 2, done.stderr[-2000:]
    line = " ".join(done.lines())
    assert len(done.lines()) == 1 and "4000 systems x 100000 items" in line and "JUDGELAB_MAX_INPUT_BYTES" in line, line
    assert done.peak_mib < 700, f"peak RSS {done.peak_mib:.0f} MiB"


def test_sample_of_4000_systems_x_25_items_needs_no_such_table(tmp_path):
    """``sample`` on the same items draws per system without the table: two per system, written."""
    data, _ = _many_systems(tmp_path, 4000, 25)
    done = run_capped("sample", "--data", data, "--budget", "8000", "--out", tmp_path / "ids.txt")
    assert done.returncode == 0, done.stderr[-2000:]
    assert sum(not line.startswith("#") for line in (tmp_path / "ids.txt").read_text().splitlines()) == 8000
    assert done.peak_mib < 600, f"peak RSS {done.peak_mib:.0f} MiB"


# ---- 9. a gzip bomb among TREC run files --------------------------------------------------------------------------
def test_a_gzip_bomb_among_run_files_is_refused_under_the_bound(tmp_path):
    """A 1.5 MB run file that unpacks to 1.5 GB with no line break was unpacked into one line (3.26 GB
    peak). Run files are read line by line under the input bound, as the data loaders are: one located
    line, exit 2, the process far below the unpacked size."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "good.run").write_text("q1 Q0 d1 1 1.0 good\nq1 Q0 d2 2 0.5 good\n")
    bomb = runs / "bomb.run.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    bomb.write_bytes(b"".join([*(packer.compress(bytes(2**20)) for _ in range(1536)), packer.flush()]))  # 1.5 GB
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": "i0", "qid": "q1", "docid": "d1", "query": "q", "passage": "p", "label": 2},
        {"id": "i1", "qid": "q1", "docid": "d2", "query": "q", "passage": "p", "label": 0}])
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [{"item_id": "i0", "label": 2}, {"item_id": "i1", "label": 1}])
    done = run_capped("meta", "--data", items, "--judgments", judgments, "--runs", runs, "--bootstrap", "0")
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.lines()) == 1 and done.lines()[0].startswith(f"error: {bomb}:"), done.stderr
    assert "over the 128 MiB limit" in done.lines()[0], done.lines()
    assert done.peak_mib < 600, f"peak RSS {done.peak_mib:.0f} MiB"


# ---- issue 50, items 7 and 8: other tools' files that unpack or parse into gigabytes ---------------------------------
_HEADER = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}).encode()


def _objects() -> bytes:
    return b"[" + b"{}," * 40_000_000 + b"{}]"  # 120 MB of empty objects: 3 GB once parsed


def _zip(members: list[tuple[str, int, bytes, int, int]]) -> bytes:
    """A zip archive of (name, method, packed bytes, declared size, declared CRC), sizes as declared."""
    body, central = b"", b""
    for name, method, packed, size, crc in members:
        raw = name.encode()
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, 0, method, 0, 33, crc, len(packed), size,
                               len(raw), 0, 0, 0, 0, 0, len(body)) + raw
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, 0, method, 0, 33, crc, len(packed), size, len(raw), 0)
        body += raw + packed
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(body), 0)
    return body + central + end


def _deflated_zeros(mib: int) -> bytes:
    """Raw deflate of ``mib`` MiB of zeros in ~1 KB a MiB: a full flush makes every MiB's block the same bytes."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = packer.compress(bytes(2**20)) + packer.flush(zlib.Z_FULL_FLUSH)
    return block * mib + packer.flush()


def _zstd(chunks) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:
        for chunk in chunks:
            stream.write(chunk)
    return sink.getvalue().to_pybytes()


def _eval_log(path: Path, method: int, packed: bytes, declared: int, crc: int) -> Path:
    header = ("header.json", 0, _HEADER, len(_HEADER), zlib.crc32(_HEADER))
    path.write_bytes(_zip([header, ("samples/1_epoch_1.json", method, packed, declared, crc)]))
    return path


def _refused_in_one_line(path: Path, out: Path, *expected: str) -> None:
    """``evaluate --data PATH --out OUT``: exit 2, one line naming PATH, OUT not made, a bounded peak."""
    done = run_capped("evaluate", "--data", path, "--out", out)
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.lines()) == 1 and done.lines()[0].startswith(f"error: {path}: "), done.stderr[-2000:]
    assert all(text in done.lines()[0] for text in expected), done.lines()
    assert not out.exists()
    assert done.peak_mib < 600, f"peak RSS {done.peak_mib:.0f} MiB"


@pytest.mark.parametrize(("method", "declared", "expected"), [
    (8, 1024, "bad JSON"),  # zipfile reads what is declared: 1 KB of zeros, whose CRC matches
    (8, 100 * 2**20, "Bad CRC-32"),
    (93, 1024, "unpacks to more than the 1,024 bytes"),
    (93, 100 * 2**20, "unpacks to more than the 104,857,600 bytes"),
], ids=["deflate-1KB", "deflate-100MB", "zstd-1KB", "zstd-100MB"])
def test_an_eval_member_that_unpacks_past_what_it_declares_is_read_in_chunks(method, declared, expected, tmp_path):
    """Item 7: a 2.6 MB .eval whose member declares 1 KB (or 100 MB) and inflates to 2.5 GiB. zipfile
    inflated up to 2 GiB in one call (2.2 GB peak; under the cap, `internal error: MemoryError`), and a
    Zstandard member lying about its size was `internal error: OSError`. Now each member streams in
    chunks, stopping past what it declares and what the input bound leaves."""
    packed = _deflated_zeros(2560) if method == 8 else _zstd(bytes(2**20) for _ in range(2560))
    crc = zlib.crc32(bytes(1024)) if declared == 1024 else 0  # right for the 1 KB read; wrong for 100 MB
    log = _eval_log(tmp_path / "bomb.eval", method, packed, declared, crc)
    _refused_in_one_line(log, tmp_path / "report", "samples/1_epoch_1.json", expected)


def test_a_member_is_read_no_further_than_the_bound_leaves_whatever_it_declares(tmp_path):
    """The byte budget does not rest on the declared sizes: a member whose declared size is taken away
    (2**40) stops a chunk past what the bound leaves (10 MiB here), not at its 2.5 GiB."""
    log = _eval_log(tmp_path / "bomb.eval", 8, _deflated_zeros(2560), 1024, 0)
    with zipfile.ZipFile(log) as archive, log.open("rb") as raw:
        info = archive.getinfo("samples/1_epoch_1.json")
        info.file_size = 2**40
        with pytest.raises(DataError, match="the archive unpacked is over the 128 MiB limit"):
            inspect_reader._unpacked(archive, raw, info, 10 * 2**20, log)


def test_an_eval_member_of_millions_of_empty_objects_is_refused_before_parsing(tmp_path):
    """Item 8: an 11 KB .eval unpacking to 120 MB of `{}` peaked at 3.33 GB (`internal error` under the
    cap). The values are counted before json builds them: one per 8 bytes of the input bound."""
    objects = _objects()
    log = _eval_log(tmp_path / "objects.eval", 93, _zstd([objects]), len(objects), zlib.crc32(objects))
    del objects
    _refused_in_one_line(log, tmp_path / "report", "more than 16,777,216 JSON values", "JUDGELAB_MAX_INPUT_BYTES")


def test_a_promptfoo_file_of_millions_of_empty_objects_is_refused_before_parsing(tmp_path):
    """Item 8: a 120 MB promptfoo file of `{}` peaked at 3.06 GB (`internal error` under the cap)."""
    results = tmp_path / "results.json"
    results.write_bytes(b'{"evalId": "e", "results": {"version": 3, "results": ' + _objects() + b"}}")
    _refused_in_one_line(results, tmp_path / "report", "more than 16,777,216 JSON values")


def test_json_cells_of_a_csv_share_the_files_bound(tmp_path):
    """Each `extra` cell of 6 million values is within the bound, three of them are not: the JSON cells of
    one file spend one budget (as an archive's members and a file's JSON lines do)."""
    items = tmp_path / "items.csv"
    cell = '{"a": [' + "{}," * 3_000_000 + "{}]}"
    with items.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "output", "system_id", "extra"])
        writer.writerows([f"i{k}", "x", "s", cell] for k in range(3))
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [{"item_id": f"i{k}", "score": 1} for k in range(3)])
    done = run_capped("evaluate", "--data", items, "--judgments", judgments)
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.lines()) == 1, done.stderr[-2000:]
    assert done.lines()[0].startswith(f"error: {items}:4: field 'extra': holds more than 16,777,216 JSON values")
    assert done.peak_mib < 1200, f"peak RSS {done.peak_mib:.0f} MiB"
