"""The labelling web app: Starlette routes over a ``LabelStore``, served by uvicorn.

Pages are rendered on the server (jinja2 with autoescaping, so a ``<script>`` in a judged text is
shown as text) and answers are plain form posts followed by a redirect, so the app works without
JavaScript; ``static/annotate.js`` only adds the keyboard (digits rate, ``s`` skip, ``b`` back (``p`` in
pairwise sessions, where ``b`` picks response B: every page teaches its session's keys), ``n`` note,
``h`` history, ``r`` reference, ``?`` help, ``d`` dark mode). Security, for a server that shows a
user's data:

* it binds 127.0.0.1 and refuses other Host headers (a DNS-rebinding page cannot read it); bound to
  another address it asks for a random token in the URL (then a cookie) on every request;
* every POST carries the session's CSRF token and must come from the page's own origin; cookies are
  HttpOnly and SameSite=Strict; a POST outside any session is refused before its body is read, one
  inside may be at most ``MAX_POST`` bytes, and its fields must be text (no file uploads);
* one server per labels file (``lock_labels``): two would hand out the same items;
* a Content-Security-Policy allows scripts, styles and images from the app itself only (no inline
  script or style), and every response says ``nosniff``, no framing, and a ``same-origin`` referrer
  policy (the token never leaves in a Referer; ``no-referrer`` would make Chrome send ``Origin: null``
  with the forms, which the origin check refuses);
* nothing about items is logged: uvicorn's access log is off (it would print the URLs).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import re
import secrets
import shlex
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.middleware.gzip import GZipMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from judgelab.annotate.claims import claims_shown
from judgelab.annotate.store import LabelStore, lock_labels, unlock_labels
from judgelab.annotate.task import (
    CONTEXT_FIELDS,
    PAIRWISE,
    AnnotationTask,
    Aspect,
    Scale,
    check_name,
    unshown_text,
)
from judgelab.annotate.view import item_view
from judgelab.data.item import Item
from judgelab.errors import ConfigError, term

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
                    "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Resource-Policy": "same-origin"}
MAX_NOTE = 2000
#: Every form post (an answer with its note, a login, a logout) fits well within this; more is refused (413).
MAX_POST = 64 * 1024
_ANSWER_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("judgelab.annotate", "templates"),
    autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
)


def _asset_version() -> str:
    """A digest of the static files: their URLs change when they do, so browsers may cache them for good."""
    digest = hashlib.sha256()
    for asset in sorted(files("judgelab.annotate").joinpath("static").iterdir(), key=lambda p: p.name):
        digest.update(asset.name.encode() + asset.read_bytes())
    return digest.hexdigest()[:12]


@dataclass
class Session:
    csrf: str
    annotator: str | None = None


class SecurityMiddleware(BaseHTTPMiddleware):
    """Token gate (non-local hosts), same-origin POSTs, and the security headers on every response."""

    def __init__(self, app: Any, token: str | None, access_cookie: str):
        super().__init__(app)
        self.token, self.access_cookie = token, access_cookie

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        granted = False
        if self.token is not None:
            given = request.query_params.get("token") or ""
            granted = hmac.compare_digest(given.encode(), self.token.encode())
            cookie = request.cookies.get(self.access_cookie) or ""
            if not granted and not hmac.compare_digest(cookie.encode(), self.token.encode()):
                return self._secured(_page("message.html.j2", 403, title="Token needed",
                                           message="This server needs the link with its token, as printed where "
                                                   "`judgelab annotate` was started."))
        origin = request.headers.get("origin")
        if request.method == "POST" and origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            return self._secured(_page("message.html.j2", 403, title="Refused",
                                       message="A form from another site cannot post here."))
        response = await call_next(request)
        if granted:
            response.set_cookie(self.access_cookie, self.token or "", httponly=True, samesite="strict")
        return self._secured(response)

    @staticmethod
    def _secured(response: Response) -> Response:
        response.headers.update(SECURITY_HEADERS)
        if "cache-control" not in response.headers:
            response.headers["Cache-Control"] = "no-store"
        return response


class ImmutableStatic(StaticFiles):
    """The assets, cacheable for a year: their URLs carry the digest of their content."""

    async def get_response(self, path: str, scope: Any) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return response


class AnnotateApp:
    """The routes. One instance per server: the task, its store, and the sessions in memory (a
    restart forgets who is logged in, never an answer: the labels file holds those)."""

    def __init__(self, task: AnnotationTask, store: LabelStore, cookie: str):
        self.task, self.store, self.cookie = task, store, cookie
        self.sessions: dict[str, Session] = {}
        self.version = _asset_version()
        self.has_reference = any(item.reference for item in task.items)  # the help lists `r` then
        self.decided = False  # --until-decided: the answer was printed

    # -- sessions -------------------------------------------------------------------------------

    def _session(self, request: Request) -> tuple[str, Session, bool]:
        """(id, session, new?): the request's session, or a new one (annotator preset by --annotator)."""
        sid = request.cookies.get(self.cookie) or ""
        session = self.sessions.get(sid)
        if session is not None:
            return sid, session, False
        sid = secrets.token_urlsafe(32)
        session = self.sessions[sid] = Session(csrf=secrets.token_urlsafe(32), annotator=self.task.annotator)
        return sid, session, True

    def _with_cookie(self, response: Response, sid: str, new: bool) -> Response:
        if new:
            response.set_cookie(self.cookie, sid, httponly=True, samesite="strict")
        return response

    def _posted(handler: Callable[[AnnotateApp, Session, FormData], Awaitable[Response]]):
        """A POST route whose form must carry its session's CSRF token; else a refusal, and nothing done."""

        async def route(self: AnnotateApp, request: Request) -> Response:
            # The session first and the body's size next, both before any of the body is read: a
            # post from outside any session costs the server nothing, and one from inside at most
            # MAX_POST bytes (Starlette's parser would otherwise hold every field in memory).
            session = self.sessions.get(request.cookies.get(self.cookie) or "")
            if session is None:
                return _expired()
            body = await _body_within(request, MAX_POST)
            if body is None:
                return _page("message.html.j2", 413, title="Too large", link="/",
                             message=f"A form here posts at most {MAX_POST // 1024} KB; nothing was saved.")
            async with Request(request.scope, _replaying(body)).form() as form:
                if not hmac.compare_digest(str(form.get("csrf") or "").encode(), session.csrf.encode()):
                    return _expired()
                if any(not isinstance(value, str) for _, value in form.multi_items()):
                    return _page("message.html.j2", 400, title="Text only", link="/",
                                 message="This form takes text fields only, and a file was posted; nothing was saved.")
                return await handler(self, session, form)

        return route

    # -- pages ----------------------------------------------------------------------------------
    # The pages are plain functions: Starlette runs them in its thread pool, so what one computes
    # (the store's answers, --until-decided's decision, the template) never holds up the event loop,
    # which serves the assets and the other annotators meanwhile.

    def home(self, request: Request) -> Response:
        sid, session, new = self._session(request)
        if session.annotator is None:
            return self._with_cookie(self._login(session), sid, new)
        item = self.store.next_item(session.annotator)
        history = self.store.history(session.annotator)
        if item is None:
            decision = self.store.decision()
            self._announce_decided(decision)
            response = self._render("done.html.j2", session, back=len(history) - 1 if history else None,
                                    progress=self.store.progress(session.annotator), decision=decision,
                                    commands=next_commands(self.task))
        else:
            response = self._item_page(session, item, pos=None, back=len(history) - 1 if history else None)
        return self._with_cookie(response, sid, new)

    def _announce_decided(self, decision: Any) -> None:
        """--until-decided's answer, once, on the terminal that started the server: it names the systems,
        which the annotators' pages never show."""
        if decision is not None and decision.decided and not self.decided:
            self.decided = True
            print(f"judgelab annotate: decided: {self.task.question.text}? {decision.answer}", flush=True)  # type: ignore[union-attr]

    def revisit(self, request: Request) -> Response:
        """An answered item again (`b`, or a link of the history): its answers are shown; new ones replace them."""
        sid, session, new = self._session(request)
        pos = request.path_params["pos"]
        history = self.store.history(session.annotator) if session.annotator else []
        if not 0 <= pos < len(history):
            return self._with_cookie(RedirectResponse("/", 303), sid, new)
        item = self.task.by_id[history[pos]]
        return self._with_cookie(self._item_page(session, item, pos=pos, back=pos - 1 if pos else None), sid, new)

    def history(self, request: Request) -> Response:
        """Every item this annotator answered, in order, with the answers: each a link to change them (`h`)."""
        sid, session, new = self._session(request)
        if session.annotator is None:
            return self._with_cookie(RedirectResponse("/", 303), sid, new)
        rows = []
        for pos, item_id in enumerate(self.store.history(session.annotator)):
            item = self.task.by_id[item_id]
            answers = self.store.answers(session.annotator, item_id)
            rows.append(HistoryRow(pos, item_id, _snippet(item),
                                   [(name, answer_text(self.task, answers.get(name))) for name in self.task.aspect_names]))
        return self._with_cookie(self._render("history.html.j2", session, rows=rows,
                                              progress=self.store.progress(session.annotator)), sid, new)

    @_posted
    async def answer(self, session: Session, form: FormData) -> Response:
        if session.annotator is None:
            return RedirectResponse("/", 303)
        item = self.task.by_id.get(str(form.get("item_id") or ""))
        if item is None:
            return _page("message.html.j2", 400, title="Unknown item", message="This item is not in the session.",
                         link="/")
        swapped = self.task.swapped(session.annotator, item.id)
        if form.get("action") == "skip":
            values: dict[str, float | str | None] = dict.fromkeys(self.task.aspect_names)
        else:
            values = {}
            for index, aspect in enumerate(self.task.aspects):
                choice = aspect.scale.choice(str(form.get(_value_field(self.task, index)) or ""))
                if choice is None:
                    message = ("Choose one of the buttons." if len(self.task.aspects) == 1 else
                               f"Choose a value for each aspect ({aspect.name} has none); nothing was saved.")
                    return _page("message.html.j2", 400, title="Unknown answer", message=message, link="/")
                values[aspect.name] = _unswapped(choice.value, swapped) if self.task.pairwise else choice.value
        answer_id = str(form.get("answer_id") or "")
        # Written and fsynced before the redirect: once the next page shows, the answer is on disk. In a
        # thread: an fsync may wait on the disk, and the event loop serves everyone else meanwhile.
        try:
            await run_in_threadpool(
                self.store.record, session.annotator, item.id, values,
                note=str(form.get("note") or "").strip()[:MAX_NOTE], seconds=_seconds_since(form.get("shown_at")),
                order=("ba" if swapped else "ab") if self.task.pairwise else None,
                answer_id=answer_id if _ANSWER_ID.fullmatch(answer_id) else None)
        except OSError as exc:  # nothing was kept: the file is cut back to before this answer
            return self._not_saved(exc)
        return RedirectResponse("/", 303)

    def _not_saved(self, exc: OSError) -> Response:
        """An answer the labels file refused (a full disk, above all): an error page, never a redirect that
        would tell the browser it was saved. The server's terminal gets the same line."""
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        why = (f"the disk holding {self.task.out} is full" if full
               else f"{self.task.out} cannot be written ({exc.strerror or exc})")
        print(f"judgelab annotate: an answer was not saved: {why}", file=sys.stderr, flush=True)
        return _page("message.html.j2", 507 if full else 500, title="Not saved", link="/",
                     message=f"Not saved: {why}, so nothing of this answer was written. "
                             f"{'Free some space on it' if full else 'Once that is fixed'}, answer again "
                             "(go back in the browser: the item is still there).")

    @_posted
    async def login(self, session: Session, form: FormData) -> Response:
        if self.task.annotator is None:
            try:
                session.annotator = check_name(str(form.get("name") or ""))
            except ConfigError as exc:
                return self._login(session, error=str(exc), status=400)
        return RedirectResponse("/", 303)

    @_posted
    async def logout(self, session: Session, form: FormData) -> Response:
        if self.task.annotator is None:
            session.annotator = None
            session.csrf = secrets.token_urlsafe(32)
        return RedirectResponse("/", 303)

    # -- rendering ------------------------------------------------------------------------------

    def _login(self, session: Session, error: str | None = None, status: int = 200) -> Response:
        return self._render("login.html.j2", session, error=error, status=status,
                            annotators=self.store.annotators())

    def _item_page(self, session: Session, item: Item, *, pos: int | None, back: int | None) -> Response:
        annotator = session.annotator or ""
        previous = self.store.answers(annotator, item.id) if pos is not None else {}
        swapped = self.task.swapped(annotator, item.id)
        groups = []
        for index, aspect in enumerate(self.task.aspects):
            label = previous.get(aspect.name)
            chosen = None
            if label is not None and label.value is not None:
                chosen = _shown(label.value, swapped) if self.task.pairwise else label.value
            groups.append(AspectGroup(index, aspect, _value_field(self.task, index), chosen))
        notes = [label.note for label in previous.values() if label.note]
        left, right = (item.output_b, item.output_a) if swapped else (item.output_a, item.output_b)
        return self._render("item.html.j2", session, item=item, pos=pos, back=back, groups=groups,
                            chosen=groups[0].chosen, skipped=bool(previous) and all(a.skipped for a in previous.values()),
                            note=notes[0] if notes else "",
                            sections=sections(item), view=item_view(item), left=left, right=right,
                            progress=self.store.progress(annotator),
                            unshown=unshown_text(item), context_field=CONTEXT_FIELDS[item.kind][0],
                            judgment=self.task.judgments.get(item.id), answer_id=secrets.token_urlsafe(16),
                            claims=None if self.task.pairwise else claims_shown(item.output,
                                                                                 self.task.judgments.get(item.id)),
                            shown_at=f"{time.time():.3f}")

    def _render(self, template: str, session: Session, status: int = 200, **context: Any) -> Response:
        html = _TEMPLATES.get_template(template).render(
            task=self.task, annotator=session.annotator, csrf=session.csrf, fixed_annotator=self.task.annotator,
            static=lambda name: f"/static/{name}?v={self.version}", eta=_eta, back_key=back_key(self.task),
            rating_keys=rating_keys(self.task), has_reference=self.has_reference, choices_class=choices_class,
            **context)
        return HTMLResponse(html, status_code=status)


def _expired() -> Response:
    return _page("message.html.j2", 403, title="Please answer again",
                 message="This page has expired (the server restarted, or you switched annotator). "
                         "Nothing you saved before is lost.", link="/")


async def _body_within(request: Request, limit: int) -> bytes | None:
    """The request body, or None once it is known to exceed ``limit`` bytes (by its Content-Length,
    else while it streams in); what is past the limit is never read."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def _replaying(body: bytes) -> Callable[[], Awaitable[dict[str, Any]]]:
    """An ASGI ``receive`` that hands over ``body`` (already read) to a new ``Request``."""
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop() if messages else {"type": "http.disconnect"}

    return receive


def _page(template: str, status: int, **context: Any) -> Response:
    """A page outside any session (refusals): no form, no annotator."""
    context.setdefault("link", None)
    html = _TEMPLATES.get_template(template).render(task=None, annotator=None, static=lambda name: f"/static/{name}",
                                                     **context)
    return HTMLResponse(html, status_code=status)


@dataclass(frozen=True)
class AspectGroup:
    """One aspect's buttons on the item page: the form field they fill and the value chosen before."""

    index: int
    aspect: Aspect
    field: str
    chosen: float | str | None


@dataclass(frozen=True)
class HistoryRow:
    pos: int
    item_id: str
    snippet: str
    answers: list[tuple[str, str]]  # (aspect, the answer as shown)


def _value_field(task: AnnotationTask, index: int) -> str:
    """The form field of aspect ``index``: ``value`` when there is one aspect (its buttons submit)."""
    return "value" if len(task.aspects) == 1 else f"value-{index}"


def _snippet(item: Item, width: int = 90) -> str:
    """The start of what is rated, on one line (the history lists items by it)."""
    shown = item.prompt if item.kind == "pairwise" else item.judged
    if item.kind == "relevance":
        shown = f"{item.query} \u2014 {shown}"
    text = " ".join((shown or "").split())
    return text if len(text) <= width else text[:width - 1].rstrip() + "\u2026"


def back_key(task: AnnotationTask) -> str:
    """The key that goes back to the item answered before: ``b``, or ``p`` where ``b`` picks response B."""
    return "p" if task.pairwise else "b"


def rating_keys(task: AnnotationTask) -> list[str]:
    """The keys that rate, in the order of the buttons (every aspect's, once each)."""
    return list(dict.fromkeys(choice.key for aspect in task.aspects for choice in aspect.scale.choices))


#: How many characters one row of buttons may show (the widest number on every button, a character's room
#: between buttons): about what the side panel holds within an aspect's frame. 1-10 fits (29).
ROW_CHARACTERS = 30


def choices_class(scale: Scale) -> str:
    """How a scale's buttons are laid out: ``row`` (one row of equal buttons, low to high: it reads as
    a scale; ``keyed`` when a button's key differs from its number, shown above it), or ``column`` (one
    button a line: preferences, captions, and numbers too long to share a row)."""
    if scale.kind == "pairwise":
        return "column pairwise"
    if scale.captioned:
        return "column captioned"
    widest = max(len(choice.text) for choice in scale.choices)
    if widest * len(scale.choices) + len(scale.choices) - 1 > ROW_CHARACTERS:
        return "column"
    return "row keyed" if any(choice.key != choice.text for choice in scale.choices) else "row"


def next_commands(task: AnnotationTask) -> list[list[str]]:
    """What the done page suggests, as the words of each command: the labels file (and the items) named by
    their paths as given, quoted for a shell; ``--aspect`` when the file rates several."""
    aspect = ["--aspect", shlex.quote(task.aspect)] if len(task.aspects) > 1 else []
    labels = shlex.quote(str(task.out))
    data = shlex.quote(str(task.data_path)) if task.data_path is not None else "ITEMS"
    return [["judgelab", "meta", "--data", data, "--judgments", "RUN", "--human", labels, *aspect],
            ["judgelab", "agreement", labels, *aspect]]


def answer_text(task: AnnotationTask, label: Any) -> str:
    """An answer as the history shows it: a preference as the annotator saw the pair (the button's
    words), the value (with its caption) of a rating, or ``skipped``."""
    if label is None:
        return "\u2014"
    if label.skipped or label.value is None:
        return "skipped"
    if task.pairwise:
        swapped = label.order == "ba" if label.order else task.swapped(label.annotator or "", label.item_id)
        shown = _shown(label.value, swapped) if label.value in ("a", "b", "tie") else None
        return next((c.caption for c in PAIRWISE.choices if c.value == shown), str(label.value))
    aspect = task.aspect_named(label.aspect)
    choice = next((c for c in aspect.scale.choices if c.value == label.value), None) if aspect else None
    if choice is not None and choice.caption != choice.text:
        return f"{choice.text} {choice.caption}"
    return f"{label.value:g}" if isinstance(label.value, float) else str(label.value)


@dataclass(frozen=True)
class Section:
    """A text of the item as the page shows it; ``rated``: what the annotator rates."""

    title: str
    text: str | None
    dom_id: str
    rated: bool = False
    folded: bool = False


def sections(item: Item) -> list[Section]:
    """What an annotator reads, by the item's shape (pairwise responses are laid out beside each other)."""
    if item.kind == "relevance":
        shown = [Section("Query", item.query, "query"), Section("Passage", item.passage, "output", rated=True)]
    elif item.kind == "pairwise":
        shown = [Section("Instruction", item.instruction or item.source, "source"),
                 Section("Context", item.context, "context")]
    else:
        shown = [Section("Source", item.source, "source"), Section("Context", item.context, "context"),
                 Section("Output", item.output, "output", rated=True),
                 Section("Reference", item.reference, "reference", folded=True)]
    return [section for section in shown if section.text]


def _unswapped(shown: float | str, swapped: bool) -> str:
    """The preference in the items' own order from the side the annotator picked."""
    if shown == "tie":
        return "tie"
    return ("b" if shown == "left" else "a") if swapped else ("a" if shown == "left" else "b")


def _shown(value: float | str, swapped: bool) -> str:
    if value == "tie":
        return "tie"
    return ("right" if value == "a" else "left") if swapped else ("left" if value == "a" else "right")


def _seconds_since(shown_at: Any) -> float | None:
    """Time on the item: from the page's render to the answer (None when the field is not ours)."""
    try:
        seconds = time.time() - float(str(shown_at))
    except ValueError:
        return None
    return round(seconds, 3) if 0 <= seconds < 86400 else None


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return "under a minute left"
    minutes = round(seconds / 60)
    return f"about {minutes} min left" if minutes < 90 else f"about {seconds / 3600:.1f} h left"


def is_local(host: str) -> bool:
    return host in LOCAL_HOSTS


def create_app(task: AnnotationTask, *, store: LabelStore | None = None, token: str | None = None,
               host: str = "127.0.0.1", port: int = 0) -> Starlette:
    """The ASGI app for ``task`` (run it with any ASGI server). ``token``: required in the URL (or its
    cookie) on every request; ``serve`` sets one whenever ``host`` is not local. Cookies are named
    after ``port`` so that two servers on one machine keep their sessions apart."""
    store = store or LabelStore(task)
    app = AnnotateApp(task, store, cookie=f"judgelab_annotate_{port}")
    routes = [
        Route("/", app.home),
        Route("/item/{pos:int}", app.revisit),
        Route("/history", app.history),
        Route("/answer", app.answer, methods=["POST"]),
        Route("/login", app.login, methods=["POST"]),
        Route("/logout", app.logout, methods=["POST"]),
        # the assets gzipped (a first visit's CSS and script shrink to a third); pages are not, as they
        # carry the session's form token beside the texts (compression would leak it by length, BREACH)
        Mount("/static", GZipMiddleware(ImmutableStatic(packages=[("judgelab.annotate", "static")]), minimum_size=500),
              name="static"),
    ]
    middleware = [Middleware(SecurityMiddleware, token=token, access_cookie=f"judgelab_access_{port}")]
    if is_local(host):
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost", "::1"]))
    starlette = Starlette(routes=routes, middleware=middleware)
    starlette.state.store = store
    return starlette


def describe_aspects(task: AnnotationTask) -> str:
    """The aspects and their scales as the start line says them: ``aspect 'coherence', scale 1-5``."""
    if len(task.aspects) == 1:
        return f"aspect {task.aspect!r}, scale {task.scale.summary}"
    return "aspects " + ", ".join(f"{a.name!r} (scale {a.scale.summary})" for a in task.aspects)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or a clear error when the port is taken (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not the default 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # sockets that say they are TCP, and with it on every page on a kept-alive connection waits ~40 ms
    # for the browser's delayed ACK between the headers and the body.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    if os.name == "posix":
        # A server restarted after a kill finds its old connections in TIME_WAIT; on POSIX systems
        # SO_REUSEADDR lets it bind anyway, yet never beside a process that still listens there.
        # (On Windows it would allow just that, so it is left off.)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} on {host} is in use (another annotate server?): choose another with "
                              f"{term('port')}, or {term('port')} 0 for any free one") from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


def serve(task: AnnotationTask, *, host: str = "127.0.0.1", port: int = 8765, announce=print) -> None:
    """Serve ``task`` until Ctrl-C (or SIGTERM). Prints the URL (with the token when ``host`` is not
    local). Every answer is on disk when the browser moves on; a rerun continues where it stopped."""
    import uvicorn

    token = None if is_local(host) else secrets.token_urlsafe(24)
    with contextlib.ExitStack() as held:  # let go of all, in reverse order, however serving ends
        sock = bind(host, port)
        held.callback(sock.close)
        held.callback(unlock_labels, lock_labels(task.out))  # one server per labels file
        store = LabelStore(task)
        held.callback(store.close)
        port = sock.getsockname()[1]
        shown_host = f"[{host}]" if ":" in host else host
        url = f"http://{shown_host}:{port}/" + (f"?token={token}" if token else "")
        lines = [f"judgelab annotate: {url}",
                 f"  {len(task.items)} items, {describe_aspects(task)}; answers appended to {task.out} "
                 "(Ctrl-C stops; run the same command again to continue)"]
        if token:
            lines.append(f"  listening on {host}: anyone who can reach this machine needs the token in the link "
                         "above; the traffic is plain HTTP")
        # one write: whoever reads the URL and stops the server at once still gets the lines after it
        announce("\n".join(lines))
        with contextlib.suppress(AttributeError):
            sys.stdout.flush()
        config = uvicorn.Config(create_app(task, store=store, token=token, host=host, port=port),
                                log_level="warning", access_log=False, lifespan="off", server_header=False)
        uvicorn.Server(config).run(sockets=[sock])
