"""``jl.judge`` with the embedded test model on three tiny items: the run the front door returns, its table
and its HTML view, and the run given straight to ``jl.meta`` (docs/python.md)."""

from __future__ import annotations

from pathlib import Path

import judgelab as jl
from tests.conftest import TEST_MODEL

DEMO_JUDGE = Path(jl.__file__).parent / "examples" / "demo_judge.yaml"  # rate first, expected rating from logprobs
ITEMS = [
    {"id": "good", "system_id": "a", "source": "The council approved a new park on Tuesday.",
     "output": "The council approved a new park.", "scores": {"coherence": 5}},
    {"id": "bad", "system_id": "b", "source": "The council approved a new park on Tuesday.",
     "output": "Park Tuesday the new approved council a.", "scores": {"coherence": 1}},
    {"id": "fair", "system_id": "a", "source": "Rain is expected all weekend in the north.",
     "output": "Rain is expected in the north this weekend, all of it.", "scores": {"coherence": 3}},
]


def test_judge_runs_the_embedded_model_and_returns_a_run_every_verb_takes(test_model_path, tmp_path):
    run = jl.judge(ITEMS, config=DEMO_JUDGE, model=TEST_MODEL, cache_path=tmp_path / "cache.sqlite",
                   out=tmp_path / "run")
    assert isinstance(run, jl.JudgeRun) and [j.item_id for j in run.judgments] == ["good", "bad", "fair"]
    assert sum(run.counts.values()) == 3 and run.usage["calls"] + run.usage["cache_hits"] >= 3
    frame = run.to_pandas()
    assert list(frame["item_id"]) == ["good", "bad", "fair"] and list(frame["human"]) == [5, 1, 3]
    html = run._repr_html_()
    assert 'id="accounting"' in html and '<table id="judgments"' in html and "good" in html
    assert (tmp_path / "run" / "report.html").is_file() and run.config.aspect == "coherence"
    scored = [j for j in run.judgments if j.ok]
    if len(scored) >= 3:  # a meta-evaluation of the run itself, as judgelab meta --judgments RUN reads it
        assert jl.meta(ITEMS, run, bootstrap=0).coverage.n_used == 3


def test_audit_runs_the_probes_with_a_pairwise_judge(test_model_path, tmp_path):
    comparisons = [{"id": f"c{k}", "instruction": "Name a colour.", "output_a": "Blue.",
                    "output_b": "Green is a colour.", "label": "a"} for k in range(2)]
    audited = jl.audit(comparisons, probes="swap", model=TEST_MODEL, cache_path=tmp_path / "cache.sqlite")
    assert list(audited.probes) == ["swap"] and audited.n_items == 2 and audited.rows == []
    flips = audited.to_pandas().set_index("name").loc["swap: flip rate"]
    assert flips.n + audited.probes["swap"].failed == 2 and "probes only" in audited.not_measured[0]
