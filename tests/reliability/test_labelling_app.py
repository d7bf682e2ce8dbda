"""`judgelab annotate` as a server under attack, each a real server process: a second server on the same
labels file, and posts of hundreds of megabytes (what they cost the server's memory is measured)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.annotate_server import AnnotateServer, free_port
from tests.e2e.cli import write_jsonl

pytest.importorskip("starlette", reason="needs the annotate extra")

FIELDS, FIELD_BYTES = 100, 1_000_000  # 100 MB of form fields, each under Starlette's 1 MB part limit


@pytest.fixture()
def items(tmp_path) -> Path:
    return write_jsonl(tmp_path / "items.jsonl", [{"id": f"i{k}", "output": f"summary {k}", "scale": [1, 5]}
                                                  for k in range(6)])


def _annotate(items: Path, out: Path, *more: object) -> list[object]:
    return ["--data", items, "--aspect", "coherence", "--out", out, "--overlap", "0", *more]


# ---- 21: one server per labels file -------------------------------------------------------------------------
def test_a_second_server_on_the_same_labels_file_is_refused_until_the_first_is_killed(items, tmp_path):
    """Two servers with --overlap 0 each handed out the same item (leases live in one process's memory).
    The second is refused at once, exit 2; after a SIGKILL of the first the lock is gone."""
    labels = tmp_path / "labels.jsonl"
    first = AnnotateServer(*_annotate(items, labels)).start()
    try:
        try:
            second = subprocess.run([sys.executable, "-m", "judgelab.cli", "annotate",
                                     *map(str, _annotate(items, labels, "--port", free_port()))],
                                    capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("a second server on the same labels file started and served")
        lines = second.stderr.strip().splitlines()
        assert second.returncode == 2 and len(lines) == 1, second.stderr
        assert f"{labels} is in use by another judgelab annotate server" in lines[0]
    finally:
        assert first.kill(signal.SIGKILL) == -signal.SIGKILL
    with AnnotateServer(*_annotate(items, labels)) as again:  # kill -9 released the lock
        assert again.url.startswith("http://127.0.0.1:")


# ---- 23: what a large post costs the server -------------------------------------------------------------------
def _peak_rss(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc")


def _multipart(boundary: bytes) -> tuple[int, Iterator[bytes]]:
    """FIELDS form fields of FIELD_BYTES each: the body's length and its chunks (never held whole here)."""
    head = [b"--" + boundary + b'\r\nContent-Disposition: form-data; name="f%d"\r\n\r\n' % k for k in range(FIELDS)]
    tail = b"--" + boundary + b"--\r\n"
    length = sum(len(h) + FIELD_BYTES + 2 for h in head) + len(tail)

    def chunks() -> Iterator[bytes]:
        field = b"x" * FIELD_BYTES + b"\r\n"
        for part in head:
            yield part
            yield field
        yield tail

    return length, chunks()


def _post(port: int, cookie: str | None, *, chunked: bool) -> int:
    """POST the 100 MB form to /answer over a raw socket (sending in a thread, so an early answer is
    read while the body still streams); the status code."""
    boundary = b"judgelab-boundary"
    length, chunks = _multipart(boundary)
    head = ["POST /answer HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Origin: http://127.0.0.1:{port}",
            f"Content-Type: multipart/form-data; boundary={boundary.decode()}",
            "Transfer-Encoding: chunked" if chunked else f"Content-Length: {length}"]
    if cookie:
        head.append(f"Cookie: {cookie}")
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)

    def send() -> None:
        try:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
            for chunk in chunks:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except OSError:  # the server answered and closed before the body was all sent
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        status = sock.makefile("rb").readline()
    finally:
        sock.close()
        sender.join(timeout=60)
    assert status.startswith(b"HTTP/1.1 "), status
    return int(status.split()[1])


def _session_cookie(port: int) -> str:
    import httpx

    page = httpx.get(f"http://127.0.0.1:{port}/")
    assert page.status_code == 200
    name = f"judgelab_annotate_{port}"
    return f"{name}={page.cookies[name]}"


@pytest.mark.parametrize(("session", "chunked", "status"), [(False, False, 403), (True, False, 413), (True, True, 413)],
                         ids=["no-session", "session-content-length", "session-chunked"])
def test_a_100mb_post_is_refused_without_the_server_holding_it(items, tmp_path, session, chunked, status):
    """Without a session: 403 before the body is read; with one: 413 once the body passes 64 KB (by its
    Content-Length, or counted as a chunked body streams in). The server's peak memory grows by far
    less than the body (before: Starlette parsed every field first, +100 MB and more)."""
    labels = tmp_path / "labels.jsonl"
    with AnnotateServer(*_annotate(items, labels, "--annotator", "ann")) as server:
        cookie = _session_cookie(server.port) if session else None
        before = _peak_rss(server.process.pid)
        answered = _post(server.port, cookie, chunked=chunked)
        grown = _peak_rss(server.process.pid) - before
    print(f"HTTP {answered}; peak memory grew by {grown / 2**20:.1f} MiB for a {FIELDS * FIELD_BYTES / 2**20:.0f} "
          "MiB post")
    assert answered == status and grown < FIELDS * FIELD_BYTES / 10, (answered, grown)
    assert labels.read_text() == ""
