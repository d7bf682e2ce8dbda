"""Each ensemble aggregation on hand-made judgments files; the LLM vote's parsing with a scripted LLM
(the vote runs end to end with the real model in tests/integration/test_ensemble_judge.py)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from judgelab.data.item import Item
from judgelab.errors import ConfigError, DataError, DataWarning
from judgelab.judges.base import judge_from_dict, load_judge
from judgelab.judges.ensemble import EnsembleJudge, Member, selection_frame
from tests.doubles import ScriptedBackend, scripted_client

HUMAN = [1.0, 2.0, 3.0, 4.0, 5.0, 2.0]


def _items(task_of=lambda k: "t1" if k < 3 else "t2") -> list[Item]:
    return [Item(id=f"i{k}", output=f"out {k}", source="src", subset=task_of(k), scores={"q": h}, scale=(1, 5))
            for k, h in enumerate(HUMAN)]


def _file(tmp_path, name: str, rows: list[dict]) -> str:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def members(tmp_path) -> tuple[Member, ...]:
    good_on_t1 = [1, 2, 3, 5, 1, 4]          # right order on t1, wrong on t2
    good_on_t2 = [3, 2, 1, 2, 5, 1]          # wrong on t1, right on t2
    noisy = [2, 2, None, 4, 4, 3]            # one item missing
    rows = lambda values: [{"item_id": f"i{k}", "score": v, "explanation": f"because {v}"}  # noqa: E731
                           for k, v in enumerate(values) if v is not None]
    return (Member(name="A", judgments=_file(tmp_path, "a", rows(good_on_t1))),
            Member(name="B", judgments=_file(tmp_path, "b", rows(good_on_t2))),
            Member(name="C", judgments=_file(tmp_path, "c", rows(noisy))))


def _scores(judge, items):
    return [j.score for j in judge.run(items)]


def test_plain_aggregations_skip_missing_members(members):
    items = _items()
    assert _scores(EnsembleJudge(members=members, aggregate="mean"), items)[2] == pytest.approx((3 + 1) / 2)
    assert _scores(EnsembleJudge(members=members, aggregate="median"), items)[0] == 2.0
    trimmed = EnsembleJudge(members=members, aggregate="trimmed_mean", trim=0.34)
    assert _scores(trimmed, items)[4] == 4.0  # 1, 4, 5: trimming one from each end leaves the median
    judgment = EnsembleJudge(members=members, aggregate="mean").run(items)[2]
    assert judgment.extra["members"] == {"A": 3.0, "B": 1.0, "C": None}


def test_vote_takes_the_majority_and_breaks_ties_by_the_members_mean(tmp_path):
    items = [Item(id=f"p{k}", instruction="x", output_a="1", output_b="2", label="a") for k in range(4)]
    rows = {"m1": ["b", "b", "tie", 0.2], "m2": ["a", "a", "tie", 0.9], "m3": ["a", None, "b", None]}
    files = {name: _file(tmp_path, name, [{"item_id": f"p{k}", **({"label": v} if isinstance(v, str) else {"score": v})}
                                          for k, v in enumerate(values) if v is not None])
             for name, values in rows.items()}
    judge = EnsembleJudge(members=[Member(name=n, judgments=f) for n, f in files.items()], aggregate="vote")
    p0, p1, p2, p3 = judge.run(items)
    assert (p0.label, p0.score) == ("a", 1.0) and "tie_break" not in p0.extra["vote"]  # two of three
    assert (p1.label, p1.score) == ("tie", 0.5)  # one each: the mean of 0 and 1 is no preference
    assert p1.extra["vote"] == {"counts": {"b": 1, "a": 1}, "tie_break": "members' mean value"}
    assert p2.label == "b"  # two members unsure: they abstain rather than outvote the one who chose
    assert p3.label == "a" and p3.extra["vote"]["tie_break"] == "members' mean value"  # 0.2 (b) vs 0.9 (a): mean 0.55


def test_a_pointwise_vote_tie_goes_to_the_label_nearest_the_members_mean(tmp_path):
    items = _items()[:2]
    files = [_file(tmp_path, f"v{k}", [{"item_id": "i0", "label": a}, {"item_id": "i1", "label": b}])
             for k, (a, b) in enumerate([(2, 1), (2, 5), (4, 1), (5, 5)])]
    judge = EnsembleJudge(members=[Member(name=f"v{k}", judgments=f) for k, f in enumerate(files)], aggregate="vote")
    first, second = judge.run(items)
    assert first.score == 2.0  # 2, 2, 4, 5: a plain majority
    assert second.score == 3.0 and second.extra["vote"]["tie_break"] == "members' mean value"  # 1 vs 5, mean 3: equally near


def test_best_per_task_selects_on_dev_and_reports_the_table(members, tmp_path):
    items = _items()
    fitted = EnsembleJudge(members=members, aggregate="best", metric="spearman").fit(items)
    assert fitted.selection["t1"] == "A" and fitted.selection["t2"] == "B"
    table = selection_frame(fitted)
    assert table.loc["t1", "A"] == pytest.approx(1.0) and table.loc["t2", "selected"] == "B"
    judged = fitted.run(items)
    assert [j.extra["selected"] for j in judged] == ["A"] * 3 + ["B"] * 3
    assert [j.score for j in judged] == [1, 2, 3, 2, 5, 1]
    # A task not seen on dev falls back to the member best over all dev items.
    unseen = Item(id="i0", output="o", subset="t9", scores={"q": 1.0})
    assert fitted.run([unseen])[0].extra["selected"] == fitted.selection["*"]
    # The fitted config round-trips through a file.
    path = fitted.save(tmp_path / "best.yaml")
    assert load_judge(path).selection == fitted.selection


def test_weighted_and_stacked_learn_from_dev(members):
    items = _items(lambda k: "all")
    for aggregate in ("weighted", "stack"):
        judge = EnsembleJudge(members=members, aggregate=aggregate, aspect="q")
        with pytest.raises(ConfigError, match="learns from dev items first"):
            judge.run(items)
        fitted = judge.fit(items)
        scores = np.array(_scores(fitted, items))
        assert np.corrcoef(scores, HUMAN)[0, 1] > 0.5
    weights = EnsembleJudge(members=members, aggregate="weighted", aspect="q").fit(items).learned["coef"]
    assert min(weights) >= 0  # a weighted mean never flips a member's sign


def test_the_stack_never_flips_a_member_and_says_what_it_chose(tmp_path):
    """The ridge stacker (judges/stacking.py) on 40 dev items in 10 sources: a member that runs
    against the humans gets weight 0 (the previous stacker gave it a negative one)."""
    rng = np.random.default_rng(2)
    human = rng.normal(size=40)
    items = [Item(id=f"i{k}", output="o", group_id=f"g{k // 4}", scores={"q": float(h)}) for k, h in enumerate(human)]
    columns = {"good": human + 0.5 * rng.normal(size=40), "reversed": -human + rng.normal(size=40)}
    members = [Member(name=name, judgments=_file(tmp_path, name, [{"item_id": f"i{k}", "score": float(v)}
                                                                 for k, v in enumerate(values)]))
               for name, values in columns.items()]
    learned = EnsembleJudge(members=members, aggregate="stack", aspect="q").fit(items).learned
    assert learned["coef"][1] == 0 and learned["coef"][0] > 0
    assert learned["alpha"] and 0 < learned["cv_spearman"][0] <= 1  # the penalty, chosen by group-wise CV


def test_llm_vote_records_the_aggregator_explanation_and_unparsable_replies(members):
    items = _items()[:2]
    replies = iter(["Judge 1 is right about the flow. Rating: 4", "I cannot decide."])
    backend = ScriptedBackend(reply=lambda request, i: next(replies))
    judge = EnsembleJudge(members=members, aggregate="llm_vote", aspect="q")
    assert judge.uses_llm
    with scripted_client(backend) as client:
        first, second = judge.run(items, client)
    prompt = backend.requests[0].messages[-1].content
    assert "Judge 1: rating 1. Reason: because 1" in prompt and "scale from 1 to 5" in prompt
    assert first.score == 4.0 and "flow" in first.explanation and first.usage.calls == 1
    assert second.status == "unparsable" and second.raw == "I cannot decide." and second.score is None


def test_bad_members_and_files(tmp_path):
    with pytest.raises(ValueError, match="exactly one of"):
        Member(name="x")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "i0", "score": 1}\nnot json\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2"):
        EnsembleJudge(members=[Member(name="x", judgments=str(bad))]).run(_items())
    no_value = _file(tmp_path, "nv", [{"item_id": "i0", "verdict": 3}])
    with pytest.raises(DataError, match=r"a judgment needs a 'score' and/or a 'label' .*--field\), e.g. verdict"):
        EnsembleJudge(members=[Member(name="x", judgments=no_value)]).run(_items())
    judged = EnsembleJudge(members=[Member(name="x", judgments=_file(tmp_path, "one", [{"item_id": "i0", "score": 2}]))]).run(_items()[:2])
    assert judged[1].status == "error" and "no member judged" in judged[1].reason
    with pytest.raises(ConfigError, match="kind"):
        EnsembleJudge(members=[Member(name="x", judge={"kind": "nope"})]).run(_items())


def test_a_judgments_file_covering_none_of_the_items_is_warned_about_once(members, tmp_path):
    elsewhere = Member(name="D", judgments=_file(tmp_path, "d", [{"item_id": "x0", "score": 2}, {"item_id": "x1", "score": 4}]))
    other_judge = Member(name="E", judge_name="gpt", judgments=_file(tmp_path, "e", [{"item_id": "i0", "score": 2, "judge": "llama"}]))
    judge = EnsembleJudge(members=(*members, elsewhere, other_judge), aggregate="mean")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        judged = judge.run(_items())
    messages = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    assert len(messages) == 2  # one per uncovered member; A, B and C (which misses one item) cover the items
    assert "member 'D'" in messages[0] and "d.jsonl" in messages[0] and "any of the 6 items" in messages[0]
    assert "member 'E'" in messages[1] and "e.jsonl" in messages[1] and "judge 'gpt'" in messages[1]
    assert judged[0].extra["members"]["D"] is None and judged[0].score == pytest.approx((1 + 3 + 2) / 3)


def test_members_given_as_judge_configs_without_llm_need_no_client(members, tmp_path):
    config = judge_from_dict({"kind": "ensemble", "members": [m.model_dump(mode="json") for m in members]})
    assert not config.uses_llm and config.run(_items(), None)[0].score == pytest.approx(2.0)


def test_vote_over_pairwise_scores_and_pointwise_scores(tmp_path):
    pair = Item(id="p", instruction="x", output_a="1", output_b="2", label="a")
    files = [_file(tmp_path, f"s{k}", [{"item_id": "p", "score": v}, {"item_id": "i0", "score": s}])
             for k, (v, s) in enumerate([(1.0, 2.5), (0.5, 2.5), (0.8, 4.0)])]
    judge = EnsembleJudge(members=[Member(name=f"s{k}", judgments=f) for k, f in enumerate(files)], aggregate="vote")
    voted_pair, voted_point = judge.run([pair, _items()[0]])
    assert voted_pair.label == "a" and voted_pair.score == 1.0  # two of three prefer (a); one is a tie
    assert voted_point.score == 2.5 and voted_point.label is None


def test_best_selects_pairwise_members_by_the_stated_tie_rule(tmp_path):
    items = [Item(id=f"p{k}", instruction="x", output_a="1", output_b="2", label="a") for k in range(4)]
    unsure = _file(tmp_path, "x", [{"item_id": f"p{k}", "score": v} for k, v in enumerate([1, 0.5, 0.5, 0.5])])
    bold = _file(tmp_path, "y", [{"item_id": f"p{k}", "score": v} for k, v in enumerate([1, 1, 0, 0])])
    members = [Member(name="unsure", judgments=unsure), Member(name="bold", judgments=bold)]
    half = EnsembleJudge(members=members, aggregate="best", metric="accuracy").fit(items)
    assert half.selection_table["*"] == {"unsure": 0.625, "bold": 0.5} and half.selection["*"] == "unsure"
    wrong = EnsembleJudge(members=members, aggregate="best", metric="accuracy", ties="wrong").fit(items)
    assert wrong.selection_table["*"] == {"unsure": 0.25, "bold": 0.5} and wrong.selection["*"] == "bold"
    assert "ties" not in EnsembleJudge(members=members).model_dump()  # the default leaves old digests alone


def test_verdicts_read_from_files_cost_this_run_nothing(tmp_path):
    """The run that wrote a member's judgments file paid for its calls; reading them is free."""
    paid = _file(tmp_path, "paid", [{"item_id": "i0", "score": 3, "usage": {"calls": 2, "prompt_tokens": 50}}])
    judged = EnsembleJudge(members=[Member(name="m", judgments=paid)], aggregate="mean").run(_items()[:1])
    assert judged[0].score == 3 and judged[0].usage.calls == 0 and judged[0].usage.prompt_tokens == 0
