"""A Ray worker names parameters as the driver does: the CLI's --flags or Python's arguments, restored after
each shard (a worker process runs shards of later runs too)."""

from __future__ import annotations

import pytest

from judgelab.errors import flags_named, name_flags, term
from judgelab.runner import ray_engine


@pytest.mark.parametrize("flags, named", [(True, "--human-ids"), (False, "human_ids")])
def test_a_shard_names_parameters_as_the_driver(monkeypatch, flags, named):
    seen = {}

    def shard(*args):
        seen["name"] = term("human_ids")
        return [], {}

    monkeypatch.setattr(ray_engine, "_judged_shard", shard)
    before = flags_named()
    assert ray_engine.judge_shard({}, [], None, "x", {}, flags) == ([], {})
    assert seen["name"] == named and flags_named() == before


def test_the_naming_is_restored_when_a_shard_fails(monkeypatch):
    def shard(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(ray_engine, "_judged_shard", shard)
    before = name_flags(False)
    try:
        with pytest.raises(RuntimeError):
            ray_engine.judge_shard({}, [], None, "x", {}, True)
        assert flags_named() is False
    finally:
        name_flags(before)
