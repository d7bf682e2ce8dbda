"""A small real OpenAI-compatible server that misbehaves on purpose, for the secrets, deadline and
malformed-reply tests: no model behind it, so each case takes seconds.

Per POST (a chat completion), by ``mode``:

- ``"ok"``: a well-formed reply, ``Rating: [[3]]`` (or ``reply``, with ``usage`` laid over its token counts);
- ``"echo"``: a well-formed reply whose text is a rating followed by every request header, as a
  debugging gateway would send back;
- ``"echo_error"``: HTTP ``error_status`` (400: the item fails alone; 401: the run stops; 500: retried)
  whose error message holds every request header;
- ``"trickle"``: a valid reply preceded by ``trickle_bytes`` spaces sent one every ``trickle_gap`` seconds
  (JSON allows leading white space), so no gap between bytes ever reaches a per-read timeout (the
  model list is trickled the same way);
- ``"bad_schema"``: a 200 whose JSON violates the schema: the message content is an object and
  ``prompt_tokens`` is ``"many"``;
- ``"echo_model"``: a well-formed reply whose ``model`` field, like the id in the model list, holds
  the bearer token the request carried (secrets can come back outside the reply text);
- ``"huge"``: a well-formed reply of ``huge_bytes`` bytes whatever ``max_tokens`` says (its text is that
  many ``x``), written 1 MiB at a time, chunked (no length announced) unless ``chunked=False``, and
  gzipped with ``gzip=True`` (a bomb: small on the wire); the model list is as large (one model id of
  that many ``m``);
- ``"retry_after"``: a 429 with the header ``Retry-After: {retry_after}``.

``bad_first=N``: each distinct request body gets its mode's answer on its first N attempts and a
well-formed reply afterwards. ``only="text"``: only requests whose body holds that text get the mode's
answer (one item of several trickles); the others get a well-formed reply. ``delay``: seconds each
well-formed reply takes (a call stays in flight that long, for the signal tests). GET ``/v1/models`` lists one model, or
the ids in ``models`` (in ``echo_error`` mode with a 401 or 403 it answers that status, echoing the headers). Hand-written on ``http.server`` because the faults
are the point: a framework would not let a handler trickle bytes or break the schema.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "hostile-model"


class HostileServer:
    """``with HostileServer("echo") as server: server.base_url`` (``host`` may be a non-loopback address)."""

    def __init__(self, mode: str = "ok", *, host: str = "127.0.0.1", error_status: int = 400,
                 trickle_bytes: int = 10, trickle_gap: float = 1.0, bad_first: int | None = None,
                 only: str | None = None, delay: float = 0.0, reply: str = "Rating: [[3]]",
                 usage: dict[str, object] | None = None, models: list[str] | None = None,
                 huge_bytes: int = 150 * 2**20, chunked: bool = True, gzip: bool = False, retry_after: str = "1"):
        self.mode = mode
        self.models = models or [MODEL]
        self.huge_bytes = huge_bytes
        self.chunked = chunked
        self.gzip = gzip
        self.retry_after = retry_after
        self.reply = reply
        self.usage = usage or {}
        self.error_status = error_status
        self.trickle_bytes = trickle_bytes
        self.trickle_gap = trickle_gap
        self.bad_first = bad_first
        self.only = only
        self.delay = delay
        self.replies = 0  # well-formed chat-completion replies sent in full
        self.authorization: list[str] = []  # every Authorization header received (GET and POST), in order
        self.paths: list[str] = []  # the path (with its query) of every request received, in order
        self.requests = 0  # requests of any kind received
        self.posts = 0  # chat-completion attempts received
        self.post_bytes: list[int] = []  # the body size of each chat-completion attempt, in order
        self.stopping = threading.Event()
        self._attempts: Counter = Counter()
        self._lock = threading.Lock()
        self._httpd = _QuietServer((host, 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="hostile-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def mode_for(self, body: bytes) -> str:
        """This attempt's behaviour: the configured mode, or ``ok`` once ``bad_first`` attempts are spent."""
        with self._lock:
            self.posts += 1
            digest = hashlib.sha256(body).hexdigest()
            self._attempts[digest] += 1
            attempt = self._attempts[digest]
        if self.only is not None and self.only.encode() not in body:
            return "ok"
        return "ok" if self.bad_first is not None and attempt > self.bad_first else self.mode


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hung up before its answer was sent is no server error (it prints nothing)."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def completion(content: object, prompt_tokens: object = 12, model: str = MODEL, **usage: object) -> bytes:
    return json.dumps({
        "id": "c1", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 3, "total_tokens": 15, **usage},
    }).encode()


def _handler_for(server: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # quiet: tests read their own output
            pass

        def _received(self) -> None:
            with server._lock:
                server.requests += 1
                server.paths.append(self.path)
                if "authorization" in self.headers:
                    server.authorization.append(self.headers["authorization"])

        def _echoed_model(self) -> str:
            return f"{MODEL}-{self.headers.get('authorization', '').removeprefix('Bearer ')}"

        def _headers_text(self) -> str:
            return "; ".join(f"{name}: {value}" for name, value in self.headers.items())

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int) -> None:
            self._send(status, json.dumps({"error": {"message": f"rejected; you sent {self._headers_text()}"}}).encode())

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._received()
            names = [self._echoed_model()] if server.mode == "echo_model" else server.models
            models = json.dumps({"object": "list", "data": [{"id": name, "object": "model"} for name in names]}).encode()
            if server.mode == "huge":
                self._huge(b'{"object": "list", "data": [{"object": "model", "id": "', b"m", b'"}]}')
            elif server.mode == "echo_error" and server.error_status in (401, 403):
                self._error(server.error_status)
            elif server.mode == "trickle":
                self._trickle(models)
            else:
                self._send(200, models)

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            self._received()
            with server._lock:
                server.post_bytes.append(len(body))
            mode = server.mode_for(body)
            if mode == "ok":
                if server.delay and server.stopping.wait(server.delay):
                    return
                try:
                    self._send(200, completion(server.reply, **server.usage))
                except OSError:  # the client gave up meanwhile: the reply was paid for and lost
                    return
                with server._lock:
                    server.replies += 1
            elif mode == "echo":
                self._send(200, completion(f"Rating: [[3]] (you sent {self._headers_text()})"))
            elif mode == "echo_error":
                self._error(server.error_status)
            elif mode == "bad_schema":
                self._send(200, completion({"text": "Rating: [[3]]"}, prompt_tokens="many"))
            elif mode == "trickle":
                self._trickle(completion("Rating: [[3]]"))
            elif mode == "echo_model":
                self._send(200, completion("Rating: [[3]]", model=self._echoed_model()))
            elif mode == "huge":
                head, tail = completion("\0").split(b"\\u0000")  # the reply's text goes where the NUL was
                self._huge(head, b"x", tail)
            elif mode == "retry_after":
                self.send_response(429)
                self.send_header("retry-after", server.retry_after)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        def _huge(self, head: bytes, filler: bytes, tail: bytes = b"") -> None:
            """A body of ``huge_bytes`` bytes: ``head``, the filler repeated, ``tail``; 1 MiB per write (gzipped
            as it goes with ``gzip``: a few hundred KB on the wire)."""
            size = max(0, server.huge_bytes - len(head) - len(tail))
            block = filler * 2**20
            packer = zlib.compressobj(9, zlib.DEFLATED, 31) if server.gzip else None
            chunked = server.chunked or packer is not None
            self.send_response(200)
            self.send_header("content-type", "application/json")
            if packer is not None:
                self.send_header("content-encoding", "gzip")
            if chunked:
                self.send_header("transfer-encoding", "chunked")
            else:
                self.send_header("content-length", str(len(head) + size + len(tail)))
            self.end_headers()
            parts = itertools.chain([head], (block[: min(len(block), size - start)] for start in range(0, size, len(block))),
                                    [tail])
            try:
                for part in parts:
                    self._write(packer.compress(part) if packer else part, chunked)
                if packer is not None:
                    self._write(packer.flush(), chunked)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the client stopped reading and closed the connection
                pass

        def _write(self, data: bytes, chunked: bool) -> None:
            if chunked and data:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            elif data:
                self.wfile.write(data)

        def _trickle(self, reply: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(server.trickle_bytes + len(reply)))
            self.end_headers()
            try:
                for _ in range(server.trickle_bytes):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    if server.stopping.wait(server.trickle_gap):
                        return
                self.wfile.write(reply)
            except OSError:  # the client gave up and closed the connection
                pass

    return Handler
