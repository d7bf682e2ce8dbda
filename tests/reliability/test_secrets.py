"""A planted API key reaches the server and nowhere else: not the cache, the run folder, the report,
the logs or an error message. Files are owner-only; the report escapes dataset and model text.

The same for a password in the server URL (``http://user:pass@host/v1``), in every form a server may
echo it: as given, and as the base64 ``Authorization: Basic`` value it becomes. Servers that echo
secrets are ``HostileServer``s (real HTTP servers on 127.0.0.1, no model behind them)."""

from __future__ import annotations

import base64
import json
import os
import secrets
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from judgelab.data.io import save_items
from judgelab.data.item import Item
from judgelab.runner.run import run_judge
from tests.doubles import ScriptedBackend, scripted_client
from tests.reliability.fault_proxy import FaultProxy
from tests.reliability.hostile_server import HostileServer
from tests.reliability.kill import CRITERIA
from tests.reliability.scenario import fast_judge, make_items

KEY = f"sk-planted-{secrets.token_hex(12)}"
USER, PASSWORD = "judge", f"pw-{secrets.token_hex(10)}"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
PLANTED = (KEY, PASSWORD, BASIC)  # every form a secret could leak in
NO_KEY = {"JUDGELAB_API_KEY": "", "OPENAI_API_KEY": ""}


def _judge_cli(tmp: Path, url: str, *extra: str, model_name: str | None = "smollm", debug: bool = False,
               env: dict[str, str] | None = None):
    env = {**os.environ, "JUDGELAB_API_KEY": KEY, "HOME": str(tmp / "home"), "XDG_CACHE_HOME": str(tmp / "home"),
           **(env or {})}
    data = save_items(make_items(3), tmp / "items.jsonl")
    return subprocess.run(
        [sys.executable, "-m", "judgelab.cli", *(["--debug"] if debug else []), "judge", "--data", str(data),
         "--aspect", "coherence", "--model", url, *(["--model-name", model_name] if model_name else []),
         "--family", "summarisation", "--criteria", CRITERIA, "--strategy", "scale=5,cot=none",
         "--cache-path", str(tmp / "cache" / "cache.sqlite"), *extra],
        capture_output=True, text=True, timeout=600, env=env)


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://{USER}:{PASSWORD}@", 1)


@pytest.mark.timeout(600)
def test_a_planted_key_is_sent_to_the_server_and_found_in_no_artefact(llama_server, tmp_path):
    with FaultProxy(llama_server.base_url) as proxy:
        done = _judge_cli(tmp_path, proxy.base_url, "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert proxy.stats.authorization == {f"Bearer {KEY}"}  # the key was really used
    assert (tmp_path / "run" / "report.html").is_file()
    _nowhere(tmp_path, done.stdout + done.stderr)
    _owner_only(tmp_path / "run", tmp_path / "cache")


@pytest.mark.timeout(600)
def test_a_server_echoing_the_key_in_its_error_does_not_put_it_in_the_message(llama_server, tmp_path):
    body = f'{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}'.encode()
    with FaultProxy(llama_server.base_url, error_body=body, forced=("http401",) * 3) as proxy:
        done = _judge_cli(tmp_path, proxy.base_url, "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and "HTTP 401" in done.stderr and "Incorrect API key provided: ***" in done.stderr
    _nowhere(tmp_path, done.stdout + done.stderr)


def test_credentials_in_a_server_url_stay_out_of_identity_and_messages():
    from judgelab.errors import RequestError
    from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend
    from judgelab.redact import redact

    backend = OpenAICompatibleBackend("m", base_url=f"http://user:{KEY}@127.0.0.1:9/v1", api_key=KEY)
    assert KEY not in backend.identity and "127.0.0.1:9" in backend.identity
    assert KEY not in backend._where() and redact(f"echo {KEY}") == "echo ***"
    assert str(RequestError(f"server said: {KEY}")) == "server said: ***"  # errors are redacted as they are made


# ---- every form of a planted key and password, through the CLI against servers that echo them ----------------
@pytest.mark.timeout(300)
@pytest.mark.parametrize("credentials", ["url", "key"])
@pytest.mark.parametrize("mode", ["echo", "echo_error"])
def test_secrets_a_server_echoes_back_are_in_no_artefact(tmp_path, credentials, mode):
    """The server echoes every request header, in its replies (``echo``: kept as the judgment's raw text,
    in the cache and the report) or in a 400 error (``echo_error``: the per-item error's reason). The URL
    password becomes ``Authorization: Basic <base64>``, which takes the Bearer key's place."""
    with HostileServer(mode) as server:
        url = _with_credentials(server.base_url) if credentials == "url" else server.base_url
        done = _judge_cli(tmp_path, url, "--out", str(tmp_path / "run"), model_name=None)  # lists /models too
    assert done.returncode == 0, done.stderr
    assert set(server.authorization) == ({f"Basic {BASIC}"} if credentials == "url" else {f"Bearer {KEY}"})
    _nowhere(tmp_path, done.stdout + done.stderr)
    judgments = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert {j["status"] for j in judgments} == ({"ok"} if mode == "echo" else {"error"})
    echoed = [j["raw"] if mode == "echo" else j["reason"] for j in judgments]  # what the server sent is kept, masked
    assert len(echoed) == 3 and all("authorization: " in text.lower() and "***" in text for text in echoed), echoed


@pytest.mark.timeout(120)
def test_a_server_url_with_credentials_is_named_without_them(tmp_path):
    """``cannot list models at http://user:pass@...`` printed the password, and httpx's message repeats the URL."""
    from judgelab.llm.server import free_port

    nobody = f"http://127.0.0.1:{free_port()}/v1"
    refused = _judge_cli(tmp_path, _with_credentials(nobody), model_name=None)
    with HostileServer("echo_error", error_status=401) as server:  # 401 for /models, echoing the Basic header
        rejected = _judge_cli(tmp_path, _with_credentials(server.base_url), model_name=None)
    for done, url in ((refused, nobody), (rejected, server.base_url)):
        assert done.returncode == 2 and f"cannot list models at {url}/models" in done.stderr, done.stderr
        assert not any(secret in done.stdout + done.stderr for secret in PLANTED), done.stderr
    assert "401" in rejected.stderr


@pytest.mark.timeout(300)
@pytest.mark.parametrize("credentials", ["url", "key"])
def test_debug_tracebacks_hold_no_secret_a_server_echoed(tmp_path, credentials):
    """``--debug`` prints the whole chain of exceptions, which holds what the server sent: here a 401 on
    ``/models`` (URL credentials; httpx's error repeats the URL) and a 500 on every completion (the key;
    retried, then the run stops with the openai error of the last attempt in the chain)."""
    mode_options = {"url": dict(error_status=401), "key": dict(error_status=500)}[credentials]
    with HostileServer("echo_error", **mode_options) as server:
        url = _with_credentials(server.base_url) if credentials == "url" else server.base_url
        done = _judge_cli(tmp_path, url, "--out", str(tmp_path / "run"), debug=True,
                          model_name=None if credentials == "url" else "m")
    assert done.returncode == 2 and "Traceback" in done.stderr, done.stderr
    assert ("HTTPStatusError" if credentials == "url" else "InternalServerError") in done.stderr  # the chain is shown
    assert (f"Basic {BASIC}" if credentials == "url" else f"Bearer {KEY}") in server.authorization  # really sent
    assert credentials == "url" or "authorization: bearer ***" in done.stderr.lower()  # the echoed header is shown, masked
    assert not any(secret in done.stdout + done.stderr for secret in PLANTED), done.stderr


def _non_loopback_address() -> str | None:
    """This machine's address on its network (not 127.x): where a plain-http key would be readable."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 9))  # no packet is sent: this only picks the outgoing interface
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


@pytest.mark.timeout(120)
def test_a_key_is_not_sent_in_clear_text_to_another_host_without_an_opt_in(tmp_path):
    address = _non_loopback_address()
    if address is None:
        pytest.skip("no network address other than loopback on this machine")
    with HostileServer("ok", host=address) as server:
        refused = _judge_cli(tmp_path / "a", server.base_url, model_name=None)
        refused_url = _judge_cli(tmp_path / "b", _with_credentials(server.base_url), env=NO_KEY)
        assert server.requests == 0  # nothing was sent, not even the /models request
        allowed = _judge_cli(tmp_path / "c", server.base_url, env={"JUDGELAB_ALLOW_INSECURE_HTTP": "1"})
        keyless = _judge_cli(tmp_path / "d", server.base_url, env=NO_KEY)
    for done, what in ((refused, "the API key"), (refused_url, "the credentials in the URL")):
        assert done.returncode == 2, done.stderr
        assert f"refusing to send {what} in clear text over http:// to {address}" in done.stderr
        assert "JUDGELAB_ALLOW_INSECURE_HTTP=1" in done.stderr
    assert allowed.returncode == 0 and keyless.returncode == 0, allowed.stderr + keyless.stderr
    assert server.authorization.count(f"Bearer {KEY}") == 3 and len(server.authorization) == 6  # opted in: sent


def test_redact_masks_every_form_of_a_credential():
    from judgelab.redact import redact, remember_key, remember_url

    key, password = f"k-{secrets.token_hex(8)}", f"p@ss/{secrets.token_hex(6)}"
    remember_key(key)
    remember_url(f"https://me:{password.replace('@', '%40').replace('/', '%2F')}@example.org/v1")
    basic = base64.b64encode(f"me:{password}".encode()).decode()
    for text in (key, password, password.replace("@", "%40").replace("/", "%2F"), basic,
                 base64.b64encode(key.encode()).decode()):
        assert redact(f"before {text} after") == "before *** after", text
    # Secrets nobody registered, in the shapes they travel in:
    assert redact("GET http://bob:hunter2@host/v1 failed") == "GET http://***@host/v1 failed"
    assert redact("{'Authorization': 'Bearer abc.def-123'}") == "{'Authorization': 'Bearer ***'}"
    assert redact('"authorization": "Basic Ym9iOmh1bnRlcjI="') == '"authorization": "Basic ***"'
    assert redact("Proxy-Authorization: tok3n") == "Proxy-Authorization: ***"
    assert redact("sent Bearer eyJhbGciOi.x.y") == "sent Bearer ***"
    assert redact("key sk-proj-0123456789abcdefghij") == "key sk-***"
    assert redact("a basic understanding of user agents") == "a basic understanding of user agents"


def test_report_escapes_dataset_and_model_text(tmp_path):
    attack = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    items = [Item(id=f"<b>item-{i}</b>", source=attack, output=f"{attack} {i}", scores={"coherence": 3},
                  system_id=attack, group_id=attack) for i in range(3)]
    backend = ScriptedBackend(lambda request, i: f"Rating: [[3]] {attack}")
    with scripted_client(backend) as client:
        run_judge(fast_judge(), items, client, tmp_path / "run")
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>item-0</b>" not in html
    assert "&lt;script&gt;alert" in html  # shown, as text


def test_python_api_artefacts_are_owner_only_whatever_the_umask(tmp_path):
    """The CLI sets umask 077; a Python caller with the common 022 must get owner-only files all the same:
    run folders (and the parents they create), judgments, run.json, metrics.json, report.html, an
    optimiser's trajectory and judgments, saved configs, the completion cache with its -wal/-shm and
    the embedding cache."""
    from judgelab.embed import EmbeddingCache
    from judgelab.optimize.base import JudgeEvaluator, optimize
    from judgelab.optimize.baselines import RandomSearch

    items = make_items(5)
    backend = ScriptedBackend(lambda request, i: f"Rating: [[{1 + len(request.messages[-1].content) % 5}]]")
    previous = os.umask(0o022)
    try:
        with scripted_client(backend, cache=tmp_path / "new" / "cache.sqlite") as client:
            run_judge(fast_judge(), items, client, tmp_path / "runs" / "deep" / "run")
            evaluator = JudgeEvaluator(items, client)
            optimize(RandomSearch(seed=0), fast_judge(), evaluator, 2, tmp_path / "search", test_items=items[:3])
            sqlite_files = {p.name for p in (tmp_path / "new").iterdir()}
            _owner_only(tmp_path / "new")  # while the database is open: -wal and -shm exist
        fast_judge().save(tmp_path / "configs" / "judge.yaml")
        vectors = EmbeddingCache(tmp_path / "vectors" / "embeddings.sqlite")
        vectors.put_many("model", {"key": np.ones(3)})
        vectors.close()
        plain = tmp_path / "plain.txt"
        plain.write_text("a file judgelab did not write")
    finally:
        os.umask(previous)
    assert {"cache.sqlite-wal", "cache.sqlite-shm"} <= sqlite_files
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert {"runs/deep/run/run.json", "runs/deep/run/judgments.jsonl", "runs/deep/run/metrics.json",
            "runs/deep/run/report.html", "search/trajectory.jsonl", "search/optimizer.json", "search/best.yaml",
            "search/test.json", "configs/judge.yaml", "vectors/embeddings.sqlite"} <= written
    assert any(name.startswith("search/judgments/") for name in written)
    assert stat.S_IMODE(plain.stat().st_mode) == 0o644  # the umask really was 022 (the control)
    plain.unlink()
    _owner_only(*[p for p in tmp_path.iterdir()])


def _nowhere(root: Path, console: str) -> None:
    """No planted secret, in any form, in the console or in any file (cache, run folder, report, HOME)."""
    for secret in PLANTED:
        assert secret not in console, secret
    files = [p for p in root.rglob("*") if p.is_file()]
    assert any(p.name == "cache.sqlite" for p in files)  # the artefacts exist to be searched
    for path in files:
        content = path.read_bytes()
        for secret in PLANTED:
            assert secret.encode() not in content, (path, secret)


def _owner_only(*folders: Path) -> None:
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, (path, oct(path.stat().st_mode))


def test_restrict_tree_makes_a_library_written_folder_owner_only(tmp_path):
    """Weights folders are written by libraries that take no mode (save_pretrained, torch.save,
    numpy.savez): restrict_tree fixes them afterwards, nested folders included."""
    from judgelab.files import restrict_tree

    previous = os.umask(0o022)
    try:
        (tmp_path / "weights" / "tokenizer").mkdir(parents=True)
        (tmp_path / "weights" / "model.safetensors").write_bytes(b"\0")
        (tmp_path / "weights" / "tokenizer" / "vocab.txt").write_text("a")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "weights" / "model.safetensors").stat().st_mode) == 0o644  # the control
    restrict_tree(tmp_path / "weights")
    _owner_only(tmp_path / "weights")
