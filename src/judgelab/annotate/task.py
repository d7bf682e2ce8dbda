"""What an annotation session asks: which items, which aspects, on which scales, with which criteria.

``build_task`` checks everything a user can get wrong before any server starts (an unknown aspect,
items that cannot be shown, a scale that does not fit the items, an ``--ids`` file naming unknown
items), so a bad command stops with one clear line.
"""

from __future__ import annotations

import os
import random
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from judgelab.data.fields import text_columns
from judgelab.data.io import load_items, load_judgments
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError, DataWarning, term
from judgelab.evaluate.sample_file import read_id
from judgelab.evaluate.sequential import Question, check_question, parse_question
from judgelab.files import read_text, text_or_file, writable_file

# Short definitions shown to annotators when no --criteria is given (the usual NLG aspects, in the
# words of their common definitions: SummEval, Topical-Chat, SF-RES, HANNA, TREC).
DEFINITIONS = {
    "coherence": "The output is well structured and well organised: it builds from sentence to sentence "
                 "into a coherent body of information, not a heap of related facts.",
    "consistency": "The output states only facts supported by the source: no invented or contradicting facts.",
    "fluency": "Each sentence is well written: grammatical, natural, easy to read.",
    "relevance": "The output contains the important information of the source (or answers the query) and "
                 "nothing redundant or off-topic.",
    "naturalness": "The output could have been written by a native speaker.",
    "informativeness": "The output conveys all the information in the source (meaning representation).",
    "overall": "Your overall judgement of the output's quality.",
    "engagingness": "The response is interesting and makes you want to continue the conversation.",
    "groundedness": "The response uses the given fact (context) appropriately.",
    "answer_relevance": "The answer directly addresses the question asked, completely and without redundant or "
                        "off-topic content (whether it is true is another aspect: faithfulness).",
    "understandability": "The response is understandable on its own and in the conversation.",
    "empathy": "The story shows the characters' emotions and makes the reader feel them.",
    "surprise": "The story's ending is surprising yet follows from what came before.",
    "complexity": "The story is elaborate: several characters, events and turns.",
    "preference": "Which response follows the instruction better? Judge helpfulness, correctness and "
                  "harmlessness; ignore length and the order the responses are shown in.",
}
MAX_CHOICES = 10  # one keystroke each: 1-9 and 0

# Relevance items (query and passage): the TREC Deep Learning track's four grades and their
# definitions (Craswell et al., TREC DL 2019 overview), which is how TREC-style qrels are labelled.
RELEVANCE_CRITERIA = ("How well does the passage answer the query? Judge the passage on its own, as a searcher "
                      "would: 3 perfectly relevant: the passage is dedicated to the query and contains the exact "
                      "answer; 2 highly relevant: it has some answer, but unclear or hidden among extraneous "
                      "information; 1 related: it seems related to the query but does not answer it; "
                      "0 irrelevant: it has nothing to do with the query.")
RELEVANCE_GRADES = {0: "irrelevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}
RELEVANCE_ANCHORS = ("the passage has nothing to do with the query",
                     "the passage is dedicated to the query and contains the exact answer")

# What the lowest and the highest value of a scale mean, per built-in aspect (shown under the buttons).
ANCHORS = {
    "coherence": ("a heap of unrelated sentences", "well structured: builds from sentence to sentence"),
    "consistency": ("states invented or contradicting facts", "every fact is supported by the source"),
    "fluency": ("hard to read: ungrammatical, unnatural", "every sentence well written"),
    "relevance": ("misses the important information, or is off-topic", "all the important information, nothing redundant"),
    "naturalness": ("no native speaker would write this", "could have been written by a native speaker"),
    "informativeness": ("conveys none of the source's information", "conveys all of it"),
    "overall": ("very poor", "excellent"),
    "engagingness": ("dull: no wish to go on", "makes you want to continue"),
    "groundedness": ("ignores or misuses the given fact", "uses the given fact appropriately"),
    "answer_relevance": ("does not address the question", "answers exactly what was asked, nothing off-topic"),
    "understandability": ("cannot be understood", "understandable on its own and in the conversation"),
    "empathy": ("shows no emotion, makes the reader feel none", "shows emotions and makes the reader feel them"),
    "surprise": ("predictable, or does not follow", "surprising yet follows from what came before"),
    "complexity": ("bare: one character, one event", "elaborate: several characters, events and turns"),
}
GENERIC_ANCHORS = ("does not meet the criteria at all", "fully meets the criteria")

#: Per kind of item, the fields holding the text its output answers (shown above what is rated), the
#: first being the one a file's own column for it should be renamed to.
CONTEXT_FIELDS = {"pointwise": ("source", "context"), "pairwise": ("instruction", "source", "context"),
                  "relevance": ("query",)}


@dataclass(frozen=True)
class Choice:
    """One button: the value written to the labels file, its key and what the button says."""

    value: float | str
    key: str
    caption: str

    @property
    def text(self) -> str:
        """The value as the button submits it."""
        return _number(self.value)


@dataclass(frozen=True)
class Scale:
    kind: Literal["scale", "labels", "pairwise"]
    choices: tuple[Choice, ...]

    @property
    def bounds(self) -> tuple[float, float] | None:
        """[min, max] of a numeric scale (written with every label), None for preferences."""
        if self.kind == "pairwise":
            return None
        values = [float(choice.value) for choice in self.choices]
        return (min(values), max(values))

    @property
    def description(self) -> str:
        if self.kind == "pairwise":
            return "pairwise"
        return ", ".join(_number(choice.value) for choice in self.choices)

    def choice(self, value: str) -> Choice | None:
        """The choice a submitted button value names (its value as text)."""
        return next((c for c in self.choices if c.text == value), None)

    def accepts(self, value: float | str | None) -> bool:
        return any(choice.value == value for choice in self.choices)

    @property
    def captioned(self) -> bool:
        """Do the buttons carry words (``--labels 0=irrelevant,...``), not just their numbers?"""
        return any(choice.caption != choice.text for choice in self.choices)

    @property
    def summary(self) -> str:
        """The scale as the start line prints it: ``1-5``, ``0, 1, 3``, ``0-3 (0 irrelevant, ...)``."""
        if self.kind == "pairwise":
            return "a / b / tie"
        values = [float(choice.value) for choice in self.choices]
        whole = all(v.is_integer() for v in values) and values == [values[0] + k for k in range(len(values))]
        text = f"{values[0]:g}-{values[-1]:g}" if whole else self.description
        if self.captioned:
            text += " (" + ", ".join(f"{choice.text} {choice.caption}" for choice in self.choices) + ")"
        return text


def _number(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:g}"


def scale_from_range(text: str) -> Scale:
    """``1-5`` (whole numbers from low to high)."""
    match = re.fullmatch(r"\s*(-?\d+)\s*-\s*(-?\d+)\s*", text)
    if not match or int(match[1]) >= int(match[2]):
        raise ConfigError(f"{term('scale')} {text!r}: write LOW-HIGH with whole numbers, e.g. 1-5")
    values = list(range(int(match[1]), int(match[2]) + 1))
    return _numeric("scale", [(float(v), str(v)) for v in values], f"{term('scale')} {text}")


def scale_from_labels(text: str) -> Scale:
    """``0,1,2,3`` or with captions ``0=irrelevant,1=related,2=relevant,3=perfect``."""
    pairs = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        value, _, caption = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(f"{term('labels')} {text!r}: {value.strip()!r} is not a number; labels are numbers, "
                              "optionally with a caption: 0=irrelevant,1=relevant") from None
        pairs.append((number, caption.strip() or f"{number:g}"))
    if len(pairs) < 2 or len({v for v, _ in pairs}) != len(pairs):
        raise ConfigError(f"{term('labels')} {text!r}: give two or more different numbers, e.g. 0,1,2,3")
    return _numeric("labels", pairs, f"{term('labels')} {text}")


def _numeric(kind: Literal["scale", "labels"], pairs: list[tuple[float, str]], option: str) -> Scale:
    if len(pairs) > MAX_CHOICES:
        raise ConfigError(f"{option}: {len(pairs)} values is more than the {MAX_CHOICES} keys 1-9 and 0; "
                          "use a shorter scale")
    digits = all(v.is_integer() and 0 <= v <= 9 for v, _ in pairs)
    positions = [*"123456789", "0"]
    choices = tuple(Choice(value, str(int(value)) if digits else positions[i], caption)
                    for i, (value, caption) in enumerate(pairs))
    return Scale(kind, choices)


# keys a / b / t: the response shown as A (left), as B (right), a tie; "back" moves to p in these sessions
PAIRWISE = Scale("pairwise", (Choice("left", "a", "A is better"), Choice("right", "b", "B is better"),
                              Choice("tie", "t", "tie")))


@dataclass(frozen=True)
class Aspect:
    """One thing rated on the page: its name (written with every label), scale, criteria, and what
    the scale's lowest and highest values mean (``anchors``; None when the captions say it)."""

    name: str
    scale: Scale
    criteria: str
    anchors: tuple[str, str] | None = None


@dataclass
class AnnotationTask:
    """Everything the server needs. ``items`` are offered in this order; ``overlap`` is the share of
    them every annotator labels (1.0: everyone labels everything; below 1 the others are split,
    each going to whoever takes it first). ``aspect``, ``scale`` and ``criteria`` are the first (or
    only) aspect's; ``aspects`` lists every aspect the page asks for, each stored as its own label."""

    items: list[Item]
    aspect: str
    scale: Scale
    criteria: str
    out: Path
    annotator: str | None = None
    overlap: float = 1.0
    seed: int = 0
    all_ids: frozenset[str] = frozenset()  # the whole data set's ids (an --ids/--sample session is part of it)
    judgments: dict[str, Judgment] = field(default_factory=dict)  # --show-judge
    data_name: str | None = None
    aspects: tuple[Aspect, ...] = ()
    question: Question | None = None  # --until-decided: stop asking once the labels decide it
    data_path: Path | None = None  # --data as given (the done page's next commands name it)
    by_id: dict[str, Item] = field(init=False, repr=False)
    shared: frozenset[str] = field(init=False, repr=False)  # the items every annotator labels

    def __post_init__(self) -> None:
        if not self.items:
            raise ConfigError("no items to annotate")
        if not 0.0 <= self.overlap <= 1.0:
            raise ConfigError(f"{term('overlap')} {self.overlap}: give a share between 0 and 1 (e.g. 0.2)")
        self.all_ids = self.all_ids or frozenset(item.id for item in self.items)
        if not self.aspects:
            self.aspects = (Aspect(self.aspect, self.scale, self.criteria,
                                   default_anchors(self.aspect, self.items[0].kind, self.scale)),)
        names = [aspect.name for aspect in self.aspects]
        if len(set(names)) != len(names):
            raise ConfigError(f"{term('aspect')} {','.join(names)}: an aspect is named twice")
        if len(names) > 1 and self.pairwise:
            raise ConfigError(f"pairwise items are labelled for one aspect at a time (e.g. {term('aspect')} "
                              "preference)")
        self.by_id = {item.id: item for item in self.items}
        ids = [item.id for item in self.items]
        self.shared = frozenset(random.Random(self.seed).sample(ids, round(self.overlap * len(ids))))

    @property
    def pairwise(self) -> bool:
        return self.scale.kind == "pairwise"

    @property
    def aspect_names(self) -> list[str]:
        return [aspect.name for aspect in self.aspects]

    def aspect_named(self, name: str) -> Aspect | None:
        return next((aspect for aspect in self.aspects if aspect.name == name), None)

    def swapped(self, annotator: str, item_id: str) -> bool:
        """Pairwise: show B on the left? Random per (annotator, item), the same on every reload."""
        return self.pairwise and random.Random(f"{self.seed}|{annotator}|{item_id}").random() < 0.5


def build_task(data: str | os.PathLike, aspect: str | Sequence[str], out: str | os.PathLike, *,
               scale: str | None = None, labels: str | None = None, pairwise: bool = False,
               ids: str | os.PathLike | None = None, sample: int | None = None,
               criteria: str | Sequence[str] | None = None, annotator: str | None = None, overlap: float = 1.0,
               seed: int = 0, show_judge: str | os.PathLike | None = None,
               until_decided: str | None = None) -> AnnotationTask:
    """The task `judgelab annotate` describes, checked: see docs/annotate.md for each option.
    ``aspect``: one name, several separated by commas, or a list (all rated on one page); ``criteria``:
    one text per aspect (``@FILE`` reads a file)."""
    if sum(option is not None and option is not False for option in (scale, labels, pairwise)) > 1:
        raise ConfigError(f"give one of {term('scale')}, {term('labels')} and {term('pairwise')}")
    writable_file(out)  # the labels file: read, locked and appended to once the server starts
    names = parse_aspects(aspect)
    texts = _criteria_per_aspect(names, criteria)
    dataset = load_items(data)
    items = _selected(list(dataset), ids, sample, seed)
    kinds = {item.kind for item in items}
    if len(kinds) > 1:
        raise DataError(f"the items mix kinds ({', '.join(sorted(kinds))}); annotate one kind at a time", data)
    kind = kinds.pop()
    aspects = []
    for name, text in zip(names, texts, strict=True):
        chosen = _scale(kind, items, name, scale, labels, pairwise)
        aspects.append(Aspect(name, chosen, _criteria(name, text, dataset.aspects(), kind),
                              None if labels else default_anchors(name, kind, chosen)))
    _check_showable(items, kind, data)
    _warn_unshown(items, kind, data)
    if annotator is not None:
        annotator = check_name(annotator)
    question = None
    if until_decided is not None:
        question = parse_question(until_decided)
        check_question(question, items)
        if len(aspects) > 1:
            raise ConfigError(f"{term('until_decided')} asks a question of one aspect: label one at a time")
        # a confidence sequence needs the labels in random order: the items are shown so (seeded)
        items = random.Random(f"{seed}|order").sample(items, len(items))
    first = aspects[0]
    return AnnotationTask(items=items, aspect=first.name, scale=first.scale, criteria=first.criteria, out=Path(out),
                          annotator=annotator, overlap=overlap, seed=seed, all_ids=frozenset(dataset.ids),
                          judgments=_judgments(show_judge, first.name, items) if show_judge else {},
                          data_name=dataset.name, aspects=tuple(aspects), question=question,
                          data_path=Path(data) if isinstance(data, (str, os.PathLike)) else None)


def parse_aspects(aspect: str | Sequence[str]) -> list[str]:
    """``naturalness,informativeness`` (or a list) as names, in order; an empty or repeated name is an error."""
    parts = aspect.split(",") if isinstance(aspect, str) else list(aspect)
    names = [part.strip() for part in parts]
    if not names or any(not name for name in names):
        raise ConfigError(f"{term('aspect')} {aspect!r}: give one aspect, or several separated by commas "
                          "(e.g. naturalness,informativeness)")
    if len(set(names)) != len(names):
        raise ConfigError(f"{term('aspect')} {aspect!r}: an aspect is named twice")
    return names


def _criteria_per_aspect(names: list[str], criteria: str | Sequence[str] | None) -> list[str | None]:
    if criteria is None or (not isinstance(criteria, str) and not criteria):
        return [None] * len(names)
    given = [criteria] if isinstance(criteria, str) else list(criteria)
    if len(given) != len(names):
        raise ConfigError(f"{len(given)} {term('criteria')} for {len(names)} aspects ({', '.join(names)}): give one "
                          f"{term('criteria')} per aspect, in the order of {term('aspect')}, or none for the built-in "
                          "criteria")
    return given


def default_anchors(aspect: str, kind: str, scale: Scale) -> tuple[str, str] | None:
    """What the lowest and highest values mean, from the aspect (or the item kind); None for pairwise."""
    if scale.kind == "pairwise":
        return None
    if kind == "relevance":
        return RELEVANCE_ANCHORS
    return ANCHORS.get(aspect, GENERIC_ANCHORS)


def check_name(name: str) -> str:
    """An annotator's name as written to the labels file: 1-64 printable characters."""
    cleaned = " ".join(name.split())
    if not cleaned or len(cleaned) > 64 or not cleaned.isprintable():
        raise ConfigError("an annotator name is 1 to 64 printable characters")
    return cleaned


def _selected(items: list[Item], ids: str | os.PathLike | None, sample: int | None, seed: int) -> list[Item]:
    if ids is not None and sample is not None:
        raise ConfigError(f"give {term('ids')} or {term('sample')}, not both")
    if ids is not None:
        return _from_ids_file(items, Path(ids))
    if sample is not None:
        if sample < 1:
            raise ConfigError(f"{term('sample')} must be 1 or more")
        if sample >= len(items):
            return items
        chosen = set(random.Random(seed).sample(range(len(items)), sample))
        return [item for position, item in enumerate(items) if position in chosen]  # data order: groups stay together
    return items


def _from_ids_file(items: list[Item], path: Path) -> list[Item]:
    """The items a file of ids names, in the file's order. For relevance items a query id (as ``judgelab sample``
    writes it for TREC runs: a labelled query is its whole pool) names every pair of that query, in data order."""
    by_id = {item.id: item for item in items}
    by_query: dict[str, list[str]] = {}
    for item in items:
        if item.qid is not None and item.qid not in by_id:
            by_query.setdefault(item.qid, []).append(item.id)
    lines = read_text(path).splitlines()  # a regular file within the input bound
    wanted: dict[str, None] = {}  # ordered, without repeats
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.strip().startswith("#"):
            continue
        # `judgelab sample` writes "id<TAB>inclusion probability", and an awkward id as a JSON string
        named = read_id(line.split("\t")[0].strip(), path, number)
        if named not in by_id and named not in by_query:
            what = "item (or query)" if by_query else "item"
            raise DataError(f"{what} {named!r} is not in the data", path, number)
        wanted.update(dict.fromkeys(by_query.get(named, [named])))
    if not wanted:
        raise DataError("no item ids (one per line)", path)
    return [by_id[item_id] for item_id in wanted]


def _scale(kind: str, items: list[Item], aspect: str, scale: str | None, labels: str | None,
           pairwise: bool) -> Scale:
    if kind == "pairwise" or pairwise:
        if kind != "pairwise":
            raise ConfigError(f"{term('pairwise')} needs pairwise items (output_a and output_b); these are {kind} "
                              "items")
        if scale or labels:
            raise ConfigError(f"pairwise items are labelled a/b/tie: drop {term('scale')}/{term('labels')}")
        return PAIRWISE
    if scale:
        return scale_from_range(scale)
    if labels:
        return scale_from_labels(labels)
    declared = {item.aspect_scale(aspect) for item in items} - {None}
    if len(declared) == 1:
        low, high = declared.pop()  # type: ignore[misc]
        if low.is_integer() and high.is_integer() and high - low < MAX_CHOICES:
            return scale_from_range(f"{int(low)}-{int(high)}")
    if kind == "relevance":
        return _relevance_scale(items)
    return scale_from_range("1-5")


def _relevance_scale(items: list[Item]) -> Scale:
    """Relevance items without a declared scale: TREC's graded 0-3 (with the grades' names), widened
    to the grades the items' own labels use (e.g. 0-4)."""
    grades = [item.label for item in items if isinstance(item.label, int) and not isinstance(item.label, bool)]
    low, high = min([0, *grades]), max([3, *grades])
    if (low, high) == (0, 3):
        return _numeric("labels", [(float(g), name) for g, name in RELEVANCE_GRADES.items()], "relevance grades")
    if high - low >= MAX_CHOICES:
        raise ConfigError(f"the items' relevance labels run from {low} to {high}, more than the {MAX_CHOICES} keys: "
                          f"give the scale with {term('labels')}")
    return scale_from_range(f"{low}-{high}")


def _check_showable(items: list[Item], kind: str, data: str | os.PathLike) -> None:
    """Every item must have the text an annotator rates (the loader already requires the fields)."""
    if kind == "relevance":
        blind = [item.id for item in items if not item.passage]
        what = "a passage (the document text)"
    elif kind == "pairwise":
        textless = [item.id for item in items if item.output_a is None and item.output_b is None]
        if textless:  # Arena's votes name the systems only
            raise DataError(f"{len(textless)} comparisons have no texts to show (output_a, output_b), e.g. "
                            f"{textless[0]!r}: annotate needs the two responses; label such comparisons where their "
                            "texts are", data, field="output_a")
        blind = [item.id for item in items if not (item.output_a or "").strip() or not (item.output_b or "").strip()]
        what = "two non-empty outputs"
    else:
        blind = [item.id for item in items if not (item.output or "").strip()]
        what = "a non-empty 'output'"
    if blind:
        shown = ", ".join(repr(i) for i in blind[:5]) + (", ..." if len(blind) > 5 else "")
        raise DataError(f"{len(blind)} items have nothing to rate ({shown}): each needs {what}", data,
                        field="passage" if kind == "relevance" else "output")


def unshown_text(item: Item) -> list[str]:
    """The columns of ``item`` that hold text the page does not show, when it shows nothing above what
    is rated: a file's own name for the question or input (``question``, ``input``), which the loader
    keeps in ``extra`` as an unknown field. A column holds text when its value has two words or more
    (``question_id: q7`` is a code, not a question). Empty when the item has its context."""
    if any(getattr(item, name) for name in CONTEXT_FIELDS[item.kind]):
        return []
    return text_columns(item)


def _warn_unshown(items: list[Item], kind: str, data: str | os.PathLike) -> None:
    """Say at start-up when items would show without their context while unknown columns hold text:
    the annotators would judge answers without the question (the page says so on each such item)."""
    unshown = [columns for columns in map(unshown_text, items) if columns]
    if not unshown:
        return
    columns = list(dict.fromkeys(name for names in unshown for name in names))
    field = CONTEXT_FIELDS[kind][0]
    named = ", ".join(repr(name) for name in columns)
    rated = "responses" if kind == "pairwise" else "passage" if kind == "relevance" else "output"
    which = f"column {named} holds" if len(columns) == 1 else f"columns {named} hold"
    warnings.warn(f"{data}: {len(unshown)} of {len(items)} items have no {field} to show with their {rated}, and "
                  f"their {which} text annotate does not show (unknown fields): rename the {field}'s column to "
                  f"{field!r} to show it; the labelling page says so on each such item", DataWarning, stacklevel=3)


def _criteria(aspect: str, criteria: str | None, data_aspects: list[str], kind: str = "pointwise") -> str:
    if criteria is not None:
        text = text_or_file(criteria).strip()
        if not text:
            raise ConfigError(f"{term('criteria')} is empty")
        return text
    if kind == "relevance" and aspect in ("relevance", "label"):
        return RELEVANCE_CRITERIA  # a query and a passage: not the summaries' "output ... of the source"
    if aspect in DEFINITIONS:
        return DEFINITIONS[aspect]
    if aspect in data_aspects:
        return f"Rate the {aspect} of the output."
    known = sorted(set(DEFINITIONS) | set(data_aspects))
    raise ConfigError(f"unknown aspect {aspect!r}: give its criteria with {term('criteria')} TEXT or "
                      f"{term('criteria')} @FILE "
                      f"(aspects with built-in criteria or in the data: {', '.join(known)})")


def _judgments(path: str | os.PathLike, aspect: str, items: list[Item]) -> dict[str, Judgment]:
    from judgelab.metrics.align import select_judgments

    judged = select_judgments(load_judgments(path), aspect, None)
    ids = {item.id for item in items}
    shown = {j.item_id: j for j in judged if j.item_id in ids}
    if not shown:
        raise DataError(f"the judgments hold none of the {len(items)} items for {aspect!r}", path, field="item_id")
    return shown
