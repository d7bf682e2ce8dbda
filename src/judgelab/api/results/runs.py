"""``jl.judge``'s and ``jl.load``'s results (judgelab.api.results)."""

from __future__ import annotations

from dataclasses import dataclass, field

from judgelab.api import reprs
from judgelab.data.dataset import SHOWN_ROWS, Dataset
from judgelab.data.io import judgments_frame
from judgelab.data.sources import SourceData
from judgelab.judges.base import JudgeConfig
from judgelab.report import notebook
from judgelab.runner.run import RunResult


@dataclass
class JudgeRun(RunResult):
    """``jl.judge``'s run: ``judgments`` (one per item, in order), ``counts`` by status, ``usage`` (calls,
    cache hits, tokens, cost, time), ``metrics`` (agreement with the items' human labels, as metrics.json),
    ``folder`` (the run folder, with ``out=``), and the ``config`` judged with (save it with
    ``run.config.save("judge.yaml")``)."""

    items: Dataset | None = field(default=None, repr=False)
    config: JudgeConfig | None = field(default=None, repr=False)

    @property
    def aspect(self) -> str | None:
        return getattr(self.config, "aspect", None)

    def to_pandas(self):
        """The judgments, one row each, with the item's human value (``human``) beside them when it has one."""
        frame = judgments_frame(list(self.judgments))
        if self.items is not None and len(frame):
            from judgelab.metrics.align import human_value

            by_id = {item.id: item for item in self.items}
            human = [human_value(by_id[i], self.aspect) if i in by_id else None for i in frame["item_id"]]
            if any(value is not None for value in human):
                frame.insert(frame.columns.get_loc("item_id") + 1, "human", human)
        return frame

    def __repr__(self) -> str:
        from judgelab.report.html import estimate_rows

        return reprs.run(self, estimate_rows(self.metrics))

    def _repr_html_(self) -> str:
        title = (f"judge run: {len(self.judgments)} judgments of {self.aspect or 'the items'}"
                 + (f" in {self.folder}" if self.folder else ""))
        return notebook.run_view(list(self.judgments), self.counts, self.usage, self.metrics, self.items, self.aspect,
                                 title)


class Source(SourceData):
    """``jl.load`` of another tool's output: ``source`` (the tool), ``items``, ``judgments`` (its judges'
    verdicts), ``notes`` (what its reader left out, with counts), ``judges()``. Every verb takes it as data."""

    def to_pandas(self):
        """One row per judgment, joined with its item's fields (``item_id`` = ``id``)."""
        items = self.items.to_pandas()
        return judgments_frame(self.judgments).merge(items, how="left", left_on="item_id", right_on="id",
                                                     suffixes=("", "_item"))

    def __repr__(self) -> str:
        return reprs.source(self)

    def _repr_html_(self) -> str:
        kinds = "/".join(sorted(self.items.kinds))
        judges = ", ".join(self.judges()) or "none named"
        shown = [(j.item_id, j.judge, j.score if j.score is not None else j.label, j.status)
                 for j in self.judgments[:SHOWN_ROWS]]
        more = f" (the first {SHOWN_ROWS})" if len(self.judgments) > SHOWN_ROWS else ""
        return notebook.view(f"{self.source} output: {len(self.items)} {kinds} items, {len(self.judgments)} judgments",
                             lines=[f"judges: {judges}", *self.notes],
                             tables=[(f"judgments{more}", ("item", "judge", "verdict", "status"), shown)])


__all__ = ["JudgeRun", "Source"]
