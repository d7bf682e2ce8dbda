"""Ensembles of judges (PanguIR multi-model collaboration, NTCIR-18 AEOLLM, section 3.1).

Members are judge configs run through the ensemble's client (or their own model string), or
judgments produced elsewhere (any JSONL with ``item_id`` and a score or label, e.g. API judges
you already ran, or the published verdicts in ``benchmarks/reference/``). Aggregations:

* ``mean`` / ``median`` / ``trimmed_mean`` of member scores, ``vote`` (majority over labels);
* ``weighted``: weighted mean, non-negative weights fitted on dev items (``fit``);
* ``stack``: a scikit-learn model over member scores (ridge, or logistic for labels), fitted on dev;
* ``best``: per task, the member with the best dev metric (PanguIR eq. 1), used on that task's
  items (eq. 2); tasks unseen at fit time use the member best over all dev items;
* ``llm_vote``: an aggregator LLM reads each member's score and reason and writes the final
  score with its own explanation (PanguIR 3.1.2); an unparsable reply is recorded as such.

Member values: a judgment's score, else its label read as a number (pairwise "a" = 1, "b" = 0,
"tie" = 0.5; graded labels as they are). A member that failed on an item is left out of that
item's aggregate (never counted as 0); an item no member judged gets an error judgment.
"""

from __future__ import annotations

import functools
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator
from scipy import stats

from judgelab.data.io import judgments_file, load_judgments, select_judge
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataWarning, term
from judgelab.judges.base import ConfigPath, JudgeConfig, OnJudgment, judge_from_dict, load_judge, usage_of
from judgelab.judges.stacking import fit_stacker, predict_stacked
from judgelab.limits import MaxTokens, Seed
from judgelab.llm.client import Client
from judgelab.llm.types import Request, Usage
from judgelab.metrics.align import human_value, infer_aspect

if TYPE_CHECKING:
    from judgelab.judges.contract import ContractExample

Aggregate = Literal["mean", "median", "trimmed_mean", "vote", "weighted", "stack", "best", "llm_vote"]
Metric = Literal["spearman", "pearson", "kendall", "accuracy"]
_PAIRWISE_VALUE = {"a": 1.0, "b": 0.0, "tie": 0.5}
_LEARNED = ("weighted", "stack", "best")


class Member(BaseModel):
    """One ensemble member: exactly one of ``judge`` (a config as data), ``config`` (a config file)
    or ``judgments`` (a JSONL file of verdicts produced elsewhere)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    judge: dict[str, Any] | None = None
    config: ConfigPath | None = None
    #: Model string for this member (its own client); None: the ensemble's client.
    model: str | None = None
    judgments: ConfigPath | None = None
    #: In a judgments file: keep rows whose ``judge`` field equals this (files holding many judges).
    judge_name: str | None = None
    #: In a judgments file: dotted path of the value, e.g. ``score`` (default: score, else label)
    #: or ``prediction.coherence`` (the published reference files).
    field: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Member:
        given = [n for n in ("judge", "config", "judgments") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(f"member {self.name!r} needs exactly one of judge, config, judgments (got {given or 'none'})")
        return self

    def judge_config(self) -> JudgeConfig | None:
        if self.config is not None:
            return load_judge(self.config)
        if self.judge is not None:
            return judge_from_dict(self.judge, f"member {self.name}")
        return None


class EnsembleJudge(JudgeConfig):
    """Several judges, one verdict per item: plain aggregations, learned ones, per-task selection, an LLM vote."""

    registry_name: ClassVar[str] = "ensemble"
    trainable: ClassVar[bool] = True
    omitted_at_default: ClassVar[dict[str, Any]] = {"ties": "half"}  # added later: older configs keep their digest
    kind: Literal["ensemble"] = "ensemble"
    members: tuple[Member, ...]
    aggregate: Aggregate = "mean"
    aspect: str | None = None
    #: Dev metric for ``best`` selection (and reported for every member when fitting).
    metric: Metric = "spearman"
    #: ``metric: accuracy`` on pairwise items: what a member's tie (value 0.5) earns, ``half`` a point
    #: (LLMBar; what ``judgelab meta --ties half`` reports) or nothing (``wrong``).
    ties: Literal["half", "wrong"] = "half"
    #: Item field naming the task for ``best``: subset, dataset, group_id, or ``extra.KEY``.
    task_field: str = "subset"
    #: Fraction cut from each end for ``trimmed_mean`` (scipy.stats.trim_mean).
    trim: float = Field(0.2, ge=0, lt=0.5, allow_inf_nan=False)
    #: ``stack``: ridge regression, or logistic regression over labels (pairwise / graded).
    stacker: Literal["ridge", "logistic"] = "ridge"
    #: ``llm_vote``: the score scale the aggregator writes on (default: the items' scale).
    scale: tuple[float, float] | None = None
    #: ``llm_vote``: room for the aggregator's explanation and rating.
    max_tokens: MaxTokens = 256
    seed: Seed = 0
    # -- learned by fit -----------------------------------------------------------------------
    #: ``best``: task -> member name ("*": the fallback for tasks not seen at fit time).
    selection: dict[str, str] | None = None
    #: Dev metric per task and member: the selection table (PanguIR eq. 1).
    selection_table: dict[str, dict[str, float | None]] | None = None
    #: ``weighted`` / ``stack``: imputation means, scaler, coefficients, intercept, classes.
    learned: dict[str, list[float] | list[str]] | None = None

    @model_validator(mode="after")
    def _unique_names(self) -> EnsembleJudge:
        names = [m.name for m in self.members]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"members need distinct names, got {names}")
        return self

    @property
    def uses_llm(self) -> bool:  # type: ignore[override]
        return self.aggregate == "llm_vote" or any(
            (cfg := m.judge_config()) is not None and cfg.uses_llm for m in self.members)

    @property
    def fitted(self) -> bool:
        if self.aggregate == "best":
            return self.selection is not None
        return self.aggregate not in _LEARNED or self.learned is not None

    @classmethod
    def contract_example(cls, folder: Path) -> ContractExample:
        from judgelab.judges.contract import ContractExample, pointwise_items, rating_reply

        members = tuple(Member(name=name, judge={"kind": "prompted", "aspect": "coherence", "criteria": criteria})
                        for name, criteria in (("plain", "Coherence."), ("detailed", "Coherence: well organised.")))
        return ContractExample(cls(members=members, aspect="coherence"), pointwise_items("coherence"), rating_reply,
                               unfitted=cls(members=members, aspect="coherence", aggregate="weighted"))

    # -- members ------------------------------------------------------------------------------
    def with_member_file(self, name: str, path: str | Path) -> EnsembleJudge:
        """This ensemble with member ``name`` reading its verdicts from ``path`` (a judgments file
        or run folder): a fitted ensemble applied to new items whose member verdicts live in
        another file. A judgments member keeps its ``field`` and ``judge_name``; a judge member
        becomes a judgments member (its verdicts were produced elsewhere). What was learned stays."""
        names = [m.name for m in self.members]
        if name not in names:
            raise ConfigError(f"{term('member')} {name}=...: the ensemble has no member {name!r}; members: "
                              f"{', '.join(names)}")
        if not judgments_file(path).is_file():
            raise ConfigError(f"{term('member')} {name}={path}: judgments file not found: {judgments_file(path)}")
        old = self.members[names.index(name)]
        keep = {"field": old.field, "judge_name": old.judge_name} if old.judgments is not None else {}
        new = Member(name=name, judgments=Path(path), **keep)
        return self.model_copy(update={"members": tuple(new if m.name == name else m for m in self.members)})

    def member_judgments(self, items: Sequence[Item], client: Client | None) -> dict[str, dict[str, Judgment]]:
        """member name -> item id -> that member's judgment (files: rows matching the items)."""
        wanted = {item.id for item in items}
        found: dict[str, dict[str, Judgment]] = {}
        for member in self.members:
            cfg = member.judge_config()
            if cfg is None:
                found[member.name] = _read_judgments_file(member, wanted)
            else:
                found[member.name] = {j.item_id: j for j in _run_member(member, cfg, items, client)}
        return found

    def _matrix(self, items: Sequence[Item], by_member: dict[str, dict[str, Judgment]]) -> np.ndarray:
        """items x members of member values, NaN where a member has no usable verdict."""
        values = np.full((len(items), len(self.members)), np.nan)
        for c, member in enumerate(self.members):
            judged = by_member[member.name]
            for r, item in enumerate(items):
                value = _value_of(judged.get(item.id))
                if value is not None:
                    values[r, c] = value
        return values

    # -- fit ------------------------------------------------------------------------------------
    def fit(self, items: Sequence[Item], client: Client | None = None, *, out_dir: Path | None = None) -> EnsembleJudge:
        """Learn from labelled dev items: the per-task selection, the weights or the stacker."""
        if self.aggregate not in _LEARNED:
            raise ConfigError(f"aggregate={self.aggregate!r} learns nothing; fit applies to {', '.join(_LEARNED)}")
        items = list(items)
        aspect = infer_aspect(items, self.aspect)
        by_member = self.member_judgments(items, client)
        values = self._matrix(items, by_member)
        human = np.array([_number(human_value(item, aspect)) for item in items], dtype=float)
        labelled = ~np.isnan(human)
        if labelled.sum() < 2:
            raise ConfigError(f"ensemble fit needs labelled dev items (aspect {aspect!r}); {int(labelled.sum())} found")
        table = self._selection_table(items, values, human, pairwise=items[0].kind == "pairwise")
        update: dict[str, Any] = {"selection_table": table, "aspect": aspect}
        if self.aggregate == "best":
            update["selection"] = {task: _argbest(scores) for task, scores in table.items()}
        else:
            groups = np.array([item.group for item in items], dtype=object)[labelled]
            update["learned"] = self._fit_linear(values[labelled], human[labelled], groups)
        return self.model_copy(update=update)

    def _selection_table(self, items: Sequence[Item], values: np.ndarray, human: np.ndarray,
                         pairwise: bool) -> dict[str, dict]:
        tasks = np.array([task_of(item, self.task_field) for item in items], dtype=object)
        table = {"*": self._member_scores(values, human, pairwise)}
        for task in sorted(set(tasks)):
            rows = tasks == task
            table[str(task)] = self._member_scores(values[rows], human[rows], pairwise)
        return table

    def _member_scores(self, values: np.ndarray, human: np.ndarray, pairwise: bool) -> dict[str, float | None]:
        return {m.name: metric_value(self.metric, human, values[:, c], ties=self.ties, pairwise=pairwise)
                for c, m in enumerate(self.members)}

    def _fit_linear(self, values: np.ndarray, human: np.ndarray, groups: np.ndarray) -> dict[str, list]:
        if self.aggregate == "stack" and self.stacker == "ridge":
            return fit_stacker(values, human, groups)  # judges/stacking.py: penalty chosen by group CV
        from sklearn.impute import SimpleImputer
        from sklearn.linear_model import LinearRegression, LogisticRegression
        from sklearn.preprocessing import StandardScaler

        imputer = SimpleImputer(strategy="mean", keep_empty_features=True).fit(values)
        scaler = StandardScaler().fit(imputer.transform(values))
        x = scaler.transform(imputer.transform(values))
        if self.aggregate == "weighted":
            # Non-negative weights: a weighted mean, not a model free to flip a judge's sign.
            model = LinearRegression(positive=True).fit(x, human)
            coef, intercept, classes = model.coef_[None, :], np.atleast_1d(model.intercept_), []
        else:  # the logistic stacker, over labels
            model = LogisticRegression(max_iter=1000).fit(x, human)
            coef, intercept, classes = model.coef_, model.intercept_, model.classes_.tolist()
        return {"impute": imputer.statistics_.tolist(), "mean": scaler.mean_.tolist(),
                "scale": scaler.scale_.tolist(), "coef": np.asarray(coef).ravel().tolist(),
                "intercept": np.asarray(intercept).tolist(), "classes": [float(c) for c in classes]}

    # -- run --------------------------------------------------------------------------------------
    def run(self, items: Sequence[Item], client: Client | None = None, on_judgment: OnJudgment | None = None) -> list[Judgment]:
        if not self.fitted:
            raise ConfigError(f"this ensemble (aggregate={self.aggregate!r}) learns from dev items first: "
                              "`judgelab fit --config ensemble.yaml --data DEV --out fitted.yaml` (or judge.fit(items))")
        items = list(items)
        by_member = self.member_judgments(items, client)
        values = self._matrix(items, by_member)
        if self.aggregate == "llm_vote":
            if client is None:
                raise ConfigError("aggregate='llm_vote' needs a client for the aggregator LLM")
            return self._llm_vote(items, by_member, values, client, on_judgment)
        results = []
        for r, item in enumerate(items):
            results.append(self.emit(self._combined(item, values[r], by_member), on_judgment))
        return results

    def _combined(self, item: Item, row: np.ndarray, by_member: dict[str, dict[str, Judgment]]) -> Judgment:
        usage = sum((j.usage for m in by_member.values() if (j := m.get(item.id)) is not None), Usage())
        member_values = {m.name: (None if np.isnan(v) else float(v)) for m, v in zip(self.members, row, strict=True)}
        if np.isnan(row).all():
            return self.error(item, _no_member_judged(item, by_member), usage)
        extra: dict[str, Any] = {"members": member_values}
        if self.aggregate == "vote":
            pairwise = item.kind == "pairwise"
            labels = [_label_of(by_member[m.name].get(item.id), pairwise) for m in self.members]
            score, label, extra["vote"] = majority(labels, row[~np.isnan(row)], pairwise)
            # A pointwise vote over scores reports the winning score; only a real label is kept as a label.
            return self._verdict(item, score, label if isinstance(label, str | int) else None, extra, usage)
        if self.aggregate == "best":
            task = task_of(item, self.task_field)
            chosen = self.selection.get(task) or self.selection["*"]
            extra["selected"] = chosen
            score = member_values[chosen]
            if score is None:
                return self.error(item, f"the member selected for task {task!r} ({chosen}) did not judge this item", usage)
        elif self.aggregate in ("weighted", "stack"):
            score = self._linear_score(row)
        else:
            present = row[~np.isnan(row)]
            score = float({"mean": np.mean, "median": np.median}.get(self.aggregate, _trimmed(self.trim))(present))
        return self._verdict(item, score, None, extra, usage)

    def _verdict(self, item: Item, score: float | None, label: Any, extra: dict, usage: Usage) -> Judgment:
        if item.kind == "pairwise":
            value = score if score is not None else _PAIRWISE_VALUE.get(label)
            label = label if label is not None else ("a" if value > 0.5 else "b" if value < 0.5 else "tie")
            score = value
        elif score is None and label is not None:
            score = _number(label)
        return Judgment(item_id=item.id, score=score, label=label, aspect=self.aspect, judge=self.name,
                        usage=usage, extra=extra)

    def _linear_score(self, row: np.ndarray) -> float:
        if not self.learned["classes"]:
            return float(predict_stacked(self.learned, row)[0])
        learned = {k: np.asarray(v, dtype=float) for k, v in self.learned.items()}
        x = (np.where(np.isnan(row), learned["impute"], row) - learned["mean"]) / learned["scale"]
        classes = learned["classes"]
        # Logistic stacker: the expected class under its probabilities (a score, so rankings stay fine).
        coef = learned["coef"].reshape(len(learned["intercept"]), -1)
        logits = coef @ x + learned["intercept"]
        if len(classes) == 2:
            logits = np.array([0.0, logits[0]])
        from scipy.special import softmax

        return float(softmax(logits) @ classes)

    # -- LLM vote integration -----------------------------------------------------------------------
    def _llm_vote(self, items: list[Item], by_member: dict[str, dict[str, Judgment]], values: np.ndarray,
                  client: Client, on_judgment: OnJudgment | None) -> list[Judgment]:
        results: list[Judgment | None] = [None] * len(items)
        pending, requests = [], []
        for r, item in enumerate(items):
            verdicts = [(m.name, by_member[m.name].get(item.id)) for m in self.members]
            verdicts = [(name, j) for name, j in verdicts if j is not None and j.ok]
            if not verdicts:
                results[r] = self.emit(self.error(item, _no_member_judged(item, by_member)), on_judgment)
                continue
            scale = self.scale or (item.aspect_scale(self.aspect) if self.aspect else None) or item.scale or (1.0, 5.0)
            messages = render_vote_prompt(item, self.aspect, verdicts, scale)
            requests.append(Request(messages=tuple(messages), temperature=0.0, max_tokens=self.max_tokens, seed=self.seed))
            pending.append((r, scale))
        for (r, scale), outcome in zip(pending, client.complete_all(requests, errors="return"), strict=True):
            results[r] = self.emit(self._vote_judgment(items[r], values[r], by_member, outcome, scale), on_judgment)
        return results  # type: ignore[return-value]

    def _vote_judgment(self, item: Item, row: np.ndarray, by_member: dict[str, dict[str, Judgment]],
                       outcome: Any, scale: tuple[float, float]) -> Judgment:
        from judgelab.errors import RequestError
        from judgelab.parse import explanation_of, parse_preference, parse_rating

        member_usage = sum((j.usage for m in by_member.values() if (j := m.get(item.id)) is not None), Usage())
        extra = {"members": {m.name: (None if np.isnan(v) else float(v)) for m, v in zip(self.members, row, strict=True)}}
        if isinstance(outcome, RequestError):
            return self.error(item, f"the aggregator call failed: {outcome}", member_usage)
        usage = member_usage + usage_of(outcome)
        text = outcome[0].text
        common = dict(item_id=item.id, aspect=self.aspect, judge=self.name, raw=text, usage=usage, extra=extra)
        if item.kind == "pairwise":
            parsed = parse_preference(text, cot="prefix")
            if not parsed.ok:
                return Judgment(status="unparsable", reason=parsed.reason, **common)
            return Judgment(label=parsed.label, score=_PAIRWISE_VALUE[parsed.label], explanation=text.strip(), **common)
        rating = parse_rating(text, scale)
        if not rating.ok:
            return Judgment(status="unparsable", reason=rating.reason, **common)
        # A one-line reply ("... Rating: 4") keeps its whole text as the explanation.
        return Judgment(score=rating.score, explanation=explanation_of(text, rating) or text.strip(), **common)


def render_vote_prompt(item: Item, aspect: str | None, verdicts: list[tuple[str, Judgment]],
                       scale: tuple[float, float]) -> list[dict[str, str]]:
    """The aggregator's prompt (``prompts/ensemble/vote.j2``): the item and every member's verdict and reason."""
    from judgelab.prompts.render import environment

    rows = [(name, _fmt(j.score), j.label, (j.explanation or "").strip()) for name, j in verdicts]
    text = environment().get_template("ensemble/vote.j2").render(
        item=item, aspect=aspect, verdicts=rows, low=_fmt(scale[0]), high=_fmt(scale[1]))
    return [{"role": "user", "content": text.strip()}]


def _fmt(value: float | None) -> str:
    return "none" if value is None else f"{value:g}" if float(value).is_integer() else f"{value:.2f}"


# -- helpers ----------------------------------------------------------------------------------------
def _no_member_judged(item: Item, by_member: dict[str, dict[str, Judgment]]) -> str:
    """Why an item has no verdict: each member's own reason (a failed call, an unparsable reply)."""
    reasons = [f"{name}: {judged[item.id].reason or judged[item.id].status}" for name, judged in by_member.items()
               if item.id in judged and not judged[item.id].ok]
    return "no member judged this item (all failed or absent)" + (f"; {'; '.join(reasons)}" if reasons else "")


def task_of(item: Item, task_field: str) -> str:
    """The item's task for per-task selection: a field (subset, dataset, group_id) or ``extra.KEY``."""
    if task_field.startswith("extra."):
        value = item.extra.get(task_field.split(".", 1)[1])
    else:
        value = getattr(item, task_field, None)
    return str(value) if value is not None else "*"


def metric_value(metric: str, human: np.ndarray, judge: np.ndarray, *, ties: str = "half",
                 pairwise: bool = False) -> float | None:
    """Agreement of one member with the humans over the items both have; None if undefined.

    ``accuracy`` on pairwise items reads a member's value as the ensemble's label does (``a``
    above 0.5, ``b`` below, ``tie`` at 0.5) and scores it as ``metrics.pairwise_accuracy`` with
    ``ties``; on other items it is the share of values that round (to halves) to the human one."""
    both = ~np.isnan(human) & ~np.isnan(judge)
    h, j = human[both], judge[both]
    if len(h) < 2:
        return None
    if metric == "accuracy" and pairwise:
        from judgelab.metrics.pairwise import accuracy_credit

        return float(np.mean(accuracy_credit(_pairwise_labels(h), _pairwise_labels(j), ties)))
    if metric == "accuracy":
        return float(np.mean(np.round(j * 2) / 2 == h))
    if np.ptp(h) == 0 or np.ptp(j) == 0:
        return None
    fn = {"spearman": stats.spearmanr, "pearson": stats.pearsonr, "kendall": stats.kendalltau}[metric]
    return float(fn(h, j)[0])


def _argbest(scores: dict[str, float | None]) -> str:
    ranked = [(v, name) for name, v in scores.items() if v is not None]
    if not ranked:
        return next(iter(scores))  # nothing measurable on this task: the first member, as listed
    return max(ranked, key=lambda pair: pair[0])[1]  # ties: the first listed (max keeps the first)


def _trimmed(trim: float):
    return lambda values: stats.trim_mean(values, trim)


def _number(value: Any) -> float:
    if value is None:
        return float("nan")
    if isinstance(value, str):
        if value in _PAIRWISE_VALUE:
            return _PAIRWISE_VALUE[value]
        try:
            return float(value)
        except ValueError:
            return float("nan")
    return float(value)


def _value_of(judgment: Judgment | None) -> float | None:
    if judgment is None or not judgment.ok:
        return None
    if judgment.score is not None:
        return judgment.score
    value = _number(judgment.label)
    return None if np.isnan(value) else value


def _label_of(judgment: Judgment | None, pairwise: bool) -> Any:
    """The label a member votes for: its label, else its score (pairwise: read as a, b or tie)."""
    if judgment is None or not judgment.ok:
        return None
    if judgment.label is not None or judgment.score is None:
        return judgment.label
    if pairwise:
        return "a" if judgment.score > 0.5 else "b" if judgment.score < 0.5 else "tie"
    return judgment.score


def _pairwise_labels(values: np.ndarray) -> np.ndarray:
    return np.where(values > 0.5, "a", np.where(values < 0.5, "b", "tie")).astype(object)


def majority(labels: list[Any], values: np.ndarray, pairwise: bool) -> tuple[float | None, Any, dict[str, Any]]:
    """(score, label, how it was decided) of a vote over the members' labels.

    The label with the most votes wins. On pairwise items a member's ``tie`` is no vote for
    either output (it abstains), so a tie never wins because many members were unsure. When the
    top labels have as many votes (or no member voted), the vote falls back to the members'
    values (``values``, those present): pairwise, their mean decides (above 0.5 ``a``, below
    ``b``, exactly 0.5 a ``tie``); numeric labels, the tied label nearest their mean (equally near
    two: the mean of the tied labels, as a score); other labels, the first-listed member's.
    """
    present = [label for label in labels if label is not None and not (pairwise and label == "tie")]
    counts = Counter(present)
    top = max(counts.values(), default=0)
    tied = [label for label in dict.fromkeys(present) if counts[label] == top]
    how: dict[str, Any] = {"counts": {str(label): n for label, n in counts.items()}}
    if len(tied) == 1:
        winner = tied[0]
    elif not tied and not pairwise:  # no member gave a label (cannot happen for members with values)
        return (float(np.mean(values)) if len(values) else None), None, how
    else:
        how["tie_break"] = "members' mean value" if pairwise or _numeric(tied) else "first-listed member"
        if pairwise:
            mean = float(np.mean(values)) if len(values) else 0.5
            winner = "a" if mean > 0.5 else "b" if mean < 0.5 else "tie"
        elif _numeric(tied):
            mean = float(np.mean(values))
            distance = [abs(float(label) - mean) for label in tied]
            nearest = [label for label, d in zip(tied, distance, strict=True) if d == min(distance)]
            if len(nearest) > 1:
                return float(np.mean([float(label) for label in nearest])), None, how
            winner = nearest[0]
        else:
            winner = tied[0]
    number = _number(winner)
    return (None if np.isnan(number) else number), winner, how


def _numeric(labels: list[Any]) -> bool:
    return all(isinstance(label, int | float) and not isinstance(label, bool) for label in labels)


def _run_member(member: Member, cfg: JudgeConfig, items: Sequence[Item], client: Client | None) -> list[Judgment]:
    if not cfg.uses_llm:
        from judgelab.llm.backends.none import no_llm_client

        with no_llm_client() as none:
            return cfg.run(items, none)
    if member.model is not None:
        from judgelab.llm.resolve import make_client

        with make_client(member.model) as own:
            return cfg.run(items, own)
    if client is None:
        raise ConfigError(f"member {member.name!r} calls an LLM: give the ensemble a client (or the member a model)")
    return cfg.run(items, client)


def _read_judgments_file(member: Member, wanted: set[str]) -> dict[str, Judgment]:
    """The member's verdicts on the wanted items, read by ``load_judgments`` (our judgments.jsonl,
    or others' files through ``field`` and ``judge_name``)."""
    path = judgments_file(member.judgments)
    if not path.is_file():
        raise ConfigError(f"member {member.name!r}: judgments file not found: {path}")
    stat = path.stat()
    everything = _parsed_file(str(path.resolve()), stat.st_mtime_ns, stat.st_size, member.field)
    rows: Sequence[Judgment] = everything
    if member.judge_name:
        try:
            rows = select_judge(everything, member.judge_name, str(path))
        except ConfigError:
            rows = []  # no such judge in the file: warned about below, as a file covering none of the items
        judges = {j.judge for j in rows}
        if len(judges) > 1:
            raise ConfigError(f"member {member.name!r}: judge_name {member.judge_name!r} matches {len(judges)} judges "
                              f"in {path} ({', '.join(sorted(judges)[:5])}, ...); name one")
    # Verdicts read from a file were paid for by the run that wrote them: they cost this run nothing.
    found = {j.item_id: j.model_copy(update={"judge": member.name, "usage": Usage()}) for j in rows if j.item_id in wanted}
    if wanted and not found:
        # Likely the wrong file (or ids): the member then only counts through imputed values. One
        # warning location (member_judgments), so Python's default filter shows it once, not per fit/run/fold.
        which = f"rows with judge {member.judge_name!r}" if member.judge_name else "rows"
        warnings.warn(f"ensemble member {member.name!r}: {path} has no {which} for any of the {len(wanted)} items "
                      "judged, so it contributes no values (learned aggregations impute them)",
                      DataWarning, stacklevel=2)
    return found


@functools.lru_cache(maxsize=256)
def _parsed_file(path: str, mtime_ns: int, size: int, field: str | None) -> tuple[Judgment, ...]:
    """Every row of a judgments file, parsed once per file version and field: fit and run (and
    cross-validation folds) read the same files again. Callers must not modify the judgments."""
    return tuple(load_judgments(path, field=field))


def selection_frame(judge: EnsembleJudge):
    """The fitted selection table (tasks x members, the dev metric) with the chosen member per task."""
    import pandas as pd

    if judge.selection_table is None:
        raise ConfigError("the ensemble is not fitted: no selection table yet")
    frame = pd.DataFrame(judge.selection_table).T
    if judge.selection:
        frame["selected"] = [judge.selection.get(task, "") for task in frame.index]
    return frame
