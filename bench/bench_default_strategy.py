"""Which strategy the embedded model should use by default: an explanation first, or the rating first.

    .venv/bin/python -m bench.bench_default_strategy --write      # ~35 min alone on 2 cores, resumable
    .venv/bin/python -m bench.bench_default_strategy --report-only

The MT-Bench start (``cot=prefix``: the judge explains, then rates; the rating is the number it
wrote) is HPSS's starting point and judgelab's default. On a CPU it is slow (a call generates
70-500 tokens) and a small model's written ratings are nearly constant. The alternative is the
rating first (``cot=none``) read from the model's probabilities over the scale (``score=logprob``,
G-Eval style): one short call. Both are run on the same **held-out** items (the HPSS test split,
never used to tune anything) of SFRES naturalness and Topical-Chat coherence, and on the 30
answers shipped in ``src/judgelab/examples/answers.jsonl`` (a newcomer's own data, with the
example config's task and criteria). One ``cot=prefix`` run gives both of its readings: the written
rating (today's default) and the expected rating at that rating token.

The rule, fixed before the run: the embedded default becomes ``cot=none`` + ``logprob`` when it is
at least 3x faster per item and no task shows the current default better with a paired 95%
bootstrap interval (over sources) that excludes zero. Reported per task and reading: Spearman with
humans [95% cluster-bootstrap CI], the paired difference to today's default [95% CI], the
unparsable share, the share of replies cut at the token cap, and seconds per item (fresh calls
only; this bench has its own cache, so a rerun resumes without paying again).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_judge_quality import NATIVE_SCALE, Recorder, held_in_groups, read_records
from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import Item, JsonlAppender, load_items
from judgelab.judges import load_judge
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.models import DEFAULT_MODEL, judgelab_home
from judgelab.strategy import Strategy

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Default strategy for the embedded model (`bench/bench_default_strategy.py`)"
EXAMPLES = ROOT / "src" / "judgelab" / "examples"
HELD_OUT = "test"  # extra.hpss_split: the HPSS test file, never tuned on
#: (arm, reading): the current default is the prefix arm's written rating.
READINGS = (("prefix", "parsed"), ("prefix", "logprob"), ("none", "parsed"), ("none", "logprob"))
CURRENT, CANDIDATE = ("prefix", "parsed"), ("none", "logprob")


@dataclass(frozen=True)
class Task:
    name: str
    aspect: str
    items: tuple[Item, ...]
    base: PromptedJudge  # the judge before the strategy is set

    def judge(self, arm: str) -> PromptedJudge:
        strategy = self.base.strategy.model_copy(update={"cot": arm})
        return self.base.model_copy(update={"strategy": strategy, "score": "logprob"})


def held_out(dataset: str, aspect: str, n_items: int, seed: int) -> tuple[Item, ...]:
    """The first ``n_items`` held-out items with a human score, whole sources in a seeded order."""
    chosen: list[Item] = []
    for group in held_in_groups(dataset, aspect, seed, split=HELD_OUT):
        if len(chosen) >= n_items:
            break
        chosen += group
    return tuple(chosen)


def tasks(n_items: int, seed: int) -> list[Task]:
    out = []
    for dataset, aspect, name in (("sfres", "naturalness", "SFRES naturalness"),
                                  ("topical_chat", "coherence", "Topical-Chat coherence")):
        base = PromptedJudge(aspect=aspect, strategy=Strategy.mt_bench(native_scale=NATIVE_SCALE[dataset]))
        out.append(Task(name, aspect, held_out(dataset, aspect, n_items, seed), base))
    example = load_judge(EXAMPLES / "helpfulness.yaml")  # its task and criteria; the strategy is set per arm
    base = example.model_copy(update={"strategy": Strategy.mt_bench(native_scale=5)})
    out.append(Task("examples/answers.jsonl helpfulness", "helpfulness",
                    tuple(load_items(EXAMPLES / "answers.jsonl")), base))
    return out


def run_path(out: Path, model: str, task: Task, arm: str) -> Path:
    return out / Path(model).stem / f"{task.name.split()[0].replace('/', '_')}-{task.aspect}-{task.judge(arm).digest()}.jsonl"


def judge_arm(task: Task, arm: str, client: Any, path: Path) -> dict[str, dict[str, Any]]:
    records = read_records(path)
    todo = [item for item in task.items if item.id not in records]
    if not todo:
        return records
    appender = JsonlAppender(path)
    try:
        log(f"{task.name}, cot={arm}: {len(todo)} items to judge")
        task.judge(arm).run(todo, client, on_judgment=Recorder(appender, {item.id: item for item in task.items}, records))
    finally:
        appender.close()
    return records


def _spearman(human: np.ndarray, score: np.ndarray) -> float:
    from scipy.stats import spearmanr

    if np.ptp(human) == 0 or np.ptp(score) == 0:
        return float("nan")
    return float(spearmanr(human, score).statistic)


def paired_figures(task: Task, arms: dict[str, dict[str, dict[str, Any]]], resamples: int, seed: int) -> list[dict]:
    """Per reading: Spearman on the items every reading scored, its cluster-bootstrap CI over sources,
    and the paired difference to the current default on the same resamples."""
    rows = {(arm, key): {r["item_id"]: r.get(key) for r in arms[arm].values()} for arm, key in READINGS}
    common = [item for item in task.items
              if item.human_score(task.aspect) is not None and all(rows[reading].get(item.id) is not None for reading in READINGS)]
    human = np.array([item.human_score(task.aspect) for item in common], dtype=float)
    scores = {reading: np.array([rows[reading][item.id] for item in common], dtype=float) for reading in READINGS}
    groups = sorted({item.group for item in common})
    members = [np.array([i for i, item in enumerate(common) if item.group == g]) for g in groups]
    rng = np.random.default_rng(seed)
    draws = {reading: [] for reading in READINGS}
    for _ in range(resamples):
        picked = np.concatenate([members[i] for i in rng.integers(0, len(members), len(members))])
        for reading in READINGS:
            draws[reading].append(_spearman(human[picked], scores[reading][picked]))
    point = {reading: _spearman(human, scores[reading]) for reading in READINGS}
    out = []
    for reading in READINGS:
        arm, key = reading
        boot = np.array(draws[reading])
        diff = boot - np.array(draws[CURRENT])
        records = list(arms[arm].values())
        fresh = [r for r in records if not r["cached"]]
        budget = task.judge(arm).token_budget
        out.append({
            "task": task.name, "arm": arm, "reading": key, "n": len(common), "sources": len(groups),
            "spearman": point[reading],
            "ci": [float(np.nanpercentile(boot, 2.5)), float(np.nanpercentile(boot, 97.5))],
            "diff": point[reading] - point[CURRENT],
            "diff_ci": [float(np.nanpercentile(diff, 2.5)), float(np.nanpercentile(diff, 97.5))],
            "unparsable": sum(r.get(key) is None for r in records) / max(len(records), 1),
            "cut": sum(r["completion_tokens"] >= budget for r in records) / max(len(records), 1),
            "seconds": float(np.median([r["elapsed_s"] for r in fresh])) if fresh else float("nan"),
            "tokens": float(np.mean([r["completion_tokens"] for r in records])) if records else float("nan"),
        })
    return out


def decide(rows: list[dict]) -> str:
    def row(task: str, reading: tuple[str, str]) -> dict:
        return next(r for r in rows if r["task"] == task and (r["arm"], r["reading"]) == reading)

    names = list(dict.fromkeys(r["task"] for r in rows))
    speedups = [row(t, CURRENT)["seconds"] / row(t, CANDIDATE)["seconds"] for t in names]
    worse = [t for t in names if row(t, CANDIDATE)["diff_ci"][1] < 0]
    verdict = "cot=none + logprob" if min(speedups) >= 3 and not worse else "cot=prefix (unchanged)"
    return (f"Rule fixed before the run: rating first with logprob scores becomes the embedded default when it "
            f"is >= 3x faster per item and no task shows today's default better with a paired 95% CI excluding "
            f"zero. Speed-up per item: {', '.join(f'{s:.1f}x' for s in speedups)}; tasks where today's default "
            f"is significantly better: {', '.join(worse) or 'none'}. Decision: **{verdict}**.")


def _estimate(value: float, ci: list[float], spec: str) -> str:
    """A value and its interval; a reading with one rating for every item has no correlation."""
    if np.isnan(value):
        return "n/a (one rating for all)"
    interval = "" if np.isnan(ci).any() else f" [{ci[0]:{spec[:-3]}.2f}, {ci[1]:{spec[:-3]}.2f}]"
    return f"{value:{spec}}{interval}"


def doc(rows: list[dict], model: str, command: str, load: str) -> str:
    out = [f"Machine: {describe_machine()}; load before the run {load}. Command: `{command}`. Model `{model}` "
           "(embedded, greedy, the judge's own token cap). Items: the HPSS test split (held out: nothing was tuned "
           "on it), whole sources in a seeded order, and the 30 shipped example answers. `prefix/parsed` is "
           "today's default (MT-Bench start: explanation, then the written rating); `prefix/logprob` the expected "
           "rating at that same rating token; `none/*` the rating first. Spearman on the items all four readings "
           "scored, 95% CIs from 1,000 bootstrap resamples over sources, the difference paired on the same "
           "resamples. Seconds: median per item over fresh calls.", "",
           "| task | n (sources) | cot / reading | Spearman [95% CI] | vs today's default [95% CI] | unparsable | "
           "cut at the cap | tokens/item | s/item |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['task']} | {r['n']} ({r['sources']}) | {r['arm']} / {r['reading']} | "
                   f"{_estimate(r['spearman'], r['ci'], '.3f')} | {_estimate(r['diff'], r['diff_ci'], '+.3f')} | "
                   f"{r['unparsable']:.0%} | {r['cut']:.0%} | {r['tokens']:.0f} | {r['seconds']:.1f} |")
    out += ["", decide(rows)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--items", type=int, default=40, help="held-out items per benchmark task (whole sources)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None, help="default $JUDGELAB_HOME/bench-default-strategy")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    out = args.out or judgelab_home() / "bench-default-strategy"
    load = load_avg()
    chosen = tasks(args.items, args.seed)
    client = None
    if not args.report_only:
        from judgelab.llm.resolve import make_client

        client = make_client(args.model, cache=str(out / "cache.sqlite"))
    rows: list[dict] = []
    try:
        for task in chosen:
            arms = {}
            for arm in ("none", "prefix"):  # the short arm first: a run stopped early still has it
                path = run_path(out, args.model, task, arm)
                arms[arm] = judge_arm(task, arm, client, path) if client else read_records(path)
            rows += paired_figures(task, arms, args.resamples, args.seed)
    finally:
        if client is not None:
            client.close()
    (out / "figures.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    body = doc(rows, args.model, command_line("bench.bench_default_strategy"), load)
    print(body)
    if args.write:
        write_doc_section("bench_default_strategy", body, heading=SECTION)


if __name__ == "__main__":
    main()
