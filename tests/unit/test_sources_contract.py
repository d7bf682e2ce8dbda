"""The contract every reader of another tool's files meets (``judgelab.data.sources.SOURCES``), run over the
registry as it is, as test_contract.py runs over the judge kinds: its real fixture is claimed by it alone and
read; every hostile variant of that file (empty, not JSON, cut short, the wrong shape, nested past any
budget, bytes that are no UTF-8, a FIFO) is refused with a judgelab error naming the file, never another
exception, a hang or a guess. A new reader joins SOURCES and FIXTURES, and is checked."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from judgelab.data.sources import detect_source, read_source
from judgelab.errors import JudgelabError
from judgelab.tools import SOURCES

HERE = Path(__file__).resolve().parents[1] / "data" / "sources"
#: each reader's fixture (a file or a run folder) and, inside it, the file the hostile variants replace
FIXTURES = {
    "inspect": ("inspect/eval", "2026-11-27T19-12-53-00-00_quiz_jo7RhZQAV87RvDMWHPFqW4.eval"),
    "promptfoo": ("promptfoo/results.json", None),
    "lm-eval": ("lm-eval/3ykv54sv", "results_2026-11-27T19-19-08.208547.json"),
    "deepeval": ("deepeval/runs", "test_run_20261127_193849.json"),
    "alpaca-eval": ("alpaca-eval/alpaca-7b/weighted_alpaca_eval_gpt4_turbo/annotations.json", None),
    "arena-hard": ("arena-hard/gpt-4-1106-preview", "gpt-4-0613.jsonl"),
    "mt-bench": ("mt-bench/gpt-4_single.jsonl", None),
    "otel": ("otel/spans.jsonl", None),
    "mlflow": ("mlflow/traces.jsonl", None),
    "langfuse": ("langfuse/traces.jsonl", None),
    "devai": ("devai/benchmark", "judgment/agent-a/human_as_a_judge/01_Word_Count_Toy.json"),
    # made-up records in JudgeBench's format (the repository states no licence): kept with the published tables
    "judgebench": ("../published/judgebench/outputs",
                   "dataset=judgebench,response_model=toy-writer,judge_name=reward_model,judge_model=toy_rm.jsonl"),
}
HOSTILE = {
    "empty": b"",
    "not JSON": b"this is not what the tool wrote\n",
    "cut short": b'{"version": 2, "status": "success", "samples": [{"id": 1, "scores": {"match": {"val',
    "wrong shape": b"[1, 2, 3]\n",
    "nested past the budget": b"[" * 200_000 + b"]" * 200_000,
    "not UTF-8": b'{"a": "\xff\xfe\xfa"}\n',
}


def test_every_reader_in_the_registry_has_a_fixture():
    assert set(FIXTURES) == set(SOURCES)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_the_fixture_is_claimed_by_its_reader_alone_and_read(source):
    path = HERE / FIXTURES[source][0]
    assert detect_source(path) == source  # any second claimant would be a ConfigError here
    read = read_source(path)
    assert read.source == source and len(read.items) > 0
    judged = read.judgments if isinstance(read.judgments, list) else [j for js in read.judgments.values() for j in js]
    assert judged and {j.item_id for j in judged} <= {item.id for item in read.items}


def _fixture_copy(tmp_path: Path, source: str) -> tuple[Path, Path]:
    """(what to read, where its main file goes): the fixture's folder copied without its main file, or the
    path of a single-file fixture's copy (not written yet)."""
    fixture, main = FIXTURES[source]
    original = HERE / fixture
    target = tmp_path / original.name
    if not original.is_dir():
        return target, target
    shutil.copytree(original, target)
    (target / main).unlink()
    return target, target / main


@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_hostile_file_is_refused_with_a_judgelab_error_naming_it(tmp_path, source, kind):
    target, changed = _fixture_copy(tmp_path, source)
    changed.write_bytes(HOSTILE[kind])
    with pytest.raises(JudgelabError) as raised:
        read_source(target, source)
    assert changed.name in str(raised.value) or str(target) in str(raised.value), (source, kind, str(raised.value))


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_fifo_in_place_of_the_file_is_refused_without_opening_it(tmp_path, source):
    target, fifo = _fixture_copy(tmp_path, source)
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            read_source(target, source)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001  (whatever it is, the test names it)
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=20)
    if reader.is_alive():  # unblock the reader stuck on open(), then fail
        with open(fifo, "wb"):
            pass
        pytest.fail(f"{source}: reading a FIFO blocked")
    assert outcome and isinstance(outcome[0], JudgelabError), (source, outcome)
    assert fifo.name in str(outcome[0]), (source, str(outcome[0]))
