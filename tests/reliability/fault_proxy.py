"""A fault-injecting HTTP proxy for tests and benchmarks: 127.0.0.1 in front of a real server.

Each POST (a chat completion) is forwarded to the upstream server, or instead answered with a
fault drawn at the configured rates: HTTP 500, 429 with Retry-After, 503, a connection reset,
a stall past the client's timeout, or a body cut short (a short read, or a complete HTTP
response whose JSON is cut). GET requests (``/models``) always pass.

The draw is seeded by ``(seed, request body, attempt number of that body)``, so the faults a
request meets do not depend on the order concurrent requests arrive in: a run is reproducible.

Hand-written on asyncio streams rather than aiohttp/mitmproxy because the faults live below
HTTP (resets, short reads, stalls) where a framework would hide the socket from us.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx

FAULTS = ("http500", "http429", "http503", "reset", "stall", "truncate_body", "truncate_json")


@dataclass(frozen=True)
class FaultRates:
    """Probabilities per request attempt. ``errors`` is split evenly over 500 / 429 / 503."""

    errors: float = 0.0
    resets: float = 0.0
    stalls: float = 0.0
    truncations: float = 0.0  # split evenly over a short HTTP body and a complete body of cut JSON

    def table(self) -> list[tuple[str, float]]:
        third, half = self.errors / 3, self.truncations / 2
        return [("http500", third), ("http429", third), ("http503", third), ("reset", self.resets),
                ("stall", self.stalls), ("truncate_body", half), ("truncate_json", half)]


@dataclass
class ProxyStats:
    injected: Counter = field(default_factory=Counter)
    forwarded: int = 0  # requests the upstream server answered (paid upstream, delivered or not)
    delivered: int = 0  # complete 200 answers handed to the client
    delivered_keys: Counter = field(default_factory=Counter)  # body digest -> complete deliveries
    #: request body digest -> (reply text, prompt_tokens, completion_tokens) of the answer delivered
    answers: dict = field(default_factory=dict)
    upstream_errors: int = 0  # forwards that failed on the upstream side (answered 502)
    authorization: set = field(default_factory=set)  # Authorization headers seen (secrets test)
    retry_after_gaps: list = field(default_factory=list)  # seconds between a 429 and the retry


class FaultProxy:
    """``with FaultProxy("http://127.0.0.1:8000", FaultRates(errors=0.2), seed=1) as proxy: proxy.base_url``"""

    def __init__(self, upstream: str, rates: FaultRates = FaultRates(), seed: int = 0, stall_s: float = 3.0,
                 retry_after: float = 1.0, error_body: bytes | None = None, forced: tuple[str, ...] = (),
                 port: int = 0):
        """``forced``: the first attempt of the i-th distinct request meets ``forced[i]`` whatever the
        rates draw, so a short test is sure to see every kind of fault."""
        self.upstream = upstream.rstrip("/").removesuffix("/v1")
        self.rates = rates
        self.seed = seed
        self.stall_s = stall_s
        self.retry_after = retry_after
        self.error_body = error_body
        self.forced = forced
        self.down = False  # True: every connection is reset (the server is gone)
        self.down_after: int | None = None  # go down after this many complete deliveries
        self._claimed = 0  # answers allowed out (see _may_deliver)
        self.stats = ProxyStats()
        self._attempts: Counter = Counter()
        self._last_429: dict[str, float] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy", daemon=True)
        self.port = port  # 0: any free port; a rerun passes the first proxy's port (the same base URL)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FaultProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    async def _start(self) -> None:
        # No keep-alive upstream: a pooled connection the server closed while idle would fail the
        # next forward with a read error that is the proxy's, not an injected fault.
        self._http = httpx.AsyncClient(base_url=self.upstream, timeout=300,
                                       limits=httpx.Limits(max_keepalive_connections=0))
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        async def shutdown() -> None:
            self._server.close()
            await self._http.aclose()

        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- one connection, possibly several keep-alive requests -------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                if self.down:
                    _reset(writer)
                    return
                keep_open = await self._answer(request, writer)
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _answer(self, request: _HttpRequest, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection was closed on purpose."""
        if "authorization" in request.headers:
            self.stats.authorization.add(request.headers["authorization"])
        fault = self._draw(request) if request.method == "POST" else None
        if fault:
            self.stats.injected[fault] += 1
        if fault and fault.startswith("http"):  # also any status forced by name, e.g. "http401"
            await self._status(writer, int(fault[4:]))
            return True
        if fault == "reset":
            _reset(writer)
            return False
        if fault == "stall":
            await asyncio.sleep(self.stall_s)
            _reset(writer)
            return False
        status, headers, body = await self._forward(request)
        if request.method == "POST" and status == 200 and fault is None and not self._may_deliver():
            _reset(writer)  # gone while the upstream worked on it: that answer is lost, as a real outage loses it
            return False
        if fault == "truncate_body":  # the announced length, half the bytes, then the socket closes
            await _write(writer, status, headers, body[: len(body) // 2], length=len(body))
            writer.transport.abort()
            return False
        if fault == "truncate_json":  # a complete HTTP message whose JSON stops half way
            await _write(writer, status, headers, body[: len(body) // 2])
            return True
        await _write(writer, status, headers, body)
        if request.method == "POST" and status == 200:
            self._delivered(request, body)
        return True

    def _draw(self, request: _HttpRequest) -> str | None:
        key = request.digest
        with self._lock:
            attempt = self._attempts[key]
            self._attempts[key] += 1
            if key in self._last_429:
                self.stats.retry_after_gaps.append(time.monotonic() - self._last_429.pop(key))
            distinct = len(self._attempts) - 1
            fault = self.forced[distinct] if attempt == 0 and distinct < len(self.forced) else self._drawn(key, attempt)
            if fault == "http429":
                self._last_429[key] = time.monotonic()
        return fault

    def _drawn(self, key: str, attempt: int) -> str | None:
        draw = random.Random(f"{self.seed}:{key}:{attempt}").random()
        for fault, rate in self.rates.table():
            if draw < rate:
                return fault
            draw -= rate
        return None

    async def _status(self, writer: asyncio.StreamWriter, status: int) -> None:
        headers = {"content-type": "application/json"}
        if status == 429:
            headers["retry-after"] = f"{self.retry_after:g}"
        body = self.error_body or json.dumps({"error": {"message": f"injected {status}"}}).encode()
        await _write(writer, status, headers, body)

    async def _forward(self, request: _HttpRequest) -> tuple[int, dict[str, str], bytes]:
        headers = {k: v for k, v in request.headers.items() if k in ("content-type", "authorization", "accept")}
        try:
            response = await self._http.request(request.method, request.path, headers=headers, content=request.body)
        except httpx.HTTPError as exc:  # as a real gateway does: the upstream failed, say so
            self.stats.upstream_errors += 1
            return 502, {"content-type": "text/plain"}, f"upstream: {type(exc).__name__}".encode()
        self.stats.forwarded += request.method == "POST"
        return response.status_code, {"content-type": response.headers.get("content-type", "application/json")}, \
            response.content

    def _may_deliver(self) -> bool:
        """Whether an answer may still be written, claimed before the write: with several requests at the
        upstream at once, exactly ``down_after`` answers go out (counting after the write let a second
        answer through while the first was being written, and the client may never read it)."""
        with self._lock:
            if self.down:
                return False
            self._claimed += 1
            if self.down_after is not None and self._claimed >= self.down_after:
                self.down = True
            return True

    def _delivered(self, request: _HttpRequest, body: bytes) -> None:
        answer = json.loads(body)
        usage = answer.get("usage") or {}
        text = answer["choices"][0]["message"]["content"]
        with self._lock:
            self.stats.delivered += 1
            self.stats.delivered_keys[request.digest] += 1
            self.stats.answers[request.digest] = (text, usage.get("prompt_tokens", 0),
                                                  usage.get("completion_tokens", 0))


@dataclass
class _HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()


async def _read_request(reader: asyncio.StreamReader) -> _HttpRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return _HttpRequest(method, path, headers, body)


async def _write(writer: asyncio.StreamWriter, status: int, headers: dict[str, str], body: bytes,
                 length: int | None = None) -> None:
    head = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
    head.append(f"content-length: {len(body) if length is None else length}")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with an RST (SO_LINGER 0), as a crashed server or a dropped connection does."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
