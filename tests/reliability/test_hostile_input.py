"""Bad files for every loader and every command that reads files: exit code 2, a message naming the
file, line and field, no traceback, nothing partial written.

The corpus lives in tests/data/hostile/ (truncated JSON, wrong types, BOMs, invalid UTF-8, UTF-16,
empty files, duplicate ids, NaN and infinite scores, inverted scales, ragged CSV, corrupt Parquet,
bad judge configs); a 10 MB field is generated here rather than stored. Hypothesis adds random
bytes and random records on top.
"""

from __future__ import annotations

import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.data.io import load_items, load_judgments, save_items
from judgelab.errors import DataError, JudgelabError
from judgelab.judges.base import load_judge
from tests.e2e.cli import run_cli
from tests.reliability.scenario import make_items

HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile"

# file -> (line, field) the error must name (None: the file has no such place, e.g. an empty file)
ITEM_FILES = {
    "items_truncated.jsonl": (2, None), "items_wrong_type.jsonl": (1, "scores.coherence"),
    "items_bom_midfile.jsonl": (2, None), "items_utf16.jsonl": (1, None),
    "items_invalid_utf8.jsonl": (1, "output"), "items_empty.jsonl": (None, None),
    "items_blank.jsonl": (None, None), "items_duplicate_ids.jsonl": (2, "id"),
    "items_nan_score.jsonl": (1, "scores.coherence"), "items_inf_score.jsonl": (1, "scores.coherence"),
    "items_inverted_scale.jsonl": (1, "scale"), "items_not_object.jsonl": (1, None),
    "items_no_output.jsonl": (1, "output"), "items_truncated.json": (2, None), "items_ragged.csv": (3, None),
    "items_nan_score.csv": (2, "scores.coherence"), "items_inverted_scale.csv": (2, "scale"),
    "items_wrong_type.tsv": (2, "scores.coherence"), "items_corrupt.parquet": (None, None),
    # a lone surrogate escape, a score beyond any scale, off its declared scale, a boolean score,
    # an integer too long for Python to read, nesting deeper than the recursion limit
    "items_lone_surrogate.jsonl": (2, "output"), "items_huge_score.jsonl": (1, "scores.coherence"),
    "items_off_scale.jsonl": (1, "scores.coherence"), "items_off_aspect_scale.jsonl": (2, "scores.naturalness"),
    "items_bool_score.jsonl": (1, "scores.coherence"), "items_long_integer.jsonl": (1, None),
    "items_deep.jsonl": (1, None),
}
JUDGMENT_FILES = {
    "judgments_nan_score.jsonl": (1, "score"), "judgments_no_verdict.jsonl": (1, "score"),
    "judgments_wrong_type.jsonl": (1, "score"), "judgments_truncated.jsonl": (2, None),
    "judgments_lone_surrogate.jsonl": (1, "explanation"), "judgments_huge_score.jsonl": (1, "score"),
    "judgments_bool_score.jsonl": (1, "score"), "judgments_long_integer.jsonl": (1, None),
    "judgments_deep.jsonl": (1, None),
}
CONFIG_FILES = {
    "config_bad_yaml.yaml": (3, None), "config_unknown_kind.yaml": (1, "kind"),
    "config_wrong_type.yaml": (3, "samples"), "config_utf16.yaml": (None, None),
    "config_unknown_field.yaml": (5, "temprature"), "config_bad_nested.yaml": (6, "strategy.scale"),
    "config_bad_nested.json": (4, "strategy.cot"), "config_deep.yaml": (None, None),
    # numbers out of range: were internal errors (exit 1) once run, or a hang (1e8 samples)
    "config_negative_samples.yaml": (3, "samples"), "config_negative_temperature.yaml": (3, "temperature"),
    "config_huge_samples.yaml": (4, "samples"), "config_infinite_temperature.yaml": (4, "temperature"),
    "config_pairwise_bad_numbers.yaml": (2, "max_tokens"),
}


def test_the_corpus_is_complete():
    assert {p.name for p in HOSTILE.iterdir()} == set(ITEM_FILES) | set(JUDGMENT_FILES) | set(CONFIG_FILES)


@pytest.mark.parametrize("name", ITEM_FILES)
def test_item_loader_names_file_line_and_field(name):
    with pytest.raises(DataError) as failure:
        load_items(HOSTILE / name)
    _names_place(str(failure.value), HOSTILE / name, *ITEM_FILES[name])


@pytest.mark.parametrize("name", JUDGMENT_FILES)
def test_judgment_loader_names_file_line_and_field(name):
    with pytest.raises(DataError) as failure:
        load_judgments(HOSTILE / name)
    _names_place(str(failure.value), HOSTILE / name, *JUDGMENT_FILES[name])


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_config_loader_names_file_and_field(name):
    with pytest.raises(JudgelabError) as failure:
        load_judge(HOSTILE / name)
    _names_place(str(failure.value), HOSTILE / name, *CONFIG_FILES[name])


def test_config_errors_name_the_line_of_the_field_and_the_value(tmp_path):
    """The line follows the field through nested mappings and lists, in YAML and JSON, and the bad value is shown."""
    config = tmp_path / "judge.yaml"
    config.write_text("# a judge\nkind: prompted\naspect: coherence\n\nstrategy:\n  scale: 5\n  order: TD-XX-IC\n")
    with pytest.raises(JudgelabError, match=r"judge\.yaml:7: field 'strategy\.order': .*'TD-XX-IC'"):
        load_judge(config)
    config.write_text("kind: ensemble\nmembers:\n  - name: a\n    judge: {kind: prompted, aspect: coherence}\n"
                      "  - name: b\n    judgments: b.jsonl\n    colour: red\n")
    with pytest.raises(JudgelabError, match=r"judge\.yaml:7: field 'members\.1\.colour': Extra inputs"):
        load_judge(config)
    config.write_text("kind: prompted\naspect: coherence\nsamples: 2\ntemperature: hot\nseed: x\n")
    with pytest.raises(JudgelabError, match=r"judge\.yaml:4: field 'temperature': .*\(got 'hot'\) \(and 1 more\)"):
        load_judge(config)


def test_save_config_is_written_only_when_the_run_succeeds(good, tmp_path, capsys):
    """A bad model, strategy or examples file after a good --data: exit 2 and no saved config (nor run folder)."""
    judge = ["judge", "--data", good["items"], "--aspect", "coherence", "--no-cache", "--out", tmp_path / "run",
             "--save-config", tmp_path / "saved.yaml"]
    for bad in (["--model", "no-such-model"], ["--model", "smollm2-135m", "--strategy", "scale=7"],
                ["--model", "smollm2-135m", "--examples-from", HOSTILE / "items_truncated.jsonl"]):
        code, output = _cli_in_process([*judge, *bad], capsys)
        assert code == 2 and "Traceback" not in output, output
        assert list(tmp_path.iterdir()) == [], (bad, list(tmp_path.iterdir()))


def test_a_10mb_field_loads_whole(tmp_path):
    """A huge text is data, not an error: it is read in full (what a judge does with it: test_score_integrity)."""
    huge = "word " * 2_000_000
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps({"id": "big", "output": huge, "scores": {"coherence": 3}}) + "\n", encoding="utf-8")
    assert load_items(path)[0].output == huge


# ---- the commands: every one that reads a file -------------------------------------------------------------
@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("good")
    items = save_items(make_items(4), folder / "items.jsonl")
    judgments = folder / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"item_id": f"it-{i:04d}", "score": 1 + i}) + "\n" for i in range(4)))
    return {"items": items, "judgments": judgments}


def _commands(kind: str, bad: Path, good: dict[str, Path], out: Path) -> list[list[object]]:
    """Each command line that reads a file of this kind, with ``bad`` in that place."""
    # --save-config too: a bad file anywhere must leave no saved config behind either
    judge = ["judge", "--aspect", "coherence", "--model", "smollm2-135m", "--no-cache", "--out", out / "run",
             "--save-config", out / "saved.yaml"]
    if kind == "items":
        return [[*judge, "--data", bad], [*judge, "--data", good["items"], "--examples-from", bad],
                ["meta", "--data", bad, "--judgments", good["judgments"]],
                ["fit", "--method", "similarity", "--aspect", "coherence", "--data", bad, "--out", out / "fit.yaml"]]
    if kind == "judgments":
        return [["meta", "--data", good["items"], "--judgments", bad],
                ["meta", "--data", good["items"], "--judgments", good["judgments"], "--baseline", bad]]
    return [[*judge[:1], "--data", good["items"], "--config", bad, "--out", out / "run", "--no-cache",
             "--save-config", out / "saved.yaml"],
            ["fit", "--data", good["items"], "--config", bad, "--out", out / "fit.yaml"]]


CASES = [("items", n, p) for n, p in ITEM_FILES.items()] + [("judgments", n, p) for n, p in JUDGMENT_FILES.items()] \
    + [("config", n, p) for n, p in CONFIG_FILES.items()]


@pytest.mark.parametrize(("kind", "name", "place"), CASES, ids=[c[1] for c in CASES])
def test_every_command_exits_2_naming_the_place_and_writes_nothing(kind, name, place, good, tmp_path, capsys):
    for command in _commands(kind, HOSTILE / name, good, tmp_path):
        code, output = _cli_in_process(command, capsys)
        assert code == 2, (command, output)
        assert "Traceback" not in output
        _names_place(output, HOSTILE / name, *place)
        assert list(tmp_path.iterdir()) == [], f"{command} left {list(tmp_path.iterdir())}"


# ---- runs that stop: what they leave in their --out folder ------------------------------------------------------
FAST_JUDGE = ["--aspect", "coherence", "--family", "summarisation", "--strategy", "scale=5,cot=none",
              "--model", "smollm2-135m", "--no-cache"]


def test_a_refused_start_leaves_nothing_and_the_corrected_command_runs(good, tmp_path, capsys):
    """No criteria: refused before any call. It used to leave run.json 'running' and an empty
    judgments.jsonl, and the corrected command was then refused as 'a run of another judge'."""
    command = ["judge", "--data", good["items"], *FAST_JUDGE, "--out", tmp_path / "run", "--limit", "1"]
    code, output = _cli_in_process(command, capsys)
    assert code == 2 and "no criteria for 'coherence'" in output and "Traceback" not in output
    assert not (tmp_path / "run").exists()
    code, output = _cli_in_process([*command, "--criteria", "Coherence (1-5)."], capsys)
    assert code == 0, output
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "finished"


@pytest.mark.timeout(600)
def test_a_stream_stops_at_a_duplicate_id_in_a_later_chunk_naming_both_lines(good, tmp_path, capsys):
    """Chunks of 2, the first id again on line 5: refused before anything is judged (it used to judge the
    id twice, and every rerun's metrics failed on the duplicate lines; then the first chunk was judged
    before the run stopped)."""
    data = tmp_path / "stream.jsonl"
    lines = good["items"].read_text().splitlines()
    data.write_text("\n".join([*lines, lines[0]]) + "\n")
    command = ["judge", "--data", data, *FAST_JUDGE, "--criteria", "Coherence (1-5).", "--out", tmp_path / "run",
               "--stream", "--chunk-size", "2"]
    code, output = _cli_in_process(command, capsys)
    assert code == 2 and "Traceback" not in output
    _names_place(output, data, 5, "id")
    assert "duplicate id 'it-0000' (first used on line 1)" in " ".join(output.split())
    assert not (tmp_path / "run").exists()  # the file's ids are checked whole first: nothing judged or written


def test_report_of_a_run_folder_with_hostile_judgments_exits_2(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"judge": {"aspect": "coherence"}, "status": "finished"}))
    (run / "judgments.jsonl").write_bytes((HOSTILE / "judgments_truncated.jsonl").read_bytes())
    code, output = _cli_in_process(["report", run], capsys)
    assert code == 2 and "Traceback" not in output
    _names_place(output, run / "judgments.jsonl", 2, None)
    assert not (run / "report.html").exists()


def test_as_a_separate_process_the_user_sees_one_line_and_debug_shows_the_traceback(tmp_path):
    bad = HOSTILE / "items_nan_score.jsonl"
    done = run_cli("meta", "--data", bad, "--judgments", bad)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{bad}:1: field 'scores.coherence'" in done.stderr
    debug = run_cli("--debug", "meta", "--data", bad, "--judgments", bad)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


# ---- paths that are no data file, and folders and caches that cannot be used ---------------------------------------
SPECIAL = ("fifo-data", "fifo-judgments", "fifo-config", "fifo-stream", "zero-data", "zero-stream",
           "out-is-a-file", "corrupt-cache", "foreign-cache")


def _special_case(case: str, tmp_path: Path, good: dict[str, Path]) -> tuple[list[object], Path]:
    """The command line for ``case`` and the path its error must name."""
    fifo, zero = tmp_path / "fifo.jsonl", tmp_path / "zero.jsonl"
    os.mkfifo(fifo)  # no writer: opening it for reading would block for ever
    zero.symlink_to("/dev/zero")  # never ends: reading it whole ends in a MemoryError
    judge = ["judge", "--aspect", "coherence", "--criteria", "Coherence (1-5).", "--family", "summarisation",
             "--strategy", "cot=none", "--model", "smollm2-135m", "--out", tmp_path / "run"]
    meta = ["meta", "--data", good["items"], "--judgments", good["judgments"]]
    if case in ("out-is-a-file", "corrupt-cache", "foreign-cache"):
        bad = tmp_path / ("taken" if case == "out-is-a-file" else "cache.sqlite")
        bad.write_bytes(b"not a folder, nor a database: " * 100)
        if case == "foreign-cache":  # a real SQLite file, of another program
            bad.unlink()
            with sqlite3.connect(bad) as other:
                other.execute("CREATE TABLE calls (id INTEGER)")
        option = "--out" if case == "out-is-a-file" else "--cache-path"
        return [*judge, "--data", good["items"], option, bad], bad
    path = fifo if case.startswith("fifo") else zero
    return {"data": ["meta", "--data", path, "--judgments", good["judgments"]],
            "judgments": [*meta[:3], "--judgments", path], "config": [*judge, "--data", good["items"], "--config", path],
            "stream": [*judge, "--data", path, "--stream"]}[case.split("-", 1)[1]], path


@pytest.mark.parametrize("case", SPECIAL)
def test_special_files_and_unusable_folders_exit_2_at_once_with_one_line(case, good, tmp_path):
    """A FIFO or /dev/zero as input, --out naming a file, a corrupt or foreign --cache-path: one located
    line and exit 2, no hang (a timeout), no MemoryError (an address-space cap), nothing left behind."""
    command, named = _special_case(case, tmp_path, good)
    before = sorted(p.name for p in tmp_path.iterdir())
    taken = named.read_bytes() if case == "out-is-a-file" else None

    def cap_memory() -> None:  # old readers of /dev/zero stop at 4 GB instead of eating the machine
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    done = subprocess.run([sys.executable, "-m", "judgelab.cli", *map(str, command)], capture_output=True,
                          text=True, timeout=120, preexec_fn=cap_memory)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(named) in lines[0], done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no run folder, no cache beside
    if taken is not None:
        assert named.read_bytes() == taken


# ---- properties: whatever the bytes, a loader answers with data or a DataError --------------------------------
SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")
_FIELDS = ("id", "output", "source", "scores", "scale", "label", "group_id", "system_id", "kind", "extra",
           "output_a", "output_b", "qid", "docid", "item_id", "score", "status")
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)
_records = st.dictionaries(st.sampled_from(_FIELDS), _json_values, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), suffix=st.sampled_from(SUFFIXES))
def test_random_bytes_give_items_or_a_located_data_error(tmp_path, data, suffix):
    _loads_or_data_error(tmp_path / f"f{suffix}", data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_records, min_size=1, max_size=4), suffix=st.sampled_from((".jsonl", ".json")))
def test_random_records_give_items_or_a_located_data_error(tmp_path, records, suffix):
    lines = [json.dumps(r) for r in records]  # json.dumps writes NaN/Infinity, as careless tools do
    text = "\n".join(lines) + "\n" if suffix == ".jsonl" else "[" + ",\n".join(lines) + "]"
    _loads_or_data_error(tmp_path / f"f{suffix}", text.encode())


def _loads_or_data_error(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    for loader in (load_items, load_judgments):
        try:
            loader(path)
        except DataError as exc:
            assert str(exc).startswith(str(path)), exc
            assert exc.line is None or 1 <= exc.line <= data.count(b"\n") + 1, exc


# ---- helpers ---------------------------------------------------------------------------------------------------
def _names_place(message: str, path: Path, line: int | None, field: str | None) -> None:
    text = " ".join(message.split())  # the console may wrap a long line
    where = f"{path}:{line}" if line is not None else str(path)
    assert where in text, (where, text)
    if line is None:
        assert not re.search(re.escape(str(path)) + r":\d", text), text
    if field is not None:
        assert f"'{field}'" in text, (field, text)


def _cli_in_process(args: list[object], capsys) -> tuple[int, str]:
    """The real entry point (``judgelab.cli.main``) in this process: fast enough to try every file x command."""
    from judgelab import cli

    argv = sys.argv
    sys.argv = ["judgelab", *map(str, args)]
    capsys.readouterr()
    try:
        cli.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = argv
    captured = capsys.readouterr()
    return code, captured.out + captured.err
