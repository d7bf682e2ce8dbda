"""Arena-Hard-Auto ``model_judgment`` files: one line per question and model, two games each
(game 1: the baseline shown as A, the model as B; game 2: the other way round), each with the
judge's verdict ``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A`` (or null when unparsed).

Each line becomes a comparison between systems (system_a the baseline, system_b the model, as
game 1 shows them; both answers and the question read from the judge's prompt) and one judgment
(judge: the file's judge) with both games' verdicts in the item's names in ``extra.verdicts``
(``original``: game 1, ``swapped``: game 2), which ``audit`` reads as a judge's two orders; its
label is the two-order verdict (a verdict that flips with the order is a tie). The strength
(``>>`` or ``>``) stays in ``extra.games``. A line whose game has no verdict is kept as an
unparsable judgment and counted (Arena-Hard drops those lines).
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
)
from judgelab.errors import DataError

NAME = "arena-hard"
FIELDS = ("uid", "judge", "model", "baseline", "games")
EXPECTED = "Arena-Hard-Auto judgments (uid, judge, model, baseline, games: two games with a score)"
#: game 1's verdict (baseline shown as A) in the item's names; game 2 mirrors it.
GAME_1 = {"A>>B": "a", "A>B": "a", "A=B": "tie", "B=A": "tie", "B>A": "b", "B>>A": "b", "A<B": "b", "A<<B": "b",
          "B<A": "a", "B<<A": "a"}
MIRROR = {"a": "b", "b": "a", "tie": "tie"}


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(claims(f) for f in path.rglob("*.jsonl"))
    first = head(path).split("\n", 1)[0]
    return path.suffix == ".jsonl" and all(f'"{key}"' in first for key in ("uid", "games", "baseline"))


def read(path: Path, *, partial: bool = False) -> SourceData:
    parts, notes = [], []
    for judged in files_in(path, ("*.jsonl",)):
        if path.is_dir() and not claims(judged):  # an empty or broken file would drop a model without a word
            raise DataError("not an Arena-Hard judgment file (its first line has no uid, games and baseline): "
                            "a model's judgments cut short or not written, or another file; move it out of the "
                            "folder to read the others", judged)
        got = _judgments(judged)
        parts.append(Part(judged, got[0], got[1]))
        if got[2]:
            notes.append(f"{judged}: {got[2]} question(s) with a game without a verdict kept as unparsable")
    items, judgments, _ = merged(parts, str(path))  # a record in two files: both named
    return SourceData(NAME, items, judgments, tuple(notes))


def _judgments(path: Path):
    where = str(path)
    items, judgments, empty = [], [], 0
    for line, row in json_records(path):
        need(row, FIELDS, where, line, EXPECTED)
        games = row["games"]
        if not isinstance(games, list) or len(games) != 2:
            raise DataError(f"expected two games (both orders), got {len(games) if isinstance(games, list) else games!r}",
                            where, line, "games")
        scores = [_score(game, k, where, line) for k, game in enumerate(games, start=1)]
        original = None if scores[0] is None else GAME_1[scores[0]]
        swapped = None if scores[1] is None else MIRROR[GAME_1[scores[1]]]
        prompt = _prompt(games[0]) or _prompt(games[1])
        item_id = f"{row['model']}/{row['uid']}"
        items.append(item({"id": item_id, "group_id": str(row["uid"]), "dataset": row.get("category"),
                           "system_a": row["baseline"], "system_b": row["model"],
                           "instruction": between(prompt, "<|User Prompt|>\n", "\n\n<|The Start of Assistant A"),
                           "output_a": between(prompt, "<|The Start of Assistant A's Answer|>\n",
                                               "\n<|The End of Assistant A's Answer|>"),
                           "output_b": between(prompt, "<|The Start of Assistant B's Answer|>\n",
                                               "\n<|The End of Assistant B's Answer|>")}, where, line))
        common = {"item_id": item_id, "judge": _judge(row["judge"]),
                  "extra": {"verdicts": {"original": original, "swapped": swapped}, "games": scores}}
        label = both_orders(original, swapped)
        if label is None:
            empty += 1
            missing = " and ".join(f"game {k}" for k, s in enumerate(scores, start=1) if s is None)
            judgments.append(judgment(common | {"status": "unparsable", "reason": f"{missing}: no verdict (null)"},
                                      where, line))
        else:
            judgments.append(judgment(common | {"label": label}, where, line))
    return items, judgments, empty


def _score(game: Any, k: int, where: str, line: int) -> str | None:
    if game is None:
        return None  # the judge's call failed (Arena-Hard writes null)
    if not isinstance(game, dict) or "score" not in game:
        raise DataError(f"game {k} has no 'score': expected {EXPECTED}", where, line, f"games.{k - 1}")
    score = game["score"]
    if score is not None and (not isinstance(score, str) or score not in GAME_1):
        raise DataError(f"game {k}'s verdict is {score!r}: expected one of {', '.join(GAME_1)}", where, line,
                        f"games.{k - 1}.score")
    return score


def _prompt(game: Any) -> str | None:
    """The judge's prompt: v0.1's ``user_prompt``, or v2's user message in ``prompt``."""
    if not isinstance(game, dict):
        return None
    if isinstance(game.get("user_prompt"), str):
        return game["user_prompt"]
    for message in game.get("prompt") or []:
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return None


def _judge(judge: Any) -> str:
    return judge if isinstance(judge, str) else str(judge)
