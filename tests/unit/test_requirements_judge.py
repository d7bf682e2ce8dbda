"""The requirements judge's logic with a scripted model: where the requirements come from (and the refusal
when there are none), what the model is shown, reading verdicts (a missing one is unparsable, never scored;
"not satisfied" is never satisfied), one call per item or per requirement, and the trajectory heuristics.

The judge runs end to end with the real embedded model in tests/integration/test_requirements_judge.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import judgelab
from judgelab.data import load_items
from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.judges.requirements import (
    RequirementsJudge,
    parse_verdicts,
    run_shown,
    trajectory_facts,
    verdict_in,
)
from judgelab.llm.types import Request
from tests.doubles import ScriptedBackend, scripted_client

EXAMPLES = Path(judgelab.__file__).parent / "examples"
REQUIREMENTS = ["The forecast is looked up for Lyon.", "The forecast is saved in forecast.txt.",
                "The final answer states the forecast."]
SAVED = "Requirement: The forecast is saved"


def prompt_of(request: Request) -> str:
    return request.messages[-1].content


def judge(items: list[Item], reply: str | Callable[[Request], str], **options) -> tuple[list, ScriptedBackend]:
    backend = ScriptedBackend(lambda request, _: reply(request) if callable(reply) else reply)
    with scripted_client(backend) as client:
        return RequirementsJudge(**options).run(items, client), backend


def agent_run(requirements=REQUIREMENTS, **fields) -> Item:
    texts = {"id": "run-1", "source": "Find tomorrow's forecast for Lyon and save it in forecast.txt.",
             "output": "Rain, 14 C tomorrow.", "requirements": requirements,
             "trajectory": [{"tool": "get_forecast", "arguments": {"city": "Lyon"}, "thought": "Look it up.",
                             "observation": "Rain, 14 C"}]}
    return Item.model_validate(texts | fields)


# -- reading the replies ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "verdict"), [
    ("satisfied", "satisfied"), ("Met.", "satisfied"), ("Yes", "satisfied"), ("fulfilled", "satisfied"),
    ("Not satisfied", "not satisfied"), ("NOT_SATISFIED", "not satisfied"), ("unsatisfied", "not satisfied"),
    ("unmet", "not satisfied"), ("not met", "not satisfied"), ("The requirement has not been met.", "not satisfied"),
    ("It isn't satisfied", "not satisfied"), ("not fully satisfied", "not satisfied"),
    ("partially satisfied", "not satisfied"), ("No.", "not satisfied"), ("**not satisfied**", "not satisfied"),
    ("No errors were raised, so it is satisfied.", "satisfied"),  # a verdict word outweighs yes / no
    ("I cannot tell.", None), ("", None),
    ("- satisfied: it is met\n- not satisfied: it is not met", None),  # both verdicts: none
    ("Partially satisfied: the lookup is met, the save is not.", None), ("Yes and no.", None),
])
def test_a_verdict_is_read_and_not_satisfied_is_never_satisfied(text, verdict):
    assert verdict_in(text) == verdict


def test_verdicts_are_read_by_number_and_repeated_requirements_are_not_verdicts():
    assert parse_verdicts("2. satisfied\n1. not satisfied\n3. unmet", REQUIREMENTS) == \
        ["not satisfied", "satisfied", "not satisfied"]
    assert parse_verdicts("Requirement 1: met\n**2.** no\nR3 - yes", REQUIREMENTS) == \
        ["satisfied", "not satisfied", "satisfied"]
    # "passes" in the repeated requirement is not a verdict: the verdict is what the reply adds
    assert parse_verdicts("1. The test passes - no\n2. The code meets the style guide: not satisfied",
                          ["The test passes.", "The code meets the style guide."]) == ["not satisfied"] * 2
    # a number past the list is ignored; the first line for a number wins; unnumbered only when one per requirement
    assert parse_verdicts("1. satisfied\n4. satisfied\n1. not satisfied", REQUIREMENTS) == ["satisfied", None, None]
    assert parse_verdicts("satisfied\nnot satisfied\nsatisfied", REQUIREMENTS) == \
        ["satisfied", "not satisfied", "satisfied"]
    assert parse_verdicts("satisfied\nnot satisfied", REQUIREMENTS) == [None, None, None]


def test_a_reply_that_repeats_the_prompt_gives_no_verdict():
    """Small models repeat the verdicts' definitions: a line of the prompt, list marks aside, is no verdict."""
    [echoed], backend = judge([agent_run()], "1. The forecast is looked up for Lyon.\n"
                              "1. satisfied: the steps or the final output show that the requirement is met;\n"
                              "2. not satisfied: they show that it is not met, or they do not show that it is.\n"
                              "2. no\n3. Satisfied.")
    assert "- satisfied: the steps or the final output show that the requirement is met;" in \
        prompt_of(backend.requests[0])
    assert [r["verdict"] for r in echoed.extra["requirements"]] == [None, "not satisfied", "satisfied"]
    assert echoed.status == "unparsable" and echoed.reason.endswith("requirement 1 of 3")
    [each], _ = judge([agent_run()], "- satisfied: the steps or the final output show that the requirement is met;\n"
                      "- not satisfied: they show that it is not met, or they do not show that it is.", verify="each")
    assert each.status == "unparsable" and [r["verdict"] for r in each.extra["requirements"]] == [None] * 3


# -- the score, the explanation, what is recorded ----------------------------------------------------


def test_the_score_is_the_share_satisfied_and_the_unmet_requirements_explain_it():
    [judgment], backend = judge([agent_run()], "1. satisfied\n2. not satisfied\n3. satisfied")
    assert judgment.status == "ok" and judgment.score == pytest.approx(2 / 3) and judgment.aspect == "task_success"
    assert judgment.explanation == "1 of 3 requirements not satisfied:\n- [2] The forecast is saved in forecast.txt."
    assert [(r["id"], r["verdict"], r["from"]) for r in judgment.extra["requirements"]] == \
        [("1", "satisfied", "item"), ("2", "not satisfied", "item"), ("3", "satisfied", "item")]
    assert judgment.extra["unmet"] == ["2"] and judgment.extra["satisfied_share"] == pytest.approx(2 / 3)
    assert judgment.raw == "[verification] 1. satisfied\n2. not satisfied\n3. satisfied"
    assert backend.calls == 1 and judgment.usage.calls == 1
    request = backend.requests[0]
    assert request.stop == ("\n4.",) and "1. The forecast is looked up for Lyon.\n2. The forecast is saved" in \
        prompt_of(request)


def test_all_satisfied_and_a_scale_mapping():
    [judgment], _ = judge([agent_run()], "1. satisfied\n2. satisfied\n3. satisfied", scale=(1, 5))
    assert judgment.score == 5 and judgment.explanation == "All 3 requirements are satisfied."
    [none], _ = judge([agent_run()], "1. no\n2. no\n3. no", scale=(1, 5))
    assert none.score == 1 and none.extra["satisfied_share"] == 0


def test_a_reply_missing_a_verdict_is_unparsable_never_scored():
    [judgment], _ = judge([agent_run()], "1. satisfied\n2. satisfied\nI cannot tell about the last one.")
    assert judgment.status == "unparsable" and judgment.score is None and judgment.explanation is None
    assert judgment.reason == "no verdict (satisfied / not satisfied) for requirement 3 of 3"
    assert [r["verdict"] for r in judgment.extra["requirements"]] == ["satisfied", "satisfied", None]
    assert "satisfied_share" not in judgment.extra and judgment.raw.startswith("[verification] 1. satisfied")


def test_one_call_per_requirement_when_asked():
    def verdict(request: Request) -> str:
        assert prompt_of(request).endswith("Verdict:")
        return "Not satisfied: no file was written." if SAVED in prompt_of(request) else "Satisfied."

    [judgment], backend = judge([agent_run()], verdict, verify="each")
    assert backend.calls == 3 and judgment.usage.calls == 3 and judgment.score == pytest.approx(2 / 3)
    assert judgment.extra["unmet"] == ["2"] and "[requirement 2] Not satisfied" in judgment.raw
    assert all(r.stop == () for r in backend.requests)
    # each prompt starts with the run, so the embedded model reuses it
    starts = {prompt_of(r).split("Requirement:")[0] for r in backend.requests}
    assert len(starts) == 1

    [unclear], _ = judge([agent_run()], lambda r: "Maybe." if SAVED in prompt_of(r) else "yes", verify="each")
    assert unclear.status == "unparsable" and unclear.reason.endswith("requirement 2 of 3")


# -- where the requirements come from -----------------------------------------------------------------


def test_the_configs_requirements_apply_to_every_item_before_its_own():
    common = ["The agent deletes no file.", {"id": "brief", "criteria": "The final answer is one sentence."}]
    items = [agent_run(), agent_run(id="run-2", requirements=None),
             agent_run(id="run-3", requirements=[{"requirement_id": 7, "criteria": "It rains.", "category": "x"}])]
    judgments, backend = judge(items, lambda r: "\n".join(f"{k}. satisfied" for k in range(1, 6)), requirements=common)
    assert [len(j.extra["requirements"]) for j in judgments] == [5, 2, 3]
    assert [(r["id"], r["from"]) for r in judgments[2].extra["requirements"]] == \
        [("1", "config"), ("brief", "config"), ("7", "item")]
    assert "1. The agent deletes no file.\n2. The final answer is one sentence.\n3. It rains." in \
        prompt_of(backend.requests[2])


def test_requirements_as_a_csv_cell_of_json_text():
    [judgment], _ = judge([agent_run(requirements='["It rains.", "It is cold."]')], "1. yes\n2. no")
    assert judgment.score == 0.5


@pytest.mark.parametrize(("requirements", "reason"), [
    (None, "no requirements to check: give them in its extra.requirements"),
    ([], "no requirements to check"),
    ("Save the file.", "extra.requirements must be a list"),
    (["Save the file.", {"id": "x"}], "extra.requirements.1.criteria: Field required"),
    (["  "], "extra.requirements.0.criteria: Value error, a requirement needs a text"),
])
def test_an_item_without_usable_requirements_is_an_error_naming_the_field_without_a_call(requirements, reason):
    [judgment], backend = judge([agent_run(requirements=requirements)], "1. satisfied")
    assert judgment.status == "error" and reason in judgment.reason and backend.calls == 0
    assert judgment.extra["trajectory"]["steps"] == 1  # the facts read without a model are kept


def test_a_comparison_is_refused():
    pair = Item(id="p", instruction="Say hi.", output_a="Hi", output_b="Hello", extra={"requirements": ["Greets."]})
    [judgment], backend = judge([pair], "1. satisfied")
    assert judgment.status == "error" and "not a pairwise item" in judgment.reason and backend.calls == 0


# -- what the model is shown --------------------------------------------------------------------------


def test_the_model_sees_the_task_the_steps_and_the_output():
    [judgment], backend = judge([agent_run()], "1. yes\n2. yes\n3. yes")
    prompt = prompt_of(backend.requests[0])
    assert prompt.startswith("Task given to the agent:\nFind tomorrow's forecast for Lyon")
    assert "Agent's steps:\nStep 1: get_forecast({\"city\": \"Lyon\"})\nThought: Look it up.\nObservation: Rain, 14 C" \
        in prompt
    assert "Final output of the agent:\nRain, 14 C tomorrow.\n\nRequirements:\n1." in prompt
    assert judgment.extra["shown"] == ["task", "trajectory", "output"]


def test_a_conversation_is_shown_once_without_its_final_reply():
    chat = Item.model_validate({"id": "chat", "requirements": ["The assistant looks the hours up."], "messages": [
        {"role": "user", "content": "Are you open on Monday?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"hours\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Closed on Mondays."},
        {"role": "assistant", "content": "No, we are closed on Mondays."}]})
    shown = run_shown(chat)
    assert shown.task is None and shown.steps_name == "Conversation" and shown.output == "No, we are closed on Mondays."
    assert shown.steps.endswith("tool: Closed on Mondays.") and "closed on Mondays" not in shown.steps
    [judgment], backend = judge([chat], "1. satisfied")
    assert "Task given" not in prompt_of(backend.requests[0]) and judgment.extra["shown"] == ["messages", "output"]
    assert judgment.extra["trajectory"] == {"from": "messages", "steps": 1, "repeated_calls": 0, "repeats": [],
                                            "error_steps": []}


# -- trajectory heuristics -----------------------------------------------------------------------------


def test_repeated_calls_and_error_observations_are_counted_without_a_model():
    steps = [{"tool": "get_forecast", "arguments": {"city": "Lyon"}, "observation": "Error: missing argument 'day'"},
             {"tool": "get_forecast", "arguments": {"city": "Lyon", "day": 1}, "observation": "Rain"},
             {"tool": "get_forecast", "arguments": "{\"day\": 1, \"city\": \"Lyon\"}", "observation": "Rain"},
             {"tool": "run", "arguments": "ls", "observation": "Traceback (most recent call last): ..."},
             {"tool": "run", "arguments": "ls", "observation": "  FileNotFoundError: x"},
             {"tool": "run", "arguments": "pwd", "observation": "No errors; ErrorHandler registered"},
             {"tool": "finish"}]
    facts = trajectory_facts(agent_run(trajectory=steps))
    assert facts["steps"] == 7 and facts["repeated_calls"] == 2  # arguments compared as JSON, key order aside
    assert facts["repeats"] == [{"tool": "get_forecast", "arguments": "{\"city\": \"Lyon\", \"day\": 1}", "steps": [2, 3]},
                                {"tool": "run", "arguments": "ls", "steps": [4, 5]}]
    assert facts["error_steps"] == [1, 4, 5]
    assert trajectory_facts(Item(id="plain", source="Hi", output="Hello")) is None


def test_the_heuristics_are_in_every_judgment_of_a_run():
    judgments, _ = judge([agent_run(), Item(id="plain", source="Hi", output="Hello", extra={"requirements": ["Greets."]})],
                         "1. satisfied\n2. satisfied\n3. satisfied")
    assert judgments[0].extra["trajectory"]["steps"] == 1 and "trajectory" not in judgments[1].extra
    assert judgments[1].extra["shown"] == ["task", "output"]


# -- the config and the shipped example -----------------------------------------------------------------


def test_the_shipped_config_and_runs_load_and_bad_options_are_refused():
    config = load_judge(EXAMPLES / "requirements.yaml")
    assert isinstance(config, RequirementsJudge) and config.verify == "batch" and config.aspect == "task_success"
    runs = load_items(EXAMPLES / "agent_runs.jsonl")
    assert len(runs) == 6 and {item.system_id for item in runs} == {"agent-a", "agent-b"}
    assert all(item.trajectory and item.extra["requirements"] and 0 <= item.scores["task_success"] <= 1 for item in runs)
    assert len({item.group_id for item in runs}) == 3
    with pytest.raises(ConfigError, match="verify"):
        judge_from_dict({"kind": "requirements", "verify": "sometimes"})
    with pytest.raises(ConfigError, match="low < high"):
        judge_from_dict({"kind": "requirements", "scale": [5, 1]})
    with pytest.raises(ConfigError, match="requirements.0.criteria"):
        judge_from_dict({"kind": "requirements", "requirements": [{"id": "x"}]})
    saved = judge_from_dict({"kind": "requirements", "requirements": ["It rains.", {"id": 3, "criteria": "Cold."}]})
    assert saved.requirements[1].id == "3"
    assert judge_from_dict(saved.model_dump(mode="json")).digest() == saved.digest()
