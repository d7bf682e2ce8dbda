"""Secrets out of every message: API keys, credentials in a server URL, any Authorization value.

Backends register the secrets they hold (``remember_key``, ``remember_url``). ``redact`` then replaces
each known secret in the forms a server may echo it (as given, percent-encoded or decoded, base64 as in
a ``Basic`` header) and, known or not, credentials in a URL (``scheme://user:pass@``), the value of any
``Authorization`` header and ``Bearer``/``Basic`` tokens. ``JudgelabError`` redacts its message when it
is made, which every error a judgment records, a report shows or the CLI prints goes through; the CLI
also redacts what it prints itself (``--debug`` tracebacks, internal errors).

The registry is per process on purpose: the CLI prints errors (and tracebacks) far from the backend
that knows the secrets, and a key must not reach the terminal whichever object raised.
"""

from __future__ import annotations

import base64
import re
import threading
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

MASK = "***"
_MIN_LENGTH = 4  # shorter "secrets" (a user name "a") would mask ordinary words

_known: set[str] = set()
_lock = threading.Lock()

_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
# "Authorization: Bearer x", {"authorization": "Basic x"}, {'Authorization': 'x'}: keep the scheme, mask the value.
_AUTHORIZATION = re.compile(
    r"""(?i)(\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?)((?:bearer|basic|token|digest)\s+)?[^\s"',;}\]]+""")
_TOKEN = re.compile(r"\b((?i:bearer)\s+)[A-Za-z0-9._~+/-]{8,}=*|\b(Basic\s+)[A-Za-z0-9+/]{8,}={0,2}")
_OPENAI_STYLE_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")


def remember_key(key: str | None) -> None:
    """Mask ``key`` wherever it shows up from now on, in this process."""
    _remember(_forms(key))


def remember_url(url: str | None) -> None:
    """Mask the credentials of ``scheme://user:password@host`` (the password, or the user name when it
    stands alone as a token), also as the base64 ``user:password`` of the Basic header they become."""
    user, password = _userinfo(url or "")
    if password:
        forms = _forms(password)
        for pair in {f"{user or ''}:{password}", f"{unquote(user or '')}:{unquote(password)}"}:
            forms |= _forms(pair)
        _remember(forms)
    elif user:
        remember_key(user)


def _userinfo(url: str) -> tuple[str | None, str | None]:
    try:
        parts = urlsplit(url)
        return parts.username, parts.password
    except ValueError:  # an unclosed "[::1" or a bad port: the credentials still must not be shown
        netloc = url.partition("://")[2].partition("/")[0]
        if "@" not in netloc:
            return None, None
        user, _, password = netloc.rsplit("@", 1)[0].partition(":")
        return user, password or None


def redact(text: str) -> str:
    """``text`` with every known secret and every credential-shaped value replaced by ``***``."""
    known = _known_pattern(frozenset(_known))
    if known is not None:
        text = known.sub(MASK, text)
    text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
    text = _AUTHORIZATION.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{MASK}", text)
    text = _TOKEN.sub(lambda m: f"{m.group(1) or m.group(2)}{MASK}", text)
    return _OPENAI_STYLE_KEY.sub(f"sk-{MASK}", text)


def redact_known(text: str) -> str:
    """Only the known secrets: for model replies, where a header-shaped text may be genuine content."""
    known = _known_pattern(frozenset(_known))
    return text if known is None else known.sub(MASK, text)


def _forms(secret: str | None) -> set[str]:
    if not secret:
        return set()
    forms = {secret, quote(secret, safe=""), unquote(secret)}
    encoded = {base64.b64encode(form.encode()).decode() for form in forms}
    forms |= encoded | {form.rstrip("=") for form in encoded}  # padded as in a Basic header, or not
    return {form for form in forms if len(form) >= _MIN_LENGTH}


def _remember(forms: set[str]) -> None:
    with _lock:
        _known.update(forms)


@lru_cache(maxsize=8)
def _known_pattern(known: frozenset[str]) -> re.Pattern[str] | None:
    if not known:
        return None
    # Longest first, so "user:pass" is masked whole before "pass" alone.
    return re.compile("|".join(re.escape(form) for form in sorted(known, key=len, reverse=True)))
