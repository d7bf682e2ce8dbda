"""DeepEval test runs: the ``test_run_<time>.json`` files deepeval's ``evaluate()`` saves when
``DEEPEVAL_RESULTS_FOLDER`` is set (or a folder of them).

Each test case becomes a pointwise item (source the input, output the actual output, reference the
expected output, context the retrieval context; system the run's ``hyperparameters.model``, else the
file's name; group the input), and each metric's result a judgment whose judge is the metric
(``Correctness [GEval]``, ...; its evaluation model in ``extra.evaluation_model``): score as
measured, label pass/fail, the metric's reason as explanation. A metric that raised (deepeval's
``error``, with no score) is no verdict: the file is refused, naming the test case, the metric and
how many failed. Conversational test cases are refused too (not read yet).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import dataset, files_in, head, item, json_document, judgment, need
from judgelab.errors import DataError

NAME = "deepeval"
EXPECTED = "a DeepEval test run (testCases with input, actualOutput, metricsData)"


def claims(path: Path) -> bool:
    if path.is_dir():
        return any(claims(f) for f in path.rglob("test_run_*.json"))
    start = head(path)[:8192]
    return path.suffix == ".json" and '"testCases"' in start and '"metricsData"' in start


def read(path: Path) -> SourceData:
    items, judgments = [], []
    for run in files_in(path, ("test_run_*.json",)):
        got = _run(run)
        items += got[0]
        judgments += got[1]
    return SourceData(NAME, dataset(items, str(path)), judgments)


def _run(path: Path):
    where = str(path)
    run = json_document(path)
    if not isinstance(run, dict):
        raise DataError(f"expected {EXPECTED}", where)
    need(run, ("testCases",), where, None, EXPECTED)
    if run.get("conversationalTestCases"):
        raise DataError(f"{len(run['conversationalTestCases'])} conversational test case(s): not read yet; expected "
                        "single-turn test cases (testCases)", where, None, "conversationalTestCases")
    _refuse_errors(run["testCases"], where)
    system = str((run.get("hyperparameters") or {}).get("model") or path.stem)
    items, judgments = [], []
    for k, case in enumerate(run["testCases"]):
        name = f"test case {case.get('name', k)!r}"
        need(case, ("input", "actualOutput", "metricsData"), where, None, EXPECTED, name)
        group = hashlib.sha1(str(case["input"]).encode()).hexdigest()[:12]
        item_id = f"{system}/{case.get('name', k)}"
        context = case.get("retrievalContext") or case.get("context")
        items.append(item({"id": item_id, "group_id": group, "system_id": system, "source": case["input"],
                           "output": case["actualOutput"] or "", "reference": case.get("expectedOutput"),
                           "context": "\n\n".join(context) if isinstance(context, list) else context}, where, None))
        judgments += [_verdict(item_id, metric) for metric in case["metricsData"] or []]
    return items, [judgment(row, where, None) for row in judgments]


def _refuse_errors(cases: list[Any], where: str) -> None:
    failed = [(case.get("name", k), metric.get("name")) for k, case in enumerate(cases) if isinstance(case, dict)
              for metric in case.get("metricsData") or [] if metric.get("error")]
    if failed:
        total = sum(len(case.get("metricsData") or []) for case in cases if isinstance(case, dict))
        case, metric = failed[0]
        raise DataError(f"test case {case!r}, metric {metric!r}: the metric raised an error, so it gave no score; "
                        f"expected scored metrics: {len(failed)} of {total} metric results failed", where)


def _verdict(item_id: str, metric: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"item_id": item_id, "judge": metric.get("name"), "explanation": metric.get("reason"),
                           "label": "pass" if metric.get("success") else "fail",
                           "extra": {"threshold": metric.get("threshold")}
                           | ({"evaluation_model": metric["evaluationModel"]} if metric.get("evaluationModel") else {})}
    score = metric.get("score")
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        row["score"] = score
    return row
