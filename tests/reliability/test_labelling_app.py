"""`judgelab annotate` as a server under attack, each a real server process: a second server on the same
labels file, and posts of hundreds of megabytes (what they cost the server's memory is measured)."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgelab.data.labels import load_labels
from tests.e2e.annotate_server import AnnotateServer, free_port
from tests.e2e.cli import run_cli, write_jsonl

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


# ---- issue 50, item 16: a full disk ---------------------------------------------------------------------------
def _padded_labels(path: Path, free_in_last_page: int) -> None:
    """Labels by alice and bob on every item, the last with a note that leaves ``free_in_last_page`` bytes
    of the file's last 4 KiB page: the next line starts in that room and runs out of disk."""
    rows = [{"item_id": f"i{k}", "aspect": "coherence", "value": 1 + (k + j) % 5, "annotator": who, "scale": [1, 5]}
            for k in range(6) for j, who in enumerate(("alice", "bob"))]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    last = json.dumps({**rows[-1], "note": ""}) + "\n"
    pad = (-(len(text) + len(last) + free_in_last_page)) % 4096
    path.write_text(text + json.dumps({**rows[-1], "note": "x" * pad}) + "\n")
    assert (path.stat().st_size + free_in_last_page) % 4096 == 0


def test_a_full_disk_refuses_an_answer_and_keeps_the_labels_file_whole(items, tmp_path):
    """On a real 5 MB tmpfs, filled up: the answer's write went out in part and the server said saved (500
    here: an internal error), the partial line stayed, the next answer once space was back was glued onto it,
    and the restart and `judgelab agreement` refused the file (`labels.jsonl:13: bad JSON`). Now: 507 with a
    page saying the disk is full and nothing was saved, the file as before; once space is back the same
    answer is saved, and every reader reads the file."""
    import httpx

    from tests.reliability.disks import fill, small_disk

    with small_disk(tmp_path / "disk") as disk:
        labels = disk / "labels.jsonl"
        _padded_labels(labels, free_in_last_page=100)
        before = labels.read_bytes()
        session = ["--data", items, "--aspect", "coherence", "--out", labels, "--annotator", "carol"]
        with AnnotateServer(*session) as server:
            base = f"http://127.0.0.1:{server.port}"
            with httpx.Client(base_url=base, headers={"origin": base}) as browser:
                page = browser.get("/")
                form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page.text))
                filler = fill(disk)
                refused = browser.post("/answer", data={**form, "value": "4"})
                assert refused.status_code == 507, refused.text
                assert "is full" in refused.text and "nothing of this answer was written" in refused.text
                assert labels.read_bytes() == before
                filler.unlink()  # space is back
                assert browser.post("/answer", data={**form, "value": "4"}).status_code == 303
        assert f"an answer was not saved: the disk holding {labels} is full" in server.output
        assert [label.annotator for label in load_labels(labels)][-1] == "carol"
        agreement = run_cli("agreement", labels)
        assert agreement.returncode == 0 and "bad JSON" not in agreement.stderr, agreement.stderr
        with AnnotateServer(*session) as again:
            pass
        assert "partial" not in again.output


# ---- issue 50, item 21: what held, kept as regression tests ------------------------------------------------------
TRAVERSALS = ["/static/../store.py", "/static/..%2fstore.py", "/static/%2e%2e/%2e%2e/judgelab/files.py",
              "/static/../../../../../../../../etc/passwd", "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
              "/static//etc/passwd", "/item/..%2f..%2fetc%2fpasswd", "/../../etc/passwd"]


def _raw_get(port: int, target: str) -> tuple[int, bytes]:
    """A GET of ``target`` exactly as written (an HTTP client would normalise the dots away)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer


def test_paths_that_climb_out_of_the_static_folder_get_nothing(items, tmp_path):
    with AnnotateServer(*_annotate(items, tmp_path / "labels.jsonl"), "--annotator", "ann") as server:
        for target in TRAVERSALS:
            status, answer = _raw_get(server.port, target)
            assert status in (303, 400, 404), (target, status)
            assert b"root:" not in answer and b"import " not in answer, target
        status, answer = _raw_get(server.port, "/static/annotate.css")
        assert status == 200  # the control: the static folder itself is served


@pytest.mark.timeout(600)
def test_four_annotators_through_ten_kill_9s_lose_no_acknowledged_answer(tmp_path):
    """The attack: 4 annotators labelling at once while the server was killed with SIGKILL 10 times and
    restarted; 1,761 answers acknowledged (the redirect after the fsync), none missing from the file."""
    import random
    import time

    import httpx

    from judgelab.data.labels import read_labels

    data = write_jsonl(tmp_path / "items.jsonl", [{"id": f"i{k}", "output": f"summary {k}", "scale": [1, 5]}
                                                  for k in range(150)])
    labels, port = tmp_path / "labels.jsonl", free_port()
    args = ["--data", data, "--aspect", "coherence", "--out", labels]
    acknowledged: dict[str, str] = {}  # answer_id -> annotator
    stop = threading.Event()

    def annotate(name: str) -> None:
        base = f"http://127.0.0.1:{port}"
        while not stop.is_set():
            try:  # a new session after every restart: the server forgets who was logged in
                with httpx.Client(base_url=base, headers={"origin": base}, timeout=10) as browser:
                    page = browser.get("/").text
                    browser.post("/login", data={"csrf": _fields(page)["csrf"], "name": name})
                    while not stop.is_set():
                        form = _fields(browser.get("/").text)
                        if "item_id" not in form:
                            return  # done: nothing left for this annotator
                        answer = browser.post("/answer", data={**form, "value": str(1 + len(acknowledged) % 5)})
                        if answer.status_code != 303:
                            break  # the page expired (a restart): log in again
                        acknowledged[form["answer_id"]] = name
            except httpx.TransportError:
                time.sleep(0.05)  # the server is down: try again

    server = AnnotateServer(*args, port=port).start()
    workers = [threading.Thread(target=annotate, args=(f"annotator-{k}",)) for k in range(4)]
    for worker in workers:
        worker.start()
    rng = random.Random(0)
    try:
        for _ in range(10):
            time.sleep(rng.uniform(0.3, 1.5))
            assert server.kill(signal.SIGKILL) == -signal.SIGKILL
            server = AnnotateServer(*args, port=port).start()
        time.sleep(1.0)
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=60)
        server.kill(signal.SIGTERM)
    written = {label.answer_id for label in read_labels(labels)}
    print(f"{len(acknowledged)} answers acknowledged by {len(workers)} annotators through 10 kill -9s")
    assert len(acknowledged) > 100
    assert set(acknowledged) <= written  # not one acknowledged answer lost


def _fields(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))
