"""Replies a hostile server shapes to hurt (issue 40, items 1, 11 and 18): a reply far larger than asked
for, a ``Retry-After`` that is neither seconds nor a date, malformed bodies answered at once under a short
deadline. The servers are ``HostileServer``s on 127.0.0.1; the CLI runs as a separate process, under an
address-space cap of 2 GiB (``ulimit -v``) where its peak memory is the point.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from judgelab.data.io import save_items
from judgelab.errors import RequestError
from judgelab.llm import Request
from judgelab.llm.backends.openai_compat import _retry_after
from judgelab.llm.cache import CompletionCache
from tests.e2e.cli import run_cli
from tests.reliability.capped import run_capped
from tests.reliability.hostile_server import HostileServer
from tests.reliability.kill import CRITERIA
from tests.reliability.scenario import make_items, server_client

JUDGE = ["--aspect", "coherence", "--family", "summarisation", "--criteria", CRITERIA, "--strategy", "scale=5,cot=none"]
HUGE = 150 * 2**20  # the attack's reply: 150 MB whatever max_tokens asked for


def _judgments(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "judgments.jsonl").read_text().splitlines()]


def _cached(path) -> int:
    if not path.exists():
        return 0
    with CompletionCache(path) as cache:
        return len(cache)


# ---- 1. an oversized reply -------------------------------------------------------------------------------------
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sent", ["chunked", "content-length", "gzip"])
def test_an_oversized_reply_is_a_malformed_reply_never_cached_nor_written(tmp_path, sent):
    """A 150 MB reply (sent chunked, announced by its Content-Length, or gzipped: 150 KB on the wire):
    each attempt stops reading at the bound on one reply (4 MiB by default, counted unpacked), is retried,
    then is that item's error; nothing is cached and judgments.jsonl stays small. Before: the reply was
    cached whole and written as one 157 MB line that no rerun could read (885 MB peak for one reply)."""
    data = save_items(make_items(2), tmp_path / "items.jsonl")
    with HostileServer("huge", huge_bytes=HUGE, chunked=sent == "chunked", gzip=sent == "gzip") as server:
        done = run_capped("judge", "--data", data, *JUDGE, "--model", server.base_url, "--model-name", "m",
                          "--out", tmp_path / "run", "--cache-path", tmp_path / "cache.sqlite")
    # every item an error: the run is written whole, and exits 1 so that a script notices (issue 41, item 3)
    assert done.returncode == 1 and "every item ended in an error (2 of 2)" in done.stderr, done.stderr
    judgments = _judgments(tmp_path / "run")
    assert [j["status"] for j in judgments] == ["error", "error"]
    for judgment in judgments:
        assert "gave up after" in judgment["reason"] and "malformed reply from" in judgment["reason"]
        assert "over the 4 MiB limit on one reply" in judgment["reason"], judgment["reason"]
    assert server.posts == 2 * 6  # retried like any malformed reply
    assert _cached(tmp_path / "cache.sqlite") == 0
    assert (tmp_path / "run" / "judgments.jsonl").stat().st_size < 10_000
    assert done.peak_mib < 400, f"peak RSS {done.peak_mib:.0f} MiB"


@pytest.mark.timeout(120)
def test_a_model_list_larger_than_the_bound_is_refused_as_it_streams_in(tmp_path):
    """Without --model-name judgelab asks /models: a 400 MB answer was read whole (1.9 GB peak)."""
    data = save_items(make_items(1), tmp_path / "items.jsonl")
    with HostileServer("huge", huge_bytes=400 * 2**20) as server:
        done = run_capped("judge", "--data", data, *JUDGE, "--model", server.base_url, "--out", tmp_path / "run",
                          "--cache-path", tmp_path / "cache.sqlite")
        assert server.posts == 0
    lines = done.lines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: cannot list models at {server.base_url}/models"), lines[0]
    assert "over the 4 MiB limit on one reply" in lines[0] and "--model-name" in lines[0], lines[0]
    assert done.peak_mib < 400, f"peak RSS {done.peak_mib:.0f} MiB"


@pytest.mark.timeout(300)
def test_audit_probes_against_oversized_replies_cache_nothing(tmp_path):
    """``audit --probe`` against 64 MB replies: 762 MB peak and a 537 MB cache before."""
    comparisons = tmp_path / "comparisons.jsonl"
    comparisons.write_text("".join(json.dumps({"id": f"c{i}", "source": f"question {i}", "output_a": f"answer a{i}",
                                               "output_b": f"answer b{i}", "label": "a"}) + "\n" for i in range(2)))
    with HostileServer("huge", huge_bytes=64 * 2**20) as server:
        done = run_capped("audit", "--data", comparisons, "--probe", "swap", "--model", server.base_url,
                          "--model-name", "m", "--cache-path", tmp_path / "cache.sqlite", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["probes"]["swap"]["failed"] == 2  # both items, each after its attempts
    assert _cached(tmp_path / "cache.sqlite") == 0
    assert done.peak_mib < 400, f"peak RSS {done.peak_mib:.0f} MiB"


def test_the_reply_bound_follows_the_input_bound(monkeypatch):
    """The bound on one reply is a 32nd of the bound on one input (JUDGELAB_MAX_INPUT_BYTES), so a
    judgment holding replies reads back; lowered here, a 1 MiB reply is refused in the Python API too."""
    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "8M")
    with HostileServer("huge", huge_bytes=2**20) as server, server_client(server.base_url, None, max_attempts=2) as client:
        with pytest.raises(RequestError, match=r"malformed reply from .*over the 256 KiB limit on one reply"):
            client.complete(Request.of("Rate this summary from 1 to 5.", max_tokens=8))
    assert server.posts == 2 and client.usage.calls == 0


# ---- 11. a Retry-After that is neither seconds nor a date ---------------------------------------------------------
@pytest.mark.parametrize("value", ["soon-ish", "", "nan", "inf", "-inf", "1e999", "-5", "Mon, 99 Foo 2026 25:61:61 GMT",
                                   "Mon, 01 Jan 0000 00:00:00 GMT", "Fri, 31 Dec 99999 23:59:59 GMT", "\x00"])
def test_a_retry_after_that_is_no_number_or_date_counts_as_absent(value):
    class Response:
        headers = {"retry-after": value, "retry-after-ms": value}

    seconds = _retry_after(Response())
    assert seconds is None or (math.isfinite(seconds) and seconds >= 0), seconds


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["judge", "audit"])
def test_a_429_with_an_unreadable_retry_after_is_retried(tmp_path, command):
    """``Retry-After: soon-ish``: before, an internal error (exit 1) and nothing recorded for the item."""
    if command == "judge":
        data = save_items(make_items(2), tmp_path / "items.jsonl")
        args = ["judge", "--data", data, *JUDGE, "--out", tmp_path / "run"]
    else:
        data = tmp_path / "comparisons.jsonl"
        data.write_text(json.dumps({"id": "c0", "source": "q", "output_a": "a", "output_b": "b", "label": "a"}) + "\n")
        args = ["audit", "--data", data, "--probe", "swap", "--json"]
    with HostileServer("retry_after", retry_after="soon-ish", bad_first=1, reply="[[A]]") as server:
        done = run_cli(*args, "--model", server.base_url, "--model-name", "m", "--cache-path", tmp_path / "cache.sqlite")
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    assert server.replies == server.posts // 2 > 0  # each request: a 429, then its answer
    if command == "judge":
        assert [j["status"] for j in _judgments(tmp_path / "run")] == ["unparsable", "unparsable"]


# ---- 18. malformed replies at once, under a short deadline ---------------------------------------------------------
@pytest.mark.timeout(120)
def test_malformed_replies_under_a_short_deadline_fail_their_items_not_the_run(tmp_path):
    """A server that answers every attempt at once with a malformed body, ``--timeout 1`` (a call's deadline
    of 3 s): the back-off between attempts passes the deadline. Before, each call was 'no reply within 3 s'
    and after three the run stopped, 'the server is not answering' (exit 2); the server did answer, badly:
    each item is now an error saying so and the run finishes."""
    data = save_items(make_items(4), tmp_path / "items.jsonl")
    with HostileServer("bad_schema") as server:
        done = run_cli("judge", "--data", data, *JUDGE, "--model", server.base_url, "--model-name", "m",
                       "--timeout", "1", "--out", tmp_path / "run", "--cache-path", tmp_path / "cache.sqlite")
    # the run finishes (not 'not answering', exit 2); every item an error, so it exits 1 (issue 41, item 3)
    assert done.returncode == 1 and "every item ended in an error (4 of 4)" in done.stderr, done.stderr
    assert "not answering" not in done.stderr
    for judgment in _judgments(tmp_path / "run"):
        assert judgment["status"] == "error"
        assert "malformed reply from" in judgment["reason"] and "no reply within" not in judgment["reason"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "finished"


@pytest.mark.timeout(120)
def test_a_server_answering_503_at_once_under_a_short_deadline_is_not_called_silent(tmp_path):
    """The same rule for any answer: 503 to every attempt stops the run on what the server said (as when
    the attempts are spent), not with 'no reply within 3 s' three times and 'the server is not answering'."""
    data = save_items(make_items(4), tmp_path / "items.jsonl")
    with HostileServer("echo_error", error_status=503) as server:
        done = run_cli("judge", "--data", data, *JUDGE, "--model", server.base_url, "--model-name", "m",
                       "--timeout", "1", "--out", tmp_path / "run", "--cache-path", tmp_path / "cache.sqlite")
    assert done.returncode == 2, done.stderr
    text = " ".join(done.stderr.split())
    assert "not answering" not in text and "no reply within" not in text, text
    # back-off is jittered: the attempts are either spent or cut short by the deadline, and the message says which
    assert re.search(r"gave up after (6 attempts|[1-5] attempts? \(no time left for more within 3 s, the deadline "
                     r"of one call\)): HTTP 503 from", text), text


def test_a_judgment_of_many_samples_past_the_input_bound_is_kept_as_its_error(tmp_path, monkeypatch):
    """Each reply is bounded, but a judgment keeps every sample's: 40 samples of 30 KB under a 1 MiB input
    bound (a reply bound of 32 KiB) would be a line judgelab could not read back; it is that item's error."""
    from judgelab.judges.prompted import PromptedJudge
    from judgelab.runner.run import run_judge
    from judgelab.strategy import Strategy

    monkeypatch.setenv("JUDGELAB_MAX_INPUT_BYTES", "1M")
    judge = PromptedJudge(aspect="coherence", family="summarisation", criteria=CRITERIA, samples=40, temperature=1.0,
                          strategy=Strategy(scale=5, cot="none"), max_tokens=8)
    with HostileServer("huge", huge_bytes=30_000) as server, server_client(server.base_url, None) as client:
        result = run_judge(judge, make_items(1), client, tmp_path / "run")
    [judgment] = _judgments(tmp_path / "run")
    assert judgment["status"] == "error" and judgment["raw"] is None, judgment["status"]
    assert judgment["reason"].startswith("not kept: this judgment ("), judgment["reason"]
    assert "over the 1 MiB limit on one input" in judgment["reason"]
    assert result.counts == {"ok": 0, "unparsable": 0, "error": 1} and client.usage.calls == 40
    assert (tmp_path / "run" / "judgments.jsonl").stat().st_size < 2**20
