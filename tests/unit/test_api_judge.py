"""``jl.judge`` does what ``judgelab judge`` does (issue 47, one layer of glue): the command calls the verb, so
a Python caller gets the same checks before the model loads, the same warnings, ``stream``/``chunk_size``,
``member``, ``threads`` and ``save_config``, with messages naming the arguments (``member``, not ``--member``).
No model: a scripted client stands in for ``client_from_options``. Also the planning verbs behind
``judgelab sample --plan`` and ``--spend``."""

from __future__ import annotations

import inspect
import json
import random
import re
import warnings
from pathlib import Path
from typing import get_args

import pytest

import judgelab as jl
from judgelab.api import verbs
from judgelab.errors import ConfigError, DataWarning, name_flags
from tests.doubles import ScriptedBackend, scripted_client

ITEMS = [{"id": f"i{k}", "system_id": "a", "source": "A text.", "output": f"Summary {k}.", "scores": {"coherence": 3}}
         for k in range(3)]
PAIRS = [{"id": f"c{k}", "instruction": "Say yes.", "output_a": "yes", "output_b": "no", "label": "a"}
         for k in range(2)]
PARSED = {"strategy": "cot=none", "score": "parsed", "criteria": "Is it coherent?"}  # a rating the scripted model
# writes, no logprobs needed


@pytest.fixture
def client(monkeypatch):
    """The options ``jl.judge`` builds its client from; the client answers "4" to everything."""
    given: dict = {}

    def scripted(*args, **kwargs):
        given.update(kwargs, args=args)
        return scripted_client(ScriptedBackend(lambda request, k: "4"))

    monkeypatch.setattr("judgelab.llm.resolve.client_from_options", scripted)
    return given


def refusal(call) -> str:
    with pytest.raises(ConfigError) as raised:
        call()
    return str(raised.value)


def test_every_parameter_is_documented_and_the_choices_are_the_judges_own():
    from judgelab.judges.likelihood import Direction, Reduce
    from judgelab.judges.pairwise import PairwiseJudge
    from judgelab.judges.prompted import ScoreMode
    from judgelab.runner.run import ENGINES

    for verb in (jl.judge, verbs.plan_labels, verbs.plan_spend):
        doc = verb.__doc__
        assert [name for name in inspect.signature(verb).parameters if not re.search(rf"^\s+{name}:", doc, re.M)] == []
    pairwise_scores = get_args(PairwiseJudge.model_fields["score"].annotation)
    assert set(get_args(verbs.Score)) == {*get_args(ScoreMode), *pairwise_scores}
    assert get_args(verbs.Reduce) == get_args(Reduce) and get_args(verbs.LikelihoodOf) == get_args(Direction)
    assert get_args(verbs.Engine) == ENGINES


def test_a_run_with_threads_criteria_from_a_file_and_a_saved_config(client, tmp_path):
    (tmp_path / "criteria.txt").write_text("Sentences follow from each other.", encoding="utf-8")
    options = {**PARSED, "criteria": f"@{tmp_path / 'criteria.txt'}"}
    run = jl.judge(ITEMS, "coherence", **options, model="smollm2-135m", threads=2, out=tmp_path / "run",
                   save_config=tmp_path / "judge.yaml")
    assert [j.score for j in run.judgments] == [4.0, 4.0, 4.0] and client["threads"] == 2
    assert run.config.criteria == "Sentences follow from each other." and run.folder is not None
    assert "Sentences follow from each other." in (tmp_path / "judge.yaml").read_text()


def test_a_config_that_cannot_be_saved_is_refused_after_the_run(client, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    assert "cannot write" in refusal(lambda: jl.judge(ITEMS, "coherence", **PARSED, out=tmp_path / "run",
                                                      save_config=tmp_path / "a-file" / "j.yaml"))
    assert (tmp_path / "run" / "judgments.jsonl").is_file()  # the run itself finished


def test_a_stream_is_judged_in_chunks_from_a_file(client, tmp_path):
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ITEMS), encoding="utf-8")
    run = jl.judge(data, "coherence", **PARSED, stream=True, chunk_size=2, limit=2, out=tmp_path / "run")
    assert [j.item_id for j in run.judgments] == ["i0", "i1"] and run.items is None
    with pytest.raises(TypeError, match="stream=True reads a JSON-lines file"):
        jl.judge(ITEMS, "coherence", stream=True, out=tmp_path / "other")


def test_a_duplicate_id_in_a_stream_is_refused_before_the_client_is_made(client, tmp_path):
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in [*ITEMS, ITEMS[0]]), encoding="utf-8")
    with pytest.raises(Exception, match="duplicate id"):
        jl.judge(data, "coherence", **PARSED, stream=True, out=tmp_path / "run")
    assert client == {}


def test_member_and_numbers_are_named_as_arguments(client):
    assert refusal(lambda: jl.judge(ITEMS, "coherence", member={"a": "b.jsonl"})).startswith(
        "member rebinds an ensemble's members; this judge is of kind 'prompted'")
    with pytest.raises(ValueError, match=r"^samples 0: input should be greater"):
        jl.judge(ITEMS, "coherence", samples=0)
    with pytest.raises(ValueError, match=r"^chunk_size 0: input should be greater"):
        jl.judge(ITEMS, "coherence", chunk_size=0)
    assert client == {}  # refused before any client was made


def test_the_warnings_before_the_model_loads_name_the_data_as_given(client, tmp_path):
    unsourced = [{key: value for key, value in row.items() if key != "source"} for row in ITEMS]
    with pytest.warns(DataWarning, match=r"^data: no item has 'source'"):
        jl.judge(unsourced, "coherence", **PARSED)
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({**row, "scores": {"other": 2}}) + "\n" for row in ITEMS), encoding="utf-8")
    with pytest.warns(DataWarning, match=r"^the examples_from items: no item has a human value"):
        jl.judge(ITEMS, "coherence", strategy="cot=none,examples=3", score="parsed", criteria="Coherent?",
                 examples_from=pool)


def test_comparisons_are_judged_pairwise_said_by_a_note_and_pointwise_options_refused(client):
    with pytest.warns(verbs.Note, match=r"^data: pairwise items .* as method='pairwise' does"):
        run = jl.judge(PAIRS)
    assert run.config.kind == "pairwise"
    with pytest.raises(verbs.OptionsRefused) as raised:
        jl.judge(PAIRS, "preference", family="qa")
    assert str(raised.value).endswith("takes no aspect, family") and raised.value.options == ["aspect", "family"]
    with name_flags_on():
        with pytest.raises(verbs.OptionsRefused) as raised:
            jl.judge(PAIRS, "preference")
    assert raised.value.options == ["--aspect"]


def test_the_embedded_default_is_a_note_in_the_callers_terms(client):
    with pytest.warns(verbs.Note, match=r"cot=none, score='logprob'.* strategy='cot=prefix' score='parsed'"):
        run = jl.judge(ITEMS, "coherence", model="smollm2-135m", criteria="Coherent?")
    assert run.config.score == "logprob"
    with warnings.catch_warnings():
        warnings.simplefilter("error", verbs.Note)
        jl.judge(ITEMS, "coherence", model="smollm2-135m", score="parsed", criteria="Coherent?")  # chosen: no note


class name_flags_on:  # noqa: N801 - used as a context manager, as the command line names parameters
    def __enter__(self):
        self.before = name_flags(True)

    def __exit__(self, *exc):
        name_flags(self.before)


# -- sample --plan and --spend ------------------------------------------------------------------------------
def _pilot():
    rng = random.Random(0)
    items, judged = [], []
    for system in "abc":
        for k in range(40):
            human = rng.randint(1, 5)
            items.append({"id": f"{system}{k}", "system_id": system, "output": "x", "scores": {"q": human}})
            judged.append({"item_id": f"{system}{k}", "score": min(5, max(1, human + rng.choice([-1, 0, 0, 1])))})
    return items, judged, [f"{system}{k}" for system in "abc" for k in range(12)]


def test_plan_labels_and_plan_spend_name_their_arguments():
    items, judged, pilot = _pilot()
    assert refusal(lambda: verbs.plan_labels(items, None, 1.0)) == (
        "plan_labels() needs the judge's verdicts (judgments) and some labels (human or human_ids)")
    assert refusal(lambda: verbs.plan_labels(items, judged, 1.0)).startswith("plan_labels() needs the labels so far")
    assert refusal(lambda: verbs.plan_spend(items, judged, 100)).startswith(
        "plan_spend() needs the judges' verdicts on a pilot (judgments, human/human_ids), judge_costs")
    assert refusal(lambda: verbs.plan_spend(items, judged, 10, judge_costs={"judge": 0}, label_cost=1,
                                            human_ids=pilot)).startswith("budget 10 buys no plan with 10 labels")
    with name_flags_on():
        assert refusal(lambda: verbs.plan_labels(items, None, 1.0)).startswith("--plan needs the judge's verdicts")
        assert refusal(lambda: verbs.plan_spend(items, judged, 10, judge_costs={"judge": 0}, label_cost=1,
                                                human_ids=pilot)).startswith("--spend 10 buys no plan")


def test_plan_labels_and_plan_spend_return_the_plans_the_command_prints():
    items, judged, pilot = _pilot()
    plan = verbs.plan_labels(items, judged, 1.0, human_ids=pilot)
    assert plan.n_labelled == 36 and plan.kind == "items" and plan.systems == ("a", "b", "c")
    assert list(plan.to_pandas().columns) == ["system", "units", "human", "corrected"]
    spend = verbs.plan_spend(items, judged, 500, judge_costs={"judge": 0.01}, label_cost=1, human_ids=pilot)
    assert spend.best in spend.options and spend.to_pandas()["best"].sum() == 1


def test_the_command_calls_the_verbs():
    source = Path(inspect.getfile(verbs)).parents[1] / "commands"
    judge_command = (source / "judge.py").read_text()
    assert "run_judge" not in judge_command and "load_items" not in judge_command
    for name in ("evaluate.py", "sample.py"):  # sample's --plan and --spend go through the planners' verbs
        command = (source / name).read_text()
        assert "plan_spend_for" not in command and "plan_labels(report" not in command


def test_another_tools_file_is_judged_as_its_items(client):
    """``source`` (the CLI's --from), or detected from the file as jl.load does: an OpenTelemetry trace file."""
    traces = Path(__file__).resolve().parents[1] / "data" / "sources" / "otel" / "spans.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reader's notes on what it left out
        named = jl.judge(traces, "helpfulness", source="otel", **PARSED)
        found = jl.judge(traces, "helpfulness", **PARSED)
        expected = [item.id for item in jl.load(traces, source="otel").items]
    assert [j.item_id for j in named.judgments] == [j.item_id for j in found.judgments] == expected
    assert all(j.score == 4 for j in found.judgments)
    assert "source otel reads another tool's file whole" in refusal(
        lambda: jl.judge(traces, "helpfulness", source="otel", stream=True, **PARSED))
