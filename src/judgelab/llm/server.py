"""Start a local OpenAI-compatible llama.cpp server (``python -m llama_cpp.server``) on 127.0.0.1.

For tests, benchmarks, and users who want one model served to several processes. Needs the
``server`` extra. The server is stopped by PID when the context exits.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from judgelab.errors import BackendError


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM when the thread that started it dies (even by kill -9), so a
    killed test, benchmark or run never leaves a model server holding the CPU. Elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_DEATHSIG
        except (OSError, AttributeError):
            pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """``with LlamaServer(gguf) as server: server.base_url`` -> ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, model_path: str | Path, model_alias: str = "local", n_ctx: int = 4096,
                 n_threads: int | None = None, port: int | None = None, startup_timeout: float = 120.0,
                 log_path: str | Path | None = None):
        self.model_path = Path(model_path)
        self.model_alias = model_alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.port = port or free_port()
        self.startup_timeout = startup_timeout
        self.log_path = Path(log_path) if log_path else None
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
            "--model_alias", self.model_alias, "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads), "--logits_all", "True",
        ]
        log = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_die_with_parent)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise BackendError(f"llama.cpp server exited with code {self.process.returncode} while starting")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise BackendError(f"llama.cpp server did not answer on port {self.port} within {self.startup_timeout}s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
