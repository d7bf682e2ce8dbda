"""A judge run through a misbehaving server: every item judged once, every call paid once, exact accounting.

The server is a real llama.cpp server; between it and the client sits the fault proxy, which
answers 500 / 429 (Retry-After) / 503, resets connections, stalls past the timeout and cuts
bodies short. ``bench/bench_faults.py`` runs the same scenario on 200 items.

Faults that need no model (a reply trickled byte by byte, a 200 that breaks the schema) come from a
``HostileServer`` on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from judgelab.data.io import save_items
from judgelab.errors import BackendError, RequestError
from judgelab.llm import Request
from judgelab.llm.cache import CompletionCache
from judgelab.runner.run import run_judge
from tests.e2e.cli import run_cli
from tests.reliability.fault_proxy import FAULTS, FaultProxy, FaultRates
from tests.reliability.hostile_server import HostileServer
from tests.reliability.kill import CRITERIA
from tests.reliability.scenario import calibrated_timeout, fast_judge, judged_ids, make_items, server_client

# The mix (20% errors, 5% resets, 5% stalls) plus 5% cut bodies; on top, the first seven
# requests each meet one kind of fault first, so every kind is exercised on a short run.
RATES = FaultRates(errors=0.20, resets=0.05, stalls=0.05, truncations=0.05)
SEED = 3
N_ITEMS = 12


@pytest.fixture(scope="module")
def timeout(llama_server) -> float:
    return calibrated_timeout(llama_server.base_url)


def _run(proxy_url, items, folder, cache, timeout, **client_options):
    with server_client(proxy_url, cache, timeout=timeout, **client_options) as client:
        result = run_judge(fast_judge(), items, client, folder)
        return result, client.usage


@pytest.mark.timeout(600)
def test_faulty_server_run_judges_each_item_once_and_pays_each_request_once(llama_server, timeout, tmp_path):
    items = make_items(N_ITEMS)
    with FaultProxy(llama_server.base_url, RATES, seed=SEED, stall_s=timeout + 1, retry_after=0.5,
                    forced=FAULTS) as proxy:
        result, usage = _run(proxy.base_url, items, tmp_path / "faulty", tmp_path / "faulty.sqlite", timeout)
    stats = proxy.stats

    assert set(stats.injected) == set(FAULTS), stats.injected  # every kind of fault really happened
    assert sorted(judged_ids(tmp_path / "faulty")) == sorted(item.id for item in items)  # once each
    assert [j.status for j in result.judgments].count("error") == 0
    # Nothing corrupted: each judgment holds exactly the reply the server delivered for its request.
    assert sorted(j.raw for j in result.judgments) == sorted(text for text, _, _ in stats.answers.values())
    # Paid calls: one per distinct request, accounted once. (A reply the server finishes after the
    # client timed out is delivered again on the retry; on a loaded machine that can happen.)
    assert usage.calls == len(items) == len(stats.answers)
    assert usage.prompt_tokens == sum(p for _, p, _ in stats.answers.values())
    assert usage.completion_tokens == sum(c for _, _, c in stats.answers.values())
    assert sum(j.usage.prompt_tokens for j in result.judgments) == usage.prompt_tokens
    assert result.usage["retries"] >= sum(stats.injected.values())
    assert min(stats.retry_after_gaps) >= 0.5  # Retry-After honoured
    # A rerun into the folder (same server address, as a real resume) resumes everything and pays nothing.
    with FaultProxy(llama_server.base_url, RATES, seed=SEED, port=proxy.port) as proxy:
        again, usage = _run(proxy.base_url, items, tmp_path / "faulty", tmp_path / "faulty.sqlite", timeout)
    assert again.usage["resumed_items"] == len(items) and usage.calls == 0 and proxy.stats.forwarded == 0


@pytest.mark.timeout(600)
def test_server_gone_stops_with_a_clear_error_and_a_rerun_resumes(llama_server, timeout, tmp_path):
    items = make_items(10)
    folder, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    with FaultProxy(llama_server.base_url) as proxy:
        proxy.down_after = 6  # then every connection is reset: the server is gone
        with pytest.raises(BackendError, match=r"gave up after 3 attempts.*rerun the same command") as failure:
            _run(proxy.base_url, items, folder, cache, timeout, max_attempts=3)
        assert proxy.base_url in str(failure.value)
        done = judged_ids(folder)
        assert len(done) == len(set(done)) == 6
        record = json.loads((folder / "run.json").read_text())  # says how the run ended, and why
        assert record["status"] == "failed" and "gave up after 3 attempts" in record["error"]
        assert record["items"] == 6 and record["usage"]["calls"] == 6
        with CompletionCache(cache) as stored:
            assert len(stored) == 6 == len(proxy.stats.answers)

        proxy.down, proxy.down_after = False, None  # the server is back
        result, usage = _run(proxy.base_url, items, folder, cache, timeout)
    assert result.usage["resumed_items"] == 6
    assert usage.calls == len(items) - 6 and len(proxy.stats.answers) == len(items)
    assert sorted(judged_ids(folder)) == sorted(item.id for item in items)


@pytest.mark.timeout(120)
def test_cli_with_no_server_exits_2_naming_the_server_and_how_to_resume(tmp_path):
    from judgelab.data.io import save_items
    from judgelab.llm.server import free_port

    data = save_items(make_items(2), tmp_path / "items.jsonl")
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens here
    done = run_cli("judge", "--data", data, "--aspect", "coherence", "--model", url, "--model-name", "m", "--criteria", CRITERIA,
                   "--family", "summarisation", "--strategy", "scale=5,cot=none", "--out", tmp_path / "run",
                   "--cache-path", tmp_path / "cache.sqlite")
    assert done.returncode == 2, done.stderr
    assert url in done.stderr and "gave up after" in done.stderr and "rerun" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "run").exists()  # nothing was judged: no folder to block the next command


# ---- a deadline per attempt ------------------------------------------------------------------------------------
def test_a_reply_trickled_byte_by_byte_meets_the_deadline_of_its_attempt():
    """One byte a second never reaches httpx's 3 s read timeout (it times the gap between bytes): the
    whole reply would take 10 s. The attempt's deadline (3 s) cuts it, and the retries end the run."""
    with HostileServer("trickle", trickle_bytes=10, trickle_gap=1.0) as server:
        with server_client(server.base_url, None, timeout=3, max_attempts=2) as client:
            started = time.perf_counter()
            with pytest.raises(BackendError, match=r"gave up after 2 attempts: no complete reply from "
                                                   r"http://127\.0\.0\.1:\d+/v1 within 3 s \(the deadline of one attempt, timeout\)"):
                fast_judge().run(make_items(1), client)
            elapsed = time.perf_counter() - started
    assert server.posts == 2 and 6 <= elapsed < 9, (server.posts, elapsed)


def _judge_cli(data, server, tmp_path, *options):
    return run_cli("judge", "--data", data, "--aspect", "coherence", "--model", server.base_url, "--model-name", "m",
                   "--criteria", CRITERIA, "--family", "summarisation", "--strategy", "scale=5,cot=none",
                   "--out", tmp_path / "run", "--cache-path", tmp_path / "cache.sqlite", *options)


def _judgments(run_dir) -> dict[str, dict]:
    lines = (run_dir / "judgments.jsonl").read_text().splitlines()
    return {j["item_id"]: j for j in map(json.loads, lines)}


# ---- a deadline per call, across its attempts --------------------------------------------------------------------
@pytest.mark.timeout(120)
def test_one_item_that_trickles_is_recorded_as_failed_at_its_call_deadline(tmp_path):
    """One of four items trickles (one byte every 0.5 s for 30 s): with --timeout 1 its call's deadline
    is 3 s. Before, its attempts ran out (6 x 1 s plus back-off), the run stopped (exit 2) and that item
    had no judgment line at all; now it is an error with the reason and the other three are judged."""
    items = make_items(4)
    data = save_items(items, tmp_path / "items.jsonl")
    with HostileServer("trickle", trickle_bytes=60, trickle_gap=0.5, only="Summary 2:") as server:
        started = time.perf_counter()
        done = _judge_cli(data, server, tmp_path, "--timeout", "1")
        elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    judgments = _judgments(tmp_path / "run")
    assert sorted(judgments) == sorted(item.id for item in items)  # every item has its line
    failed = judgments.pop(items[2].id)
    assert failed["status"] == "error" and failed["score"] is None
    assert re.search(r"no reply within 3 s, the deadline of one call across its attempts \([23] made; "
                     r"by default 3 x --timeout\)", failed["reason"]), failed["reason"]
    assert [j["status"] for j in judgments.values()] == ["ok"] * 3
    assert json.loads((tmp_path / "run" / "run.json").read_text())["counts"] == {"ok": 3, "unparsable": 0, "error": 1}
    assert elapsed < 30, elapsed  # process start-up included; the deadline itself is 3 s


@pytest.mark.timeout(120)
def test_a_server_that_trickles_every_reply_stops_the_run_after_three_missed_deadlines(tmp_path):
    """Every reply trickles: calls miss their deadline one after another, so the server is not answering;
    the run stops (exit 2) with the reason after three, instead of failing every item one deadline at a
    time (or, before, after 6 attempts of --timeout each)."""
    data = save_items(make_items(3), tmp_path / "items.jsonl")
    with HostileServer("trickle", trickle_bytes=30, trickle_gap=0.5) as server:
        started = time.perf_counter()
        done = _judge_cli(data, server, tmp_path, "--timeout", "2")
        elapsed = time.perf_counter() - started
    assert done.returncode == 2, done.stderr
    text = " ".join(done.stderr.split())
    assert "no reply within 6 s, the deadline of one call across its attempts" in text
    assert "3 calls in a row missed their deadline, so the server is not answering" in text and "rerun" in text
    assert "Traceback" not in done.stderr
    assert 3 <= server.posts <= 3 * 3 and elapsed < 40, (server.posts, elapsed)


def test_the_call_deadline_bounds_retries_and_back_off_in_the_python_api():
    """``Client(call_deadline=2.5)``: attempts of 1 s each, back-off included, end at 2.5 s with a
    RequestError (the call fails alone); a deadline of one attempt alone would have made 6 attempts."""
    from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend
    from judgelab.llm.client import Client

    with HostileServer("trickle", trickle_bytes=20, trickle_gap=0.5) as server:
        backend = OpenAICompatibleBackend("m", base_url=server.base_url, timeout=1.0)
        with Client(backend, call_deadline=2.5, backoff_initial=0.05, backoff_max=0.1) as client:
            started = time.perf_counter()
            with pytest.raises(RequestError, match=r"no reply within 2\.5 s, the deadline of one call"):
                client.complete(Request.of("Rate this summary from 1 to 5.", max_tokens=8))
            elapsed = time.perf_counter() - started
    assert 2.4 <= elapsed < 4 and server.posts == 3, (elapsed, server.posts)


def test_the_default_call_deadline_is_three_timeouts_for_a_server_and_none_in_process():
    import math

    from judgelab.llm.backends.none import no_llm_client
    from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend
    from judgelab.llm.client import Client

    with Client(OpenAICompatibleBackend("m", base_url="http://127.0.0.1:9/v1")) as client:
        assert client.call_deadline == 360
    with Client(OpenAICompatibleBackend("m", base_url="http://127.0.0.1:9/v1", timeout=2)) as client:
        assert client.call_deadline == 6
    with no_llm_client() as client:
        assert math.isinf(client.call_deadline)


def test_a_model_list_trickled_byte_by_byte_meets_its_deadline():
    """Without --model-name judgelab asks the server's /models first: that request has a deadline too."""
    from judgelab.errors import ConfigError
    from judgelab.llm.resolve import make_backend

    with HostileServer("trickle", trickle_bytes=10, trickle_gap=1.0) as server:
        started = time.perf_counter()
        with pytest.raises(ConfigError, match=r"no list of models from http://127\.0\.0\.1:\d+/v1/models within 2 s"):
            make_backend(server.base_url, timeout=2)
    assert time.perf_counter() - started < 5


def test_timeout_is_refused_for_a_model_in_this_process(tmp_path):
    data = save_items(make_items(1), tmp_path / "items.jsonl")
    done = run_cli("judge", "--data", data, "--aspect", "coherence", "--model", "smollm2-135m", "--timeout", "5",
                   "--criteria", CRITERIA, "--family", "summarisation", "--out", tmp_path / "run")
    assert done.returncode == 2 and "--timeout bounds requests to a server" in done.stderr, done.stderr


# ---- a 200 whose JSON breaks the schema -------------------------------------------------------------------------
@pytest.mark.timeout(120)
def test_a_reply_that_breaks_the_schema_is_retried_then_fails_its_item_alone(tmp_path):
    """``content`` an object, ``prompt_tokens: "many"``: a malformed reply (not an internal error with a
    pydantic dump): retried, and once the attempts are spent that item is an error, the others go on."""
    data = save_items(make_items(2), tmp_path / "items.jsonl")
    with HostileServer("bad_schema") as server:
        done = run_cli("judge", "--data", data, "--aspect", "coherence", "--model", server.base_url,
                       "--criteria", CRITERIA, "--family", "summarisation", "--strategy", "scale=5,cot=none",
                       "--out", tmp_path / "run", "--cache-path", tmp_path / "cache.sqlite")
    # every item an error: written whole, exit 1 so that a script notices (issue 41, item 3)
    assert done.returncode == 1 and "every item ended in an error (2 of 2)" in done.stderr, done.stderr
    assert "internal error" not in done.stderr and "pydantic" not in done.stderr + done.stdout
    assert server.posts == 2 * 6  # every attempt was made
    judgments = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert [j["status"] for j in judgments] == ["error", "error"]
    for judgment in judgments:
        assert "gave up after 6 attempts: malformed reply from" in judgment["reason"]
        assert "choices[0].message.content: Input should be a valid string" in judgment["reason"]
        assert "usage.prompt_tokens: Input should be a valid integer" in judgment["reason"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "finished"


def test_a_reply_that_breaks_the_schema_once_is_retried_and_its_answer_kept():
    with HostileServer("bad_schema", bad_first=1) as server:
        with server_client(server.base_url, None, max_attempts=3) as client:
            judgments = fast_judge().run(make_items(2), client)
    assert [(j.status, j.score) for j in judgments] == [("ok", 3), ("ok", 3)]
    assert server.posts == 4 and client.retries == 2


def test_a_request_answered_with_malformed_replies_only_raises_a_request_error():
    """The Python API's ``complete``: the request fails (RequestError), not the backend (BackendError)."""
    with HostileServer("bad_schema") as server, server_client(server.base_url, None, max_attempts=3) as client:
        with pytest.raises(RequestError, match="gave up after 3 attempts: malformed reply from"):
            client.complete(Request.of("Rate this summary from 1 to 5.", max_tokens=8))
    assert server.posts == 3
