"""DeepEval test runs: the ``test_run_<time>.json`` files deepeval's ``evaluate()`` saves when
``DEEPEVAL_RESULTS_FOLDER`` is set (or a folder of them).

Each test case becomes a pointwise item (source the input, output the actual output, reference the
expected output, context the retrieval context, and its passages as ``contexts``; system the run's
``hyperparameters.model``, else the file's name; group the input). A test case whose tools were called
(``toolsCalled``) is a conversation: the input, the calls and their results, the actual output. Expected tools
(``expectedTools``, of either kind of test case) are kept as ``extra.expected_tools``, ``{name, arguments}`` each,
for the tool_calls judge. A conversational test case becomes an
item whose ``messages`` are its turns (a turn's tools called: an assistant tool call and its result before
the turn), ``contexts`` its turns' retrieval contexts, reference the expected outcome, group its scenario
(else its user turns); the judged reply is the last assistant turn (``Item``'s rule). Each metric's result
a judgment whose judge is the metric
(``Correctness [GEval]``, ...; its evaluation model in ``extra.evaluation_model``): score as
measured (a text holding a number read as deepeval's pydantic models read it), label pass/fail, the
metric's reason as explanation. Each metric's pass/fail is a judge of its own, ``<metric>/pass`` (1 pass,
0 fail), and the test case's (every metric passed) ``deepeval/pass``: their means are deepeval's pass
rates. A metric that raised (deepeval's ``error``, with no score) is no verdict: the file is refused,
naming the test case, the metric and how many failed. Two runs holding the same model's test case: the newer (the time in the file's name) is read.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.data.sources import SourceData
from judgelab.data.sources._read import (
    Part,
    files_in,
    head,
    item,
    json_document,
    judgment,
    kind_of,
    merged,
    need,
    text,
    typed,
)
from judgelab.errors import DataError

NAME = "deepeval"
EXPECTED = ("a DeepEval test run (testCases with input, actualOutput, metricsData; conversationalTestCases with "
            "turns, metricsData)")


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(claims(f) for f in path.rglob("test_run_*.json"))
    start = head(path)[:8192]
    return path.suffix == ".json" and '"testCases"' in start and '"metricsData"' in start


def read(path: Path, *, partial: bool = False) -> SourceData:
    parts = []
    for run in files_in(path, ("test_run_*.json",)):
        written = re.search(r"test_run_([\d_]+)", run.name)  # deepeval names a run by when it ran
        parts.append(Part(run, *_run(run), written[1] if written else None))
    items, judgments, notes = merged(parts, str(path), partial)
    return SourceData(NAME, items, judgments, tuple(notes))


def _run(path: Path) -> tuple[list[Item], list[Judgment]]:
    where = str(path)
    run = typed(json_document(path), dict, where, "the run")
    need(run, ("testCases",), where, None, EXPECTED)
    cases = typed(run["testCases"], list, where, "'testCases'")
    conversations = typed(run.get("conversationalTestCases") or [], list, where, "'conversationalTestCases'")
    _refuse_errors(cases + conversations, where)
    hyperparameters = typed(run.get("hyperparameters") or {}, dict, where, "'hyperparameters'")
    system = str(hyperparameters.get("model") or path.stem)
    items, judgments = [], []
    for k, case in enumerate(cases):
        name = f"test case {typed(case, dict, where, f'test case {k}').get('name', k)!r}"
        need(case, ("input", "actualOutput", "metricsData"), where, None, EXPECTED, name)
        group = hashlib.sha1(str(case["input"]).encode()).hexdigest()[:12]
        retrieved = case.get("retrievalContext")
        context = retrieved or case.get("context")
        called = _called(case.get("toolsCalled"), "call", name, where)
        # with tools called, the item is the run as a conversation: the input, the calls and their results, the
        # output (its source the turns before the output; an empty output is no message); without, as before
        answer = [{"role": "assistant", "content": case["actualOutput"]}] if case["actualOutput"] else []
        texts = ({"messages": [{"role": "user", "content": case["input"]}, *called, *answer]}
                 | ({} if answer else {"output": ""}) if called else
                 {"source": case["input"], "output": case["actualOutput"] or ""})
        items.append({"id": f"{system}/{case.get('name', k)}", "group_id": group, "system_id": system, **texts,
                      "reference": case.get("expectedOutput"),
                      "contexts": retrieved if isinstance(retrieved, list) and retrieved else None,
                      "context": "\n\n".join(context) if isinstance(context, list) else context}
                     | _expected(case, name, where, f"testCases.{k}"))
        judgments += _case_verdicts(items[-1]["id"], case, name, where)
    for k, case in enumerate(conversations):
        name = f"conversational test case {typed(case, dict, where, f'conversational test case {k}').get('name', k)!r}"
        need(case, ("turns", "metricsData"), where, None, EXPECTED, name)
        items.append({"id": f"{system}/{case.get('name', k)}", "system_id": system} | _conversation(case, name, where)
                     | _expected(case, name, where, f"conversationalTestCases.{k}"))
        judgments += _case_verdicts(items[-1]["id"], case, name, where)
    return [item(one, where, None) for one in items], [judgment(row, where, None) for row in judgments]


def _case_verdicts(item_id: str, case: dict[str, Any], name: str, where: str) -> list[dict[str, Any]]:
    """Each metric's verdicts (:func:`_verdicts`) and, when it has metrics, the test case's pass."""
    metrics = typed(case["metricsData"] or [], list, where, f"{name}: 'metricsData'")
    rows = [row for metric in metrics for row in _verdicts(item_id, typed(metric, dict, where, f"{name}: a metric"),
                                                           name, where)]
    if metrics:  # the test case passed when every metric did
        rows.append({"item_id": item_id, "judge": f"{NAME}/pass", "score": float(bool(case.get("success"))),
                     "label": "pass" if case.get("success") else "fail"})
    return rows


def _conversation(case: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    """A conversational test case's item fields: its turns as messages, their retrieval contexts as passages."""
    messages: list[dict[str, Any]] = []
    passages: dict[str, None] = {}  # a passage retrieved for several turns is one passage
    for j, turn in enumerate(typed(case["turns"], list, where, f"{name}: 'turns'")):
        typed(turn, dict, where, f"{name}: turn {j}")
        messages += _called(turn.get("toolsCalled"), f"call_{j}", f"{name}: turn {j}", where)
        messages.append({key: turn.get(key) for key in ("role", "content") if key in turn})
        passages.update(dict.fromkeys(text(one) for one in typed(
            turn.get("retrievalContext") or [], list, where, f"{name}: turn {j}: 'retrievalContext'")))
    users = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    background = case.get("context")
    return {"messages": messages, "contexts": list(passages) or None, "reference": case.get("expectedOutcome"),
            "group_id": hashlib.sha1(str(case.get("scenario") or users).encode()).hexdigest()[:12],
            "context": "\n\n".join(map(str, background)) if isinstance(background, list) else background}


def _called(tools: Any, prefix: str, name: str, where: str) -> list[dict[str, Any]]:
    """DeepEval's tools called (``ToolCall``: ``name``, ``inputParameters``, ``output``) as an assistant message
    calling them and each call's result; none when no tool was called."""
    calls = [typed(call, dict, where, f"{name}: a tool called")
             for call in typed(tools or [], list, where, f"{name}: 'toolsCalled'")]
    ids = [f"{prefix}_{c}" for c in range(len(calls))]  # DeepEval's calls have no ids: made from their places
    if not calls:
        return []
    return [{"role": "assistant", "content": None, "tool_calls": [
        {"id": one, "function": {"name": call.get("name"), "arguments": call.get("inputParameters") or {}}}
        for one, call in zip(ids, calls, strict=True)]}, *[
        {"role": "tool", "tool_call_id": one, "content": "" if call.get("output") is None else text(call["output"])}
        for one, call in zip(ids, calls, strict=True)]]


def _expected(case: dict[str, Any], name: str, where: str, field: str) -> dict[str, Any]:
    """A test case's ``expectedTools`` as ``extra.expected_tools`` (read by the tool_calls judge): each a
    ``{name, arguments}`` (its ``inputParameters``; None: any arguments). Nothing when it has none."""
    given = case.get("expectedTools")
    if given is None:
        return {}
    if not isinstance(given, list):
        raise DataError(f"{name}: 'expectedTools' is {kind_of(given)}: expected a list of tool calls ({{name, "
                        "inputParameters}})", where, None, f"{field}.expectedTools")
    expected = []
    for e, tool in enumerate(given):
        at = f"{field}.expectedTools.{e}"
        if not isinstance(tool, dict):
            raise DataError(f"{name}: expected tool {e} is {kind_of(tool)}: expected a tool call ({{name, "
                            "inputParameters}})", where, None, at)
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise DataError(f"{name}: expected tool {e} has no 'name': expected a tool call ({{name, "
                            "inputParameters}})", where, None, f"{at}.name")
        arguments = tool.get("inputParameters")
        if arguments is not None and not isinstance(arguments, dict):
            raise DataError(f"{name}: expected tool {e}'s 'inputParameters' is {kind_of(arguments)}: expected an "
                            "object", where, None, f"{at}.inputParameters")
        expected.append({"name": tool["name"], "arguments": arguments})
    return {"extra": {"expected_tools": expected}}


def _metrics(case: Any) -> list[Any]:
    metrics = case.get("metricsData") if isinstance(case, dict) else None
    return [metric for metric in metrics if isinstance(metric, dict)] if isinstance(metrics, list) else []


def _refuse_errors(cases: list[Any], where: str) -> None:
    failed = [(case.get("name", k), metric.get("name")) for k, case in enumerate(cases)
              for metric in _metrics(case) if metric.get("error")]
    if failed:
        total = sum(len(_metrics(case)) for case in cases)
        case, metric = failed[0]
        raise DataError(f"test case {case!r}, metric {metric!r}: the metric raised an error, so it gave no score; "
                        f"expected scored metrics: {len(failed)} of {total} metric results failed", where)


def _verdicts(item_id: str, metric: dict[str, Any], case: str, where: str) -> list[dict[str, Any]]:
    """The metric's score (label pass/fail) and, as the judge ``<metric>/pass``, its pass/fail as 1/0."""
    name = typed(metric.get("name"), str, where, f"{case}: a metric's 'name'")
    passed = typed(metric.get("success"), bool, where, f"{case}, metric {name!r}: 'success'")
    row: dict[str, Any] = {"item_id": item_id, "explanation": metric.get("reason"), "label": "pass" if passed else "fail",
                           "extra": {"threshold": metric.get("threshold")}
                           | ({"evaluation_model": metric["evaluationModel"]} if metric.get("evaluationModel") else {})}
    score = _score(metric.get("score"), f"{case}, metric {name!r}", where)
    return [row | {"judge": name, "score": score}, row | {"judge": f"{name}/pass", "score": float(passed)}]


def _score(value: Any, name: str, where: str) -> float:
    """A metric's score as deepeval's models read it (pydantic: a text holding a number is that number)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    number = typed(value, (int, float), where, f"{name}: 'score'")
    if not math.isfinite(number):
        raise DataError(f"{name}: 'score' is {value!r}: expected a finite number", where)
    return float(number)
