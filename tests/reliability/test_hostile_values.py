"""Hostile files and values (issue 31, items 10-18): a gzip bomb, an item larger than any request may
be, out-of-range numbers in configs, on the command line and in a server's usage, names that would
leave the output folder, a symlinked or world-readable cache, a leaderboard of 1,500 systems,
judgment scores off the items' scale, and ratings written in exponents or other scripts' digits.

Each refusal is one located line and exit 2 (or, for what a server sends, a per-item record), and
nothing is paid or written on the way. Bounds are lowered through their documented settings (the
``JUDGELAB_MAX_INPUT_BYTES`` environment variable) so that each case takes a second or two.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pytest

from judgelab.data.io import load_items, save_items
from judgelab.errors import DataError, JudgelabError
from judgelab.llm.cache import CompletionCache
from tests.reliability.hostile_server import HostileServer
from tests.reliability.scenario import fast_judge, make_items, server_client
from tests.reliability.test_hostile_input import _cli_in_process

CRITERIA = "Coherence (1-5): the summary is well organised."
SERVER_JUDGE = ["--aspect", "coherence", "--family", "summarisation", "--criteria", CRITERIA,
                "--strategy", "scale=5,cot=none"]


def _judgments(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]


# ---- 18. ratings in exponents or in other scripts' digits ----------------------------------------------------------
@pytest.mark.parametrize("reply", ["Rating: [[1e1]]", "Rating: [[٣]]", "Rating: ٣", "Rating: [[３]]"])
def test_a_rating_in_an_exponent_or_foreign_digits_is_recorded_unparsable(reply, tmp_path, capsys):
    """``[[1e1]]`` was read as 1 and Arabic-Indic digits as numbers: now the judgment is ``unparsable``
    with the reply kept, and never a score (the real CLI against a server that answers this)."""
    data = save_items(make_items(2), tmp_path / "items.jsonl")
    with HostileServer("ok", reply=reply) as server:
        code, output = _cli_in_process(["judge", "--data", data, *SERVER_JUDGE, "--model", server.base_url,
                                        "--out", tmp_path / "run", "--no-cache"], capsys)
    assert code == 0, output
    judgments = _judgments(tmp_path / "run")
    assert [(j["status"], j.get("score")) for j in judgments] == [("unparsable", None)] * 2, judgments
    assert all(j["raw"] == reply for j in judgments)


# ---- 13. usage a server makes up ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("usage", "field"), [({"prompt_tokens": 10**30}, "usage.prompt_tokens"),
                                              ({"completion_tokens": -5}, "usage.completion_tokens")])
def test_impossible_token_counts_are_a_malformed_reply_not_accounting(usage, field):
    """``prompt_tokens: 10**30`` or ``completion_tokens: -5`` went into the run's usage and cost: such a
    reply is malformed (retried, then that item alone is an error naming the field), and nothing of it
    is counted or cached."""
    with HostileServer("ok", usage=usage) as server, \
            server_client(server.base_url, None, max_attempts=2) as client:
        judgments = fast_judge().run(make_items(2), client)
    assert [j.status for j in judgments] == ["error", "error"]
    for judgment in judgments:
        assert "malformed reply" in judgment.reason and field in judgment.reason, judgment.reason
    assert server.posts == 4
    assert (client.usage.calls, client.usage.prompt_tokens, client.usage.completion_tokens) == (0, 0, 0)


# ---- 10. a gzip bomb -------------------------------------------------------------------------------------------
def _gzip_bomb(path: Path, unpacked_mib: int) -> Path:
    """``unpacked_mib`` MiB of zeros in about a thousandth of that: one 64 MiB gzip member (64 KB),
    repeated (gzip readers unpack concatenated members as one stream). Built in a fraction of a second."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    zeros = bytes(2**20)
    member = b"".join([*(packer.compress(zeros) for _ in range(64)), packer.flush()])
    path.write_bytes(member * max(1, unpacked_mib // 64))
    return path


def _peak_traced(read) -> tuple[BaseException | None, int]:
    """What ``read()`` raised and the peak of Python's allocations meanwhile (tracemalloc: a bytes
    object of the unpacked data would show here whole)."""
    tracemalloc.start()
    try:
        read()
        raised = None
    except Exception as exc:  # noqa: BLE001 - the caller checks what it is
        raised = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return raised, peak


@pytest.mark.parametrize("reader", ["load_items", "load_judgments", "stream"])
def test_a_gzip_bomb_is_refused_once_unpacked_past_the_bound(reader, tmp_path, monkeypatch):
    """128 MiB of zeros in a 130 KB file (read whole, or streamed as JSON lines): refused with the
    file's name once 4 MiB are unpacked (the bound, lowered for the test); the unpacked data is never
    held whole (it was: gzip.decompress, or one 128 MiB 'line' for a stream)."""
    from judgelab.data.io import load_judgments
    from judgelab.data.stream import iter_items

    bomb = _gzip_bomb(tmp_path / "items.jsonl.gz", 128)
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "4M")
    read = {"load_items": lambda: load_items(bomb), "load_judgments": lambda: load_judgments(bomb),
            "stream": lambda: list(iter_items(bomb))}[reader]
    raised, peak = _peak_traced(read)
    assert isinstance(raised, DataError), raised
    message = str(raised)
    assert message.startswith(str(bomb)) and "over the 4 MiB limit" in message, message
    assert "JUDGELAB_MAX_INPUT_BYTES" in message
    assert peak < 24 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_a_3gb_gzip_bomb_through_the_cli_exits_2_with_low_memory(tmp_path):
    """The issue's case at full size with the default bound (128 MiB): a 3 MB file that unpacks to 3 GB,
    as ``meta --data`` in a separate process. It used to peak at 3.4 GB; now one line, exit 2, and the
    process's peak RSS stays far below the unpacked size."""
    bomb = _gzip_bomb(tmp_path / "bomb.jsonl.gz", 3 * 1024)
    good = save_items(make_items(2), tmp_path / "items.jsonl")
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"item_id": f"it-{i:04d}", "score": 3}) + "\n" for i in range(2)))
    rss = tmp_path / "maxrss"
    # VmHWM, the peak of this process's own memory since its exec: ru_maxrss would also carry the
    # forking pytest process's size across the exec (1.6 GB late in a full run)
    report_rss = ("import atexit, re, sys; out = sys.argv.pop(1); atexit.register(lambda: open(out, 'w').write("
                  "re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))); "
                  "sys.argv[0] = 'judgelab'; from judgelab.cli import main; main()")
    env = {k: v for k, v in os.environ.items() if k != "JUDGELAB_MAX_INPUT_BYTES"}
    for command in (["meta", "--data", bomb, "--judgments", judgments], ["meta", "--data", good, "--judgments", bomb]):
        done = subprocess.run([sys.executable, "-c", report_rss, str(rss), *map(str, command)], capture_output=True,
                              text=True, timeout=300, env=env, preexec_fn=_cap_memory)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2, done.stderr
        assert len(lines) == 1 and lines[0].startswith(f"error: {bomb}: "), done.stderr
        assert "over the 128 MiB limit" in lines[0], lines[0]
        peak_mib = int(rss.read_text()) / 1024  # kilobytes
        assert peak_mib < 700, f"peak RSS {peak_mib:.0f} MiB"


def _cap_memory() -> None:  # the old reader stops at 4 GB instead of eating the machine
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_a_plain_file_past_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """The same bound for a plain file read whole (its size on disk): a located line, nothing read."""
    path = save_items(make_items(50), tmp_path / "items.jsonl")
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", str(path.stat().st_size - 1))
    with pytest.raises(DataError, match=r"items\.jsonl: .* over the .* limit on one input"):
        load_items(path)
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", str(path.stat().st_size))
    assert len(load_items(path)) == 50


# ---- 11. a request larger than the bound -------------------------------------------------------------------------
def test_a_request_past_the_bound_is_not_sent_and_fails_its_item_alone(tmp_path, capsys, monkeypatch):
    """An item that loads (the file is within the bound) but whose prompt is larger than the bound: that
    item is an error naming the limit and nothing of it reaches the server; the other item is judged.
    A 200 MB item used to be sent whole."""
    items = make_items(2)
    items[0] = items[0].model_copy(update={"output": "word " * 200_000})  # 1 MB
    data = save_items(items, tmp_path / "items.jsonl")
    bound = data.stat().st_size
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", str(bound))
    with HostileServer("ok") as server:
        code, output = _cli_in_process(["judge", "--data", data, *SERVER_JUDGE, "--model", server.base_url,
                                        "--out", tmp_path / "run", "--no-cache"], capsys)
    assert code == 0, output
    assert server.post_bytes and max(server.post_bytes) <= bound, (server.post_bytes, bound)
    assert server.posts == 1
    by_id = {j["item_id"]: j for j in _judgments(tmp_path / "run")}
    assert by_id["it-0001"]["status"] == "ok"
    assert by_id["it-0000"]["status"] == "error" and "limit on one input" in by_id["it-0000"]["reason"]


def test_the_bound_setting_is_checked(monkeypatch, tmp_path):
    path = save_items(make_items(1), tmp_path / "items.jsonl")
    for bad in ("-1", "0", "lots", "1.5G"):
        monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", bad)
        with pytest.raises(JudgelabError, match="JUDGELAB_MAX_INPUT_BYTES"):
            load_items(path)


def test_a_stream_past_the_bound_is_judged_whole_and_its_metrics_say_why_they_are_missing(tmp_path, monkeypatch):
    """A JSON-lines file larger than the bound streams line by line; only the agreement figures, which
    read it whole, are left out with the reason (the run is not failed after every item was judged)."""
    from judgelab.llm.backends.none import no_llm_client
    from judgelab.runner import run_judge
    from tests.unit.test_runner_stream import LengthJudge, _items

    data = save_items(_items(40), tmp_path / "items.jsonl")
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", str(data.stat().st_size // 2))
    with no_llm_client() as client:
        result = run_judge(LengthJudge(), data, client, tmp_path / "run", chunk_size=10)
    assert sum(result.counts.values()) == 40
    assert "over the" in result.metrics["unavailable"] and str(data) in result.metrics["unavailable"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "finished"


# ---- 12. numbers out of range on the command line ----------------------------------------------------------------
def _numeric_options() -> list[tuple[list[str], str, str]]:
    """(command path, option, 'int' or 'float') for every numeric option of every command."""
    import typer

    from judgelab.cli import app

    def walk(command, path):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, command

    found = []
    for path, command in walk(typer.main.get_command(app), []):
        for param in command.params:
            kind = str(param.bare_type())
            if kind in ("int", "float") and param.opts[0].startswith("-"):
                found.append((path, max(param.opts, key=len), kind))
    return found


NUMERIC_OPTIONS = _numeric_options()


def test_the_sweep_finds_the_numeric_options():
    assert len(NUMERIC_OPTIONS) >= 60
    assert (["judge"], "--limit", "int") in NUMERIC_OPTIONS and (["judge"], "--timeout", "float") in NUMERIC_OPTIONS


@pytest.mark.parametrize(("path", "option", "kind"), NUMERIC_OPTIONS,
                         ids=[f"{' '.join(p)} {o}" for p, o, _ in NUMERIC_OPTIONS])
def test_every_numeric_option_refuses_values_out_of_range_in_one_line(path, option, kind, tmp_path, capsys):
    """Every int and float option of every command, given first: a huge negative number (and for floats
    inf and nan) is exit 2 with one ``error:`` line naming the option, before anything else is read."""
    values = ["-1000000000000", *(("inf", "nan") if kind == "float" else ())]
    for value in values:
        code, output = _cli_in_process([*path, option, value], capsys)
        lines = [line for line in output.splitlines() if line.strip()]
        assert code == 2, (option, value, output)
        assert len(lines) == 1 and lines[0].startswith(f"error: {option} "), (option, value, output)
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", [["--samples", "-3", "--temperature", "0.5"], ["--temperature", "-1"],
                                 ["--limit", "-1"], ["--limit", "0"], ["--timeout", "inf"],
                                 ["--samples", "100000000", "--temperature", "0.5"], ["--chunk-size", "0", "--stream"]])
def test_the_issue_command_lines_are_refused_before_any_call(bad, tmp_path, capsys):
    """``--samples -3`` and ``--temperature -1`` were internal errors (exit 1), ``--limit -1`` judged 1 of
    2 items, ``--timeout inf`` was accepted: with a real server, exit 2, no request, no run folder."""
    data = save_items(make_items(2), tmp_path / "items.jsonl")
    with HostileServer("ok") as server:
        code, output = _cli_in_process(["judge", "--data", data, *SERVER_JUDGE, "--model", server.base_url,
                                        "--out", tmp_path / "run", "--no-cache", *bad], capsys)
    assert code == 2 and f"error: {bad[0]} {bad[1]}" in output, output
    assert server.posts == 0 and not (tmp_path / "run").exists()


# ---- 14. names from user input that would leave the output folder -----------------------------------------------------
@pytest.mark.parametrize("aspect", ["../../../outside/x", "/tmp/absolute", "..", "a/b\\c:d"])
def test_an_aspect_name_never_writes_outside_the_output_folder(aspect, tmp_path, capsys):
    """``fit --method similarity --aspect ../../../outside/x`` wrote its weights to ``outside/`` three
    folders up: file names derived from user input are made safe (one helper, ``files.safe_name``), so
    everything the command writes is inside the folder of ``--out``."""
    items = [item.model_copy(update={"scores": {aspect: item.scores["coherence"]}}) for item in make_items(30)]
    data = save_items(items, tmp_path / "items.jsonl")
    out = tmp_path / "a" / "b" / "fit.yaml"
    before = {p for p in tmp_path.rglob("*")}
    code, output = _cli_in_process(["fit", "--method", "similarity", "--aspect", aspect, "--data", data,
                                    "--out", out], capsys)
    assert code == 0, output
    written = {p for p in tmp_path.rglob("*") if p.is_file()} - before
    assert out in written and all(p.resolve().is_relative_to(out.parent) for p in written), sorted(written)
    assert not (tmp_path / "outside").exists() and not Path("/tmp/absolute").exists()
    code, output = _cli_in_process(["judge", "--config", out, "--data", data, "--out", tmp_path / "run"], capsys)
    assert code == 0, output  # the fitted config finds its weights where they were written


def test_safe_names_stay_one_component():
    from judgelab.files import safe_name

    for text in ("../../x", "..", ".", "", "a/b", "a\\b", "/abs", "x\x00y", "é" * 300, ".hidden", "ok-name_1.2"):
        name = safe_name(text)
        assert name and name not in (".", "..") and "/" not in name and "\\" not in name and "\x00" not in name
        assert not name.startswith(".") and len(name) <= 80, (text, name)
    assert safe_name("coherence") == "coherence" and safe_name("ok-name_1.2") == "ok-name_1.2"


# ---- 15. a cache path that is a symlink, or readable by others ---------------------------------------------------------
def test_a_symlinked_cache_path_is_refused_and_left_alone(tmp_path, capsys):
    """``--cache-path`` pointing (by a symlink) at a file elsewhere was used, and stayed mode 644 although
    the cache holds every prompt: a symlink is refused with one line naming it, before any call, and the
    file it points at is not touched."""
    elsewhere = tmp_path / "elsewhere" / "shared.sqlite"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(b"")
    elsewhere.chmod(0o644)
    link = tmp_path / "cache.sqlite"
    link.symlink_to(elsewhere)
    data = save_items(make_items(2), tmp_path / "items.jsonl")
    with HostileServer("ok") as server:
        code, output = _cli_in_process(["judge", "--data", data, *SERVER_JUDGE, "--model", server.base_url,
                                        "--out", tmp_path / "run", "--cache-path", link], capsys)
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {link}: "), output
    assert "symbolic link" in lines[0]
    assert server.posts == 0 and not (tmp_path / "run").exists()
    assert elsewhere.read_bytes() == b"" and elsewhere.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in elsewhere.parent.iterdir()) == ["shared.sqlite"]


def test_an_existing_cache_readable_by_others_is_made_owner_only(tmp_path, capsys):
    """A cache file another tool (or an older version, or a umask of 022) left 0644 is made 0600 when it
    is opened, with SQLite's -wal and -shm files beside it."""
    cache = tmp_path / "cache.sqlite"
    with CompletionCache(cache):
        pass
    for path in (cache, *cache.parent.glob("cache.sqlite-*")):
        path.chmod(0o644)
    data = save_items(make_items(2), tmp_path / "items.jsonl")
    with HostileServer("ok") as server:
        code, output = _cli_in_process(["judge", "--data", data, *SERVER_JUDGE, "--model", server.base_url,
                                        "--out", tmp_path / "run", "--cache-path", cache], capsys)
    assert code == 0, output
    modes = {path.name: oct(path.stat().st_mode & 0o777) for path in tmp_path.glob("cache.sqlite*")}
    assert modes["cache.sqlite"] == "0o600" and set(modes.values()) == {"0o600"}, modes


# ---- 16. a leaderboard of 1,500 systems ------------------------------------------------------------------------------
def _many_systems(folder: Path, n_systems: int) -> tuple[Path, Path]:
    """``n_systems`` systems x 3 items (sources shared), with human scores, and a judge's verdicts."""
    rows, verdicts = [], []
    for s in range(n_systems):
        for k in range(3):
            rows.append({"id": f"s{s}-{k}", "output": "x", "system_id": f"sys{s}", "group_id": f"src{k}",
                         "scores": {"quality": 1 + (s * 7 + k) % 5}})
            verdicts.append({"item_id": f"s{s}-{k}", "score": 1 + (s * 3 + k * 2) % 5})
    data, judgments = folder / "items.jsonl", folder / "judgments.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judgments.write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    return data, judgments


@pytest.mark.timeout(300)
def test_1500_systems_give_a_leaderboard_without_the_pairwise_table(tmp_path):
    """1,500 systems (4,500 items) ended in a MemoryError at 7.5 GB (every pair of systems, 1.1 million,
    per estimator). Past 200 systems the pairwise table and rank intervals are left out, with the reason,
    and the estimates and ranks are written (a separate process under a 2 GB address-space cap)."""
    data, judgments = _many_systems(tmp_path, 1500)
    out = tmp_path / "report"

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = subprocess.run([sys.executable, "-m", "judgelab.cli", "evaluate", "--data", str(data), "--judgments",
                           str(judgments), "--bootstrap", "200", "--json", "--out", str(out)], capture_output=True,
                          text=True, timeout=280, preexec_fn=cap)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert len(result["systems"]) == 1500 and result["pairs"] == {}
    assert "up to 200 systems" in result["pairs_omitted"]
    ranks = sorted(entry["rank"] for name, entry in result["estimators"]["judge"].items() if name != "info")
    assert ranks == list(range(1, 1501))
    assert (out / "systems.csv").read_text().count("\n") == 1501 and (out / "report.html").is_file()


def test_labels_for_too_many_systems_are_refused_in_one_line(tmp_path, capsys):
    data, judgments = _many_systems(tmp_path, 301)
    code, output = _cli_in_process(["evaluate", "--data", data, "--judgments", judgments, "--human-ids", "all"], capsys)
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "up to 300 systems" in lines[0], output


# ---- 17. judgment scores off the items' scale ------------------------------------------------------------------------
def test_judgment_scores_off_the_items_scale_get_no_label_agreement(tmp_path, capsys):
    """Items on 1-5 and a judgment of 7: ``meta`` counted 7 as a label in accuracy, kappa and alpha. Label
    agreement needs one scale: it is left out with a warning naming the item and the scale (correlations,
    which a judge on its own scale may rightly have, are kept); on-scale judgments keep it."""
    items = [item.model_copy(update={"scale": (1, 5)}) for item in make_items(12)]
    data = save_items(items, tmp_path / "items.jsonl")
    on_scale = [{"item_id": item.id, "score": 1 + (k * 2) % 5} for k, item in enumerate(items)]
    judgments = tmp_path / "judgments.jsonl"
    for rows, off in ((on_scale, False), ([*on_scale[:-1], {"item_id": items[-1].id, "score": 7}], True)):
        judgments.write_text("".join(json.dumps(r) + "\n" for r in rows))
        code, output = _cli_in_process(["meta", "--data", data, "--judgments", judgments, "--bootstrap", "0",
                                        "--json"], capsys)
        assert code == 0, output
        result = json.JSONDecoder().raw_decode(output, output.index("{"))[0]
        assert ("agreement" in result) is not off and "dataset" in result, sorted(result)
        warned = "judge value 7 for item 'it-0011' is outside the items' coherence scale 1-5" in " ".join(output.split())
        assert warned is off, output
