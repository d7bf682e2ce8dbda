"""``--judge`` that names several judges (issue 39, item 5): a prefix matching two judges lists them and
asks for one name exactly; it no longer says "choose one with judge" as if none had been given."""

from __future__ import annotations

import json

import pytest

from judgelab.audit.inputs import read_verdicts, verdicts_of
from judgelab.data import Judgment
from judgelab.errors import ConfigError
from judgelab.metrics.align import select_judgments

JUDGES = ("gpt-3.5-turbo", "gpt-4-0125-preview", "claude-3-opus-20240229")


def judged() -> list[Judgment]:
    return [Judgment(item_id=f"c{k}", judge=judge, label="a") for k in range(3) for judge in JUDGES]


def test_a_prefix_naming_two_judges_lists_them():
    with pytest.raises(ConfigError) as error:
        select_judgments(judged(), None, "gpt")
    assert str(error.value) == ("judge 'gpt' matches 2 judges (gpt-3.5-turbo, gpt-4-0125-preview): give one of "
                                "these names exactly")


def test_no_judge_given_still_asks_for_one_and_an_exact_or_unique_prefix_picks_it():
    with pytest.raises(ConfigError, match=r"come from 3 judges \(claude-3-opus-20240229, gpt-3.5-turbo, "
                                          r"gpt-4-0125-preview\); choose one with judge"):
        select_judgments(judged(), None, None)
    assert {j.judge for j in select_judgments(judged(), None, "gpt-4")} == {"gpt-4-0125-preview"}
    assert {j.judge for j in select_judgments(judged(), None, "claude-3-opus-20240229")} == {"claude-3-opus-20240229"}


def test_audit_says_the_same_instead_of_an_item_judged_twice(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps({"item_id": j.item_id, "judge": j.judge, "label": "a"}) + "\n" for j in judged()))
    with pytest.raises(ConfigError, match=r"judgments.jsonl: judge 'gpt' matches 2 judges \(gpt-3.5-turbo, "
                                          r"gpt-4-0125-preview\): give one of these names exactly"):
        read_verdicts(path, judge="gpt")
    with pytest.raises(ConfigError, match="judge 'gpt' matches 2 judges"):
        verdicts_of(judged(), "gpt", str(path))
    assert read_verdicts(path, judge="gpt-4").judge == "gpt-4-0125-preview"
