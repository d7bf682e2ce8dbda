"""The Python front door (``import judgelab as jl``, docs/python.md): importing it is cheap, each verb takes
files, lists and DataFrames alike and returns the deep module's own figures, with ``to_pandas()`` and an HTML
view that is the report's. No LLM here: the bundled demo's judgments (src/judgelab/examples) and judgments
built in the test; tests/integration/test_front_door_judge.py runs ``jl.judge`` on the embedded test model."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import judgelab as jl
from judgelab.data import Judgment, load_items, load_judgments
from judgelab.errors import ConfigError, DataError

EXAMPLES = Path(jl.__file__).parent / "examples"
ITEMS = EXAMPLES / "demo_summaries.jsonl"
JUDGED = EXAMPLES / "demo_judgments.jsonl"
SOURCES = Path(__file__).resolve().parents[1] / "data" / "sources"
HEAVY = ("numpy", "pandas", "scipy", "sklearn", "pydantic", "httpx", "jinja2", "llama_cpp", "torch")


def _imported_after(code: str) -> list[str]:
    run = subprocess.run([sys.executable, "-c", f"import sys, json\n{code}\n"
                          f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"],
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_import_judgelab_loads_no_heavy_module():
    assert _imported_after("import judgelab as jl") == []
    # naming the verbs (what tab completion and `from judgelab import evaluate` do) loads nothing either
    assert _imported_after("import judgelab as jl\nassert set(jl.VERBS) <= set(dir(jl))\n"
                           "from judgelab import evaluate, judge, load") == []


def test_the_verbs_are_there_and_documented():
    for name in jl.VERBS:
        verb = getattr(jl, name)
        assert callable(verb) and name in jl.__all__
        assert "data" in inspect.signature(verb).parameters and verb.__doc__


def test_evaluate_and_audit_are_verbs_and_still_their_packages():
    import judgelab.audit.probes  # noqa: F401 - binds the subpackage on judgelab, as Python does
    from judgelab.evaluate.two_systems import compare_systems  # the same

    assert jl.evaluate.two_systems.compare_systems is compare_systems  # the deep API reads as before
    assert jl.audit.probes.PAD_TEXT and "human_ids" in inspect.signature(jl.evaluate).parameters
    assert callable(jl.evaluate) and "evaluate" in repr(jl.evaluate)


def test_load_takes_files_frames_and_lists_alike():
    from_file = jl.load(ITEMS)
    rows = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines()]
    assert list(jl.load(rows)) == list(from_file) == list(jl.load(from_file.to_pandas()))
    assert list(jl.load(list(from_file))) == list(from_file)
    assert "<table" in from_file._repr_html_() and "36 items" in from_file._repr_html_()
    with pytest.raises(DataError, match=r"<list>.*2"):
        jl.load([rows[0], {"id": "x", "scores": {"coherence": "high"}}])


def test_load_reads_another_tools_output_as_items_and_judgments():
    read = jl.load(SOURCES / "alpaca-eval" / "alpaca-7b" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json")
    assert isinstance(read, jl.Source) and read.source == "alpaca-eval"
    assert len(read.to_pandas()) == len(read.judgments) and "alpaca-eval output" in read._repr_html_()
    evaluated = jl.evaluate(read, bootstrap=0)  # a Source is data and verdicts at once
    assert set(evaluated.systems) == {j for item in read.items for j in (item.system_a, item.system_b)}


def test_meta_is_meta_evaluate_whatever_the_judgments_are_given_as():
    from judgelab.metrics import meta_evaluate

    expected = meta_evaluate(load_items(ITEMS), load_judgments(JUDGED), n_resamples=200).to_dict()
    from judgelab.data.io import judgments_frame

    judgments = load_judgments(JUDGED)
    for given in (JUDGED, judgments, [j.model_dump() for j in judgments], judgments_frame(judgments)):
        result = jl.meta(ITEMS, given, bootstrap=200)
        assert isinstance(result, jl.MetaEvaluation) and result.to_dict() == expected
    table = result.to_pandas()
    spearman = table[(table.level == "dataset") & (table.statistic == "spearman")].iloc[0]
    assert spearman.value == expected["dataset"]["spearman"]["value"]
    assert spearman.ci_low == expected["dataset"]["spearman"]["ci"][0]
    html = result._repr_html_()
    assert '<table id="metrics">' in html and "Agreement with humans" in html  # the report's own table


def test_meta_needs_verdicts_or_a_tools_file():
    with pytest.raises(ConfigError, match="judgments="):
        jl.meta(load_items(ITEMS))


def test_evaluate_returns_the_libraries_report_with_the_reports_table(tmp_path):
    from judgelab.evaluate import evaluate as library_evaluate

    expected = library_evaluate(load_items(ITEMS), load_judgments(JUDGED), human_ids="all", n_resamples=200)
    result = jl.evaluate(ITEMS, JUDGED, human_ids="all", bootstrap=200, out=tmp_path / "report")
    assert isinstance(result, jl.Evaluation) and result.to_dict() == expected.to_dict()
    pd.testing.assert_frame_equal(result.to_pandas(), expected.table())
    html = result._repr_html_()
    assert '<table id="systems"' in html and "system-3" in html and "<svg" in html
    assert (tmp_path / "report" / "report.html").is_file() and (tmp_path / "report" / "systems.json").is_file()


def test_html_escapes_what_the_data_says():
    items = [{"id": f"i{k}", "system_id": "<script>x</script>" if k % 2 else "b", "output": "o",
              "scores": {"q": float(k % 3)}} for k in range(8)]
    judgments = [{"item_id": f"i{k}", "score": float(k % 4)} for k in range(8)]
    html = jl.evaluate(items, judgments, bootstrap=0)._repr_html_()
    assert "<script>x" not in html and "&lt;script&gt;x" in html


def test_compare_is_the_gate_of_judgelab_compare():
    from judgelab.evaluate.two_systems import compare_systems

    kwargs = {"baseline": "system-0", "candidate": "system-2", "human_ids": "all"}
    result = jl.compare(ITEMS, JUDGED, **kwargs)
    expected = compare_systems(load_items(ITEMS), load_judgments(JUDGED), **kwargs)
    assert result.to_dict() == expected.to_dict() and not result.passed
    row = result.to_pandas().iloc[0]
    assert (row.ci_low, row.ci_high) == (expected.low, expected.high)
    html = result._repr_html_()
    assert html.count("FAIL") == 1 and "corrected" in html


def test_a_sample_is_drawn_written_and_labelled_as_the_command_line_does(tmp_path):
    from judgelab.evaluate import read_sample

    drawn = jl.sample(ITEMS, 8, seed=1, out=tmp_path / "sample.tsv")
    assert drawn.sizes == {f"system-{k}": 2 for k in range(4)} and sorted(set(drawn.strata)) == sorted(drawn.sizes)
    assert read_sample(tmp_path / "sample.tsv").ids == drawn.ids
    assert list(drawn.to_pandas().columns) == ["id", "probability", "stratum"] and "8 items" in drawn._repr_html_()
    with_draw = jl.evaluate(ITEMS, JUDGED, human_ids=drawn, bootstrap=0)
    with_file = jl.evaluate(ITEMS, JUDGED, human_ids=tmp_path / "sample.tsv", bootstrap=0)
    assert with_draw.to_dict() == with_file.to_dict() and with_draw.labels["n_labelled"] == 8
    again = jl.sample(ITEMS, 8, seed=1, exclude=drawn)
    assert not set(again.ids) & set(drawn.ids)


def _both_orders(item_id: str, first: str, second: str) -> Judgment:
    label = first if first == second else "tie"
    return Judgment(item_id=item_id, label=label, judge="j", extra={"verdicts": {"original": first, "swapped": second}})


def test_audit_from_objects_matches_the_audit_of_the_files(tmp_path):
    from judgelab.audit import audit as library_audit
    from judgelab.audit import read_comparisons, read_verdicts

    comparisons = [{"id": f"c{k}", "group_id": f"g{k // 2}", "system_a": "x", "system_b": "y",
                    "output_a": "short", "output_b": "a much longer answer " * (1 + k % 3),
                    "label": "ab"[k % 2]} for k in range(20)]
    verdicts = [_both_orders(f"c{k}", "a", "a" if k % 3 else "b") for k in range(20)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(c) + "\n" for c in comparisons), encoding="utf-8")
    (tmp_path / "judged.jsonl").write_text("".join(v.model_dump_json() + "\n" for v in verdicts), encoding="utf-8")
    result = jl.audit(comparisons, verdicts, bootstrap=200)
    expected = library_audit(read_verdicts(tmp_path / "judged.jsonl"), read_comparisons(tmp_path / "items.jsonl"),
                             n_resamples=200)
    assert result.to_dict() == expected.to_dict() | {"probes": {}}
    assert jl.audit(tmp_path / "items.jsonl", tmp_path / "judged.jsonl", bootstrap=200).to_dict() == result.to_dict()
    flip = result.to_pandas().set_index("name").loc["flip rate"]
    assert flip.value == pytest.approx(7 / 20) and flip.n == 20
    assert "flip rate" in result._repr_html_() and "both orders" in result._repr_html_()


def test_judge_refuses_an_unknown_option_before_loading_anything():
    with pytest.raises(TypeError, match="colour"):
        jl.judge(ITEMS, "coherence", colour="red")
