"""Active-Critic logic with a scripted model: every fit stage, every variant, JSON failures, the search.

The same judge runs end to end against the real embedded model in
tests/integration/test_critic_judge.py and through the CLI in tests/e2e/test_cli_critic.py.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

import pytest

from judgelab.data import Item
from judgelab.errors import ConfigError
from judgelab.judges.base import load_judge
from judgelab.judges.critic import GENERIC_TASK, ActiveCriticJudge, Criterion, CriticFitError
from judgelab.judges.demos import draw_demonstrations, q_objective, search_demonstrations
from judgelab.llm.backends.base import Capabilities
from judgelab.llm.types import Request
from tests.doubles import ScriptedBackend, scripted_client

CRITERIA = {f"Aspect{k}": f"definition {k}" for k in range(10)}
TASK = "The evaluation task is dialogue generation, which refers to evaluating responses generated from a chat."


def items(n: int = 12, per_group: int = 2) -> list[Item]:
    """Quality q in 1..5 is written into the output, so a scripted judge can 'read' it."""
    return [Item(id=f"i{k:02d}", group_id=f"g{k // per_group}", source=f"Chat {k}.", output=f"Reply {k} with quality {q}.",
                 scores={"overall": float(q)}, scale=(1, 5))
            for k in range(n) for q in [1 + (k * 3) % 5]]


def stage_of(request: Request) -> str:
    text = request.messages[0].content
    for marker, stage in (("Please write observations", "observe"), ("Identify the type of evaluation task", "task"),
                          ("list ten aspects", "propose"), ("Select between", "select"),
                          ("on multiple evaluation criteria", "mcs"), ("rate the overall quality", "os")):
        if marker in text:
            return stage
    raise AssertionError(f"unexpected prompt: {text[:200]}")


def judged_quality(request: Request) -> int:
    """The quality written in the judged item's output (the last 'Response:' of the first message)."""
    return int(re.findall(r"Response: Reply \d+ with quality (\d)", request.messages[0].content)[-1])


def model(observe: Callable[[int], str] = lambda n: f"Observation {n}.", propose: str | None = None,
          select: str | None = None, mcs: Callable[[Request], str] | None = None,
          overall: Callable[[Request], str] | None = None) -> ScriptedBackend:
    rounds = {"observe": 0}

    def reply(request: Request, sample_index: int) -> str:
        stage = stage_of(request)
        if stage == "observe":
            rounds["observe"] += 1
            return observe(rounds["observe"])
        if stage == "task":
            return TASK
        if stage == "propose":
            return propose if propose is not None else json.dumps(CRITERIA)
        if stage == "select":
            return select if select is not None else json.dumps(dict(list(CRITERIA.items())[:5]))
        if stage == "mcs":
            if mcs:
                return mcs(request)
            names = request.response_format.json_schema["required"] if request.response_format else ["Aspect0"]
            return json.dumps({name: {"Explanation": "ok", "Score": 20 * judged_quality(request)} for name in names})
        return overall(request) if overall else json.dumps(
            {"Explanation": "fine", "Score Of Overall": 20 * judged_quality(request)})

    return ScriptedBackend(reply)


def calls(backend: ScriptedBackend, stage: str) -> list[Request]:
    return [r for r in backend.requests if stage_of(r) == stage]


def fine_judge(**changes) -> ActiveCriticJudge:
    defaults = dict(task=TASK, criteria=(Criterion(name="Aspect0", definition="d0"),
                                         Criterion(name="Aspect1", definition="d1")), scale=(1.0, 5.0))
    return ActiveCriticJudge(**(defaults | changes))


# -- task inference -------------------------------------------------------------------------------
def test_complete_stops_the_observation_rounds_early():
    backend = model(observe=lambda n: "The responses continue a chat." if n == 1 else "COMPLETE")
    with scripted_client(backend) as client:
        fitted = ActiveCriticJudge(draws=1, demos=(3, 3), tuning_fraction=1.0).fit(items(20), client)
    assert len(calls(backend, "observe")) == 2
    assert fitted.fit_summary["observation_rounds"] == 2 and fitted.fit_summary["stopped_early"]
    assert fitted.observations == "The responses continue a chat."
    # the second round saw the first round's observations as prior ones
    assert "The responses continue a chat." in calls(backend, "observe")[1].messages[0].content


def test_complete_in_the_first_round_is_not_an_early_stop():
    backend = model(observe=lambda n: "Short replies. COMPLETE" if n == 1 else "COMPLETE")
    with scripted_client(backend) as client:
        fitted = ActiveCriticJudge(draws=1, demos=(3, 3), tuning_fraction=1.0).fit(items(20), client)
    assert len(calls(backend, "observe")) == 2 and fitted.observations == "Short replies."


def test_observation_rounds_are_capped():
    backend = model()
    with scripted_client(backend) as client:
        fitted = ActiveCriticJudge(draws=1, demos=(3, 3), tuning_fraction=1.0, max_rounds=5).fit(items(40), client)
    observe = calls(backend, "observe")
    assert len(observe) == 5 and not fitted.fit_summary["stopped_early"]
    assert all(prompt.messages[0].content.count("Example ") == 5 for prompt in observe)  # batch_size 5
    assert fitted.observations.splitlines() == [f"Observation {n}." for n in range(1, 6)]
    assert fitted.task == TASK and fitted.fit_summary["task_type"] == "dialogue generation"
    assert "dialogue generation" in calls(backend, "propose")[0].messages[0].content


def test_no_observations_at_all_is_a_clear_error():
    with scripted_client(model(observe=lambda n: "COMPLETE")) as client, pytest.raises(CriticFitError, match="no observations"):
        ActiveCriticJudge(draws=1, demos=(3, 3), tuning_fraction=1.0).fit(items(10), client)


# -- criteria definition ---------------------------------------------------------------------------
def fit_with(**replies) -> tuple[ActiveCriticJudge, ScriptedBackend]:
    backend = model(**replies)
    with scripted_client(backend) as client:
        return ActiveCriticJudge(draws=1, demos=(3, 3), tuning_fraction=1.0).fit(items(10), client), backend


def test_selection_is_cut_to_ten_and_topped_up_to_four():
    many = json.dumps({f"Extra{k}": "x" for k in range(12)})
    fitted, _ = fit_with(select=many)
    assert [c.name for c in fitted.criteria] == [f"Extra{k}" for k in range(10)]
    fitted, _ = fit_with(select=json.dumps({"Aspect7": "seven", "Aspect2": "two"}))
    assert [c.name for c in fitted.criteria] == ["Aspect7", "Aspect2", "Aspect0", "Aspect1"]
    assert fitted.criteria[0] == Criterion(name="Aspect7", definition="seven")


def test_too_few_distinct_criteria_is_a_clear_error():
    with pytest.raises(CriticFitError, match="at least 4"):
        fit_with(propose=json.dumps({"A": "a", "B": "b"}), select=json.dumps({"A": "a"}))


def test_malformed_criteria_json_is_repaired_by_the_parser_without_a_new_call():
    fitted, backend = fit_with(select="```json\n{'Fluency': 'reads well', 'Coherence': 'flows',\n 'Depth': 'd', 'Tone': 't',}\n```")
    assert [c.name for c in fitted.criteria] == ["Fluency", "Coherence", "Depth", "Tone"]
    assert len(calls(backend, "select")) == 1


def test_unreadable_criteria_get_a_repair_prompt_then_a_clear_error():
    replies = iter(["I would pick fluency and coherence.", json.dumps(CRITERIA)])
    backend = model()
    backend_reply = backend.reply

    def reply(request: Request, i: int) -> str:
        return next(replies) if stage_of(request) == "propose" else backend_reply(request, i)

    backend.reply = reply
    with scripted_client(backend) as client:
        fitted = ActiveCriticJudge(draws=1, demos=(3, 3), tuning_fraction=1.0).fit(items(10), client)
    repair = calls(backend, "propose")[1]
    assert repair.messages[1].content == "I would pick fluency and coherence."
    assert "could not be read" in repair.messages[2].content and len(fitted.criteria) == 5

    with pytest.raises(CriticFitError, match="no readable JSON criteria.*no JSON here"):
        fit_with(select="no JSON here")


def test_criteria_requests_are_constrained_to_a_bounded_list_when_the_backend_can():
    _, backend = fit_with()
    propose, select = calls(backend, "propose")[0], calls(backend, "select")[0]
    assert propose.response_format.json_schema["minItems"] == 4 and propose.response_format.json_schema["maxItems"] == 10
    assert select.response_format.json_schema["items"]["required"] == ["aspect", "description"]
    assert '"aspect": name' in select.messages[0].content


def test_a_list_of_aspect_objects_is_read_as_criteria():
    fitted, _ = fit_with(select=json.dumps([{"aspect": f"A{k}", "description": f"d{k}"} for k in range(5)]))
    assert fitted.criteria[:2] == (Criterion(name="A0", definition="d0"), Criterion(name="A1", definition="d1"))


# -- scoring variants ------------------------------------------------------------------------------
def test_fine_scores_each_criterion_then_the_overall_score():
    backend = model()
    with scripted_client(backend) as client:
        judgments = fine_judge().run(items(4), client)
    first = judgments[0]
    quality = items(4)[0].scores["overall"]
    assert first.status == "ok" and first.criteria == {"Aspect0": 20 * quality, "Aspect1": 20 * quality}
    assert first.extra["score_100"] == 20 * quality and first.score == pytest.approx(1 + 4 * quality / 5)
    assert first.explanation == "fine" and first.extra["criteria_explanations"] == {"Aspect0": "ok", "Aspect1": "ok"}
    assert first.usage.calls == 2
    os_prompt = calls(backend, "os")[0].messages[0].content
    assert f"Aspect0: {20 * quality:g}" in os_prompt and TASK in os_prompt
    schema = calls(backend, "mcs")[0].response_format.json_schema
    assert schema["required"] == ["Aspect0", "Aspect1"]


def test_coarse_and_vanilla_make_one_call_per_item():
    backend = model()
    with scripted_client(backend) as client:
        coarse = fine_judge(variant="coarse").run(items(3), client)
        vanilla = ActiveCriticJudge(variant="vanilla").run(items(3), client)
    assert all(j.ok and j.usage.calls == 1 and not j.criteria for j in coarse + vanilla)
    prompts = [r.messages[0].content for r in calls(backend, "os")]
    assert all("Aspect0: d0" in p and TASK in p for p in prompts[:3])
    assert all(GENERIC_TASK in p and "Aspect0" not in p for p in prompts[3:])
    assert not calls(backend, "mcs")


def test_unfitted_coarse_or_fine_refuses_to_run():
    with scripted_client(model()) as client, pytest.raises(ConfigError, match="fit it first"):
        ActiveCriticJudge(variant="coarse").run(items(2), client)


def test_a_malformed_reply_is_repaired_by_json_repair_without_a_retry():
    backend = model(overall=lambda r: "{'Explanation': 'ok', 'Score Of Overall': '80',")
    with scripted_client(backend) as client:
        [judgment] = fine_judge(variant="coarse").run(items(1), client)
    assert judgment.ok and judgment.extra["score_100"] == 80 and len(backend.requests) == 1


def test_an_unreadable_reply_is_retried_with_a_repair_prompt():
    def mcs(request: Request) -> str:
        if len(request.messages) == 1:
            return "Both aspects look fine to me."
        return json.dumps({"Aspect0": {"Explanation": "a", "Score": 40}, "Aspect1": {"Explanation": "b", "Score": "[60]"}})

    backend = model(mcs=mcs)
    with scripted_client(backend) as client:
        [judgment] = fine_judge().run(items(1), client)
    assert judgment.ok and judgment.criteria == {"Aspect0": 40.0, "Aspect1": 60.0}
    assert judgment.extra["repaired_stages"] == ["multi-criteria scoring"] and judgment.usage.calls == 3
    repair = calls(backend, "mcs")[1]
    assert repair.messages[1].content == "Both aspects look fine to me." and '"Aspect1"' in repair.messages[2].content


def test_still_unreadable_after_the_retry_is_unparsable_with_the_raw_text():
    backend = model(overall=lambda r: "Score Of Overall: 250" if len(r.messages) == 1 else "no idea")
    with scripted_client(backend) as client:
        [judgment] = fine_judge().run(items(1), client)
    assert judgment.status == "unparsable" and judgment.score is None
    assert judgment.raw == "no idea" and judgment.extra["first_raw"] == "Score Of Overall: 250"
    assert "overall scoring" in judgment.reason and judgment.criteria == {"Aspect0": 20.0, "Aspect1": 20.0}
    assert judgment.usage.calls == 3  # McS-E, OS-E and its repair; no score made up


def test_unreadable_criteria_scores_stop_before_the_overall_call():
    backend = model(mcs=lambda r: "[]")
    with scripted_client(backend) as client:
        [judgment] = fine_judge().run(items(1), client)
    assert judgment.status == "unparsable" and "multi-criteria" in judgment.reason and not calls(backend, "os")


def test_plain_text_overall_replies_from_unconstrained_backends_are_read():
    backend = ScriptedBackend(lambda r, i: "Explanation: a decent reply.\nScore Of Overall: 65",
                              capabilities=Capabilities(json_schema=False))
    with scripted_client(backend) as client:
        [judgment] = ActiveCriticJudge(variant="vanilla").run(items(1), client)
    assert judgment.ok and judgment.extra["score_100"] == 65 and judgment.explanation == "a decent reply."
    assert backend.requests[0].response_format is None
    with scripted_client(backend) as client, pytest.raises(ConfigError, match="cannot constrain"):
        ActiveCriticJudge(variant="vanilla", constrained=True).run(items(1), client)


def test_criteria_can_be_given_as_text():
    judge = ActiveCriticJudge(variant="coarse", task=TASK, criteria="Fluency: reads well\n- Depth: goes deep\n")
    assert judge.criteria == (Criterion(name="Fluency", definition="reads well"), Criterion(name="Depth", definition="goes deep"))


# -- demonstration search ----------------------------------------------------------------------------
GOLD = "i03"


def gold_sensitive_model() -> ScriptedBackend:
    """Scores track the human ones only when the GOLD item is among the demonstrations."""
    def overall(request: Request) -> str:
        demos_part = request.messages[0].content.split("Now evaluate this case.")[0]
        quality = judged_quality(request)
        score = 20 * quality if f"Response: Reply {int(GOLD[1:])} with" in demos_part else 100 - 20 * quality
        return json.dumps({"Explanation": "x", "Score Of Overall": score})

    return model(overall=overall)


def test_search_keeps_the_max_q_draw_deterministically():
    judge = fine_judge(variant="coarse")
    results = []
    for _ in range(2):
        with scripted_client(gold_sensitive_model()) as client:
            results.append(search_demonstrations(judge.with_demonstrations, items(), client, aspect="overall",
                                                 k=6, sizes=(3, 5), seed=1))
    first, again = results
    assert [d.demo_ids for d in first.trajectory] == [d.demo_ids for d in again.trajectory]
    objectives = [d.objective for d in first.trajectory]
    assert first.best_draw.objective == max(objectives)
    assert GOLD in first.best_draw.demo_ids and any(GOLD not in d.demo_ids for d in first.trajectory)
    assert [d.item_id for d in first.best.demonstrations] == first.best_draw.demo_ids
    # a draw's own demonstrations are not among the items it is scored on
    assert all(d.n_evaluated == len(items()) - len(d.demo_ids) for d in first.trajectory)


def test_q_is_the_sum_of_the_three_correlations():
    human, judge = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    from scipy import stats

    expected = stats.pearsonr(human, judge)[0] + stats.spearmanr(human, judge)[0] + stats.kendalltau(human, judge)[0]
    assert q_objective(human, judge) == pytest.approx(expected)
    assert q_objective(human, [3, 3, 3, 3, 3]) != q_objective(human, [3, 3, 3, 3, 3])  # NaN: a constant judge


def test_draws_respect_sizes_and_the_seed():
    pool = items()
    draws = draw_demonstrations(pool, 20, (3, 8), seed=1)
    assert all(3 <= len(d) <= 8 and len({i.id for i in d}) == len(d) for d in draws)
    assert [[i.id for i in d] for d in draws] == [[i.id for i in d] for d in draw_demonstrations(pool, 20, (3, 8), 1)]
    with pytest.raises(ConfigError, match="cannot supply"):
        draw_demonstrations(pool[:2], 1, (3, 8), seed=0)


def test_a_constant_judge_never_wins_and_all_undefined_keeps_the_first_draw():
    backend = model(overall=lambda r: json.dumps({"Explanation": "x", "Score Of Overall": 50}))
    with scripted_client(backend) as client, pytest.warns(UserWarning, match="no demonstration draw out of 2"):
        result = search_demonstrations(fine_judge(variant="coarse").with_demonstrations, items(), client,
                                       aspect="overall", k=2)
    assert not result.defined and result.best_draw.index == 0
    assert all(math.isnan(d.objective) for d in result.trajectory)
    assert [d.item_id for d in result.best.demonstrations] == result.trajectory[0].demo_ids


# -- the protocol file ----------------------------------------------------------------------------------
def test_fitted_protocol_round_trips_and_is_reused_without_inference(tmp_path):
    with scripted_client(gold_sensitive_model()) as client:
        fitted = ActiveCriticJudge(draws=4, demos=(3, 4), tuning_fraction=0.5).fit(items(), client, out_dir=tmp_path)
    assert fitted.task == TASK and len(fitted.criteria) == 5 and 3 <= len(fitted.demonstrations) <= 4
    summary = fitted.fit_summary
    assert summary["best_q"] == max(d["objective"] for d in summary["draws"] if d["objective"] is not None)
    assert set(summary["tuning_items"]) < {i.id for i in items()}  # group-aware share of the items
    assert {d.item_id for d in fitted.demonstrations} <= set(summary["tuning_items"])
    assert json.loads((tmp_path / "active_critic_search.json").read_text())["best_draw"] == summary["best_draw"]

    path = fitted.save(tmp_path / "fitted.yaml")
    loaded = load_judge(path)
    assert loaded == fitted and loaded.digest() == fitted.digest()
    backend = gold_sensitive_model()
    with scripted_client(backend) as client:
        judgments = loaded.run(items(4), client)
    assert all(j.ok for j in judgments)
    assert {stage_of(r) for r in backend.requests} == {"mcs", "os"}  # nothing re-inferred
    demo = fitted.demonstrations[0]
    assert f"Score Of Overall: {demo.score_text}" in backend.requests[0].messages[0].content


def test_vanilla_fit_only_searches_demonstrations():
    backend = gold_sensitive_model()
    with scripted_client(backend) as client:
        fitted = ActiveCriticJudge(variant="vanilla", draws=2, demos=(3, 3), tuning_fraction=1.0).fit(items(), client)
    assert fitted.task is None and fitted.criteria == () and len(fitted.demonstrations) == 3
    assert {stage_of(r) for r in backend.requests} == {"os"}


def test_too_few_items_is_a_clear_error():
    with scripted_client(model()) as client, pytest.raises(ConfigError, match="at least 6 pointwise items"):
        ActiveCriticJudge().fit(items(4), client)
    with scripted_client(model()) as client, pytest.raises(ConfigError, match="tuning share"):
        ActiveCriticJudge(variant="vanilla", tuning_fraction=0.25).fit(items(12), client)
