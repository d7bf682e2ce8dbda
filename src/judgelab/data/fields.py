"""Column names judgelab does not know, and the field each most likely stands for.

A file written in its own vocabulary (``input``, ``human_score``, ``system``, ``question_id``) loads
without an error: the item keeps unknown columns in ``extra``. But nothing reads them there, so a
judge would rate answers without their question and ``meta`` would find no human value. The
loaders therefore say so, once per file, when a column has a likely judgelab name that no item
uses (``naming_warning``), and add the same did-you-mean to a "required field is missing" error
(``rename_hint``). Names come from a table of what other tools and people call each field, then
from difflib for near-misses (``sytem_id``, ``ouptut``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from judgelab.data.item import Item, ItemKind

#: Where the input an output answers goes, and where a human value goes, by the items' kind.
PROMPT_FIELD: dict[str, str] = {"pointwise": "source", "pairwise": "instruction", "relevance": "query"}
_HUMAN_FIELD: dict[str, str] = {"pointwise": "scores.ASPECT", "pairwise": "label", "relevance": "label"}
_PROMPT, _HUMAN = "<prompt>", "<human>"  # placeholders resolved by kind


def _names(target: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, target)


#: Other tools' and people's names for judgelab's fields (lower case, ``_`` between words).
ALIASES: dict[str, str] = {
    **_names(_PROMPT, "input", "prompt", "question", "user_prompt", "input_text", "prompt_text", "question_text",
             "article", "document", "dialogue", "dialog", "conversation", "src", "source_text", "user_input"),
    **_names("output", "response", "answer", "completion", "generation", "prediction", "candidate", "hypothesis",
             "model_output", "model_answer", "model_response", "output_text", "generated_text", "summary"),
    **_names("output_a", "response_a", "answer_a", "completion_a", "output_1", "response_1", "answer_1",
             "output1", "response1", "answer1"),
    **_names("output_b", "response_b", "answer_b", "completion_b", "output_2", "response_2", "answer_2",
             "output2", "response2", "answer2"),
    **_names("system_a", "model_a", "model_1", "model1", "system_1"),
    **_names("system_b", "model_b", "model_2", "model2", "system_2"),
    **_names("system_id", "system", "model", "model_id", "model_name", "system_name", "generator"),
    **_names("group_id", "question_id", "prompt_id", "input_id", "source_id", "group", "conversation_id",
             "dialogue_id", "article_id", "instruction_id"),
    **_names("label", "verdict", "winner", "preference", "choice", "human_label", "gold_label",
             "human_preference", "human_verdict"),
    **_names(_HUMAN, "human_score", "score", "rating", "human_rating", "gold_score", "grade", "human",
             "annotation", "likert"),
    **_names("reference", "gold", "gold_answer", "gold_output", "reference_answer", "ground_truth", "target",
             "expected", "expected_output", "ideal", "references", "ref"),
    **_names("messages", "turns", "chat", "chat_history"),
    **_names("contexts", "retrieval_context", "retrieved_contexts", "retrieved_passages"),
    **_names("trajectory", "steps", "agent_steps"),
    **_names("id", "item_id", "uid", "example_id", "sample_id", "idx", "_id"),
    **_names("qid", "query_id", "topic_id"),
    **_names("docid", "doc_id", "document_id", "passage_id", "pid"),
}
#: ``helpfulness_score``, ``score_helpfulness``, ``scores_helpfulness``: a human score for that aspect.
_ASPECT_SCORE = re.compile(r"(?:(?P<before>\w+?)[_.](?:human_)?(?:scores?|ratings?)|(?:human_)?(?:scores?|ratings?)[_.](?P<after>\w+))")
#: What stands before or after "score" in a column holding no human score for an aspect.
_NOT_ASPECTS = {"judge", "model", "llm", "gpt", "auto", "pred", "predicted", "judge_model", "reward", "max", "min"}
_KNOWN = tuple(name for name in Item.model_fields if name != "extra")
#: At most this many unknown columns are looked at (a table of thousands of columns is no item file).
_MAX_COLUMNS = 200


def suggest(column: str, kind: ItemKind = "pointwise") -> str | None:
    """The judgelab field ``column`` most likely means (``scores.helpfulness``, ``scores.ASPECT`` when
    the aspect is not in the name), or None; never ``column`` itself ("did you mean X -> X?")."""
    target = _likely_field(column, kind)
    return None if target == column else target


def _likely_field(column: str, kind: ItemKind) -> str | None:
    name = re.sub(r"[\s\-]+", "_", column.strip()).lower()
    if name in _KNOWN and name != column:
        return name  # "Source", "System_ID"
    target = ALIASES.get(name)
    if target is None and (match := _ASPECT_SCORE.fullmatch(name)):
        aspect = match["before"] or match["after"]
        return None if len(aspect) < 2 or aspect in _NOT_ASPECTS else f"scores.{aspect}"
    if target is None and len(name) >= 4:  # a near-miss of judgelab's own names: "sytem_id", "ouptut"
        close = difflib.get_close_matches(name, _KNOWN, n=1, cutoff=0.8)
        target = close[0] if close and close[0].endswith("id") == name.endswith("id") else None
    if target is None:
        return None
    return PROMPT_FIELD[kind] if target == _PROMPT else _HUMAN_FIELD[kind] if target == _HUMAN else target


def used_by_some(target: str, items: Sequence[Item]) -> bool:
    """True when some item sets the field ``target`` names (``scores.ASPECT``: any score at all)."""
    head, _, aspect = target.partition(".")
    if head in PROMPT_FIELD.values():  # the input under any of its names (a comparison's source will do)
        return any(item.prompt for item in items)
    if head == "scores":
        return any(item.scores if aspect == "ASPECT" else aspect in item.scores for item in items)
    return any(getattr(item, head, None) is not None for item in items)


def unused_names(columns: Iterable[str], items: Sequence[Item]) -> list[tuple[str, str]]:
    """``(column, field)`` for each unknown column whose likely field no item uses, in column order."""
    if not items:
        return []
    kind = items[0].kind
    unknown = [column for column in columns if column not in Item.model_fields][:_MAX_COLUMNS]
    found = [(column, target) for column in unknown if (target := suggest(column, kind)) is not None]
    return [(column, target) for column, target in found if not used_by_some(target, items)]


def naming_warning(where: str, columns: Collection[str], items: Sequence[Item]) -> str | None:
    """One line for a file whose unknown columns look like judgelab fields that no item uses, else None."""
    renames = unused_names(columns, items)
    if not renames:
        return None
    unknown = [column for column in columns if column not in Item.model_fields]
    listed = ", ".join(unknown[:8]) + (", ..." if len(unknown) > 8 else "")
    named = ", ".join(f"{column} -> {target}" for column, target in renames)
    scores = any(target.startswith("scores.") for _, target in renames)
    how = (' (a human score is scores.ASPECT: {"scores": {"helpfulness": 4}} in JSON, a column scores.helpfulness '
           "in CSV)") if scores else ""
    return (f"{where}: {len(unknown)} column{'s' if len(unknown) != 1 else ''} judgelab does not know ({listed}) went "
            f"to 'extra', where nothing reads them; did you mean {named}? Rename them to be used{how}; see docs/data.md")


def rename_hint(record: Mapping[str, object]) -> str:
    """For a row refused for a missing field: the renames its unknown columns suggest ("" if none)."""
    kind: ItemKind = "pairwise" if any(suggest(k) in ("output_a", "output_b") for k in record) else "pointwise"
    renames = [(column, target) for column in list(record)[:_MAX_COLUMNS]
               if column not in Item.model_fields and (target := suggest(column, kind)) is not None
               and target.partition(".")[0] not in record]
    if not renames:
        return ""
    return "did you mean " + ", ".join(f"{column} -> {target}" for column, target in renames) + "?"


def text_columns(item: Item) -> list[str]:
    """The unknown columns (kept in ``extra``) of ``item`` that hold text: a value of two words or more
    (``question_id: q7`` is a code, not a question)."""
    return [name for name, value in item.extra.items() if isinstance(value, str) and len(value.split()) > 1]
