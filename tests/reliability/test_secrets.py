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


def test_credentials_in_a_server_url_are_refused_and_the_key_stays_out_of_identity_and_messages():
    from judgelab.errors import ConfigError, RequestError
    from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend
    from judgelab.redact import redact

    with pytest.raises(ConfigError, match="credentials in a model URL are not accepted") as refused:
        OpenAICompatibleBackend("m", base_url=f"http://user:{PASSWORD}@127.0.0.1:9/v1", api_key=KEY)
    assert PASSWORD not in str(refused.value) and "http://127.0.0.1:9/v1" in str(refused.value)
    backend = OpenAICompatibleBackend("m", base_url="http://127.0.0.1:9/v1", api_key=KEY)
    assert KEY not in backend.identity and "127.0.0.1:9" in backend.identity
    assert KEY not in backend._where() and redact(f"echo {KEY}") == "echo ***"
    assert str(RequestError(f"server said: {KEY}")) == "server said: ***"  # errors are redacted as they are made


# ---- every form of a planted key and password, through the CLI against servers that echo them ----------------
@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", ["echo", "echo_error"])
def test_secrets_a_server_echoes_back_are_in_no_artefact(tmp_path, mode):
    """The server echoes every request header, in its replies (``echo``: kept as the judgment's raw text,
    in the cache and the report) or in a 400 error (``echo_error``: the per-item error's reason)."""
    with HostileServer(mode) as server:
        done = _judge_cli(tmp_path, server.base_url, "--out", str(tmp_path / "run"), model_name=None)  # lists /models
    # echo_error: every item an error, so the run exits 1 (issue 41, item 3); its message is masked too
    assert done.returncode == (0 if mode == "echo" else 1), done.stderr
    assert set(server.authorization) == {f"Bearer {KEY}"}
    _nowhere(tmp_path, done.stdout + done.stderr)
    judgments = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert {j["status"] for j in judgments} == ({"ok"} if mode == "echo" else {"error"})
    echoed = [j["raw"] if mode == "echo" else j["reason"] for j in judgments]  # what the server sent is kept, masked
    assert len(echoed) == 3 and all("authorization: " in text.lower() and "***" in text for text in echoed), echoed


@pytest.mark.timeout(120)
@pytest.mark.parametrize("model_name", [None, "m"])
def test_a_server_url_with_credentials_is_refused_before_any_request(tmp_path, model_name):
    """One behaviour for ``http://user:pw@host/v1``: refused (exit 2), named without the credentials, nothing
    sent. Before, the password became ``Authorization: Basic`` in place of the key and was written in clear
    wherever the model string was stored."""
    with HostileServer("ok") as server:
        done = _judge_cli(tmp_path, _with_credentials(server.base_url), "--out", str(tmp_path / "run"),
                          model_name=model_name)
    assert done.returncode == 2, done.stderr
    assert "credentials in a model URL are not accepted" in done.stderr and server.base_url in done.stderr
    assert "JUDGELAB_API_KEY" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert server.requests == 0 and not (tmp_path / "run").exists()
    assert not any(secret in done.stdout + done.stderr for secret in PLANTED), done.stderr


@pytest.mark.timeout(300)
@pytest.mark.parametrize("status", [401, 500])
def test_debug_tracebacks_hold_no_secret_a_server_echoed(tmp_path, status):
    """``--debug`` prints the whole chain of exceptions, which holds what the server sent: here a 401 on
    ``/models`` (httpx's error) and a 500 on every completion (retried, then the run stops with the openai
    error of the last attempt in the chain), both echoing the request's headers."""
    with HostileServer("echo_error", error_status=status) as server:
        done = _judge_cli(tmp_path, server.base_url, "--out", str(tmp_path / "run"), debug=True,
                          model_name=None if status == 401 else "m")
    assert done.returncode == 2 and "Traceback" in done.stderr, done.stderr
    assert ("HTTPStatusError" if status == 401 else "InternalServerError") in done.stderr  # the chain is shown
    assert f"Bearer {KEY}" in server.authorization  # really sent
    assert status == 401 or "authorization: bearer ***" in done.stderr.lower()  # the echoed header, masked
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
    assert refused.returncode == 2 and refused_url.returncode == 2, refused.stderr + refused_url.stderr
    assert f"refusing to send the API key in clear text over http:// to {address}" in refused.stderr
    assert "JUDGELAB_ALLOW_INSECURE_HTTP=1" in refused.stderr
    assert "credentials in a model URL are not accepted" in refused_url.stderr
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


# ---- the second outside attack (issue 31, items 1-5) ------------------------------------------------------
def _cli(tmp: Path, *args: str, env: dict[str, str] | None = None):
    env = {**os.environ, "JUDGELAB_API_KEY": KEY, "HOME": str(tmp / "home"), "XDG_CACHE_HOME": str(tmp / "home"),
           **(env or {})}
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *args], capture_output=True, text=True,
                          timeout=600, env=env)


@pytest.mark.timeout(300)
def test_optimize_and_a_config_holding_a_url_with_credentials_write_nothing(tmp_path):
    """Before, ``optimize --model http://user:pw@...`` wrote the password into best.yaml, optimizer.json,
    trajectory.jsonl, run.json and report.html, and ``judge --config`` did the same with a config whose
    ``model`` held it (run.json, report.html, --save-config)."""
    data = save_items(make_items(4), tmp_path / "items.jsonl")
    with HostileServer("ok") as server:
        secret_url = _with_credentials(server.base_url)
        optimized = _cli(tmp_path, "optimize", "random", "--data", str(data), "--aspect", "coherence", "--budget", "2",
                         "--model", secret_url, "--model-name", "m", "--strategy", "scale=5,cot=none",
                         "--cache-path", str(tmp_path / "cache.sqlite"), "--out", str(tmp_path / "search"))
        config = tmp_path / "judge.yaml"
        fast_judge().save(config)
        config.write_text(config.read_text() + f"model: {secret_url}\n")
        judged = _cli(tmp_path, "judge", "--data", str(data), "--aspect", "coherence", "--config", str(config),
                      "--model-name", "m", "--out", str(tmp_path / "run"), "--save-config", str(tmp_path / "saved.yaml"))
    assert server.requests == 0
    assert optimized.returncode == 2 and "credentials in a model URL are not accepted" in optimized.stderr
    assert judged.returncode == 2 and f"{config}:" in judged.stderr and "not accepted" in judged.stderr, judged.stderr
    assert not (tmp_path / "search").exists() and not (tmp_path / "run").exists() and not (tmp_path / "saved.yaml").exists()
    for done in (optimized, judged):
        assert not any(secret in done.stdout + done.stderr for secret in PLANTED), done.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != config]
    assert not any(PASSWORD.encode() in p.read_bytes() for p in files)
    with pytest.raises(ValueError, match="credentials in a model URL"):  # the Python API: configs cannot hold one
        fast_judge().model_validate({**fast_judge().model_dump(), "model": secret_url})
    assert fast_judge().model_validate({**fast_judge().model_dump(), "model": server.base_url}).model == server.base_url


@pytest.mark.timeout(120)
def test_requests_to_this_machine_bypass_a_plain_http_proxy(tmp_path):
    """With HTTP_PROXY set, the key travelled in clear through the proxy (it logged ``Bearer sk-...``), the
    model list and every completion. A server on this machine is now reached directly."""
    with HostileServer("ok") as server, HostileServer("ok", host="127.0.0.2") as proxy:
        proxy_url = proxy.base_url.removesuffix("/v1")
        done = _judge_cli(tmp_path, server.base_url, "--out", str(tmp_path / "run"), model_name=None,
                          env={"HTTP_PROXY": proxy_url, "http_proxy": proxy_url, "ALL_PROXY": proxy_url,
                               "NO_PROXY": "", "no_proxy": ""})
    assert done.returncode == 0, done.stderr
    assert proxy.requests == 0 and proxy.authorization == []
    assert server.authorization and set(server.authorization) == {f"Bearer {KEY}"}


def test_this_machine_means_a_loopback_address_after_resolution(monkeypatch):
    """``evil.localhost`` counted as this machine by its spelling, wherever it resolved."""
    import judgelab.llm.location as location
    from judgelab.errors import ConfigError
    from judgelab.llm.backends.openai_compat import protect_credentials

    resolved = {"evil.localhost": "10.9.8.7", "good.localhost": "127.0.0.5", "mixed.example": ("127.0.0.1", "10.0.0.1")}
    real = socket.getaddrinfo

    def fake_getaddrinfo(host, *args, **kwargs):
        if host not in resolved:
            return real(host, *args, **kwargs)
        addresses = resolved[host] if isinstance(resolved[host], tuple) else (resolved[host],)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, 0)) for address in addresses]

    monkeypatch.setattr(location.socket, "getaddrinfo", fake_getaddrinfo)
    assert not location.is_this_machine("evil.localhost") and not location.is_this_machine("mixed.example")
    assert location.is_this_machine("good.localhost") and location.is_this_machine("127.0.0.1")
    assert location.is_this_machine("::1") and location.is_this_machine("localhost")
    assert not location.is_this_machine("no-such-host.invalid")
    monkeypatch.delenv("JUDGELAB_ALLOW_INSECURE_HTTP", raising=False)
    with pytest.raises(ConfigError, match="refusing to send the API key in clear text over http:// to evil.localhost"):
        protect_credentials("http://evil.localhost:8000/v1", KEY)
    assert protect_credentials("http://good.localhost:8000/v1", KEY) is False
    assert not location.trusts_proxy_settings("http://good.localhost:8000/v1")
    assert location.trusts_proxy_settings("https://api.example.org/v1")


@pytest.mark.timeout(300)
def test_a_key_echoed_outside_the_reply_text_is_masked(tmp_path):
    """The server put the key into the reply's ``model`` field and the model list's id: stored unmasked
    in the cache, run.json, report.html and ``generate --json``."""
    with HostileServer("echo_model") as server:
        judged = _judge_cli(tmp_path, server.base_url, "--out", str(tmp_path / "run"), model_name=None)
        generated = _cli(tmp_path, "generate", "Say hi", "--model", server.base_url, "--json",
                         env={"XDG_CACHE_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "home")})
    assert judged.returncode == 0 and generated.returncode == 0, judged.stderr + generated.stderr
    assert set(server.authorization) == {f"Bearer {KEY}"} and server.posts >= 4
    assert "hostile-model-***" in generated.stdout, generated.stdout
    _nowhere(tmp_path, judged.stdout + judged.stderr + generated.stdout + generated.stderr)


@pytest.mark.parametrize(("model", "expected"), [
    (f"{USER}:{PASSWORD}@127.0.0.1:8000/v1", "unknown model '***@127.0.0.1:8000/v1'"),
    ("http://127.0.0.1:99999/v1", "is not a valid URL"),
    ("http://127.0.0.1:port/v1", "is not a valid URL"),
    ("http://[::1/v1", "is not a valid URL"),
    (f"http://{USER}:{PASSWORD}@[::1/v1", "is not a valid URL"),
    ("http:///v1", "names no host"),
])
def test_a_malformed_model_string_is_one_clear_line_without_its_password(tmp_path, model, expected):
    """A scheme-less ``user:pw@host`` was echoed with the password in the 'unknown model' error; a bad port
    or an unclosed ``[::1`` was an internal error (exit 1)."""
    done = _cli(tmp_path, "generate", "hi", "--model", model, "--model-name", "m", "--no-cache")
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and "internal error" not in done.stderr, done.stderr
    assert PASSWORD not in done.stdout + done.stderr



# ---- issue 50, item 19: a key in the model URL's query, path or fragment ----------------------------------
URL_KEY_FORMS = {  # the model URL built from the server's base URL -> where the key travels
    "query": (lambda base: f"{base}?api_key={KEY}", lambda path: path.endswith(f"/v1/chat/completions?api_key={KEY}")),
    "path": (lambda base: base.replace("/v1", f"/{KEY}/v1"), lambda path: path == f"/{KEY}/v1/chat/completions"),
    "key-segment": (lambda base: base.replace("/v1", f"/key/{KEY[3:]}/v1"),
                    lambda path: path == f"/key/{KEY[3:]}/v1/chat/completions"),
    "fragment": (lambda base: f"{base}#{KEY}", lambda path: path == "/v1/chat/completions"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("form", URL_KEY_FORMS)
def test_a_key_in_the_model_url_is_sent_where_it_belongs_and_stored_nowhere(tmp_path, form):
    """Before: ``--model http://host/v1?api_key=sk-...`` stored the key in run.json, report.html and the cache
    (its key and its file), and sent the requests to ``/v1/?api_key=...chat/completions``. Now the query
    follows each request's path, and wherever judgelab records or prints the URL the key is ``***``."""
    url, sent_right = URL_KEY_FORMS[form]
    with HostileServer("ok") as server:
        done = _judge_cli(tmp_path, url(server.base_url), "--out", str(tmp_path / "run"),
                          "--save-config", str(tmp_path / "saved.yaml"), env=NO_KEY, model_name=None)
    assert done.returncode == 0, done.stderr
    posts = [path for path in server.paths if "chat/completions" in path]
    assert len(posts) == 3 and all(sent_right(path) for path in posts), server.paths
    assert all("/models" in path for path in server.paths if path not in posts)  # listed under the same URL
    secrets_in_url = (KEY, KEY[3:]) if form == "key-segment" else (KEY,)
    for path in (p for p in tmp_path.rglob("*") if p.is_file() and p.name != "items.jsonl"):
        assert not any(secret.encode() in path.read_bytes() for secret in secrets_in_url), path
    assert not any(secret in done.stdout + done.stderr for secret in secrets_in_url)
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert "***" in record["backend"] and record["backend"].startswith("openai-compatible:http://127.0.0.1:")


def test_redact_url_masks_a_key_in_any_part_of_a_url_and_leaves_the_rest():
    from judgelab.redact import redact, redact_url

    assert redact_url(f"http://h/v1?api_key={KEY}&api-version=2024-06-01") == "http://h/v1?api_key=***&api-version=2024-06-01"
    assert redact_url("http://h/v1?x-goog-api-key=abc&token=t0k") == "http://h/v1?x-goog-api-key=***&token=***"
    assert redact_url(f"http://h/{KEY}/v1") == "http://h/***/v1"
    assert redact_url("http://h/key/abc123/v1") == "http://h/key/***/v1"
    assert redact_url("http://h/v1#whatever") == "http://h/v1#***"
    for plain in ("https://x.openai.azure.com/openai/deployments/gpt-4o/?api-version=2024-06-01",
                  "http://h/serving-endpoints/databricks-meta-llama-3-70b-instruct/invocations", "http://127.0.0.1:8080/v1"):
        assert redact_url(plain) == plain
    assert redact("cannot reach http://h/v1/models?api_key=abc&x=1") == "cannot reach http://h/v1/models?api_key=***&x=1"


def test_a_key_in_the_url_is_not_sent_in_clear_text_to_another_host(tmp_path):
    from judgelab.errors import ConfigError
    from judgelab.llm.backends.openai_compat import protect_credentials

    with pytest.raises(ConfigError, match="refusing to send the API key in clear text"):
        protect_credentials(f"http://10.0.0.5/v1?api_key={KEY}", None, False)
    protect_credentials(f"http://127.0.0.1/v1?api_key={KEY}", None, False)  # this machine: fine
    protect_credentials("http://10.0.0.5/v1?api-version=1", None, False)  # no key: fine
