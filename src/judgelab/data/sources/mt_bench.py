"""MT-Bench judgments (FastChat's ``llm_judge``): ``<judge>_single.jsonl`` (a 1-10 rating per
model, question and turn) and ``<judge>_pair.jsonl`` (two models compared, in both orders).

Single: each line becomes a pointwise item (system: the model; group: question and turn; scale
1-10; the question and answer read from the judge's prompt) and a judgment with the rating
(judge: ``<judge>/<prompt>``, e.g. ``gpt-4/single-v1``); a rating of -1 (FastChat's mark for a
reply without ``[[rating]]``) is an unparsable judgment, counted.
Pair: each line becomes a comparison between systems (``model_1`` as a, ``model_2`` as b) and a
judgment with both games' winners in ``extra.verdicts`` (game 1 shows model_1 first; FastChat
writes both winners in the models' names) and the two-order verdict as label; an ``error``
winner is no verdict, counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import (
    Part,
    between,
    both_orders,
    files_in,
    head,
    item,
    json_records,
    judgment,
    merged,
    need,
    typed,
)
from judgelab.errors import DataError

NAME = "mt-bench"
SINGLE = ("question_id", "model", "judge", "user_prompt", "score", "turn")
PAIR = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge", "turn")
WINNERS = {"model_1": "a", "model_2": "b", "tie": "tie", "error": None}


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(claims(f) for f in path.rglob("*.jsonl"))
    first = head(path).split("\n", 1)[0]
    return path.suffix == ".jsonl" and '"question_id"' in first and '"judge"' in first and (
        '"g1_winner"' in first or '"score"' in first)


def read(path: Path, *, partial: bool = False) -> SourceData:
    files = [f for f in files_in(path, ("*.jsonl",)) if not path.is_dir() or claims(f)]
    shapes = {_shape(f) for f in files}
    if len(shapes) > 1:
        raise DataError("holds both single ratings and pairwise judgments: give one kind (one file)", path)
    parts, notes = [], []
    for judged in files:
        got = _read_file(judged)
        parts.append(Part(judged, got[0], got[1]))
        if got[2]:
            notes.append(f"{judged}: {got[2]} judgment(s) without a verdict (rating -1 or winner 'error') kept "
                         "as unparsable")
    items, judgments, _ = merged(parts, str(path))  # a record in two files: both named
    return SourceData(NAME, items, judgments, tuple(notes))


def _shape(path: Path) -> str:
    return "pair" if '"g1_winner"' in head(path).split("\n", 1)[0] else "single"


def _read_file(path: Path):
    where = str(path)
    pair = _shape(path) == "pair"
    items, judgments, empty = [], [], 0
    for line, row in json_records(path):
        need(row, PAIR if pair else SINGLE, where, line,
             "MT-Bench " + ("pairwise judgments (question_id, model_1, model_2, g1_winner, g2_winner, judge, turn)"
                            if pair else "single ratings (question_id, model, judge, user_prompt, score, turn)"))
        one_item, one_judgment = (_pair if pair else _single)(row, where, line)
        items.append(one_item)
        judgments.append(one_judgment)
        empty += not one_judgment.ok
    return items, judgments, empty


def _single(row: dict[str, Any], where: str, line: int):
    item_id = f"{row['model']}/{row['question_id']}/{row['turn']}"
    prompt = typed(row["user_prompt"], str, where, "'user_prompt'", line)
    question = between(prompt, "[Question]\n", "\n\n[The Start of Assistant's Answer]")
    answer = between(prompt, "[The Start of Assistant's Answer]\n", "\n[The End of Assistant's Answer]")
    if answer is None:  # a second turn: the conversation, whose last answer is the one rated
        question = between(prompt, "### User:\n", "\n\n### Assistant A:")
        answer = between(prompt, "### Assistant A:\n", "\n\n<|The End of Assistant A's Conversation with User|>")
    one = item({"id": item_id, "group_id": f"{row['question_id']}/{row['turn']}", "system_id": row["model"],
                "source": question, "output": answer or "", "scale": [1, 10],
                "extra": {"question_id": row["question_id"], "turn": row["turn"]}}, where, line)
    common = {"item_id": item_id, "judge": _judge(row["judge"]), "explanation": row.get("judgment")}
    score = row["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise DataError(f"expected a rating (a number), got {score!r}", where, line, "score")
    if score == -1:
        return one, judgment(common | {"status": "unparsable", "reason": "the judge's reply held no [[rating]] "
                                       "(FastChat wrote -1)"}, where, line)
    return one, judgment(common | {"score": score}, where, line)


def _pair(row: dict[str, Any], where: str, line: int):
    item_id = f"{row['model_1']}/{row['model_2']}/{row['question_id']}/{row['turn']}"
    prompt = typed(row.get("g1_user_prompt"), (str, type(None)), where, "'g1_user_prompt'", line)
    texts = {"output_a": _answer(prompt, "A"), "output_b": _answer(prompt, "B")}
    if texts["output_a"] is None or texts["output_b"] is None:
        texts = {}
    one = item({"id": item_id, "group_id": f"{row['question_id']}/{row['turn']}", "system_a": row["model_1"],
                "system_b": row["model_2"], "instruction": _question(prompt), **texts,
                "extra": {"question_id": row["question_id"], "turn": row["turn"]}}, where, line)
    original, swapped = (_winner(row[key], key, where, line) for key in ("g1_winner", "g2_winner"))
    common = {"item_id": item_id, "judge": _judge(row["judge"]), "explanation": row.get("g1_judgment"),
              "extra": {"verdicts": {"original": original, "swapped": swapped}}}
    label = both_orders(original, swapped)
    if label is None:
        return one, judgment(common | {"status": "unparsable", "reason": "a game's winner is 'error' (no verdict)"},
                             where, line)
    return one, judgment(common | {"label": label}, where, line)


def _winner(value: Any, key: str, where: str, line: int) -> str | None:
    if not isinstance(value, str) or value not in WINNERS:
        raise DataError(f"expected model_1, model_2, tie or error, got {value!r}", where, line, key)
    return WINNERS[value]


def _question(prompt: str | None) -> str | None:
    return between(prompt, "[User Question]\n", "\n\n[The Start of Assistant A's Answer]") or between(
        prompt, "### User:\n", "\n\n### Assistant A:")


def _answer(prompt: str | None, side: str) -> str | None:
    return between(prompt, f"[The Start of Assistant {side}'s Answer]\n", f"\n[The End of Assistant {side}'s Answer]") \
        or between(prompt, f"### Assistant {side}:\n", f"\n\n<|The End of Assistant {side}'s Conversation with User|>")


def _judge(judge: Any) -> str:
    return "/".join(map(str, judge)) if isinstance(judge, list) else str(judge)
