"""One message for both fronts (issue 47, item 1): the library names a parameter as the caller knows it, an
argument in Python (``budget``), a flag while the command line runs a command (``--budget``)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

import judgelab as jl
from judgelab.errors import FLAG_NAMES, ConfigError, name_flags, term
from tests.e2e.cli import run_main_in_process

OWN_SMALL = Path(__file__).resolve().parents[1] / "data" / "own_small" / "answers.jsonl"  # 3 systems x 8 questions


@contextmanager
def flags():
    """The naming the command line sets while it runs a command (judgelab.cli.main)."""
    before = name_flags(True)
    try:
        yield
    finally:
        name_flags(before)


def refusal(call) -> str:
    with pytest.raises(ConfigError) as raised:
        call()
    return str(raised.value)


def test_term_names_an_argument_in_python_and_a_flag_on_the_command_line():
    assert (term("human_ids"), term("source"), term("budget", "--spend")) == ("human_ids", "source", "budget")
    with flags():
        assert term("human_ids") == "--human-ids"
        assert term("source") == "--from" == FLAG_NAMES["source"]  # a Python keyword: the flag is not its name
        assert term("judges") == "--judge"
        assert term("budget", "--spend") == "--spend"  # sample's --budget is a spend plan's --spend
    assert term("human_ids") == "human_ids"  # the setting put back


def test_a_name_already_a_flag_is_kept_as_it_is():
    assert term("--bootstrap") == "--bootstrap"
    with flags():
        assert term("--bootstrap") == "--bootstrap"


def test_the_command_line_restores_the_naming_it_found(capsys):
    run_main_in_process(capsys, "sample", "--data", OWN_SMALL, "--budget", "1000")
    assert term("budget") == "budget"


def test_sampling_names_budget_as_the_caller_gave_it(capsys, tmp_path):  # evaluate/
    python = refusal(lambda: jl.sample(OWN_SMALL, 1000))
    code, cli = run_main_in_process(capsys, "sample", "--data", OWN_SMALL, "--budget", "1000",
                                    "--out", tmp_path / "ids.txt")
    assert python.startswith("budget 1000 is more than the 24")
    assert code == 2 and "--budget 1000 is more than the 24" in cli


def test_a_run_folder_that_is_a_file_names_out(capsys, tmp_path):  # runner/
    taken = tmp_path / "run"
    taken.write_text("a file")
    python = refusal(lambda: jl.judge(OWN_SMALL, "correctness", out=taken))
    code, cli = run_main_in_process(capsys, "judge", "--data", OWN_SMALL, "--aspect", "correctness", "--out", taken)
    assert python.startswith(f"out {taken} is a file")
    assert code == 2 and f"--out {taken} is a file" in cli


def test_config_and_method_together_name_both(tmp_path):  # judges/
    def call():
        return jl.judge(OWN_SMALL, config={"kind": "prompted", "aspect": "correctness"}, method="prompted")

    assert refusal(call).startswith("give either config or method:")
    with flags():
        assert refusal(call).startswith("give either --config or --method:")


def test_an_aspect_named_twice_names_aspect(tmp_path):  # annotate/
    from judgelab.annotate.task import parse_aspects

    assert refusal(lambda: parse_aspects("a,a")) == "aspect 'a,a': an aspect is named twice"
    with flags():
        assert refusal(lambda: parse_aspects("a,a")) == "--aspect 'a,a': an aspect is named twice"


def test_an_unknown_floor_names_floors():  # metrics/
    from judgelab.metrics.card import parse_floors

    assert refusal(lambda: parse_floors("speed=0.8")).startswith("floors 'speed': choose among")
    with flags():
        assert refusal(lambda: parse_floors("speed=0.8")).startswith("--floor 'speed': choose among")


def test_a_timeout_for_a_model_run_here_names_timeout():  # llm/ (refused before any model is loaded)
    from judgelab.llm.resolve import make_backend

    assert refusal(lambda: make_backend("smollm2-135m", timeout=5)).startswith("timeout bounds requests")
    with flags():
        assert refusal(lambda: make_backend("smollm2-135m", timeout=5)).startswith("--timeout bounds requests")


def test_a_spend_plan_names_its_budget_as_spend_on_the_command_line():  # evaluate/, a flag of another name
    from judgelab.evaluate.spend import _check_costs

    def call():
        return _check_costs(("a",), {"a": 1.0}, label_cost=1.0, budget=0)

    assert refusal(call).startswith("budget 0: give the money to spend")
    with flags():
        assert refusal(call).startswith("--spend 0: give the money to spend")


def test_a_refused_file_of_several_judges_names_judge(tmp_path):  # audit/
    from judgelab.audit.inputs import verdicts_of
    from judgelab.data import Judgment

    two = [Judgment(item_id="i", judge=name, label="A") for name in ("x", "y")]
    assert refusal(lambda: verdicts_of(two, None)).endswith("say which with judge")
    with flags():
        assert refusal(lambda: verdicts_of(two, None)).endswith("say which with --judge")

