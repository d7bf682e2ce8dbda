"""Counterfactual probes (judgelab.audit.probes): the rewrites, and the flip counting with scripted
judges whose biases are known. The probes run end to end with a real model in tests/e2e/test_cli_audit.py."""

from __future__ import annotations

import re

import pytest

from judgelab.audit.probes import PAD_TEXT, padded, reformatted, run_probes, swapped
from judgelab.data.item import Item
from judgelab.judges.pairwise import PairwiseJudge
from tests.doubles import ScriptedBackend, scripted_client

_OUTPUTS = re.compile(r"# Output \(a\):\n(.*)\n\n# Output \(b\):\n(.*)\n\n# Which is better", re.S)


def _items(n: int = 6) -> list[Item]:
    return [Item(id=f"p{i}", instruction=f"Question {i}?", output_a="Yes. It is." * (1 + i % 3),
                 output_b="No, it is not so." * (1 + (i + 1) % 2), label="a") for i in range(n)]


def _client(prefers):
    """A judge that answers ``prefers(first_text, second_text)`` ("a" or "b": the first or second shown)."""
    def reply(request, _):
        first, second = _OUTPUTS.search(request.messages[-1].content).groups()
        return f"Output ({prefers(first, second)})"
    return scripted_client(ScriptedBackend(reply))


def test_rewrites():
    assert padded("An answer.  ") == "An answer." + PAD_TEXT
    markdown = reformatted("First point. Second point!")
    assert markdown == "## Answer\n\n- First point.\n- Second point!"
    assert reformatted(markdown) == "Answer\n\nFirst point.\nSecond point!"  # markdown back to plain text
    item = _items(1)[0]
    assert (swapped(item).output_a, swapped(item).output_b, swapped(item).label) == (item.output_b, item.output_a, "b")


def test_a_judge_that_always_picks_the_first_shown_flips_on_every_swap():
    results = run_probes(_items(), PairwiseJudge(swap=False, rules=False), _client(lambda first, second: "a"),
                         ["swap"])
    assert results["swap"].flip_rate.value == 1.0 and results["swap"].flip_rate.n == 6
    assert results["swap"].toward_perturbed is None and results["swap"].failed == 0


def test_a_judge_that_prefers_the_longer_output_is_won_over_by_padding():
    longer = _client(lambda first, second: "a" if len(first) >= len(second) else "b")
    results = run_probes(_items(), PairwiseJudge(swap=False, rules=False), longer, ["swap", "pad", "reformat"])
    assert results["swap"].flip_rate.value == 0.0  # length does not move with the order
    pad = results["pad"]
    assert pad.flip_rate.value == 1.0 and pad.toward_perturbed.value == 1.0  # the padded loser now wins
    assert 0 < pad.flip_rate.ci[0] < 1


def test_a_judge_that_both_orders_corrects_is_order_invariant():
    results = run_probes(_items(), PairwiseJudge(rules=False), _client(lambda first, second: "a"), ["swap"])
    assert results["swap"].flip_rate.value == 0.0


def test_an_unknown_probe_is_refused():
    with pytest.raises(ValueError, match="unknown probe 'shuffle'"):
        run_probes(_items(), PairwiseJudge(), _client(lambda first, second: "a"), ["shuffle"])
