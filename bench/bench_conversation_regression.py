"""Whether judging Topical-Chat as conversations (`messages`) agrees with people as well as judging its `source` text.

    .venv/bin/python -m bench.bench_conversation_regression --work ~/.cache/judgelab/bench-conversation-regression --write
    .venv/bin/python -m bench.bench_conversation_regression --work ... --report-only     # the figures from the records

Three ways of judging the same 252 Topical-Chat responses, with the embedded default model and the embedded
default strategy (the rating first, read from the model's probabilities; HPSS's native 1-3 scale, the
benchmark's human-written criteria), on coherence and engagingness:

* ``source``: the item as the benchmark gives it (history text, fact, response), the ``dialogue`` prompt family;
* ``turn``: the item converted to a chat (:func:`to_conversation`: the history's turns alternate user and
  assistant so that the response is the last assistant reply) with the fact as a ``contexts`` passage, judged
  by the same ``dialogue`` family: the unit is the reply, as people rated it. Only the shape differs from
  ``source`` (the history derived from the messages, ``role: text`` lines; the fact derived from the passage):
  this is the regression check;
* ``conversation``: the same chat with the fact a system message first, judged by ``family: conversation``,
  which rates the assistant over every turn. Another unit than people rated (the assistant's earlier turns
  were written by Topical-Chat's people, and it is one reply that was scored), so a difference here measures
  the unit, not the shape. The fact is a system note: this family shows the messages only.

Reported per aspect and way: Spearman with the human scores at the dataset and group levels with 95% bootstrap
intervals over dialogues (what ``judgelab meta --baseline`` computes,
``judgelab.metrics.compare.compare_scores``), and each way's paired difference from ``source`` on the same
resamples. Judgments go to files under ``--work`` and every call to its cache, so a rerun resumes.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_judge_quality import NATIVE_SCALE, Recorder, benchmarks_dir, read_records
from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import Item, JsonlAppender, load_items
from judgelab.judges.options import EMBEDDED_DEFAULT
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.models import DEFAULT_MODEL
from judgelab.strategy import Strategy

SECTION = "## Topical-Chat as conversations (`bench/bench_conversation_regression.py`)"
DATASET = "topical_chat"
ASPECTS = ("coherence", "engagingness")
WAYS = ("source", "turn", "conversation")
FAMILY = {"source": "dialogue", "turn": "dialogue", "conversation": "conversation"}
#: each way's records file; "messages" is what the conversation way's were called before the turn way
RECORDS = {"source": "source", "turn": "turn", "conversation": "messages"}
FACT_ID = "fact"
#: The benchmark separates the history's turns so (README of the shared benchmarks).
TURN_SEPARATOR = " \n "
NO_FACT = "_nofact"
FACT_NOTE = "Fact the next reply may draw on: {fact}"
LEVELS = ("dataset", "group")


def to_conversation(item: Item, fact_as: str = "system") -> Item:
    """``item`` (a Topical-Chat row: ``source`` the history, ``context`` the fact, ``output`` the response) as a
    chat: the history's turns with roles alternating so that the last turn is the user's, and ``output`` the
    last assistant reply, word for word; the fact (none for ``_nofact``) a system message first (``fact_as``
    ``"system"``) or a ``contexts`` passage with id ``fact`` (``"passage"``). Ids, scores and extras are kept;
    ``source``, ``context`` and ``output`` are left for the item to derive from the messages and passages."""
    if fact_as not in ("system", "passage"):
        raise ValueError(f"fact_as {fact_as!r}: choose system, passage")
    where = f"{DATASET} item {item.id!r}"
    if not item.source or not item.output:
        raise ValueError(f"{where}: needs a source (the history) and an output (the response)")
    turns = [turn.strip() for turn in item.source.split(TURN_SEPARATOR)]
    turns = [turn for turn in turns if turn]
    if not turns:
        raise ValueError(f"{where}: field 'source' holds no turn")
    # counted back from the end: the response answers the last turn, so that one is the user's
    roles = ["user" if (len(turns) - k) % 2 else "assistant" for k in range(len(turns))]
    messages = [{"role": role, "content": turn} for role, turn in zip(roles, turns, strict=True)]
    fact = (item.context or "").strip()
    fact = "" if fact == NO_FACT else fact
    if fact and fact_as == "system":
        messages.insert(0, {"role": "system", "content": FACT_NOTE.format(fact=fact)})
    messages.append({"role": "assistant", "content": item.output})
    keep = item.model_dump(exclude={"source", "context", "output", "messages", "contexts"}, exclude_none=True)
    passages = [{"id": FACT_ID, "text": fact}] if fact and fact_as == "passage" else []
    return Item.model_validate({**keep, "messages": messages} | ({"contexts": passages} if passages else {}))


def shaped(items: Sequence[Item]) -> dict[str, dict[str, Item]]:
    """Each way's items by id: as given, as a chat with the fact a passage, as a chat with the fact a system note."""
    return {"source": {item.id: item for item in items},
            "turn": {item.id: to_conversation(item, "passage") for item in items},
            "conversation": {item.id: to_conversation(item) for item in items}}


def make_judge(way: str, aspect: str) -> PromptedJudge:
    """The embedded default (rating first, logprob score) on HPSS's native scale, the benchmark's criteria."""
    strategy = Strategy.mt_bench(native_scale=NATIVE_SCALE[DATASET]).replace(cot=EMBEDDED_DEFAULT["cot"])
    return PromptedJudge(aspect=aspect, family=FAMILY[way], criteria_dataset=DATASET, strategy=strategy,
                         score=EMBEDDED_DEFAULT["score"])


def records_path(work: Path, model: str, way: str, aspect: str) -> Path:
    return (work / Path(model).name.removesuffix(".gguf")
            / f"{RECORDS[way]}-{aspect}-{make_judge(way, aspect).digest()}.jsonl")


def judge_aspect(items: Sequence[Item], aspect: str, client: Any, work: Path, model: str,
                 deadline: float = math.inf) -> dict[str, dict[str, dict[str, Any]]]:
    """Judge ``items`` every way, one dialogue at a time (every way of a dialogue before the next, so a run
    stopped at ``deadline``, a ``time.monotonic()`` value, leaves items judged every way), skipping what the
    records under ``work`` already hold; each judgment's record is appended as it comes."""
    by_way = shaped(items)
    paths = {way: records_path(work, model, way, aspect) for way in WAYS}
    records = {way: read_records(paths[way]) for way in WAYS}
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.group, []).append(item)
    for group in groups.values():
        todo = {way: [by_way[way][item.id] for item in group if item.id not in records[way]] for way in WAYS}
        if not any(todo.values()):
            continue
        if time.monotonic() > deadline:
            log(f"{aspect}: the time budget is spent; {sum(len(r) for r in records.values())} judgments so far")
            break
        for way in WAYS:
            if todo[way]:
                _judge_into(paths[way], make_judge(way, aspect), todo[way], client, by_way[way], records[way])
    return records


def _judge_into(path: Path, judge: PromptedJudge, todo: list[Item], client: Any, by_id: dict[str, Item],
                records: dict[str, dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    appender = JsonlAppender(path)
    try:
        judge.run(todo, client, on_judgment=Recorder(appender, by_id, records))
    finally:
        appender.close()


def figures(items: Sequence[Item], aspect: str, ways: dict[str, dict[str, dict[str, Any]]],
            resamples: int, seed: int = 0) -> list[dict[str, Any]]:
    """Per level: each way's Spearman with the people, and each chat way minus source paired over the same
    resamples of dialogues (an item a way could not score is left out of every way)."""
    from judgelab.metrics.compare import compare_scores

    human = [_number(item.human_score(aspect)) for item in items]
    every = [all(item.id in ways.get(way, {}) for way in WAYS) for item in items]
    if sum(every) < 2:
        log(f"{aspect}: {sum(every)} items judged every way: no figures")
        return []

    def scores(way: str) -> list[float]:
        return [_number(ways[way][item.id].get("logprob")) if kept else math.nan
                for item, kept in zip(items, every, strict=True)]

    groups = [item.group for item in items]
    compared = {way: compare_scores(human, scores(way), scores("source"), groups, levels=LEVELS, methods=("spearman",),
                                    n_resamples=resamples, seed=seed) for way in WAYS[1:]}
    rows = []
    for level in LEVELS:
        row: dict[str, Any] = {"aspect": aspect, "level": level, "differences": {},
                               "seconds": {way: _seconds(ways[way]) for way in WAYS}}
        for way, by_level in compared.items():
            comparison = by_level[level]["spearman"]
            row["source"], row[way] = comparison.a.to_dict(), comparison.b.to_dict()
            row["differences"][way] = {"value": comparison.difference, "note": comparison.note,
                                       "ci": list(comparison.ci) if comparison.ci else None}
        rows.append(row)
    return rows


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _seconds(records: dict[str, dict[str, Any]]) -> float:
    fresh = [r["elapsed_s"] for r in records.values() if not r["cached"]]
    return float(np.median(fresh)) if fresh else float("nan")


def _estimate(est: dict[str, Any]) -> str:
    if est["value"] is None:
        return "n/a"
    ci = f" [{est['ci'][0]:.2f}, {est['ci'][1]:.2f}]" if est["ci"] else ""
    return f"{est['value']:.3f}{ci}"


def verdict(difference: dict[str, Any]) -> str:
    """What a paired difference's interval says: it spans zero, or one way is better."""
    if difference["ci"] is None:
        return "no interval"
    low, high = difference["ci"]
    if low <= 0 <= high:
        return "spans zero"
    return "better" if low > 0 else "**worse**"


def doc(rows: list[dict[str, Any]], n_items: int, n_dialogues: int, model: str, command: str, load: str,
        resamples: int = 1000) -> str:
    out = [f"Machine: {describe_machine()}; load before the run {load}. Command: `{command}`. Model `{model}` "
           "(embedded, greedy). The embedded default strategy: the rating first on HPSS's native 1-3 scale, "
           "the expected rating from the model's probabilities, Topical-Chat's human-written criteria. "
           f"Items: {n_items} Topical-Chat responses ({n_dialogues} dialogues x 6 systems). `source`: the item as given, "
           "the `dialogue` prompt family. `turn`: the item converted to a chat (turns alternating user / assistant, "
           "the response the last assistant reply) with the fact a `contexts` passage, the same `dialogue` family: "
           "the unit people rated, only the shape differs (the regression check). `conversation`: the same chat with "
           "the fact a system message first, the `conversation` family, which rates the assistant over every turn: "
           "another unit than people rated. Spearman with the human scores; 95% intervals from "
           f"{resamples:,} bootstrap resamples of dialogues, each difference (way minus source) paired on the same "
           "resamples, as `judgelab meta --baseline` computes them. Group level: the mean over dialogues of the "
           "Spearman among its 6 responses. s/item: median over fresh calls.", "",
           "| aspect | level | n (dialogues) | source | turn | turn - source [95% CI] | | conversation | "
           "conversation - source [95% CI] | | s/item source / turn / conversation |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for way in WAYS[1:]:
            d = r["differences"][way]
            ci = f" [{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}]" if d["ci"] else ""
            cells.append(f"{_estimate(r[way])} | {d['value']:+.3f}{ci} | {verdict(d)}")
        seconds = " / ".join(f"{r['seconds'][way]:.1f}" for way in WAYS)
        out.append(f"| {r['aspect']} | {r['level']} | {r['source']['n']} ({r['source'].get('n_groups', '?')}) | "
                   f"{_estimate(r['source'])} | {' | '.join(cells)} | {seconds} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder of the judgments and the call cache")
    parser.add_argument("--data", type=Path, default=None, help="topical_chat.jsonl (default: the shared copy)")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--aspects", default=",".join(ASPECTS), help="comma-separated, in the order judged")
    parser.add_argument("--limit", type=int, default=None, help="the first N dialogues only (a timing run)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="start no new dialogue after this many minutes (the figures are then on those judged)")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--report-only", action="store_true", help="figures from the records, no call")
    parser.add_argument("--write", action="store_true", help="put the table into docs/benchmarks.md")
    args = parser.parse_args(argv)
    aspects = [a.strip() for a in args.aspects.split(",") if a.strip()]
    items = load_items(args.data or benchmarks_dir() / f"{DATASET}.jsonl")
    if args.limit is not None:
        kept = sorted({item.group for item in items})[:args.limit]
        items = [item for item in items if item.group in kept]
    load = load_avg()
    deadline = time.monotonic() + 60 * args.minutes if args.minutes else math.inf
    args.work.mkdir(parents=True, exist_ok=True)
    client = None
    if not args.report_only:
        from judgelab.llm.resolve import make_client

        client = make_client(args.model, cache=str(args.work / "cache.sqlite"))
    rows: list[dict[str, Any]] = []
    try:
        for aspect in aspects:
            if client is None:
                ways = {way: read_records(records_path(args.work, args.model, way, aspect)) for way in WAYS}
            else:
                ways = judge_aspect(items, aspect, client, args.work, args.model, deadline)
            rows += figures(items, aspect, ways, args.resamples)
    finally:
        if client is not None:
            client.close()
    (args.work / "figures.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    body = doc(rows, len(items), len({item.group for item in items}), args.model,
               command_line("bench.bench_conversation_regression"), load, args.resamples)
    print(body)
    if args.write:
        write_doc_section("bench_conversation_regression", body, heading=SECTION)


if __name__ == "__main__":
    main()
