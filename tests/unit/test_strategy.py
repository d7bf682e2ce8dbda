"""Strategy: the 8 HPSS factors as a frozen, serialisable config."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from judgelab.strategy import FACTORS, Strategy


def test_space_has_12960_distinct_strategies():
    space = list(Strategy.space())
    assert len(space) == Strategy.space_size() == 12_960
    assert len({s.key() for s in space}) == 12_960
    assert len(set(space)) == 12_960  # frozen models hash by value


def test_mt_bench_start_is_the_first_value_of_every_factor():
    start = Strategy.mt_bench()
    assert start == Strategy() == next(iter(Strategy.space()))
    for name, values in FACTORS.items():
        assert getattr(start, name) == values[0]
    assert start.key() == (
        "scale=5,examples=0,criteria=human,reference=none,cot=prefix,autocot=off,metrics=off,order=TD-ER-IC"
    )


def test_mt_bench_uses_a_native_scale_only_when_it_is_in_the_space():
    assert Strategy.mt_bench(native_scale=3).scale == 3  # Topical-Chat, seed Table 19
    assert Strategy.mt_bench(native_scale=6).scale == 5  # SF-HOT's 1-6 is not searchable


def test_neighbours_change_exactly_one_factor():
    start = Strategy.mt_bench()
    neighbours = start.neighbours()
    assert len(neighbours) == 20  # 4+3+2+2+2+1+1+5, specs/hpss.md
    for neighbour in neighbours:
        changed = [name for name in FACTORS if getattr(neighbour, name) != getattr(start, name)]
        assert len(changed) == 1
    assert len(set(neighbours)) == 20


@pytest.mark.parametrize("strategy", [Strategy(), Strategy(scale=100, examples=10, criteria="self",
                                                           reference="dialectic", cot="suffix", autocot=True,
                                                           metrics=True, order="IC-ER-TD")])
def test_yaml_json_and_key_round_trip(strategy, tmp_path):
    assert Strategy.from_yaml(strategy.to_yaml()) == strategy
    assert Strategy.model_validate_json(strategy.model_dump_json()) == strategy
    assert Strategy.from_key(strategy.key()) == strategy
    for name in ("s.yaml", "s.json"):
        strategy.save(tmp_path / name)
        assert Strategy.load(tmp_path / name) == strategy
    assert json.loads(strategy.model_dump_json())["autocot"] is strategy.autocot


def test_yaml_accepts_on_off_paper_spelling_and_a_nested_strategy():
    text = "strategy:\n  scale: 10\n  autocot: on\n  metrics: off\n  order: TD IC ER\n"
    strategy = Strategy.from_yaml(text)
    assert strategy.autocot is True and strategy.metrics is False
    assert strategy.order == "TD-IC-ER"
    assert Strategy(autocot="on", order=["ER", "TD", "IC"]).components == ("ER", "TD", "IC")


def test_digest_is_stable_and_short():
    assert Strategy().digest() == Strategy.mt_bench().digest()
    assert len(Strategy().digest()) == 12
    assert Strategy().digest() != Strategy(scale=10).digest()


@pytest.mark.parametrize("bad", [{"scale": 7}, {"examples": 2}, {"criteria": "gpt"}, {"order": "TD-TD-IC"},
                                 {"cot": "middle"}, {"unknown": 1}])
def test_values_outside_the_space_are_rejected(bad):
    with pytest.raises(ValidationError):
        Strategy(**bad)


def test_frozen():
    with pytest.raises(ValidationError):
        Strategy().scale = 10  # type: ignore[misc]


def test_rating_first_and_needs():
    assert not Strategy().rating_first  # prefix CoT explains first
    assert Strategy(cot="none").rating_first and Strategy(cot="suffix").rating_first
    assert not Strategy(cot="none", reference="dialectic").rating_first  # writes its own answer first
    assert Strategy().needs() == {"human_criteria"}
    assert Strategy(criteria="self", autocot=True, reference="self", metrics=True, examples=3).needs() == {
        "self_criteria", "autocot", "self_reference", "checklist", "examples"}
    assert Strategy(criteria="none", reference="dialectic").needs() == set()
    assert Strategy(scale=50).bounds == (1, 50)
