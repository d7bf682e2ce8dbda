"""Human-written criteria from the benchmark's auxiliary_prompts.jsonl, or the user's own text."""

from __future__ import annotations

import json

import pytest

from judgelab.errors import ConfigError
from judgelab.prompts import criteria_text, find_auxiliary, load_human_criteria


@pytest.fixture()
def auxiliary_file(tmp_path):
    rows = [
        {"kind": "criteria", "written_by": "human", "dataset": "hanna", "aspect": "coherence", "scale": 5,
         "model": None, "criteria_from": None, "text": "Coherence on 5.\n"},
        {"kind": "criteria", "written_by": "human", "dataset": "hanna", "aspect": "coherence", "scale": 10,
         "model": None, "criteria_from": None, "text": "Coherence on 10."},
        {"kind": "criteria", "written_by": "human", "dataset": "sfhot", "aspect": "naturalness", "scale": None,
         "model": None, "criteria_from": None, "text": "Naturalness, any scale."},
        {"kind": "autocot", "written_by": "llm", "dataset": "hanna", "aspect": "coherence", "scale": 10,
         "model": "gpt4o_mini", "criteria_from": "human", "text": "1. Read."},
    ]
    path = tmp_path / "auxiliary_prompts.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_criteria_for_the_scale_else_the_scale_free_text(auxiliary_file):
    assert load_human_criteria("hanna", "Coherence", 10, path=auxiliary_file) == "Coherence on 10."
    assert load_human_criteria("hanna", "coherence", 5, path=auxiliary_file) == "Coherence on 5."
    assert load_human_criteria("sfhot", "naturalness", 100, path=auxiliary_file) == "Naturalness, any scale."
    with pytest.raises(ConfigError, match=r"only for scales \[5, 10\]"):
        load_human_criteria("hanna", "coherence", 3, path=auxiliary_file)
    with pytest.raises(ConfigError, match="none at all"):
        load_human_criteria("hanna", "surprise", 5, path=auxiliary_file)


def test_llm_written_texts(auxiliary_file):
    text = find_auxiliary("autocot", "hanna", "coherence", 10, written_by="llm", model="gpt4o_mini",
                          criteria_from="human", path=auxiliary_file)
    assert text == "1. Read."


def test_users_own_criteria_win(auxiliary_file):
    assert criteria_text("coherence", 10, text="  My criteria. ") == "My criteria."
    assert criteria_text("coherence", 10, dataset="hanna", path=auxiliary_file) == "Coherence on 10."
    with pytest.raises(ConfigError, match="no criteria for .coherence.: say what it means with criteria"):
        criteria_text("coherence", 10)


def test_env_var_points_at_the_benchmarks_folder(auxiliary_file, monkeypatch):
    monkeypatch.setenv("JUDGELAB_BENCHMARKS", str(auxiliary_file.parent))
    assert load_human_criteria("hanna", "coherence", 10) == "Coherence on 10."


def test_the_shared_benchmark_file(benchmarks_dir):
    path = benchmarks_dir / "auxiliary_prompts.jsonl"
    assert "A score of 2 (somewhat)" in load_human_criteria("topical_chat", "coherence", 3, path=path)
    assert load_human_criteria("summeval", "fluency", 10, path=path).startswith("Fluency:")
