"""DevAI judgments (Agent-as-a-Judge, Zhuge et al. 2024): a clone of github.com/metauto-ai/agent-as-a-judge,
its ``benchmark/`` folder, or its ``judgment/`` folder. ``judgment/<agent>/`` holds, per
developer agent (MetaGPT, GPT-Pilot, OpenHands), one JSON file per task (``<task>.json``: ``name``,
``query``, ``requirements`` with ``requirement_id``, ``criteria``, ``category``, ``prerequisites`` and
``satisfied``) in a folder per judge: ``human_as_a_judge/`` (the human evaluators' consensus),
``agent_as_a_judge/<setting>/`` (gray_box, black_box) and any other ``<judge>/<setting>/``.

Each requirement of each agent's task becomes an item (id ``<agent>/<task>/<requirement_id>``, group
``<task>/<requirement_id>``: the same requirement across agents; system the agent; ``source`` the task's
query; ``extra.requirements`` the one requirement, so ``kind: requirements`` judges it as it is). Where
the folder beside ``judgment/`` holds the run (``trajectories/<agent>/<task>.json`` in DevAI's trajectory
schema, ``workspaces/<agent>/<task>/``), the item's ``trajectory`` is its steps and its ``output`` the
workspace (a file listing and the text files, bounded), each file also a passage of ``contexts``;
Agent-as-a-Judge's own cache in the workspace (``judge/``) is left out.

Each judge file's verdict is a judgment (judge: its folder, ``agent_as_a_judge/gray_box``): label
``satisfied`` / ``unsatisfied``, score 1 / 0; ``null`` (not judged) is an unparsable judgment, counted.
The human value is the item's ``scores.satisfied`` (1 / 0): the consensus file
(``human_as_a_judge/<task>.json``), else the majority of the individual evaluators
(``human_as_a_judge/<evaluator>/<task>.json``, each also a judgment ``human_as_a_judge/<evaluator>``; a
tie gives no human value, counted). The public repository publishes the consensus only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.sources import SourceData
from judgelab.data.sources._read import dataset, item, json_document, need, typed
from judgelab.errors import DataError
from judgelab.files import regular_file

NAME = "devai"
HUMAN = "human_as_a_judge"
ASPECT = "satisfied"
EXPECTED = "a DevAI judgment file (name, query, requirements with requirement_id, criteria, satisfied)"
#: Bounds on what a workspace gives an item: per file and in all (the judge's prompt must stay small).
FILE_CHARS, WORKSPACE_CHARS, PASSAGE_CHARS = 2_000, 12_000, 20_000
SKIPPED_DIRS = {"judge", "__pycache__", ".git", "env", "venv", ".venv", "node_modules"}


def claims(path: Path) -> bool:
    return path.is_dir() and _judgment_folder(path) is not None


def read(path: Path, *, partial: bool = False) -> SourceData:
    folder = _judgment_folder(path)
    if folder is None:
        raise DataError(f"no DevAI judgment folder here: expected <agent>/{HUMAN}/<task>.json or "
                        "<agent>/agent_as_a_judge/<setting>/<task>.json (under judgment/)", path)
    read_ = _Reader(folder.parent)
    for agent in sorted(p for p in folder.iterdir() if p.is_dir() and _judge_folders(p)):
        for judged in sorted(agent.rglob("*.json")):
            read_.file(agent.name, judged, judged.parent.relative_to(agent).as_posix())
    return read_.result(str(path))


def _judgment_folder(path: Path) -> Path | None:
    """The folder holding ``<agent>/<judge>/...``: ``path`` itself, its ``judgment/``, or a clone's
    ``benchmark/judgment/``."""
    for folder in (path / "benchmark" / "judgment", path / "judgment", path):
        if folder.is_dir() and any(_judge_folders(agent) for agent in folder.iterdir() if agent.is_dir()):
            return folder
    return None


def _judge_folders(agent: Path) -> list[Path]:
    return [p for p in agent.iterdir() if p.is_dir() and p.name.endswith("_as_a_judge")]


@dataclass
class _Requirement:
    """One requirement of one agent's task, as the files give it."""

    agent: str
    task: str
    query: str
    requirement: dict[str, Any]
    file: Path  # the first file that gave it
    consensus: bool | None = None
    evaluators: dict[str, bool] = field(default_factory=dict)
    variants: dict[str, str] = field(default_factory=dict)  # another wording: the file that has it


class _Reader:
    def __init__(self, benchmark: Path):
        self.benchmark = benchmark
        self.requirements: dict[str, _Requirement] = {}
        self.judgments: list[Judgment] = []
        self.counts: Counter[str] = Counter()

    def file(self, agent: str, path: Path, folder: str) -> None:
        where = str(path)
        record = json_document(path)
        if not isinstance(record, dict):
            raise DataError(f"the file is {type(record).__name__}: expected {EXPECTED}", where)
        need(record, ("name", "query", "requirements"), where, None, EXPECTED)
        # the task is the file's name: the published files' ``name`` is sometimes cut short or ends in .json
        task = path.stem
        if typed(record["name"], str, where, "'name'") != task:
            self.counts["file(s) whose 'name' is not the file's name (the file's name is read as the task)"] += 1
        query = typed(record["query"], str, where, "'query'")
        for k, requirement in enumerate(typed(record["requirements"], list, where, "'requirements'")):
            self._requirement(agent, task, query, folder, requirement, path, f"requirements[{k}]")

    def _requirement(self, agent: str, task: str, query: str, folder: str, given: Any, path: Path, at: str) -> None:
        where = str(path)
        given = typed(given, dict, where, at)
        for key in ("requirement_id", "criteria", "satisfied"):
            if key not in given:
                raise DataError(f"no {key!r}: expected each requirement to have requirement_id, criteria and "
                                "satisfied", where, None, f"{at}.{key}")
        rid = typed(given["requirement_id"], (int, str), where, f"{at}.requirement_id")
        criteria = typed(given["criteria"], str, where, f"{at}.criteria")
        verdict = given["satisfied"]
        if verdict is not None and not isinstance(verdict, bool):
            raise DataError(f"the verdict is {verdict!r}: expected true, false or null", where, None,
                            f"{at}.satisfied")
        item_id = f"{agent}/{task}/{rid}"
        known = self.requirements.setdefault(item_id, _Requirement(agent, task, query, given, path))
        if known.requirement["criteria"] != criteria and criteria not in known.variants:
            # the published files reword a requirement once (OpenHands, task 13, requirement 2): the verdicts
            # are on the same requirement id, so they are read; the other wording is kept and noted
            known.variants[criteria] = path.relative_to(self.benchmark).as_posix()
            self.counts["requirement(s) worded differently in two judges' files (the other wording in "
                        "extra.criteria_variants)"] += 1
        if folder == HUMAN:
            known.consensus = verdict
        elif folder.startswith(HUMAN + "/"):
            if verdict is not None:
                known.evaluators[folder] = verdict
            self._judgment(item_id, folder, verdict)
        else:
            self._judgment(item_id, folder, verdict)

    def _judgment(self, item_id: str, judge: str, verdict: bool | None) -> None:
        if verdict is None:
            self.counts[f"{judge}: requirement(s) not judged (satisfied: null) kept as unparsable"] += 1
            self.judgments.append(Judgment(item_id=item_id, judge=judge, aspect=ASPECT, status="unparsable",
                                           reason="the judge gave no verdict (satisfied: null)"))
            return
        self.judgments.append(Judgment(item_id=item_id, judge=judge, aspect=ASPECT, score=float(verdict),
                                       label="satisfied" if verdict else "unsatisfied"))

    def result(self, where: str) -> SourceData:
        runs: dict[tuple[str, str], _Run] = {}
        items = []
        for item_id, req in self.requirements.items():
            run = runs.get((req.agent, req.task))
            if run is None:
                run = runs[(req.agent, req.task)] = _run(self.benchmark, req.agent, req.task)
            items.append(self._item(item_id, req, run))
        self.counts.update({"run(s) without a workspace or trajectory in the folder: their items have no output":
                            sum(not run.found for run in runs.values())})
        notes = tuple(f"{what}: {n}" for what, n in sorted(self.counts.items()) if n)
        return SourceData(NAME, dataset(items, where), self.judgments, notes)

    def _item(self, item_id: str, req: _Requirement, run: _Run) -> Item:
        human = req.consensus
        votes = Counter(req.evaluators.values())
        if human is None and votes:
            human = None if votes[True] == votes[False] else votes[True] > votes[False]
            self.counts["requirement(s) whose human value is the evaluators' majority (no consensus file)"] += 1
        if human is None:
            self.counts["requirement(s) without a human value (no consensus, no majority)"] += 1
        rid = req.requirement["requirement_id"]
        extra = {"task": req.task, "requirement_id": rid, "category": req.requirement.get("category"),
                 "prerequisites": req.requirement.get("prerequisites") or [],
                 "requirements": [{"id": str(rid), "criteria": req.requirement["criteria"]}],
                 "human": {"consensus": req.consensus, "evaluators": req.evaluators}}
        if req.variants:
            extra["criteria_variants"] = req.variants
        record = {"id": item_id, "group_id": f"{req.task}/{rid}", "system_id": req.agent, "dataset": "devai",
                  "source": req.query, "output": run.output, "contexts": run.contexts or None,
                  "trajectory": run.trajectory or None, "scale": [0, 1], "extra": extra,
                  "scores": {} if human is None else {ASPECT: float(human)}}
        return item(record, str(req.file), None)


@dataclass
class _Run:
    """What the folder holds of one agent's run of a task."""

    output: str = ""
    contexts: list[dict[str, Any]] = field(default_factory=list)
    trajectory: list[dict[str, Any]] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.output or self.trajectory)


def _run(benchmark: Path, agent: str, task: str) -> _Run:
    run = _Run()
    trajectory = benchmark / "trajectories" / agent / f"{task}.json"
    if trajectory.is_file():
        run.trajectory = _steps(trajectory)
    workspace = benchmark / "workspaces" / agent / task
    if workspace.is_dir():
        run.output, run.contexts = _workspace(workspace)
    return run


def _steps(path: Path) -> list[dict[str, Any]]:
    """DevAI's trajectory schema (step, user_message, agent {thought, action, agent_name}, environment) as
    judgelab's steps: the action as the call, the environment's response as its observation."""
    where = str(path)
    steps = typed(json_document(path), list, where, "the trajectory")
    out = []
    for k, step in enumerate(steps):
        step = typed(step, dict, where, f"[{k}]")
        agent = typed(step.get("agent") or {}, dict, where, f"[{k}].agent")
        action = typed(agent.get("action"), (str, type(None)), where, f"[{k}].agent.action")
        thought = typed(agent.get("thought"), (str, type(None)), where, f"[{k}].agent.thought")
        observation = typed(step.get("environment"), (str, type(None)), where, f"[{k}].environment")
        name = typed(agent.get("agent_name") or "agent", str, where, f"[{k}].agent.agent_name")
        out.append({"tool": name, "arguments": action, "observation": observation, "thought": thought})
    return out


def _workspace(folder: Path) -> tuple[str, list[dict[str, Any]]]:
    """The workspace as text (every file with its size, then the text files' starts, within bounds) and
    each text file as a passage."""
    files = sorted(f for f in folder.rglob("*") if f.is_file() and not SKIPPED_DIRS & set(
        f.relative_to(folder).parts[:-1]))
    listing, shown, contexts, budget = [], [], [], WORKSPACE_CHARS
    for path in files:
        name = path.relative_to(folder).as_posix()
        size = path.stat().st_size
        listing.append(f"- {name} ({size} bytes)")
        text = _text(path)
        if text is None:
            continue
        contexts.append({"id": name, "text": text[:PASSAGE_CHARS], "title": name})
        if budget > 0:
            part = text[:min(FILE_CHARS, budget)]
            budget -= len(part)
            shown.append(f"=== {name} ===\n{part}" + ("\n[...]" if len(part) < len(text) else ""))
    output = "\n".join(["Files in the workspace:", *listing, *([""] + shown if shown else [])])
    return output, contexts


def _text(path: Path) -> str | None:
    """A file's text; None for a binary file (a NUL byte, or no UTF-8) or one too large to read."""
    if path.stat().st_size > 1 << 20:
        return None
    data = regular_file(path).read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
