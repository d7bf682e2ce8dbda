"""Search logic on a precomputed objective (a table strategy -> f); the real judge path is
exercised end to end in tests/e2e/test_cli_optimize.py with the embedded model.

Expected values are computed here from the formulas of shared/specs/hpss.md, independently of
the implementation's arrays.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from judgelab.errors import ConfigError, DataError
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.types import Usage
from judgelab.optimize.base import Budget, Evaluation, Search, load_trajectory, optimize
from judgelab.optimize.baselines import Greedy, RandomSearch, StepwiseGreedy
from judgelab.optimize.hpss import HPSS
from judgelab.strategy import FACTORS, Strategy

# An additive objective: f(s) = sum of per-value weights, plus one interaction.
WEIGHTS = {
    "scale": {5: 0.0, 3: -3.0, 10: 2.0, 50: 0.5, 100: 1.0},
    "examples": {0: 0.0, 3: 1.5, 5: -0.5, 10: -2.0},
    "criteria": {"human": 1.0, "none": 0.0, "self": -1.0},
    "reference": {"none": 4.0, "self": 0.0, "dialectic": -8.0},
    "cot": {"prefix": 0.0, "none": 1.0, "suffix": 0.5},
    "autocot": {False: 0.5, True: -0.5},
    "metrics": {False: 1.0, True: -1.0},
    "order": {"TD-ER-IC": 1.0, "TD-IC-ER": 0.0, "ER-TD-IC": 0.25, "ER-IC-TD": -0.5, "IC-TD-ER": -1.0, "IC-ER-TD": -2.0},
}
INTERACTION = 10.0  # scale=10 together with cot=none


def table_f(strategy: Strategy) -> float:
    f = 40.0 + sum(WEIGHTS[name][getattr(strategy, name)] for name in FACTORS)
    if strategy.scale == 10 and strategy.cot == "none":
        f += INTERACTION
    return f


class TableEvaluator:
    """The objective from a table; each evaluation 'costs' ``calls_per_eval`` calls."""

    objective = "spearman"

    def __init__(self, f=table_f, calls_per_eval: int = 3, fail_after: int | None = None):
        self.f, self.calls_per_eval, self.fail_after = f, calls_per_eval, fail_after
        self.evaluated: list[str] = []

    def evaluate(self, config, items=None) -> Evaluation:
        if self.fail_after is not None and len(self.evaluated) >= self.fail_after:
            raise RuntimeError("simulated crash")
        self.evaluated.append(config.strategy.key())
        value = self.f(config.strategy)
        return Evaluation(objective=value, statistic="spearman", level="dataset", value=value / 100,
                          pairwise_agreement=0.5 + value / 1000, usage=Usage(calls=self.calls_per_eval))


BASE = PromptedJudge(aspect="naturalness")
S0 = Strategy.mt_bench()


def centred(name: str) -> dict:
    mean = float(np.mean(list(WEIGHTS[name].values())))
    return {value: weight - mean for value, weight in WEIGHTS[name].items()}


def initialised(**settings) -> tuple[HPSS, Search]:
    hpss = HPSS(**settings)
    search = Search(hpss, BASE, TableEvaluator(), Budget(100))
    hpss.initialise(search, S0)
    return hpss, search


# -- HPSS -----------------------------------------------------------------------------------------


def test_initialisation_evaluates_start_and_20_variants_and_sets_advantages():
    hpss, search = initialised()
    assert search.evaluations == 21
    keys = [r["strategy"] for r in search.records]
    assert keys[0] == S0.key() and set(keys[1:]) == {s.key() for s in S0.neighbours()}
    # Without the interaction (scale=10 and cot=none never meet in one-factor variants),
    # f(variant with v) - mean over the factor = w(v) - mean(w).
    for name in FACTORS:
        for index, value in enumerate(FACTORS[name]):
            assert hpss.advantage[name][index] == pytest.approx(centred(name)[value])
            assert hpss.updates[name][index] == 1 and hpss.visits[name][index] == 1
    # B: the 5 best of the 21 (ties keep evaluation order).
    ranked = sorted([S0, *S0.neighbours()], key=table_f, reverse=True)
    assert [s.key() for s in hpss.population] == [s.key() for s in ranked[:5]]
    assert hpss.population[0] == S0.replace(scale=10)


def test_neighbour_score_is_advantage_gap_plus_ucb_term():
    hpss, search = initialised()
    t = search.evaluations + 1  # 22
    changes, scores = hpss.neighbour_scores(S0, t)
    assert len(changes) == 20
    d = dict(zip(changes, scores, strict=True))
    ucb = 4.0 * math.sqrt(math.log(22) / 1)  # lambda sqrt(ln t / N(v)), N(v) = 1 after init
    assert d[("scale", 10)] == pytest.approx(centred("scale")[10] - centred("scale")[5] + ucb)
    assert d[("reference", "dialectic")] == pytest.approx(-8.0 - 4.0 + ucb)
    # Softmax with temperature 5.
    p = hpss.choice_probabilities(scores)
    assert p.sum() == pytest.approx(1.0)
    i, j = changes.index(("scale", 10)), changes.index(("reference", "dialectic"))
    assert p[i] / p[j] == pytest.approx(math.exp((scores[i] - scores[j]) / 5.0))
    # Ablations: no UCB term; no heuristic means a uniform choice.
    no_ucb, _ = initialised(ucb=False)
    assert dict(zip(*no_ucb.neighbour_scores(S0, 22), strict=True))[("scale", 10)] == pytest.approx(2.0)
    uniform, _ = initialised(heuristic=False)
    assert np.allclose(uniform.choice_probabilities(scores), 1 / 20)


def test_exploration_update_and_recentring_by_hand():
    hpss, search = initialised()
    parent = S0.replace(scale=10)  # evaluated in init: f = 40 + 2 + 0 + 1 + 4 + 0 + 0.5 + 1 + 1 = 49.5
    child = parent.replace(cot="none")  # f = 49.5 + 1 + INTERACTION = 60.5
    assert table_f(parent) == 49.5 and table_f(child) == 60.5
    before = centred("cot")  # prefix -0.5, none 0.5, suffix 0
    hpss.explore(search, parent, child, "cot")
    # A(v) <- (A(v) n(v) + (f(s') - f(s) + A(u))) / (n(v) + 1) with u = prefix, v = none, n = 1
    raw_none = (0.5 * 1 + (60.5 - 49.5 + (-0.5))) / 2  # = 5.5
    raw = {"prefix": before["prefix"], "none": raw_none, "suffix": before["suffix"]}
    mean = sum(raw.values()) / 3
    expected = {value: raw[value] - mean for value in raw}
    for index, value in enumerate(FACTORS["cot"]):
        assert hpss.advantage["cot"][index] == pytest.approx(expected[value])
    assert hpss.advantage["cot"].sum() == pytest.approx(0.0)
    assert list(hpss.updates["cot"]) == [1, 2, 1]
    # N(value) += 1 for every value of the evaluated strategy, e.g. scale=10 and cot=none.
    assert hpss.visits["scale"][FACTORS["scale"].index(10)] == 2
    assert hpss.visits["cot"][FACTORS["cot"].index("none")] == 2
    # Other factors are untouched.
    for index, value in enumerate(FACTORS["scale"]):
        assert hpss.advantage["scale"][index] == pytest.approx(centred("scale")[value])


def test_exploitation_picks_unevaluated_argmax_of_total_advantage():
    hpss, search = initialised()
    # After init the advantages are the centred weights, whose per-factor argmax is:
    target = Strategy(scale=10, examples=3, criteria="human", reference="none", cot="none", autocot=False,
                      metrics=False, order="TD-ER-IC")
    assert hpss.exploitation_target() == target
    hpss.exploit(search)
    assert search.records[-1]["phase"] == "exploit" and search.records[-1]["strategy"] == target.key()
    # Exploitation updates no advantage.
    for name in FACTORS:
        for index, value in enumerate(FACTORS[name]):
            assert hpss.advantage[name][index] == pytest.approx(centred(name)[value])
    # Evaluated now, so the next target is the runner-up: the smallest loss is cot=suffix (0.5).
    assert hpss.exploitation_target() == target.replace(cot="suffix")


def test_mutation_of_an_evaluated_neighbour_is_free():
    hpss, search = initialised(ucb=False, temperature=1e-6)  # (almost) deterministic: the best neighbour
    # From the start point, the best neighbour by advantage is scale=10, evaluated in init.
    assert hpss.mutate(search, S0, np.random.default_rng(0)) is None
    assert search.evaluations == 21 and hpss.counts["free"] == 1


def test_budget_is_counted_in_evaluations_only():
    evaluator = TableEvaluator()
    result = optimize(HPSS(seed=3), BASE, evaluator, 40)
    steps = [r["step"] for r in result.trajectory]
    assert steps == list(range(1, 41)) and len(evaluator.evaluated) == 40
    assert [r["phase"] for r in result.trajectory[:21]] == ["init"] * 21
    assert {r["phase"] for r in result.trajectory[21:]} <= {"explore", "exploit"}
    assert len(set(evaluator.evaluated)) == 40  # never the same strategy twice
    assert result.status == "budget spent"
    assert result.best["objective"] == max(table_f(Strategy.from_key(k)) for k in evaluator.evaluated)


def test_budget_in_calls_stops_after_the_crossing_evaluation():
    result = optimize(HPSS(), BASE, TableEvaluator(calls_per_eval=3), Budget(100, calls=10))
    assert result.evaluations == 4 and result.usage.calls == 12


def test_hpss_is_deterministic_for_a_seed_and_finds_the_interaction():
    runs = [optimize(HPSS(seed=seed), BASE, TableEvaluator(), 71) for seed in (7, 7, 8)]
    keys = [[r["strategy"] for r in run.trajectory] for run in runs]
    assert keys[0] == keys[1]
    assert keys[0] != keys[2]
    best = Strategy(scale=10, examples=3, criteria="human", reference="none", cot="none", autocot=False,
                    metrics=False, order="TD-ER-IC")
    assert runs[0].best["objective"] == table_f(best)  # exploitation reaches the global optimum


def test_ablations_change_the_search():
    full = optimize(HPSS(seed=1), BASE, TableEvaluator(), 71)
    no_exploit = optimize(HPSS(seed=1, exploitation=False), BASE, TableEvaluator(), 71)
    assert "exploit" in {r["phase"] for r in full.trajectory}
    assert "exploit" not in {r["phase"] for r in no_exploit.trajectory}


# -- resume -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [lambda: HPSS(seed=5), lambda: Greedy(seed=5), lambda: RandomSearch(seed=5)])
def test_resume_after_a_crash_replays_without_reevaluating(tmp_path, make):
    reference = optimize(make(), BASE, TableEvaluator(), 35)
    crashing = TableEvaluator(fail_after=23)
    with pytest.raises(RuntimeError, match="simulated crash"):
        optimize(make(), BASE, crashing, 35, tmp_path)
    assert len(load_trajectory(tmp_path)) == 23
    state = json.loads((tmp_path / "optimizer.json").read_text())
    assert state["status"] == "running" and state["evaluations"] == 23
    resumed_evaluator = TableEvaluator()
    resumed = optimize(make(), BASE, resumed_evaluator, 35, tmp_path)
    assert len(resumed_evaluator.evaluated) == 35 - 23  # nothing recorded is evaluated again
    assert [r["strategy"] for r in resumed.trajectory] == [r["strategy"] for r in reference.trajectory]
    assert [r["strategy"] for r in load_trajectory(tmp_path)] == [r["strategy"] for r in reference.trajectory]
    assert resumed.best == reference.best
    assert resumed.usage.calls == 35 * 3  # accounting includes the replayed evaluations
    assert (tmp_path / "best.yaml").exists()
    # A larger budget on a rerun continues the same search.
    more = TableEvaluator()
    optimize(make(), BASE, more, 40, tmp_path)
    assert len(more.evaluated) == 5


def test_a_folder_of_another_search_is_refused(tmp_path):
    optimize(HPSS(seed=1), BASE, TableEvaluator(), 22, tmp_path)
    with pytest.raises(ConfigError, match="another search"):
        optimize(HPSS(seed=2), BASE, TableEvaluator(), 22, tmp_path)
    with pytest.raises(ConfigError, match="another search"):
        optimize(Greedy(seed=1), BASE, TableEvaluator(), 22, tmp_path)


def test_run_folder_files(tmp_path):
    result = optimize(HPSS(seed=2), BASE, TableEvaluator(), 25, tmp_path)
    lines = load_trajectory(tmp_path)
    first = lines[0]
    for key in ("step", "config", "objective", "pairwise_agreement", "best_objective", "calls", "cache_hits",
                "cost_usd", "total_calls", "strategy", "phase"):
        assert key in first
    running = [line["best_objective"] for line in lines]
    assert running == list(np.maximum.accumulate([line["objective"] for line in lines]))
    state = json.loads((tmp_path / "optimizer.json").read_text())
    assert state["status"] == "budget spent" and state["evaluations"] == 25
    assert set(state["advantages"]) == set(FACTORS)
    from judgelab.judges.base import load_judge

    assert load_judge(tmp_path / "best.yaml") == result.best_config


def test_a_corrupt_run_json_in_the_search_folder_is_named_and_nothing_is_removed(tmp_path):
    """The best config's run is written over the folder's run files only when run.json says whose they are."""
    from judgelab.commands.optimize import write_best_run

    result = optimize(RandomSearch(seed=1), BASE, TableEvaluator(), 3, tmp_path)
    (tmp_path / "run.json").write_text('{"judge_digest": ')
    (tmp_path / "judgments.jsonl").write_text('{"item_id": "i0", "score": 3}\n')
    with pytest.raises(DataError, match=r"run\.json:1: bad JSON .*remove it and rerun"):
        write_best_run(result, [], None, tmp_path, "dev.jsonl", None)
    assert (tmp_path / "judgments.jsonl").read_text() == '{"item_id": "i0", "score": 3}\n'


# -- baselines --------------------------------------------------------------------------------------


def test_stepwise_greedy_spends_21_and_finds_the_additive_optimum():
    evaluator = TableEvaluator()
    result = optimize(StepwiseGreedy(), BASE, evaluator, 71)
    assert result.evaluations == 21 and result.status == "finished"
    # Table order: scale first picks 10 (cot still prefix), then cot=none meets the interaction.
    best = Strategy.from_key(result.trajectory[[r["step"] for r in result.trajectory].index(result.best["step"])]
                             ["strategy"])
    assert best == Strategy(scale=10, examples=3, cot="none")
    assert optimize(StepwiseGreedy(), BASE, TableEvaluator(), 10).evaluations == 10


def test_greedy_spends_the_whole_budget_when_it_can():
    noisy = np.random.default_rng(0).normal(0, 1, 12960)
    from judgelab.optimize.space import row_of

    result = optimize(Greedy(seed=4), BASE, TableEvaluator(f=lambda s: table_f(s) + noisy[row_of(s)]), 26)
    assert result.evaluations == 26 and result.status == "budget spent"


def test_greedy_rounds_of_five_and_keeps_the_best():
    evaluator = TableEvaluator()
    result = optimize(Greedy(seed=4), BASE, evaluator, 71)
    assert result.trajectory[0]["strategy"] == S0.key()
    # On this table Greedy reaches the optimum, then stops once all its neighbours are evaluated.
    assert result.status.startswith("stopped: every neighbour") and result.evaluations < 71
    assert result.best["objective"] == table_f(Strategy(scale=10, examples=3, cot="none"))
    parents = [r["parent"] for r in result.trajectory[1:]]
    rounds = len(parents) // 5
    for round_start in range(0, 5 * rounds, 5):
        assert len(set(parents[round_start:round_start + 5])) == 1  # 5 perturbations of one current best
    # The current best of each round is the best seen so far.
    scores = {r["strategy"]: r["objective"] for r in result.trajectory}
    for round_start in range(5, len(parents), 5):
        seen = [r["objective"] for r in result.trajectory[: round_start + 1]]
        assert scores[parents[round_start]] == max(seen)


def test_random_search_draws_distinct_strategies():
    evaluator = TableEvaluator()
    optimize(RandomSearch(seed=0), BASE, evaluator, 71)
    assert len(evaluator.evaluated) == 71 == len(set(evaluator.evaluated))
    assert evaluator.evaluated[0] == S0.key()


@pytest.mark.parametrize("offset, gain", [(0.0, "ratio"), (-60.0, None)])
def test_held_out_change_is_always_given_and_a_relative_gain_only_from_a_positive_start(offset, gain):
    shifted = TableEvaluator(f=lambda s: table_f(s) + offset)  # offset -60: every strategy scores below 0
    result = optimize(Greedy(seed=0), BASE, shifted, 10, test_items=[object()])
    start, best = result.test["start"]["objective"], result.test["best"]["objective"]
    assert result.test["change"] == pytest.approx(best - start)
    if gain is None:
        assert start < 0 and result.test["relative_gain"] is None
    else:
        assert result.test["relative_gain"] == pytest.approx((best - start) / start)
