"""DeepEval G-Eval over items, against an OpenAI-compatible server: the peer run of bench/bench_peers.py.

Runs in the separate DeepEval venv (never judgelab's), so it imports only DeepEval, openai and the
standard library:

    ~/.cache/judgelab/peer-venv/bin/python bench/peers/deepeval_driver.py JOB.json OUT.json

JOB.json: ``{"base_url", "model", "aspect", "criteria", "max_tokens", "concurrency", "timeout",
"items": [{"id", "input", "output"}]}``. OUT.json: ``{"deepeval", "wall_s", "cpu_s", "calls", "prompt_tokens",
"completion_tokens", "results": [{"id", "status", "score", "error", "raw"}]}`` with status ``ok``, ``unparsable`` (G-Eval
could not read the model's JSON, or it lacked ``score``/``reason``) or ``error``. ``wall_s`` and ``cpu_s``
(this process's CPU time, all threads) cover ``deepeval.evaluate`` alone, not the interpreter start or the imports.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

# Before deepeval is imported: no telemetry, no update check, no .env files, no prompt after the run,
# no DeepEval-side timeouts (the openai client's own timeout still applies, as for the other two).
os.environ.update(DEEPEVAL_TELEMETRY_OPT_OUT="YES", DEEPEVAL_UPDATE_WARNING_OPT_IN="NO",
                  DEEPEVAL_DISABLE_DOTENV="YES", DEEPEVAL_NO_INSPECT_PROMPT="1", DEEPEVAL_DISABLE_TIMEOUTS="YES",
                  DEEPEVAL_GRPC_LOGGING="NO")

import deepeval  # noqa: E402
import openai  # noqa: E402
from deepeval import evaluate  # noqa: E402
from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig  # noqa: E402
from deepeval.metrics import GEval  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase, SingleTurnParams  # noqa: E402

# What DeepEval raises when it cannot use the judge model's reply (metrics/utils/generation.py
# trimAndLoadJson; a KeyError names the missing field of an otherwise valid JSON object).
UNPARSABLE_MARKERS = ("invalid JSON", "'score'", "'reason'")


class ServerModel(DeepEvalBaseLLM):
    """DeepEval's custom-model hook for an OpenAI-compatible server: one chat call per prompt, greedy.

    ``a_generate`` returns the reply text (it accepts DeepEval's ``schema`` but does not enforce it), so
    G-Eval parses the JSON itself, as it does for any custom model without structured output."""

    def __init__(self, base_url: str, model: str, max_tokens: int, timeout: float):
        self.base_url, self.model_name, self.max_tokens, self.timeout = base_url, model, max_tokens, timeout
        self.calls: list[tuple[str, str]] = []  # (prompt, reply): to show an unparsable reply's text
        self.prompt_tokens = self.completion_tokens = 0
        super().__init__(model)

    def load_model(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=self.base_url, api_key="not-needed", timeout=self.timeout, max_retries=0)

    async def a_generate(self, prompt: str, schema: Any = None) -> str:
        response = await self.model.chat.completions.create(
            model=self.model_name, messages=[{"role": "user", "content": prompt}], temperature=0.0, top_p=1.0,
            max_tokens=self.max_tokens, n=1, seed=0,
        )
        reply = response.choices[0].message.content or ""
        self.calls.append((prompt, reply))
        if response.usage is not None:
            self.prompt_tokens += response.usage.prompt_tokens
            self.completion_tokens += response.usage.completion_tokens
        return reply

    def generate(self, prompt: str, schema: Any = None) -> str:
        raise NotImplementedError("the benchmark runs G-Eval in async mode only")

    def get_model_name(self) -> str:
        return f"{self.model_name} at {self.base_url}"


def run(job: dict[str, Any]) -> dict[str, Any]:
    model = ServerModel(job["base_url"], job["model"], job["max_tokens"], job.get("timeout", 120.0))
    # The criteria text is given as G-Eval's only evaluation step, so G-Eval makes one call per item
    # (with `criteria=` alone it would first ask the model to write the steps).
    metric = GEval(name=job["aspect"].capitalize(), evaluation_steps=[job["criteria"]], model=model,
                   evaluation_params=[SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT], async_mode=True)
    cases = [LLMTestCase(name=item["id"], input=item["input"], actual_output=item["output"]) for item in job["items"]]
    started, cpu = time.perf_counter(), time.process_time()
    result = evaluate(
        cases, [metric],
        async_config=AsyncConfig(run_async=True, max_concurrent=job["concurrency"]),
        display_config=DisplayConfig(show_indicator=False, print_results=False, inspect_after_run=False),
        cache_config=CacheConfig(write_cache=False, use_cache=False),
        error_config=ErrorConfig(ignore_errors=True),
    )
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    by_name = {test.name: test for test in result.test_results}
    items = {item["id"]: item for item in job["items"]}
    results = [outcome(item_id, by_name.get(item_id), items[item_id], model.calls) for item_id in items]
    return {"deepeval": deepeval.__version__, "wall_s": wall, "cpu_s": cpu, "calls": len(model.calls),
            "prompt_tokens": model.prompt_tokens, "completion_tokens": model.completion_tokens, "results": results}


def outcome(item_id: str, test: Any, item: dict[str, str], calls: list[tuple[str, str]]) -> dict[str, Any]:
    data = (test.metrics_data or [None])[0] if test is not None else None
    if data is None:
        return {"id": item_id, "status": "error", "score": None, "error": "no result from deepeval", "raw": None}
    if data.error is None and data.score is not None:
        return {"id": item_id, "status": "ok", "score": data.score, "error": None, "raw": None}
    error = data.error or "no score"
    status = "unparsable" if any(marker in error for marker in UNPARSABLE_MARKERS) else "error"
    # The reply to this item's prompt (the prompt holds the item's input and output).
    raw = next((reply for prompt, reply in calls if item["output"] in prompt and item["input"] in prompt), None)
    return {"id": item_id, "status": status, "score": None, "error": error, "raw": raw}


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as handle:
        job = json.load(handle)
    report = run(job)
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
