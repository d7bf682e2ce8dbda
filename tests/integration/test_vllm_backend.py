"""The in-process vLLM backend on a real model: needs the vllm extra and a CUDA GPU (skipped otherwise).

Run on a GPU machine:  pip install 'judgelab[vllm]' && pytest tests/integration/test_vllm_backend.py
The model is JUDGELAB_VLLM_MODEL (default Qwen/Qwen2.5-0.5B-Instruct, ~1 GB from the Hugging Face hub).
"""

from __future__ import annotations

import json
import os
import re

import pytest

vllm = pytest.importorskip("vllm", reason="needs the vllm extra: pip install 'judgelab[vllm]' (CUDA GPU machines)")
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("the vllm backend needs a CUDA GPU; torch.cuda.is_available() is False", allow_module_level=True)

from judgelab.llm.client import Client  # noqa: E402
from judgelab.llm.resolve import make_backend  # noqa: E402
from judgelab.llm.types import Message, Request, ResponseFormat  # noqa: E402

MODEL = os.environ.get("JUDGELAB_VLLM_MODEL", "Qwen/Qwen2.5-0.5B-Instruct")
INSTRUCTIONS = ("You grade summaries of news articles for coherence on a scale from 1 (incoherent) to 5 "
                "(perfectly coherent). Read the summary, think about its structure, and answer with a rating. ") * 4


@pytest.fixture(scope="module")
def backend():
    return make_backend(f"vllm:{MODEL}", max_model_len=2048, gpu_memory_utilization=0.5, batch_wait_s=0.05)


@pytest.fixture(scope="module")
def client(backend):
    with Client(backend, cache=None) as found:  # closing it releases the model and its GPU memory
        yield found


def _grading(summary: str, **params) -> Request:
    return Request(messages=(Message(role="system", content=INSTRUCTIONS), Message(role="user", content=summary)),
                   **params)


def test_concurrent_requests_are_generated_as_one_batch(backend, client):
    requests = [_grading(f"Summary {k}: the council approved the budget, then it rained.", max_tokens=8)
                for k in range(12)]
    before = len(backend.batch_sizes)
    results = client.complete_all(requests)
    assert all(len(samples) == 1 and samples[0].completion_tokens > 0 for samples in results)
    assert max(backend.batch_sizes[before:]) > 1  # vLLM received several prompts in one generate call


def test_shared_instructions_come_from_the_prefix_cache(client):
    client.complete(_grading("First summary, about trains.", max_tokens=2))
    [completion] = client.complete(_grading("Second summary, about boats.", max_tokens=2))
    assert completion.reused_prefix_tokens >= 64  # the instructions' KV blocks, computed for the first call


def test_logprobs_with_top_alternatives(client):
    [completion] = client.complete(_grading("A clear summary.", max_tokens=4, logprobs=True,
                                                                 top_logprobs=5))
    assert len(completion.logprobs) == completion.completion_tokens
    for token in completion.logprobs:
        values = [alternative.logprob for alternative in token.top]
        assert len(values) == 5 and values == sorted(values, reverse=True) and all(v <= 0 for v in values)
        assert token.logprob <= values[0] + 1e-6  # nothing beats the most likely alternative


def test_assistant_prefix_and_regex_constraint(client):
    request = _grading("A clear summary.", assistant_prefix="Rating: [[", max_tokens=4,
                       response_format=ResponseFormat(type="regex", pattern=r"[1-5]\]\]"))
    [completion] = client.complete(request)
    assert re.fullmatch(r"[1-5]\]\]", completion.text), completion.text  # the prefix itself is not repeated


def test_json_schema_constraint(client):
    schema = {"type": "object", "properties": {"rating": {"type": "integer", "minimum": 1, "maximum": 5}},
              "required": ["rating"]}
    request = _grading("A clear summary. Answer in JSON.", max_tokens=30,
                       response_format=ResponseFormat(type="json_schema", json_schema=schema))
    [completion] = client.complete(request)
    assert 1 <= json.loads(completion.text)["rating"] <= 5


def test_identity_and_cache(backend, tmp_path):
    from judgelab.llm.cache import CompletionCache

    assert backend.identity.startswith(f"vllm:{vllm.__version__}:") and MODEL in backend.identity
    request = _grading("Cached summary.", max_tokens=6, temperature=0.7, seed=11, n=2)
    runs = []
    for _ in range(2):  # a second client on the same cache file: a rerun of the same command
        cache = CompletionCache(tmp_path / "cache.sqlite")
        client = Client(backend, cache=cache)  # not closed: that would close the backend the other tests share
        runs.append((client.complete(request), client.usage.calls))
        cache.close()
    (paid, calls), (again, calls_again) = runs
    assert (calls, calls_again) == (2, 0) and not any(c.cached for c in paid) and all(c.cached for c in again)
    assert [c.text for c in again] == [c.text for c in paid]
