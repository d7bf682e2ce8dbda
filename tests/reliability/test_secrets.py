"""A planted API key reaches the server and nowhere else: not the cache, the run folder, the report,
the logs or an error message. Files are owner-only; the report escapes dataset and model text."""

from __future__ import annotations

import os
import secrets
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
from tests.reliability.kill import CRITERIA
from tests.reliability.scenario import fast_judge, make_items

KEY = f"sk-planted-{secrets.token_hex(12)}"


def _judge_cli(tmp: Path, url: str, *extra: str):
    env = {**os.environ, "JUDGELAB_API_KEY": KEY, "HOME": str(tmp / "home"), "XDG_CACHE_HOME": str(tmp / "home")}
    data = save_items(make_items(3), tmp / "items.jsonl")
    return subprocess.run(
        [sys.executable, "-m", "judgelab.cli", "judge", "--data", str(data), "--aspect", "coherence",
         "--model", url, "--model-name", "smollm", "--family", "summarisation", "--criteria", CRITERIA,
         "--strategy", "scale=5,cot=none", "--cache-path", str(tmp / "cache" / "cache.sqlite"), *extra],
        capture_output=True, text=True, timeout=600, env=env)


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
    from judgelab.llm.backends.openai_compat import OpenAICompatibleBackend

    backend = OpenAICompatibleBackend("m", base_url=f"http://user:{KEY}@127.0.0.1:9/v1", api_key=KEY)
    assert KEY not in backend.identity and "127.0.0.1:9" in backend.identity
    assert KEY not in backend._where() and backend._redact(f"echo {KEY}") == "echo ***"


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
    assert KEY not in console
    files = [p for p in root.rglob("*") if p.is_file()]
    assert any(p.name == "cache.sqlite" for p in files)  # the artefacts exist to be searched
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


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
