"""The runner's streamed mode, resume and Ctrl-C, with a judge that calls no model.

The same paths with the real embedded model: tests/integration/test_runner.py (SIGINT on a real
run, Ray workers). Memory and throughput on a million items: bench/bench_stream.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar, Literal

import pytest

from judgelab.data import Item, Judgment
from judgelab.data.io import load_judgments, save_items
from judgelab.errors import ConfigError, DataError
from judgelab.judges.base import JudgeConfig
from judgelab.llm.backends.none import no_llm_client
from judgelab.runner import run_judge
from judgelab.runner.stream import chunks, count_lines, iter_items

JUDGED: list[str] = []  # ids each run of LengthJudge was given, to check what a resume re-judges


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
