"""Counterfactual probes: perturb an item in a way that should not change the verdict, and count
how often it does.

* ``swap``: the two sides change places (outputs, systems, and conversations when the item compares
  two; the item's names follow them, so a verdict that does not depend on the order stays the same);
* ``pad``: content-free text is appended to the output the judge did not prefer;
* ``reformat``: that output is rewritten as markdown (a heading and one bullet per sentence), or
  as plain text when it already is markdown.

On a comparison of two conversations (``messages_a``, ``messages_b``) the output is the side's last
assistant reply: pad and reformat rewrite that reply inside its conversation
(:func:`judgelab.data.item.with_outputs`), so the copy stays a valid item and the judge, which is shown
the conversations, sees the change.

The judge runs on the original items, then on each probe's perturbed copies, through the one
client: every request is cached, so a rerun resumes where it stopped and the originals are judged
once for all probes. The judge is run as configured: a judge that judges both orders and calls
an order-dependent verdict a tie (the pairwise judge's default) is order-invariant by
construction, so probe ``swap: false`` to see the raw order sensitivity.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.data.io import iter_jsonl, load_items
from judgelab.data.item import Item, with_outputs
from judgelab.errors import ConfigError, DataError
from judgelab.judges.pairwise import PairwiseJudge
from judgelab.llm.client import Client
from judgelab.metrics import bias
from judgelab.metrics.results import Estimate

PROBES = ("swap", "pad", "reformat")
#: The fields that belong to one side of a comparison: the swap exchanges each pair.
_SIDES = (("output_a", "output_b"), ("system_a", "system_b"), ("messages_a", "messages_b"))
#: What the probes need of each item, in the words of their refusal.
_NEEDS = "the probes need the two texts (output_a and output_b, or the conversations messages_a and messages_b)"
#: Says nothing about the instruction: a judge that prefers the padded output prefers length or politeness.
PAD_TEXT = ("\n\nI hope this answer is helpful. Please let me know if you have any further questions or if there "
            "is anything else I can help you with. Thank you for your question, and have a wonderful day!")
_MARKDOWN = re.compile(r"(^[ \t]{0,3}#{1,6}[ \t]|^[ \t]*[-*+][ \t]|^[ \t]*\d+\.[ \t]|\*\*|__|`)", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class ProbeResult:
    """``flip_rate``: share of items whose verdict changed; ``toward_perturbed``: share whose
    preference moved towards the perturbed output (pad, reformat); ``failed``: items left out
    because the judge gave no verdict on the original or the perturbed copy."""

    probe: str
    flip_rate: Estimate
    toward_perturbed: Estimate | None
    failed: int

    def to_dict(self) -> dict[str, Any]:
        return {"flip_rate": self.flip_rate.to_dict(),
                "toward_perturbed": None if self.toward_perturbed is None else self.toward_perturbed.to_dict(),
                "failed": self.failed}


def probe_names(probes: str | Sequence[str] | None, option: str = "probe") -> list[str]:
    """The probes asked for: a comma-separated text (the CLI's ``--probe``) or a list; an unknown name is
    refused naming ``option``, the choices after it."""
    names = probes.split(",") if isinstance(probes, str) else list(probes or ())
    names = [name.strip() for name in names if name.strip()]
    unknown = [name for name in names if name not in PROBES]
    if unknown:
        raise ConfigError(f"{option} {unknown[0]!r}: choose among {', '.join(PROBES)}")
    return names


def probe_judge(config: Any = None) -> PairwiseJudge:
    """The pairwise judge the probes run: ``config`` (a file, a dict or a config object), or the default one."""
    from judgelab.judges.options import judge_config_from_options

    judge = judge_config_from_options(config, "pairwise" if config is None else None, None)
    if not isinstance(judge, PairwiseJudge):
        where = f"{config}: " if isinstance(config, (str, Path)) else ""
        raise ConfigError(f"{where}the probes run a pairwise judge (kind: pairwise), not a {judge.kind} one")
    return judge


def probe_items(data: Any, *, limit: int | None = None) -> list[Item]:
    """Pairwise items for the probes from a file (:func:`load_probe_items`) or from items given in Python."""
    from judgelab.data.given import as_items, is_path

    if is_path(data):
        return load_probe_items(data, limit=limit)
    items = list(as_items(data))[:limit]
    bare = next((item.id for item in items if not item.output_a or not item.output_b), None)
    if bare is not None:
        raise ConfigError(f"{_NEEDS}; item {bare!r} lacks one")
    return items


def probe_run(data: Any, probes: Sequence[str], *, config: Any = None, limit: int | None = None,
              confidence: float = 0.95, **client_options: Any) -> dict[str, ProbeResult]:
    """``audit --probe`` and ``jl.audit(probes=...)``: the probes' judge (:func:`probe_judge`) on the first
    ``limit`` items of ``data``, through the client ``client_options`` describe
    (:func:`judgelab.llm.resolve.client_from_options`'s model, model_name, cache, ...; the judge's own
    model when no ``model`` is given)."""
    from judgelab.llm.resolve import client_from_options

    judge = probe_judge(config)
    items = probe_items(data, limit=limit)
    client_options["model"] = client_options.get("model") or judge.model
    with client_from_options(**client_options) as client:
        return run_probes(items, judge, client, probes, confidence=confidence)


def load_probe_items(path: Path | str, *, limit: int | None = None) -> list[Item]:
    """Pairwise items for the probes; an item without its two texts is refused with its line."""
    for line, record in iter_jsonl(path):
        # a side's conversation gives its text (its last reply), which loading derives and checks
        has = [bool(record.get(f"output_{side}") or record.get(f"messages_{side}")) for side in "ab"]
        if not all(has):
            raise DataError(f"{_NEEDS}; this item has {'one' if any(has) else 'neither'}", path, line)
    items = list(load_items(path, kind="pairwise"))
    return items[:limit] if limit is not None else items


def swapped(item: Item) -> Item:
    """The item with its sides exchanged: each output with its system and conversation (an output stays its
    conversation's last reply), and the label in the new names."""
    label = item.label
    update: dict[str, Any] = {"label": {"a": "b", "b": "a"}.get(label, label) if isinstance(label, str) else label}
    for first, second in _SIDES:
        update[first], update[second] = getattr(item, second), getattr(item, first)
    return item.model_copy(update=update)


def padded(text: str) -> str:
    return text.rstrip() + PAD_TEXT


def reformatted(text: str) -> str:
    """Markdown as plain text; plain text as markdown (a heading, a bullet per sentence)."""
    if _MARKDOWN.search(text):
        plain = re.sub(r"^[ \t]{0,3}#{1,6}[ \t]+|^[ \t]*[-*+][ \t]+|^[ \t]*\d+\.[ \t]+", "", text, flags=re.MULTILINE)
        return re.sub(r"\*\*|__|`", "", plain)
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
    return "## Answer\n\n" + "\n".join(f"- {sentence}" for sentence in sentences)


_REWRITES: dict[str, Callable[[str], str]] = {"pad": padded, "reformat": reformatted}


def run_probes(items: Sequence[Item], judge: PairwiseJudge, client: Client, probes: Sequence[str] = PROBES, *,
               confidence: float = 0.95) -> dict[str, ProbeResult]:
    """Judge ``items`` and each probe's perturbed copies with ``judge``; a :class:`ProbeResult` per probe."""
    unknown = [name for name in probes if name not in PROBES]
    if unknown:
        raise ValueError(f"unknown probe {unknown[0]!r}: choose among {', '.join(PROBES)}")
    original = _preferences(judge.run(list(items), client))
    results: dict[str, ProbeResult] = {}
    for name in probes:
        if name == "swap":
            # The swapped copy's "a" is the original's output_b: map the preference back.
            after = 1 - _preferences(judge.run([swapped(item) for item in items], client))
            results[name] = _result(name, original, after, None, confidence)
            continue
        # Perturb the output the judge did not prefer (alternate sides on ties and failures).
        side_a = np.where(np.isnan(original) | (original == 0.5), np.arange(len(items)) % 2 == 0, original == 0)
        perturbed = [with_outputs(item, output_a=_REWRITES[name](item.output_a or "")) if on_a else
                     with_outputs(item, output_b=_REWRITES[name](item.output_b or ""))
                     for item, on_a in zip(items, side_a, strict=True)]
        after = _preferences(judge.run(perturbed, client))
        results[name] = _result(name, original, after, side_a, confidence)
    return results


def _preferences(judgments) -> np.ndarray:
    return bias.preference_for_a(bias.as_verdicts([j.label if j.ok else None for j in judgments]))


def _result(name: str, before: np.ndarray, after: np.ndarray, side_a: np.ndarray | None,
            confidence: float) -> ProbeResult:
    both = np.isfinite(before) & np.isfinite(after)
    ones = np.ones(int(both.sum()))
    flip = bias.share(before[both] != after[both], ones, "flip_rate", confidence=confidence, n_resamples=0)
    toward = None
    if side_a is not None:
        # preference for the perturbed output, before and after
        gain = np.where(side_a, after - before, before - after)[both]
        toward = bias.share(gain > 0, ones, "toward_perturbed", confidence=confidence, n_resamples=0)
    return ProbeResult(probe=name, flip_rate=flip, toward_perturbed=toward, failed=int((~both).sum()))
