"""The runner's streamed mode, resume and Ctrl-C, with a judge that calls no model.

The same paths with the real embedded model: tests/integration/test_runner.py (SIGINT on a real
run, Ray workers). Memory and throughput on a million items: bench/bench_stream.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import ClassVar, Literal

import pytest

from judgelab.data import Item, Judgment
from judgelab.data.io import load_judgments, save_items
from judgelab.data.stream import chunks, count_lines, iter_items
from judgelab.errors import BackendError, ConfigError, DataError
from judgelab.judges.base import JudgeConfig
from judgelab.llm.backends.none import no_llm_client
from judgelab.runner import run_judge

JUDGED: list[str] = []  # ids each run of LengthJudge was given, to check what a resume re-judges
FAIL_AFTER: list[int] = []  # [n]: the backend "goes away" once n items are judged
GATE = threading.Event()  # an item whose output is "wait" waits for it (a run held in progress)


class LengthJudge(JudgeConfig):
    """Scores an output by its length (1-5); 'stop' raises KeyboardInterrupt as Ctrl-C would."""

    registry_name: ClassVar[str] = ""
    kind: Literal["test-length"] = "test-length"
    aspect: str = "quality"

    def run(self, items: Sequence[Item], client, on_judgment=None) -> list[Judgment]:
        out = []
        for item in items:
            if item.output == "stop":
                raise KeyboardInterrupt
            if FAIL_AFTER and len(JUDGED) >= FAIL_AFTER[0]:
                raise BackendError("http://127.0.0.1:9/v1: gave up after 3 attempts: connection refused")
            if item.output == "wait":
                assert GATE.wait(30)
            JUDGED.append(item.id)
            if item.output == "???":
                judgment = Judgment(item_id=item.id, status="unparsable", reason="no rating", raw="???")
            else:
                judgment = Judgment(item_id=item.id, score=len(item.output) % 5 + 1, aspect=self.aspect)
            out.append(self.emit(judgment, on_judgment))
        return out


def _items(n: int, group_size: int = 3) -> list[Item]:
    return [Item(id=f"i{i}", group_id=f"g{i // group_size}", output="???" if i == 5 else "x" * (i % 7),
                 scores={"quality": i % 5 + 1}) for i in range(n)]


@pytest.fixture(autouse=True)
def _reset():
    JUDGED.clear()
    FAIL_AFTER.clear()
    GATE.clear()


def test_stream_from_a_file_writes_every_item_once(tmp_path):
    data = save_items(_items(50), tmp_path / "items.jsonl")
    with no_llm_client() as client:
        result = run_judge(LengthJudge(), str(data), client, tmp_path / "run", chunk_size=7)
    lines = load_judgments(tmp_path / "run" / "judgments.jsonl")
    assert sorted(j.item_id for j in lines) == sorted(f"i{i}" for i in range(50))
    assert len(result.judgments) == 50 and [j.item_id for j in result.judgments] == [j.item_id for j in lines]
    assert result.counts == {"ok": 49, "unparsable": 1, "error": 0}
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "finished" and record["items"] == 50 and record["data"] == str(data)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["coverage"]["n_used"] == 49  # computed from the files after the stream
    with no_llm_client() as client:  # a path as text streams too (a str is a Sequence, of characters)
        again = run_judge(LengthJudge(), str(data), client, tmp_path / "again")
    assert len(again.judgments) == 50 and again.usage["resumed_items"] == 0
    assert (tmp_path / "run" / "report.html").is_file()


def test_chunks_keep_groups_whole_and_stay_bounded():
    items = _items(40, group_size=4) + [Item(id=f"big{i}", group_id="big", output="o") for i in range(25)]
    parts = list(chunks(iter(items), 6))
    assert [item.id for part in parts for item in part] == [item.id for item in items]
    assert all(len(part) <= 12 for part in parts)
    for part in parts[:-1]:
        following = parts[parts.index(part) + 1]
        if part[-1].group != "big":
            assert part[-1].group != following[0].group  # cut between groups


def test_resume_a_stream_judges_only_what_is_new(tmp_path):
    items = _items(30)
    with no_llm_client() as client:
        run_judge(LengthJudge(), iter(items[:12]), client, tmp_path / "run", chunk_size=5)
        JUDGED.clear()
        result = run_judge(LengthJudge(), iter(items), client, tmp_path / "run", chunk_size=5)
    assert sorted(JUDGED) == sorted(item.id for item in items[12:])
    assert result.usage["resumed_items"] == 12 and len(result.judgments) == 30
    assert len(load_judgments(tmp_path / "run" / "judgments.jsonl")) == 30


def test_ctrl_c_keeps_what_finished_and_marks_the_run(tmp_path):
    items = _items(20)
    items[13] = Item(id="i13", group_id="g4", output="stop")
    with no_llm_client() as client, pytest.raises(KeyboardInterrupt):
        run_judge(LengthJudge(), iter(items), client, tmp_path / "run", chunk_size=4)
    kept = [j.item_id for j in load_judgments(tmp_path / "run" / "judgments.jsonl")]
    assert kept == JUDGED and len(kept) == 13  # chunks are cut at group boundaries: 12 + "i12"
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "interrupted" and record["counts"]["ok"] + record["counts"]["unparsable"] == 13


def test_ctrl_c_in_a_batch_run_keeps_what_finished(tmp_path):
    items = _items(10)
    items[6] = Item(id="i6", group_id="g2", output="stop")
    with no_llm_client() as client, pytest.raises(KeyboardInterrupt):
        run_judge(LengthJudge(), items, client, tmp_path / "run")
    assert [j.item_id for j in load_judgments(tmp_path / "run" / "judgments.jsonl")] == [f"i{i}" for i in range(6)]
    items[6] = Item(id="i6", group_id="g2", output="fine")
    JUDGED.clear()
    with no_llm_client() as client:
        result = run_judge(LengthJudge(), items, client, tmp_path / "run")
    assert JUDGED == [f"i{i}" for i in range(6, 10)] and result.usage["resumed_items"] == 6
    assert [j.item_id for j in result.judgments] == [item.id for item in items]


def test_bad_line_is_named_and_earlier_judgments_are_kept(tmp_path):
    path = save_items(_items(12), tmp_path / "items.jsonl")
    lines = path.read_text().splitlines()
    lines.insert(9, '{"id": "broken", "scores": {"quality": "high"}, "output": "o"}')
    path.write_text("\n".join(lines) + "\n")
    with no_llm_client() as client, pytest.raises(DataError, match=r"items.jsonl:10: field 'scores.quality'"):
        run_judge(LengthJudge(), path, client, tmp_path / "run", chunk_size=3)
    assert len(load_judgments(tmp_path / "run" / "judgments.jsonl")) >= 6


@pytest.mark.parametrize("text", ['{"judge_digest": "x",', '["not", "an", "object"]'])
def test_a_corrupt_run_json_stops_the_resume_naming_it_and_keeps_the_judgments(tmp_path, text):
    items = _items(6)
    with no_llm_client() as client:
        run_judge(LengthJudge(), items[:3], client, tmp_path / "run")
        (tmp_path / "run" / "run.json").write_text(text)
        with pytest.raises(DataError, match=r"run[/\\]run\.json(:1)?: .*cannot resume"):
            run_judge(LengthJudge(), items, client, tmp_path / "run")
    assert (tmp_path / "run" / "run.json").read_text() == text
    assert len(load_judgments(tmp_path / "run" / "judgments.jsonl")) == 3


def test_streaming_needs_a_folder_and_jsonl(tmp_path):
    with no_llm_client() as client, pytest.raises(ConfigError, match="run folder"):
        run_judge(LengthJudge(), iter(_items(3)), client)
    with pytest.raises(DataError, match="JSON lines"):
        next(iter_items(tmp_path / "items.csv"))


def test_count_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("a\nb\nc")
    assert count_lines(path) == 3


# ---- how a run ends, and who may run into a folder ------------------------------------------------------------
def _record(folder) -> dict:
    return json.loads((folder / "run.json").read_text())


@pytest.mark.parametrize("where", ["later chunk", "same chunk"])
def test_a_duplicate_id_in_a_stream_is_named_by_file_and_line_and_never_judged_twice(tmp_path, where):
    path = save_items(_items(12), tmp_path / "items.jsonl")
    lines = path.read_text().splitlines()
    at = {"later chunk": 11, "same chunk": 8}[where]  # chunks of 3: i1 again alone in chunk 4, or within chunk 3
    lines.insert(at, lines[1])
    path.write_text("\n".join(lines) + "\n")
    with no_llm_client() as client, pytest.raises(
            DataError, match=rf"items\.jsonl:{at + 1}: field 'id': duplicate id 'i1' \(first used on line 2\)$"):
        run_judge(LengthJudge(), path, client, tmp_path / "run", chunk_size=3)
    assert JUDGED == [] and not (tmp_path / "run").exists()  # a file's ids are checked whole before judging


def test_a_duplicate_id_from_an_iterator_is_named_by_position(tmp_path):
    items = _items(5)
    with no_llm_client() as client, pytest.raises(DataError, match=r"<items>:6: field 'id': duplicate id 'i0' "
                                                                      r"\(first used on line 1\); items given as an "
                                                                      r"iterator are read once"):
        run_judge(LengthJudge(), iter([*items, items[0]]), client, tmp_path / "run", chunk_size=10)


def test_a_failed_run_says_so_with_why_and_a_rerun_resumes(tmp_path):
    items = _items(10)
    FAIL_AFTER.append(4)
    with no_llm_client() as client, pytest.raises(BackendError):
        run_judge(LengthJudge(), items, client, tmp_path / "run")
    record = _record(tmp_path / "run")
    assert record["status"] == "failed" and "gave up after 3 attempts" in record["error"]
    assert record["items"] == 4 == len(load_judgments(tmp_path / "run" / "judgments.jsonl"))
    FAIL_AFTER.clear()
    with no_llm_client() as client:
        result = run_judge(LengthJudge(), items, client, tmp_path / "run")
    assert result.usage["resumed_items"] == 4 and _record(tmp_path / "run")["status"] == "finished"


@pytest.mark.parametrize("stream", [False, True])
def test_a_run_that_judged_nothing_leaves_no_folder(tmp_path, stream):
    FAIL_AFTER.append(0)  # refused before the first item, like a judge with no criteria
    with no_llm_client() as client, pytest.raises(BackendError):
        run_judge(LengthJudge(), _items(4), client, tmp_path / "new" / "run", chunk_size=2 if stream else None)
    assert not (tmp_path / "new" / "run").exists()


def test_a_folder_holding_no_judgment_is_no_run_to_protect(tmp_path):
    """What an earlier version left after a refused start (run.json 'running', an empty judgments.jsonl)
    does not block the corrected command, whatever judge it names."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"judge_digest": "0123456789ab", "backend": "other", "status": "running"}))
    (folder / "judgments.jsonl").write_text("")
    with no_llm_client() as client:
        result = run_judge(LengthJudge(), _items(4), client, folder)
    assert result.counts["ok"] == 4 and _record(folder)["status"] == "finished"
    (tmp_path / "mine").mkdir()  # a folder the user made is never removed: a failed start leaves it as it was
    FAIL_AFTER.append(len(JUDGED))
    with no_llm_client() as client, pytest.raises(BackendError):
        run_judge(LengthJudge(), _items(4), client, tmp_path / "mine")
    assert list((tmp_path / "mine").iterdir()) == []


@pytest.mark.parametrize("how", ["backend gone", "Ctrl-C"])
def test_a_failed_start_puts_an_existing_streamed_folder_back_as_it_was(tmp_path, how):
    """The resume drops a stream's error lines (they are judged again); a run that then stops before
    judging anything puts them back, with run.json, byte for byte, and leaves no lock file it made."""
    folder = tmp_path / "run"
    with no_llm_client() as client:
        run_judge(LengthJudge(), iter(_items(4)), client, folder, chunk_size=2)
    with (folder / "judgments.jsonl").open("a") as handle:
        handle.write(Judgment(item_id="i4", status="error", reason="server gone").model_dump_json() + "\n")
    (folder / ".run.lock").unlink()
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    items = _items(6)
    if how == "Ctrl-C":
        items[4] = Item(id="i4", group_id="g1", output="stop")
    FAIL_AFTER.append(len(JUDGED))
    with no_llm_client() as client, pytest.raises(KeyboardInterrupt if how == "Ctrl-C" else BackendError):
        run_judge(LengthJudge(), iter(items), client, folder, chunk_size=2)
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


def test_out_naming_a_file_is_refused_and_the_file_left_alone(tmp_path):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    with no_llm_client() as client, pytest.raises(ConfigError, match=r"notes\.txt is a file; give a folder"):
        run_judge(LengthJudge(), _items(3), client, taken)
    assert taken.read_text() == "mine"


def test_a_second_run_into_a_folder_in_use_is_refused_and_then_resumes(tmp_path):
    items = _items(6)
    items[3] = Item(id="i3", group_id="g1", output="wait", scores={"quality": 3})
    folder = tmp_path / "run"
    errors: list[BaseException] = []

    def first() -> None:
        try:
            with no_llm_client() as client:
                run_judge(LengthJudge(), items, client, folder)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        for _ in range(3000):  # the first run holds the folder once it says "running"
            if (folder / "run.json").exists() and _record(folder).get("status") == "running":
                break
            threading.Event().wait(0.01)
        with no_llm_client() as client, pytest.raises(ConfigError, match="in use by another judgelab run"):
            run_judge(LengthJudge(), items, client, folder)
        assert _record(folder)["status"] == "running"  # the refused run wrote nothing
    finally:
        GATE.set()
        thread.join(30)
    assert not errors and _record(folder)["status"] == "finished"
    assert sorted(JUDGED) == sorted(item.id for item in items)  # each judged once, by the first run
    with no_llm_client() as client:
        assert run_judge(LengthJudge(), items, client, folder).usage["resumed_items"] == 6
