"""Hostile files and values (issue 31, items 10-18): a gzip bomb, an item larger than any request may
be, out-of-range numbers in configs, on the command line and in a server's usage, names that would
leave the output folder, a symlinked or world-readable cache, a leaderboard of 1,500 systems,
judgment scores off the items' scale, and ratings written in exponents or other scripts' digits.

Each refusal is one located line and exit 2 (or, for what a server sends, a per-item record), and
nothing is paid or written on the way. Bounds are lowered through their documented settings (the
``JUDGELAB_MAX_INPUT_BYTES`` environment variable) so that each case takes a second or two.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.data.io import save_items
from tests.reliability.hostile_server import HostileServer
from tests.reliability.scenario import fast_judge, make_items, server_client
from tests.reliability.test_hostile_input import _cli_in_process

CRITERIA = "Coherence (1-5): the summary is well organised."
SERVER_JUDGE = ["--aspect", "coherence", "--family", "summarisation", "--criteria", CRITERIA,
                "--strategy", "scale=5,cot=none"]


def _judgments(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]


# ---- 18. ratings in exponents or in other scripts' digits ----------------------------------------------------------
@pytest.mark.parametrize("reply", ["Rating: [[1e1]]", "Rating: [[٣]]", "Rating: ٣", "Rating: [[３]]"])
def test_a_rating_in_an_exponent_or_foreign_digits_is_recorded_unparsable(reply, tmp_path, capsys):
    """``[[1e1]]`` was read as 1 and Arabic-Indic digits as numbers: now the judgment is ``unparsable``
    with the reply kept, and never a score (the real CLI against a server that answers this)."""
    data = save_items(make_items(2), tmp_path / "items.jsonl")
    with HostileServer("ok", reply=reply) as server:
        code, output = _cli_in_process(["judge", "--data", data, *SERVER_JUDGE, "--model", server.base_url,
                                        "--out", tmp_path / "run", "--no-cache"], capsys)
    assert code == 0, output
    judgments = _judgments(tmp_path / "run")
    assert [(j["status"], j.get("score")) for j in judgments] == [("unparsable", None)] * 2, judgments
    assert all(j["raw"] == reply for j in judgments)


# ---- 13. usage a server makes up ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("usage", "field"), [({"prompt_tokens": 10**30}, "usage.prompt_tokens"),
                                              ({"completion_tokens": -5}, "usage.completion_tokens")])
def test_impossible_token_counts_are_a_malformed_reply_not_accounting(usage, field):
    """``prompt_tokens: 10**30`` or ``completion_tokens: -5`` went into the run's usage and cost: such a
    reply is malformed (retried, then that item alone is an error naming the field), and nothing of it
    is counted or cached."""
    with HostileServer("ok", usage=usage) as server, \
            server_client(server.base_url, None, max_attempts=2) as client:
        judgments = fast_judge().run(make_items(2), client)
    assert [j.status for j in judgments] == ["error", "error"]
    for judgment in judgments:
        assert "malformed reply" in judgment.reason and field in judgment.reason, judgment.reason
    assert server.posts == 4
    assert (client.usage.calls, client.usage.prompt_tokens, client.usage.completion_tokens) == (0, 0, 0)
