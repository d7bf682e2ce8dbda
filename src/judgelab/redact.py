"""Secrets out of every message: API keys, credentials in a server URL, any Authorization value.

Backends register the secrets they hold (``remember_key``, ``remember_url``). ``redact`` then replaces
each known secret in the forms a server may echo it (as given, percent-encoded or decoded, base64 as in
a ``Basic`` header) and, known or not, credentials in a URL (``scheme://user:pass@``), the value of a
URL's query parameter named like a key (``?api_key=``, ``&token=``, ``#access_token=``), the value of any
``Authorization`` header and ``Bearer``/``Basic`` tokens.

A model URL may carry its key outside the userinfo: in the query (``/v1?api_key=...``), in the path
(``/key/<key>/v1``, ``/sk-.../v1``) or in the fragment. ``redact_url`` gives the URL as judgelab records
and prints it (a backend's identity, hence run.json, reports and cache keys; a saved config; messages),
each such part ``***``, and ``remember_url`` registers those parts as secrets. ``JudgelabError`` redacts its message when it
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
from urllib.parse import quote, unquote, urlsplit, urlunsplit

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
#: a query parameter or path segment named like a credential: api_key, key, X-Api-Key, access_token, sig, ...
_SECRET_NAME = r"[\w.-]*(?:key|token|secret|passw|pwd|auth|sig|credential|session|bearer|jwt)[\w.-]*"
_NAMED_SECRET = re.compile(rf"(?i)^{_SECRET_NAME}$")
_QUERY_SECRET = re.compile(rf"(?i)([?&;#]{_SECRET_NAME}=)[^&#\s\"'<>]+")
_TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9._~+/=-]{20,}")
#: a path segment that says the next one is a key (``/key/<key>/v1``); stricter than a query's names, since
#: a masked segment that was no key would merge two servers' identities (and caches)
_KEY_SEGMENT = re.compile(r"(?i)^(?:api[-_]?)?(?:key|token|secret|password)s?$")


def remember_key(key: str | None) -> None:
    """Mask ``key`` wherever it shows up from now on, in this process."""
    _remember(_forms(key))


def remember_url(url: str | None) -> None:
    """Mask the credentials of ``scheme://user:password@host`` (the password, or the user name when it
    stands alone as a token), also as the base64 ``user:password`` of the Basic header they become, and
    a key in the URL's query, path or fragment (what ``redact_url`` masks)."""
    for secret in url_secrets(url or ""):
        remember_key(secret)
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


def redact_url(url: str) -> str:
    """``url`` as judgelab records and prints it: the credentials of its userinfo, a key in its query
    (by the parameter's name, or the value's look), in its path (a segment that looks like a key, or
    follows one named like a key) and its whole fragment (never sent, and no model URL needs one) each
    ``***``. The request itself goes to the URL as given."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = f"{MASK}@{parts.netloc.rsplit('@', 1)[1]}" if "@" in parts.netloc else parts.netloc
    segments = parts.path.split("/")
    path = "/".join(MASK if _secret_segment(segments, k) else segment for k, segment in enumerate(segments))
    query = "&".join(f"{name}={MASK}" if secret else pair
                     for pair, name, secret in _query_pairs(parts.query))
    return urlunsplit(parts._replace(netloc=netloc, path=path, query=query, fragment=MASK if parts.fragment else ""))


def url_secrets(url: str) -> list[str]:
    """The parts of ``url`` that ``redact_url`` masks, other than the userinfo (``remember_url`` has those)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    segments = parts.path.split("/")
    found = [segment for k, segment in enumerate(segments) if _secret_segment(segments, k)]
    found += [pair.partition("=")[2] for pair, _, secret in _query_pairs(parts.query) if secret]
    found += [parts.fragment, *(pair.partition("=")[2] for pair, _, _ in _query_pairs(parts.fragment))]
    return [secret for secret in found if secret]


def _query_pairs(query: str) -> list[tuple[str, str, bool]]:
    """(the pair as written, its name, does it hold a secret?) for each ``name=value`` of a query."""
    pairs = []
    for pair in query.split("&") if query else []:
        name, _, value = pair.partition("=")
        pairs.append((pair, name, bool(value) and (bool(_NAMED_SECRET.match(unquote(name))) or _looks_like_key(value))))
    return pairs


def _secret_segment(segments: list[str], k: int) -> bool:
    """Is path segment ``k`` a key: one by its look, ``name=value`` named like a key, or one after a
    segment named like a key (``/key/<key>/``)?"""
    segment = unquote(segments[k])
    if not segment:
        return False
    name, equals, _ = segment.partition("=")
    named = bool(equals) and bool(_NAMED_SECRET.match(name))
    after_name = k > 0 and bool(_KEY_SEGMENT.match(unquote(segments[k - 1])))
    return named or after_name or _looks_like_key(segment)


def _looks_like_key(value: str) -> bool:
    """An ``sk-`` key, or 20+ token characters mixing upper case, lower case and digits (a random key;
    names of models and API paths are lower case, or have no digits)."""
    value = unquote(value)
    if _OPENAI_STYLE_KEY.fullmatch(value):
        return True
    return bool(_TOKEN_CHARACTERS.fullmatch(value)) and all(
        any(test(ch) for ch in value) for test in (str.isupper, str.islower, str.isdigit))


def redact(text: str) -> str:
    """``text`` with every known secret and every credential-shaped value replaced by ``***``."""
    known = _known_pattern(frozenset(_known))
    if known is not None:
        text = known.sub(MASK, text)
    text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
    text = _QUERY_SECRET.sub(rf"\1{MASK}", text)
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
