"""APE, OPRO and prompt rewriting with a scripted LLM (the real model runs them in
tests/e2e/test_cli_optimize.py): proposals parsed, unusable ones recorded, budget kept."""

from __future__ import annotations

import json
import re

import pytest

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.types import Usage
from judgelab.optimize.base import Evaluation, JudgeEvaluator, load_trajectory, optimize
from judgelab.optimize.llm_search import APE, OPRO, clean_instruction, parse_strategy
from judgelab.optimize.methods import make_optimizer
from judgelab.optimize.rewrite import PromptRewrite
from judgelab.strategy import Strategy
from tests.doubles import ScriptedBackend, scripted_client

BASE = PromptedJudge(aspect="naturalness", criteria="Rate how natural the sentence sounds.")


class TextEvaluator:
    """Objective = length of the criteria text (a stand-in with a known optimum direction)."""

    objective = "spearman"

    def __init__(self):
        self.evaluated = []

    def evaluate(self, config, items=None):
        self.evaluated.append(config)
        value = float(len(config.criteria or "")) if config.strategy == Strategy() else float(config.strategy.scale)
        return Evaluation(objective=value, statistic="spearman", level="dataset", value=value / 100)


def test_parse_strategy_accepts_json_and_reports_what_is_wrong():
    reply = 'Sure! {"scale": "10", "examples": 3, "criteria": "Human", "reference": "none", "cot": "none", ' \
            '"autocot": "off", "metrics": false, "order": "TD IC ER"}'
    strategy, reason = parse_strategy(reply)
    assert reason is None and strategy == Strategy(scale=10, examples=3, cot="none", order="TD-IC-ER")
    assert parse_strategy("I think scale 10 is best.")[0] is None
    missing, why = parse_strategy('{"scale": 10}')
    assert missing is None and "leaves out examples" in why
    bad, why = parse_strategy('{"scale": 7, "examples": 0, "criteria": "human", "reference": "none", "cot": "none", '
                              '"autocot": false, "metrics": false, "order": "TD-ER-IC"}')
    assert bad is None and why.startswith("not a strategy: scale")


def test_clean_instruction():
    assert clean_instruction('Output: "Judge fluency."') == "Judge fluency."
    assert clean_instruction("   ") is None


def test_opro_records_unparsable_and_duplicate_proposals_and_stops_after_too_many():
    replies = iter(["no idea", '{"scale": 10, "examples": 0, "criteria": "human", "reference": "none", '
                    '"cot": "prefix", "autocot": false, "metrics": false, "order": "TD-ER-IC"}',
                    '{"scale": 100, "examples": 0, "criteria": "human", "reference": "none", "cot": "none", '
                    '"autocot": false, "metrics": false, "order": "TD-ER-IC"}'])
    backend = ScriptedBackend(lambda request, i: next(replies, "still no idea"))
    with scripted_client(backend) as client:
        evaluator = TextEvaluator()
        result = optimize(OPRO(client, max_failures=3), BASE, evaluator, 30)
    kinds = [(r["kind"], r.get("status"), r.get("reason", "")) for r in result.records[21:]]
    assert kinds[0][:2] == ("proposal", "unparsable") and "no JSON" in kinds[0][2]
    assert kinds[1][:2] == ("proposal", "ok") and kinds[1][2].startswith("already evaluated")  # scale=10 was in init
    assert kinds[2][0] == "evaluation" and result.records[23]["strategy"].startswith("scale=100,")
    assert result.records[23]["proposal_calls"] == 1
    assert result.status == "stopped: 3 proposals in a row gave nothing new to evaluate"
    assert result.evaluations == 22 and len(evaluator.evaluated) == 22
    # The history shown to the LLM: factor ranges, the best strategies in ascending order of score.
    prompt = backend.requests[-1].messages[-1].content
    assert '- scale: 5, 3, 10, 50, 100' in prompt
    scores = [float(s) for s in re.findall(r"score: (-?\d+\.\d)", prompt)]
    assert scores == sorted(scores) and len(scores) == 20
    assert result.usage.calls == 6  # every proposal call is accounted (evaluations here cost none)


def test_ape_resamples_the_queue_and_keeps_the_best():
    def variation(request, i):
        parent = request.messages[-1].content.split("Input: ", 1)[1].split("\n\nOutput:")[0]
        return f"Output: {parent} Be careful."

    with scripted_client(ScriptedBackend(variation)) as client:
        evaluator = TextEvaluator()
        result = optimize(APE(client, queue_size=2, per_prompt=2), BASE, evaluator, 5)
    assert result.evaluations == 5
    texts = [r["config"]["criteria"] for r in result.trajectory]
    assert texts[0] == BASE.criteria and texts[1] == BASE.criteria + " Be careful."
    # Same seed per proposal index, same parent -> the scripted reply repeats: recorded as a duplicate.
    duplicates = [r for r in result.records if r["kind"] == "proposal"]
    assert all(r["reason"] == "the same instruction was already evaluated" for r in duplicates)
    assert result.best_config.criteria == max(texts, key=len)


def _items() -> list[Item]:
    humans = [1, 2, 4, 5, 3, 5]
    return [Item(id=f"i{k}", dataset="sfres", group_id=f"g{k // 2}", source=f"inform(name=place{k})",
                 output=f"sentence number {k}", scores={"naturalness": float(h)}, scale=(1, 6))
            for k, h in enumerate(humans)]


def test_rewrite_shows_predicted_and_human_ratings_and_iterates_from_the_latest(tmp_path):
    rewrites = []

    def reply(request, i):
        prompt = request.messages[-1].content
        if prompt.startswith("You improve the instruction"):
            rewrites.append(prompt)
            return f"Improved instruction v{prompt.count('Improved') + 1}: compare with the human ratings."
        # The judge: better-aligned ratings once the criteria mention "human".
        number = int(re.search(r"sentence number (\d)", prompt).group(1))
        rating = [1, 2, 4, 5, 3, 5][number] if "human" in prompt else 3 + number % 2
        return f"{rating}]]"

    items = _items()
    with scripted_client(ScriptedBackend(reply)) as client:
        evaluator = JudgeEvaluator(items, client, n_resamples=50)
        base = BASE.model_copy(update={"strategy": Strategy(cot="none")})
        result = optimize(PromptRewrite(client, m=3), base, evaluator, 3, tmp_path)
    assert result.evaluations == 3 and len(rewrites) == 2
    rewrites_first_run = list(rewrites)
    first = rewrites[0]
    assert "[Current Instruction]\nRate how natural the sentence sounds." in first
    assert first.count("[Example") == 3 and "Human rating:" in first and "(1 to 6)" in first
    shown = re.findall(r"Text: sentence number (\d)\nEvaluator rating: (\S+)", first)
    assert all(rating == str(3 + int(n) % 2) for n, rating in shown)  # ratings under the current instruction
    assert "[Current Instruction]\nImproved instruction v1" in rewrites[1]  # iterates from the latest
    assert result.trajectory[0]["objective"] < result.best["objective"] == pytest.approx(100.0)
    assert result.trajectory[0]["pairwise_agreement"] is not None
    assert result.best_config.criteria.startswith("Improved instruction")
    assert len(list((tmp_path / "judgments").iterdir())) == 3
    # A rerun into the folder replays: nothing judged, the rewrite prompts come from the cache.
    with scripted_client(ScriptedBackend(reply)) as client:
        evaluator = JudgeEvaluator(items, client, n_resamples=50)
        again = optimize(PromptRewrite(client, m=3), base, evaluator, 3, tmp_path)
        assert client.usage.calls == 2  # the two rewrite calls (no cache here); no judge call
    assert rewrites[2:] == rewrites_first_run  # judgments read back from the folder: the same prompts
    assert [r["digest"] for r in again.trajectory] == [r["digest"] for r in load_trajectory(tmp_path)]


def test_instruction_search_needs_human_criteria():
    with scripted_client(ScriptedBackend()) as client:
        with pytest.raises(Exception, match="criteria=human"):
            optimize(make_optimizer("ape", client), BASE.model_copy(update={"strategy": Strategy(criteria="none")}),
                     TextEvaluator(), 3)


def test_proposal_usage_counts_against_a_call_budget():
    from judgelab.optimize.base import Budget

    with scripted_client(ScriptedBackend(lambda r, i: f"Output: variant {r.seed}")) as client:
        result = optimize(APE(client), BASE, TextEvaluator(), Budget(50, calls=3))
    assert result.usage.calls == 3 and result.evaluations == 4
    assert isinstance(result.usage, Usage)


@pytest.mark.parametrize("objective", ["spearman", "q", "kappa", "pairwise"])
def test_judge_evaluator_objectives_match_the_metrics(objective):
    from scipy import stats
    from sklearn.metrics import cohen_kappa_score

    ratings = [1, 3, 4, 4, 2, 5]  # what the scripted judge answers for sentence number k
    items = _items()
    human = [item.human_score("naturalness") for item in items]

    def reply(request, i):
        number = int(re.search(r"sentence number (\d)", request.messages[-1].content).group(1))
        return f"{ratings[number]}]]"

    with scripted_client(ScriptedBackend(reply)) as client:
        evaluation = JudgeEvaluator(items, client, objective=objective, n_resamples=20).evaluate(
            BASE.model_copy(update={"strategy": Strategy(cot="none")}))
    expected = {
        "spearman": stats.spearmanr(human, ratings).statistic,
        "q": stats.pearsonr(human, ratings).statistic + stats.spearmanr(human, ratings).statistic
        + stats.kendalltau(human, ratings).statistic,
        "kappa": cohen_kappa_score(human, ratings),
        # groups (0,1), (2,3), (4,5): humans 1<2, 4<5, 3<5; judge 1<3, 4=4, 2<5 -> 2 of 3 pairs agree
        "pairwise": 2 / 3,
    }[objective]
    assert evaluation.objective == pytest.approx(100 * expected)
    assert evaluation.pairwise_agreement == pytest.approx(2 / 3)
    assert evaluation.usage.calls == 6 and evaluation.n_used == 6


def test_judge_evaluator_records_why_an_objective_is_undefined():
    with scripted_client(ScriptedBackend(lambda r, i: "3]]")) as client:
        evaluation = JudgeEvaluator(_items(), client).evaluate(BASE.model_copy(update={"strategy": Strategy(cot="none")}))
    assert evaluation.objective is None and evaluation.reason == "constant judge"
    assert evaluation.search_objective == 0.0


@pytest.mark.parametrize("min_coverage, defined", [(0.5, False), (0.0, True)])
def test_judge_evaluator_leaves_a_config_that_rates_too_few_items_undefined(min_coverage, defined):
    ratings = {0: "1]]", 2: "4]]"}  # sentences 0 and 2 get a rating; 4 of 6 replies are unparsable

    def reply(request, i):
        number = int(re.search(r"sentence number (\d)", request.messages[-1].content).group(1))
        return ratings.get(number, "I cannot rate this.")

    with scripted_client(ScriptedBackend(reply)) as client:
        evaluation = JudgeEvaluator(_items(), client, min_coverage=min_coverage).evaluate(
            BASE.model_copy(update={"strategy": Strategy(cot="none")}))
    assert evaluation.n_used == 2 and evaluation.unparsable == 4 and evaluation.value == pytest.approx(1.0)
    if defined:
        assert evaluation.objective == pytest.approx(100.0) and evaluation.reason is None
    else:
        assert evaluation.objective is None and evaluation.search_objective == 0.0
        assert evaluation.reason.startswith("only 2 of 6 items have a usable rating, under min_coverage 0.5")


def test_min_coverage_is_part_of_the_search_identity(tmp_path):
    from judgelab.optimize.baselines import RandomSearch

    class Recorded:
        objective, min_coverage = "spearman", 0.5

        def evaluate(self, config, items=None):
            return Evaluation(objective=1.0, statistic="spearman", level="dataset", value=0.01, n_items=1, n_used=1)

    optimize(RandomSearch(), BASE, Recorded(), 2, tmp_path)
    stricter = Recorded()
    stricter.min_coverage = 0.9
    with pytest.raises(ConfigError, match="different min_coverage: 0.5 there"):
        optimize(RandomSearch(), BASE, stricter, 3, tmp_path)
    state = json.loads((tmp_path / "optimizer.json").read_text())
    del state["min_coverage"]  # a folder written before the rule scored whatever the coverage: 0
    (tmp_path / "optimizer.json").write_text(json.dumps(state))
    with pytest.raises(ConfigError, match="different min_coverage: 0.0 there"):
        optimize(RandomSearch(), BASE, Recorded(), 3, tmp_path)
    legacy = Recorded()
    legacy.min_coverage = 0.0
    assert optimize(RandomSearch(), BASE, legacy, 3, tmp_path).evaluations == 3
