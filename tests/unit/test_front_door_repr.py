"""What the front door's results print at a plain Python prompt (issue 45): a few lines saying what the
result is, its sizes, the headline figures and where the rest is, never the dataclass repr of every array
(one ``jl.evaluate`` on answers.jsonl printed 6.4 KB over 51 lines, a drawn one 9.4 KB). Jupyter keeps the
HTML view (tests/unit/test_front_door.py). Shipped examples only, no LLM: ``jl.judge``'s run is built
from the demo's judgments."""

from __future__ import annotations

from pathlib import Path

import pytest

import judgelab as jl
from judgelab.data import load_items, load_judgments

EXAMPLES = Path(jl.__file__).parent / "examples"
SUMMARIES, SUMMARIES_JUDGED = EXAMPLES / "demo_summaries.jsonl", EXAMPLES / "demo_judgments.jsonl"
ANSWERS, ANSWERS_JUDGED = EXAMPLES / "answers.jsonl", EXAMPLES / "answers_judgments.jsonl"
PAIRS, PAIRS_JUDGED = EXAMPLES / "comparisons.jsonl", EXAMPLES / "comparisons_judgments.jsonl"
ALPACA = (Path(__file__).resolve().parents[1] / "data" / "sources" / "alpaca-eval" / "alpaca-7b"
          / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json")
MAX_CHARS, MAX_LINES, MAX_WIDTH = 1000, 15, 150


def _judge_run() -> jl.JudgeRun:
    """``jl.judge``'s result as the demo's run would return it, without running a model."""
    from judgelab.judges.base import load_judge
    from judgelab.metrics import meta_evaluate

    items, judgments = load_items(SUMMARIES), load_judgments(SUMMARIES_JUDGED)
    usage = {"calls": 36, "cache_hits": 0, "prompt_tokens": 9000, "completion_tokens": 36, "cost_usd": None,
             "wall_s": 20.5, "retries": 0}
    return jl.JudgeRun(judgments=judgments, usage=usage, metrics=meta_evaluate(items, judgments).to_dict(),
                       folder=Path("runs/demo"), counts={"ok": 36, "unparsable": 0, "error": 0}, items=items,
                       config=load_judge(EXAMPLES / "demo_judge.yaml"))


RESULTS = {
    "evaluate answers, all labelled": lambda: jl.evaluate(ANSWERS, ANSWERS_JUDGED, aspect="helpfulness",
                                                          human_ids="all", bootstrap=200),
    "evaluate summaries, judge only": lambda: jl.evaluate(SUMMARIES, SUMMARIES_JUDGED, bootstrap=200),
    "evaluate summaries, a draw labelled": lambda: jl.evaluate(SUMMARIES, SUMMARIES_JUDGED, bootstrap=200,
                                                               human_ids=jl.sample(SUMMARIES, 12, seed=0)),
    "evaluate comparisons": lambda: jl.evaluate(PAIRS, PAIRS_JUDGED, human_ids="all", bootstrap=200),
    "meta summaries": lambda: jl.meta(SUMMARIES, SUMMARIES_JUDGED, bootstrap=200),
    "meta comparisons": lambda: jl.meta(PAIRS, PAIRS_JUDGED, bootstrap=200),
    "compare": lambda: jl.compare(SUMMARIES, SUMMARIES_JUDGED, baseline="system-0", candidate="system-2",
                                  human_ids="all", bootstrap=200),
    "audit": lambda: jl.audit(PAIRS, PAIRS_JUDGED, bootstrap=200),
    "sample": lambda: jl.sample(SUMMARIES, 12, seed=0),
    "judge run": _judge_run,
    "load another tool's output": lambda: jl.load(ALPACA),
    "load items": lambda: jl.load(SUMMARIES),
}


def assert_short(text: str) -> None:
    lines = text.splitlines()
    assert len(text) < MAX_CHARS and len(lines) < MAX_LINES, text
    assert max(len(line) for line in lines) <= MAX_WIDTH, text  # not one endless line either
    assert "array(" not in text and "object at 0x" not in text, text


@pytest.mark.parametrize("name", RESULTS)
def test_every_front_door_result_prints_a_few_lines(name):
    result = RESULTS[name]()
    shown = repr(result)
    assert_short(shown)
    assert shown.startswith(type(result).__name__)  # what it is, first
    if not isinstance(result, jl.Dataset):  # where the rest is: the tidy table and the notebook view
        assert ".to_pandas()" in shown and "_repr_html_" in shown and "<table" in result._repr_html_()


def test_the_headline_figures_are_there():
    board = RESULTS["evaluate summaries, judge only"]()
    first = board.table().sort_values("rank").iloc[0]
    assert f"1 {first.system}  {first.estimate:.3g} [{first.ci_low:.3g}, {first.ci_high:.3g}]" in repr(board)
    assert "36 items" in repr(board) and "0 labelled" in repr(board)
    agreement = RESULTS["meta summaries"]()
    spearman = agreement["dataset"]["spearman"]
    assert f"dataset spearman  {spearman.value:.3g} [{spearman.ci[0]:.3g}, {spearman.ci[1]:.3g}]" in repr(agreement)
    check = RESULTS["compare"]()
    assert repr(check).startswith("Comparison: FAIL, system-2 vs system-0") and "corrected" in repr(check)
    drawn = RESULTS["sample"]()
    assert "12 items to label" in repr(drawn) and drawn.ids[0] in repr(drawn)


def test_many_systems_with_long_odd_names_stay_a_few_lines():
    names = [f"system {k:02d} \x1b[2J with a name far longer than any table column would give it" for k in range(40)]
    items = [{"id": f"i{k}-{s}", "system_id": name, "output": "o", "scores": {"q": float((k + s) % 5)}}
             for s, name in enumerate(names) for k in range(3)]
    judgments = [{"item_id": item["id"], "score": item["scores"]["q"]} for item in items]
    board = jl.evaluate(items, judgments, human_ids="all", bootstrap=0)
    shown = repr(board)
    assert_short(shown)
    assert "\x1b" not in shown and "\\x1b" in shown and "(35 more systems)" in shown
    ranked = shown.splitlines()[2:7]  # long names are cut, never the figures after them
    assert all("...  " in line and line.rstrip()[-1].isdigit() for line in ranked), shown
