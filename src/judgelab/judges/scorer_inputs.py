"""What the cross-encoder reads: one (segment A, segment B) text pair per item, cut to the window.

Segment A is what the output answers (the context and reference when the scorer uses them,
then the source, so that a dialogue's last turn sits right before the response), segment B the output. The encoder reads at most ``max_length`` tokens, so
longer inputs are cut by a fixed, documented rule (docs/training.md) rather than by the
tokenizer's blind ``longest_first``:

* the output keeps its start, and gets at least half the window (all of it if it is shorter);
* context and reference keep their start, each at most an equal share of what is left;
* the source takes the rest: a dialogue (a source with two or more lines) keeps its **most recent
  turns** whole (the last turn's end if even that one is too long); any other source (an article,
  a story prompt, a meaning representation) keeps its **start**.

Cuts are made in tokens (the model's own tokenizer) and applied to the text through the
tokenizer's character offsets, so a cut text re-tokenizes to the same tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from judgelab.data.item import Item

#: Which item fields segment A carries besides the source.
InputField = Literal["source", "context", "reference"]
Truncation = Literal["auto", "recent_turns", "start"]
#: Text -> (start, end) character span of each token, without special tokens.
Spans = Callable[[str], list[tuple[int, int]]]
#: Placeholders some benchmarks write for "no context" (Topical-Chat's ``_nofact``).
_EMPTY_CONTEXTS = frozenset({"", "_nofact", "nofact", "none", "null"})
PAIR_SPECIAL_TOKENS = 3  # [CLS] A [SEP] B [SEP]


def keep_start(text: str, spans: Sequence[tuple[int, int]], budget: int) -> str:
    """The first ``budget`` tokens of ``text``."""
    if len(spans) <= budget:
        return text
    return "" if budget <= 0 else text[: spans[budget - 1][1]]


def keep_end(text: str, spans: Sequence[tuple[int, int]], budget: int) -> str:
    """The last ``budget`` tokens of ``text``."""
    if len(spans) <= budget:
        return text
    return "" if budget <= 0 else text[spans[-budget][0]:]


def dialogue_turns(source: str) -> list[str]:
    """Turns of a dialogue history written one per line (Topical-Chat uses ``" \\n "``)."""
    return [turn.strip() for turn in source.split("\n") if turn.strip()]


def keep_recent_turns(turns: Sequence[str], spans: Spans, budget: int) -> str:
    """The most recent whole turns that fit in ``budget`` tokens, oldest first; if not even the
    last turn fits, its last ``budget`` tokens (the words right before the response)."""
    kept: list[str] = []
    used = 0
    for turn in reversed(turns):
        size = len(spans(turn))
        if used + size > budget:
            break
        kept.append(turn)
        used += size
    if not kept and turns:
        return keep_end(turns[-1], spans(turns[-1]), budget)
    return "\n".join(reversed(kept))


def cut_source(source: str, spans: Spans, budget: int, rule: Truncation = "auto") -> str:
    turns = dialogue_turns(source)
    if rule == "recent_turns" or (rule == "auto" and len(turns) >= 2):
        return keep_recent_turns(turns, spans, budget)
    return keep_start(source, spans(source), budget)


def segment_parts(item: Item, inputs: Sequence[InputField]) -> tuple[str, list[tuple[str, str]]]:
    """(source, [(label, text) of the other segment-A fields]) that this item has."""
    extras = []
    for name in inputs:
        if name == "source":
            continue
        text = getattr(item, name)
        if text and text.strip().lower() not in _EMPTY_CONTEXTS:
            extras.append((name, text.strip()))
    source = (item.prompt or "").strip() if "source" in inputs else ""
    return source, extras


def build_pair(item: Item, spans: Spans, max_length: int, inputs: Sequence[InputField] = ("source", "context"),
               rule: Truncation = "auto") -> tuple[str, str]:
    """(segment A, segment B) for ``item``, together at most ``max_length`` tokens with the specials."""
    window = max_length - PAIR_SPECIAL_TOKENS
    output = (item.judged or "").strip()  # a relevance item's passage
    source, extras = segment_parts(item, inputs)
    output_spans = spans(output)
    labelled = [(f"{label}: ", text) for label, text in extras]
    extra_sizes = [len(spans(prefix + text)) for prefix, text in labelled]
    a_size = len(spans(source)) + sum(extra_sizes)
    output_budget = min(len(output_spans), max(window // 2, window - a_size))
    segment_b = keep_start(output, output_spans, output_budget)
    left = window - output_budget
    share = left // (len(labelled) + 1) if labelled else 0
    cut_extras = []
    for (prefix, text), size in zip(labelled, extra_sizes, strict=True):
        whole = prefix + text
        kept = keep_start(whole, spans(whole), min(size, share))
        cut_extras.append(kept)
        left -= min(size, share)
    parts = [cut_source(source, spans, left, rule)] if source else []
    segment_a = "\n".join(part for part in [*cut_extras, *parts] if part)  # source last: next to the output
    return segment_a, segment_b


def tokenizer_spans(tokenizer) -> Spans:
    """Character spans of a Hugging Face fast tokenizer's tokens (no special tokens)."""
    def spans(text: str) -> list[tuple[int, int]]:
        if not text:
            return []
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False,
                            verbose=False)
        return [tuple(pair) for pair in encoded["offset_mapping"]]
    return spans
