"""Strategy searches confined to a sub-space (``space=``, ``judgelab optimize --space``), on the
table objective of test_optimize_search.py; the CLI path is in tests/e2e/test_cli_optimize.py."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.errors import ConfigError
from judgelab.optimize.base import Budget, Search, optimize
from judgelab.optimize.baselines import Greedy, RandomSearch, StepwiseGreedy
from judgelab.optimize.hpss import HPSS
from judgelab.optimize.llm_search import OPRO
from judgelab.optimize.methods import make_optimizer
from judgelab.optimize.space import outside, restricted_space, row_of, space_rows
from judgelab.strategy import FACTORS, Strategy
from tests.doubles import ScriptedBackend, scripted_client
from tests.unit.test_optimize_search import BASE, S0, TableEvaluator, table_f

# What a CPU user with one-token ratings would search: no CoT before the rating, one-digit scales.
FEASIBLE = {"cot": "none,suffix", "scale": [3, 5, 10]}
START = S0.replace(cot="none")
BASE_NO_COT = BASE.model_copy(update={"strategy": START})


def noisy_table(seed: int = 0):
    noise = np.random.default_rng(seed).normal(0, 3, 12960)
    return TableEvaluator(f=lambda s: table_f(s) + noise[row_of(s)])


def strategies(result) -> list[Strategy]:
    return [Strategy.from_key(r["strategy"]) for r in result.trajectory]


def test_restricted_space_reads_key_text_and_python_values_in_table_order():
    space = restricted_space({"scale": "10, 3", "autocot": "on", "order": ["TD IC ER"], "metrics": False})
    assert space["scale"] == (3, 10)  # FACTORS order, not the order given
    assert space["autocot"] == (True,) and space["metrics"] == (False,) and space["order"] == ("TD-IC-ER",)
    assert space["cot"] == FACTORS["cot"]  # factors not named keep every value
    assert restricted_space(None) == restricted_space({}) == dict(FACTORS)
    assert len(space_rows(restricted_space(FEASIBLE))) == 12960 * 3 // 5 * 2 // 3


@pytest.mark.parametrize("restriction, message", [
    ({"temperature": "0"}, "unknown factor 'temperature'; the factors are scale, examples"),
    ({"scale": "7"}, "'7' is not a value of scale; choose from 5, 3, 10, 50, 100"),
    ({"cot": "before"}, "'before' is not a value of cot; choose from prefix, none, suffix"),
    ({"autocot": "maybe"}, "'maybe' is not a value of autocot; choose from off, on"),
    ({"examples": " , "}, "examples is given no value"),
])
def test_bad_space_is_named(restriction, message):
    with pytest.raises(ConfigError, match=message):
        restricted_space(restriction)


@pytest.mark.parametrize("make", [HPSS, Greedy, StepwiseGreedy, RandomSearch])
def test_every_search_stays_inside_its_space_and_records_it(make):
    optimizer = make(seed=1, space=FEASIBLE)
    result = optimize(optimizer, BASE_NO_COT, noisy_table(), 71)
    assert result.evaluations >= 17 and all(not outside(s, optimizer.space) for s in strategies(result))
    assert len({s.key() for s in strategies(result)}) == result.evaluations
    assert optimizer.settings()["space"] == {"scale": ["5", "3", "10"], "cot": ["none", "suffix"]}


def test_the_full_space_adds_nothing_to_the_settings():
    assert "space" not in HPSS(space={"cot": "prefix,none,suffix"}).settings()
    assert HPSS().settings() == HPSS(space={}).settings()


def test_a_start_outside_the_space_is_refused_before_the_folder_is_written(tmp_path):
    evaluator = TableEvaluator()
    with pytest.raises(ConfigError, match="the start strategy has cot=prefix, which the search space leaves out"):
        optimize(HPSS(space=FEASIBLE), BASE, evaluator, 5, tmp_path / "run")
    assert not (tmp_path / "run").exists() and evaluator.evaluated == []


def test_hpss_initialises_on_the_allowed_variants_and_centres_over_them():
    hpss = HPSS(space=FEASIBLE)
    search = Search(hpss, BASE_NO_COT, TableEvaluator(), Budget(100))
    hpss.initialise(search, START)
    # 1 start + (3-1) scales + 3 + 2 + 2 + (2-1) cot + 1 + 1 + 5 = 18 evaluations instead of 21.
    assert search.evaluations == 18
    for name in FACTORS:
        allowed = hpss.allowed[name]
        assert hpss.advantage[name][allowed].mean() == pytest.approx(0.0)
        assert (hpss.advantage[name][~allowed] == 0).all()
    # Scale advantages from the table: f differs only in the scale weight (cot=none meets scale=10's bonus).
    expected = {5: 0.0, 3: -3.0, 10: 2.0 + 10.0}
    mean = np.mean(list(expected.values()))
    got = dict(zip(FACTORS["scale"], hpss.advantage["scale"], strict=True))
    assert all(got[v] == pytest.approx(w - mean) for v, w in expected.items())
    names = [name for name, _ in hpss.neighbour_scores(START, 18)[0]]
    assert names.count("scale") == 2 and names.count("cot") == 1 and len(names) == 17
    assert not outside(hpss.exploitation_target(), hpss.space)


def test_a_search_stops_when_its_space_is_exhausted():
    tiny = {"scale": "5,3", "examples": "0", "criteria": "human", "reference": "none", "cot": "none",
            "autocot": "off", "metrics": "off", "order": "TD-ER-IC,TD-IC-ER"}  # 4 strategies
    for make in (HPSS, RandomSearch):
        result = optimize(make(space=tiny), BASE_NO_COT, TableEvaluator(), 71)
        assert result.evaluations == 4 and result.status.startswith("stopped: every"), make
    greedy = optimize(Greedy(space=tiny), BASE_NO_COT, TableEvaluator(), 71)
    assert greedy.evaluations == 3 and greedy.status.startswith("stopped: every neighbour")  # no diagonal moves
    stepwise = optimize(StepwiseGreedy(space=tiny, passes=3), BASE_NO_COT, TableEvaluator(), 71)
    assert stepwise.evaluations == 3 and stepwise.status == "finished"  # the optimum is reached along the axes


def test_resuming_with_another_space_is_refused(tmp_path):
    optimize(RandomSearch(space=FEASIBLE), BASE_NO_COT, TableEvaluator(), 3, tmp_path)
    with pytest.raises(ConfigError, match="holds another search"):
        optimize(RandomSearch(space={"cot": "none"}), BASE_NO_COT, TableEvaluator(), 4, tmp_path)
    resumed = optimize(RandomSearch(space=FEASIBLE), BASE_NO_COT, TableEvaluator(), 4, tmp_path)
    assert resumed.evaluations == 4


def test_opro_shows_the_allowed_values_and_refuses_a_proposal_outside():
    outside_reply = ('{"scale": 100, "examples": 0, "criteria": "human", "reference": "none", "cot": "none", '
                     '"autocot": false, "metrics": false, "order": "TD-ER-IC"}')
    backend = ScriptedBackend(lambda request, i: outside_reply)
    with scripted_client(backend) as client:
        result = optimize(OPRO(client, max_failures=2, space=FEASIBLE), BASE_NO_COT, TableEvaluator(), 30)
    proposals = [r for r in result.records if r["kind"] == "proposal"]
    assert proposals[0]["status"] == "unparsable" and proposals[0]["reason"] == "outside the search space: scale=100"
    assert result.evaluations == 18 and result.status.startswith("stopped: 2 proposals in a row")
    prompt = backend.requests[-1].messages[-1].content
    assert "- scale: 5, 3, 10\n" in prompt and '- cot: "none", "suffix"\n' in prompt


def test_make_optimizer_names_unknown_settings():
    with pytest.raises(ConfigError, match=r"hpss has no setting 'beam'; its settings are k, g, rho"):
        make_optimizer("hpss", beam=3)
    with pytest.raises(ConfigError, match=r"ape has no setting 'space' \(space confines strategy searches"):
        make_optimizer("ape", object(), space=FEASIBLE)
