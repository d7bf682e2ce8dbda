"""JudgeBench ``outputs/*.jsonl``: one line per response pair (``pair_id``, the ``question``, ``response_A`` and
``response_B`` written by one model, the objective ``label`` ``A>B`` or ``B>A``) with a judge's ``judgments``:
game 1 shows the pair as written, game 2 swapped (its ``decision`` names the swapped order), each
``A>B``, ``B>A``, ``A=B`` or null; a reward model run with ``--single_game`` has game 1 only.

Each line becomes a pairwise item (id ``<response_model>/<pair_id>``, its label ``a`` or ``b``) and one judgment
(judge ``<judge_name>/<judge_model>``) with both games in the item's names in ``extra.verdicts`` (``original``,
``swapped``), which ``audit`` reads as two orders. Its label is JudgeBench's verdict: the side more games name (a
game's tie or missing verdict names neither), a tie when even, so that judgelab's pairwise accuracy with ties
counted wrong is JudgeBench's score. A line whose games all lack a verdict is kept as unparsable and counted
(JudgeBench counts it wrong). A folder (``outputs/``) is read whole: the same pair in several judges' files is
one item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.sources import SourceData
from judgelab.data.sources._read import dataset, files_in, head, item, json_records, judgment, need, typed
from judgelab.errors import DataError

NAME = "judgebench"
FIELDS = ("pair_id", "source", "question", "response_A", "response_B", "label", "judge_name", "judgments")
EXPECTED = ("JudgeBench outputs (pair_id, source, question, response_A, response_B, label, judge_name, "
            "judgments: one or two games with a decision)")
#: a decision in the order the game showed; game 2's is mirrored into the item's names.
DECISIONS = {"A>B": "a", "B>A": "b", "A=B": "tie"}
MIRROR = {"a": "b", "b": "a", "tie": "tie"}
LABELS = {"A>B": "a", "B>A": "b"}


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(claims(f) for f in path.rglob("*.jsonl"))
    first = head(path).split("\n", 1)[0]
    return path.suffix == ".jsonl" and all(f'"{key}"' in first for key in ("pair_id", "judgments", "response_A"))


def read(path: Path, *, partial: bool = False) -> SourceData:
    items: dict[str, tuple[Item, Path]] = {}
    judgments: list[Judgment] = []
    seen: dict[tuple[str, str | None], Path] = {}
    notes = []
    for judged in files_in(path, ("*.jsonl",)):
        if path.is_dir() and not claims(judged):  # a pairs file (data/) or a cut-short run would go unread
            raise DataError("not a JudgeBench output file (its first line has no pair_id, judgments and "
                            "response_A): the pairs themselves (data/), or a run cut short; move it out of the "
                            "folder to read the others", judged)
        empty = 0
        for one, verdict in _lines(judged):
            kept = items.setdefault(one.id, (one, judged))
            if kept[0] != one:
                raise DataError(f"the pair {one.id!r} differs between {kept[1]} and {judged} (its question, "
                                "responses or label): expected the same pairs in every judge's file", path)
            key = (verdict.item_id, verdict.judge)
            if key in seen:
                raise DataError(f"judge {verdict.judge!r} judged the pair {verdict.item_id!r} twice (in "
                                f"{seen[key]} and {judged}): expected each pair once per judge", path)
            seen[key] = judged
            judgments.append(verdict)
            empty += not verdict.ok
        if empty:
            notes.append(f"{judged}: {empty} pair(s) without a verdict in any game kept as unparsable")
    return SourceData(NAME, dataset([one for one, _ in items.values()], str(path)), judgments, tuple(notes))


def _lines(path: Path):
    where = str(path)
    for line, row in json_records(path):
        need(row, FIELDS, where, line, EXPECTED)
        if row["label"] not in LABELS:
            raise DataError(f"label must be A>B or B>A, got {row['label']!r}", where, line, "label")
        games = row["judgments"]
        if not isinstance(games, list) or not 1 <= len(games) <= 2:
            raise DataError("expected one or two games (judgments), got "
                            f"{len(games) if isinstance(games, list) else games!r}", where, line, "judgments")
        decisions = [_decision(game, k, where, line) for k, game in enumerate(games, start=1)]
        original = decisions[0]
        swapped = None if len(decisions) < 2 or decisions[1] is None else MIRROR[decisions[1]]
        model = typed(row.get("response_model", "judgebench"), str, where, "'response_model'", line)
        item_id = f"{model}/{row['pair_id']}"
        one = item({"id": item_id, "group_id": str(row["pair_id"]), "dataset": row["source"],
                    "instruction": row["question"], "output_a": row["response_A"], "output_b": row["response_B"],
                    "label": LABELS[row["label"]]}, where, line)
        common = {"item_id": item_id, "judge": _judge(row, games),
                  "extra": {"verdicts": {"original": original, "swapped": swapped}, "games": len(games)}}
        label = _net(original, swapped)
        if label is None:
            yield one, judgment(common | {"status": "unparsable", "reason": "no game has a decision (null)"},
                                where, line)
        else:
            yield one, judgment(common | {"label": label}, where, line)


def _decision(game: Any, k: int, where: str, line: int) -> str | None:
    if game is None:
        return None  # the judge's call failed (JudgeBench writes null)
    if not isinstance(game, dict) or "decision" not in game:
        raise DataError(f"game {k} has no 'decision': expected {EXPECTED}", where, line, f"judgments.{k - 1}")
    decision = game["decision"]
    if decision is not None and decision not in DECISIONS:
        raise DataError(f"game {k}'s decision is {decision!r}: expected one of {', '.join(DECISIONS)} or null",
                        where, line, f"judgments.{k - 1}.decision")
    return None if decision is None else DECISIONS[decision]


def _net(original: str | None, swapped: str | None) -> str | None:
    """JudgeBench's rule (utils/metrics.py): each game naming a side counts for it; the side with more counts."""
    given = [v for v in (original, swapped) if v is not None]
    if not given:
        return None
    lead = given.count("a") - given.count("b")
    return "a" if lead > 0 else "b" if lead < 0 else "tie"


def _judge(row: dict[str, Any], games: list[Any]) -> str:
    for game in games:
        inner = game.get("judgment") if isinstance(game, dict) else None
        if isinstance(inner, dict) and isinstance(inner.get("judge_model"), str):
            return f"{row['judge_name']}/{inner['judge_model']}"
    return str(row["judge_name"])
