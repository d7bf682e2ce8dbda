"""The gate's answer on two systems (``judgelab compare``, ``judgelab.testing``; docs/compare.md):
:class:`Comparison`, ``candidate - baseline`` with its ``1 - alpha`` interval and the decision, as one line
(``summary``), JUnit XML, a markdown summary for a CI job page and a dict, and ``plan``: how many labels
would catch a regression of a given size; :func:`decide`, the rule that turns the interval into the
decision; and the warnings of a pass the interval could not decide. The interval itself is
:func:`judgelab.evaluate.two_systems.compare_systems`'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from xml.etree import ElementTree

import numpy as np
from scipy import stats

from judgelab.errors import ConfigError, term
from judgelab.evaluate.intervals import T_GUARD, T_MIN_LABELS
from judgelab.metrics.results import json_number
from judgelab.printable import markdown_text as _md
from judgelab.printable import printable

POWER = 0.8  # compare --plan: the chance of catching the regression it plans for


@dataclass(frozen=True)
class Comparison:
    """``candidate - baseline`` with its ``1 - alpha`` interval, and the decision the gate takes."""

    baseline: str
    candidate: str
    difference: float
    low: float
    high: float
    estimator: str  # "corrected", "human" or "judge"
    estimator_reason: str
    paired: bool
    pairing_reason: str
    n: int  # units the difference averages over: shared inputs (paired) or items of the two systems
    n_labelled: int  # labelled units the estimate used (paired: inputs with both outputs labelled)
    margin: float
    alpha: float
    higher_is_better: bool
    decision: str  # "worse" or "undecided" (both fail; "undecided" only with fail_undecided), "not worse", "better"
    aspect: str | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    # comparisons between systems: "head-to-head" or "via others" (None: pointwise, paired or not)
    basis: str | None = None
    measure: str | None = None  # what the difference is, when it is not a difference of mean scores
    # the interval's kind when it is not the estimator's usual one (an exact one where verdicts show no spread)
    interval: str | None = None
    se: float | None = None  # the difference's design-based standard error, which plan() scales

    def plan(self, regression: float, power: float = POWER) -> dict[str, Any]:
        """How many labels (as these were: inputs with both outputs, items, or comparisons) would catch a
        true regression of ``regression`` (the candidate that much worse) with probability ``power``:
        the design-based standard error of the labels so far, scaled by sqrt(labels now / labels then),
        with the t branch's guarded quantile (docs/compare.md); at least T_MIN_LABELS."""
        if not regression > self.margin:
            raise ConfigError(f"{term('regression', '--plan')} {regression:g}: a regression to catch must exceed the "
                              f"margin ({self.margin:g})")
        if self.estimator == "judge" or not self.n_labelled or self.se is None:
            raise ConfigError(f"{term('plan()', '--plan')} scales the labels so far: label a small random pilot first "
                              f"(judgelab sample --budget 20) and give it with {term('human')} or {term('human_ids')}")
        quantile = stats.norm.isf(T_GUARD * self.alpha / 2) + stats.norm.ppf(power)
        with np.errstate(over="ignore"):  # a regression far under the labels' spread: said below
            needed = self.n_labelled * (self.se * quantile / (regression - self.margin)) ** 2
        if not math.isfinite(needed):
            raise ConfigError(f"{term('regression', '--plan')} {regression:g}: a regression this small (against the "
                              "labels' spread) would take "
                              "more labels than can be counted; give a larger one")
        total = max(math.ceil(needed), T_MIN_LABELS)
        unit = {"head-to-head": "labelled comparisons between the two", "via others": "labelled comparisons",
                None: "labelled inputs (both outputs)" if self.paired else "labelled items of the two systems"}
        return {"regression": regression, "power": power, "labels": total, "unit": unit[self.basis],
                "so_far": self.n_labelled,
                "text": f"to catch a regression of {regression:g} (margin {self.margin:g}) with {power:.0%} power: "
                        f"about {total} {unit[self.basis]} ({max(total - self.n_labelled, 0)} more than the "
                        f"{self.n_labelled} so far; from their spread, at the {1 - self.alpha:.0%} level)"}

    @property
    def passed(self) -> bool:
        return self.decision not in ("worse", "undecided")

    @property
    def design(self) -> str:
        """How the units were formed: paired/unpaired (scores), head-to-head/via others (comparisons)."""
        return self.basis or ("paired" if self.paired else "unpaired")

    @property
    def design_heading(self) -> str:
        return "comparisons" if self.basis else "pairing"

    def summary(self) -> str:
        """One line with the figures, as the CLI, JUnit and AssertionError show it."""
        side, bound = ("upper", self.high) if self.higher_is_better else ("lower", self.low)
        limit = (-self.margin if self.higher_is_better else self.margin) + 0.0  # + 0.0: no "-0"
        beyond = "<" if self.higher_is_better else ">"
        if self.decision == "worse":
            verdict = f"worse by more than the margin ({side} bound {bound:+.4g} {beyond} {limit:+.4g})"
        elif self.decision == "undecided":
            other, low_side = ("lower", self.low) if self.higher_is_better else ("upper", self.high)
            verdict = (f"not shown within the margin ({other} bound {low_side:+.4g} {beyond} {limit:+.4g}; "
                       f"{term('fail_undecided')} asks for that)")
        elif self.decision == "better":
            other = "lower" if self.higher_is_better else "upper"
            verdict = f"better ({other} bound {self.low if self.higher_is_better else self.high:+.4g} excludes 0)"
        else:
            verdict = f"not shown worse by more than the margin ({side} bound {bound:+.4g}, limit {limit:+.4g})"
        return (f"{self.measure or f'{self.candidate} - {self.baseline}'} = {self.difference:+.4g} "
                f"[{self.low:+.4g}, {self.high:+.4g}] ({1 - self.alpha:.0%} {self.interval + ' ' if self.interval else ''}"
                f"interval, {self.estimator}, {self.design}, "
                f"n={self.n}, {self.n_labelled} labelled; {'higher' if self.higher_is_better else 'lower'} is better, "
                f"margin {self.margin:g}): {verdict}")

    def details(self) -> str:
        """The summary, then why this estimator and this pairing, then the warnings: one per line."""
        return "\n".join([self.summary(), self.estimator_reason, self.pairing_reason, *self.warnings])

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "candidate": self.candidate, "aspect": self.aspect,
                "difference": json_number(self.difference), "ci": [json_number(self.low), json_number(self.high)],
                "confidence": 1 - self.alpha, "estimator": self.estimator, "estimator_reason": self.estimator_reason,
                "paired": self.paired, "pairing_reason": self.pairing_reason, "n": self.n,
                "n_labelled": self.n_labelled, "margin": self.margin, "alpha": self.alpha,
                "higher_is_better": self.higher_is_better, "decision": self.decision, "passed": self.passed,
                "warnings": list(self.warnings), "basis": self.basis, "measure": self.measure,
                "interval": self.interval, "se": json_number(self.se) if self.se is not None else None}

    def junit_xml(self) -> str:
        """One JUnit testcase: a failure (with the figures) when the candidate is worse."""
        suite = ElementTree.Element("testsuite", name="judgelab compare", tests="1",
                                    failures=str(int(not self.passed)), errors="0", skipped="0")
        properties = ElementTree.SubElement(suite, "properties")
        for name, value in self.to_dict().items():
            ElementTree.SubElement(properties, "property", name=name, value=_xml(value))
        case = ElementTree.SubElement(suite, "testcase", classname="judgelab.compare",
                                      name=_xml(f"{self.candidate} not worse than {self.baseline} (margin {self.margin:g})"))
        details = _xml(self.details())
        if not self.passed:
            failure = ElementTree.SubElement(case, "failure", message=_xml(self.summary()),
                                             type="regression" if self.decision == "worse" else "undecided")
            failure.text = details
        ElementTree.SubElement(case, "system-out").text = details
        root = ElementTree.Element("testsuites")
        root.append(suite)
        ElementTree.indent(root)
        return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

    def rows(self) -> list[tuple[str, str]]:
        """(what, text) for each figure of the result: the decision, the difference with its interval, the
        measure, the margin, the estimator and the design, each with why; the markdown summary's rows."""
        return [("decision", self.decision),
                ("difference", f"{self.difference:+.4g} [{self.low:+.4g}, {self.high:+.4g}] ({1 - self.alpha:.0%} "
                               f"{self.interval + ' ' if self.interval else ''}interval)"),
                *([("measure", self.measure)] if self.measure else []),
                ("margin", f"{self.margin:g} ({'higher' if self.higher_is_better else 'lower'} is better)"),
                ("estimator", f"{self.estimator}: {self.estimator_reason}"),
                (self.design_heading, f"{self.design}: {self.pairing_reason}"),
                ("units", f"{self.n} ({self.n_labelled} labelled)")]

    def markdown(self) -> str:
        """A short summary for a CI job page (e.g. ``$GITHUB_STEP_SUMMARY``)."""
        mark = {"worse": ":x: worse", "undecided": ":x: undecided", "not worse": ":white_check_mark: not worse",
                "better": ":white_check_mark: better"}[self.decision]
        rows = [("decision", mark), *self.rows()[1:]]
        # names come from data a pull request can change: every text but the decision's own mark is escaped
        lines = [f"### judgelab compare: {_md(self.candidate)} vs {_md(self.baseline)}"
                 + (f" ({_md(self.aspect)})" if self.aspect else ""), "", "| | |", "|---|---|"]
        lines += [f"| {name} | {value if name == 'decision' else _md(value)} |" for name, value in rows]
        lines += [""] + [f"> :warning: {_md(w)}" for w in self.warnings]
        return "\n".join(lines).rstrip() + "\n"


def _xml(text: object) -> str:
    """Text XML 1.0 can hold (no control character but tab and line feed, no U+FFFF): JUnit readers
    drop a file that is not well formed."""
    return printable(text, keep="\t\n")


def decide(low: float, high: float, margin: float, higher_is_better: bool = True,
           fail_undecided: bool = False) -> str:
    """``worse`` when the interval lies beyond ``-margin`` on the bad side, ``better`` when it excludes
    0 on the good side, ``not worse`` otherwise (a bound exactly at the limit does not fail).
    ``fail_undecided``: a non-inferiority test instead, ``undecided`` (a failure) when the interval still
    holds differences worse than ``-margin``: the gate passes only on evidence that the candidate is not worse."""
    if not higher_is_better:
        low, high = -high, -low
    if high < -margin:
        return "worse"
    if low > 0:
        return "better"
    if fail_undecided and low < -margin:
        return "undecided"
    return "not worse"


def _undecided(value: float, margin: float, higher_is_better: bool, n_labelled: int, kind: str | None) -> str | None:
    """A pass whose estimate is worse than the margin: the interval could not show it. Said, with why (a betting
    interval under 10 labels is valid but wide) and how to decide, so that a gate that could not tell is not
    read as one that found no regression."""
    if not (value if higher_is_better else -value) < -margin:
        return None
    why = (f" with {n_labelled} labelled, under {T_MIN_LABELS}, the interval is a betting one (valid at any number "
           "of labels, wide);" if kind == "betting" and n_labelled < T_MIN_LABELS else "")
    return (f"not decided: the estimate is worse than the margin, but its interval also holds differences that are "
            f"not;{why} label more (compare --plan REGRESSION says how many would catch a regression that size)")


def _undecided_fails() -> str:
    return (f"failed as undecided: the interval still holds differences worse than the margin, and "
            f"{term('fail_undecided')} passes only when it does not; label more ({term('plan()', '--plan')} says how "
            "many would catch a regression of a given size)")
