"""A RAG system's retrievals split into query-passage pairs: one relevance item per (item, passage), so that
any relevance judge (TREMA's criteria, a prompted or similarity judge) rates the passages a system retrieved,
as ``turns`` splits conversations (docs/rag.md, "Context relevance").

Each pair is an ordinary relevance item: ``query`` the item's question (the last user message of a
conversation, else its prompt), ``passage`` the passage's title and text, ``docid`` the passage's id and
``qid`` the question: the item's ``group_id`` when it has one (the question several systems answer, so their
retrievals are one TREC query and a run per system is scored on it), else its id. ``system_id`` is kept (the
system whose retriever returned the passage), and ``extra.rank`` is the passage's position in ``contexts``.
Human grades come from the item's ``extra.passage_labels`` ({passage id: grade}) or later from a labels file
keyed by the pairs' ids (``annotate``, ``--human``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from judgelab.data.conversation import Passage
from judgelab.data.item import Item
from judgelab.errors import DataError

#: A pair's id is its item's id, this, and the passage's id.
PASSAGE_MARK = "#passage:"
#: Where an item gives its passages' human grades: an object of passage id: whole number (or null).
PASSAGE_LABELS = "passage_labels"


def split_passages(items: Iterable[Item]) -> list[Item]:
    """Every item of ``items`` as one relevance item per passage of its ``contexts`` (see the module docstring).
    Refused, naming the item: an item without ``contexts`` or without a question, ``extra.passage_labels`` that
    is not an object of passage id: whole number, or names a passage the item does not have, and one passage
    id of one question holding two different texts (a judge's label would then be read for the other)."""
    pairs = [pair for item in items for pair in _pairs(item)]
    _one_text_per_docid(pairs)
    return pairs


def _pairs(item: Item) -> list[Item]:
    if not item.contexts:
        hint = " (its 'context' is one text: give the passages as a list 'contexts')" if item.context else ""
        raise DataError(f"item {item.id!r} has no contexts: passages are split from the items' retrieved passages"
                        f"{hint}")
    query = _question(item)
    labels = _passage_labels(item)
    qid = item.group_id or item.id
    extra = {k: v for k, v in item.extra.items() if k != PASSAGE_LABELS}
    return [Item(id=f"{item.id}{PASSAGE_MARK}{passage.id}", dataset=item.dataset, system_id=item.system_id,
                 group_id=qid, qid=qid, docid=passage.id, query=query, passage=_text(passage),
                 label=labels.get(passage.id),
                 extra=extra | {"item": item.id, "rank": rank, "passages": len(item.contexts)})
            for rank, passage in enumerate(item.contexts, 1)]


def _question(item: Item) -> str:
    """The last user message of a conversation (what the retriever searched for), else the item's prompt."""
    if item.messages:  # its rendered history ("user: ... assistant: ...") is no search query
        asked = [m.content for m in item.messages if m.role == "user" and m.content]
        question = asked[-1] if asked else None
    else:
        question = item.prompt
    if not question or not question.strip():
        raise DataError(f"item {item.id!r} has no question for its passages: give it 'source' (the question) or "
                        "'messages' with a user message")
    return question


def _text(passage: Passage) -> str:
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def _passage_labels(item: Item) -> dict[str, int]:
    given = item.extra.get(PASSAGE_LABELS)
    if given is None:
        return {}
    where = f"item {item.id!r}, field 'extra.{PASSAGE_LABELS}'"
    if not isinstance(given, Mapping):
        raise DataError(f"{where}: an object of passage id: grade is needed, got {type(given).__name__}")
    ids = {passage.id for passage in item.contexts or ()}
    out: dict[str, int] = {}
    for key, grade in given.items():
        if str(key) not in ids:
            raise DataError(f"{where}: {key!r} names no passage of the item (its passages: "
                            f"{', '.join(sorted(ids)[:10])})")
        if grade is None:
            continue
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not float(grade).is_integer():
            raise DataError(f"{where}, passage {key!r}: a grade is a whole number (0, 1, 2, ...) or null, "
                            f"got {grade!r}")
        out[str(key)] = int(grade)
    return out


def _one_text_per_docid(pairs: list[Item]) -> None:
    first: dict[tuple[str | None, str | None], Item] = {}
    for pair in pairs:
        seen = first.setdefault((pair.qid, pair.docid), pair)
        if seen.passage != pair.passage:
            raise DataError(f"question {pair.qid!r}: passage id {pair.docid!r} holds two different texts (items "
                            f"{seen.extra['item']!r} and {pair.extra['item']!r}); one id is read as one passage "
                            "of the corpus: give the passages their corpus ids (plain-text contexts are numbered "
                            "1, 2, ... per item)")


def run_lines(pairs: Iterable[Item]) -> dict[str, str]:
    """Each system's retrievals as a TREC run (``qid Q0 docid rank score system``, the score descending with the
    rank), keyed by system (``all`` for items without ``system_id``), for ``evaluate --runs``. Refused, naming
    the pair: a qid or docid a TREC file cannot hold (white space, control characters)."""
    from judgelab.data.trec import unfit_id

    runs: dict[str, list[str]] = {}
    seen: dict[tuple[str, str, str], str] = {}  # (system, qid, docid): the pair that gave it
    for pair in pairs:
        qid, docid, rank = str(pair.qid), str(pair.docid), int(pair.extra["rank"])
        system = pair.system_id or "all"
        before = seen.setdefault((system, qid, docid), pair.id)
        if before != pair.id:
            raise DataError(f"system {system!r} retrieves passage {docid!r} for question {qid!r} twice (pairs "
                            f"{before!r} and {pair.id!r}): a run ranks a passage once per question (do two of "
                            "its items share a group_id?)")
        for name, value in (("qid", qid), ("docid", docid)):
            if unfit_id(value):
                raise DataError(f"pair {pair.id!r}: {name} {value!r} holds white space or a control character, "
                                "which a TREC run cannot (give the items group_ids and passage ids without spaces)")
        runs.setdefault(system, []).append(f"{qid} Q0 {docid} {rank} {-rank} {_tag(system)}\n")
    return {system: "".join(lines) for system, lines in runs.items()}


def _tag(system: str) -> str:
    from judgelab.files import safe_name

    return safe_name(system)


def plan_runs(pairs: Iterable[Item], folder: str | Path) -> dict[Path, str]:
    """The runs of :func:`run_lines` as {``folder/SYSTEM.run``: text} (the system's name made a safe file name),
    checked, nothing written: refused when two systems' names make one file name, or when ``folder`` holds
    runs of other systems (``evaluate --runs`` reads every run of the folder and would rank them with these)."""
    from judgelab.files import safe_name

    runs = run_lines(pairs)
    names = {system: f"{safe_name(system)}.run" for system in runs}
    if len(set(names.values())) < len(names):
        raise DataError(f"two systems' names make one file name ({sorted(names)}): rename a system_id")
    folder = Path(folder)
    others = sorted(p.name for p in folder.glob("*.run*") if p.name not in names.values()) if folder.is_dir() else []
    if others:
        raise DataError(f"{folder} holds runs of other systems ({', '.join(others[:5])}), which evaluate --runs "
                        "would rank with these: give a new or empty folder")
    return {folder / names[system]: text for system, text in runs.items()}


def write_runs(pairs: Iterable[Item], folder: str | Path) -> list[Path]:
    """The runs of :func:`plan_runs`, all checked before any is written."""
    from judgelab.files import private_dir, write_atomic

    planned = plan_runs(pairs, folder)
    private_dir(folder)
    return [write_atomic(path, text) for path, text in planned.items()]


def pair_counts(pairs: Iterable[Item]) -> dict[str, Any]:
    """How many pairs, questions and labelled pairs: what the command prints."""
    pairs = list(pairs)
    return {"pairs": len(pairs), "questions": len({p.qid for p in pairs}),
            "labelled": sum(1 for p in pairs if p.label is not None)}


__all__ = ["PASSAGE_LABELS", "PASSAGE_MARK", "pair_counts", "plan_runs", "run_lines", "split_passages", "write_runs"]
