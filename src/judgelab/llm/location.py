"""Where a model server is: one check of a server URL before anything is sent to it or stored.

A model location is stored in configs, run folders, optimiser files and reports, so it must never
hold a secret: URLs with credentials (``http://user:password@host/v1``) are refused, and the API
key travels only in the ``Authorization: Bearer`` header, from the environment. "This machine" is
decided on the addresses a host name resolves to, not on its spelling (``evil.localhost`` may
resolve anywhere).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import SplitResult, urlsplit, urlunsplit

import httpx

from judgelab.errors import ConfigError
from judgelab.redact import remember_url

KEY_VARIABLES = "JUDGELAB_API_KEY (or OPENAI_API_KEY)"


def check_server_url(url: str) -> str:
    """``url`` without a trailing slash, or a ConfigError naming what is wrong with it.

    Refused: credentials in the URL (they would be written wherever the location is, and HTTP
    would send them as ``Basic`` in place of the key), a port that is not a number in range, an
    unclosed IPv6 bracket, no host.
    """
    remember_url(url)  # before any message that could quote it
    parts = _split(url)
    shown = without_userinfo(url)
    if "@" in parts.netloc:
        raise ConfigError(
            f"credentials in a model URL are not accepted ({_masked_userinfo(url)}): they would be stored "
            f"wherever the model is named and sent in place of the API key; give {shown} and put the key in "
            f"{KEY_VARIABLES}, which is sent as 'Authorization: Bearer'")
    if not parts.hostname:
        raise ConfigError(f"model URL {shown} names no host")
    return url.rstrip("/")


def without_userinfo(url: str | None) -> str | None:
    """``http://user:key@host/v1`` -> ``http://host/v1``, for messages about a URL that was refused."""
    if not url or "@" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return _masked_userinfo(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def mask_userinfo(model: str) -> str:
    """A model string safe to print: anything before an ``@`` (``user:pw@host``, with or without a scheme) masked."""
    return _masked_userinfo(model) if "@" in model else model


def is_this_machine(host: str | None) -> bool:
    """True when every address ``host`` resolves to is a loopback address (127.0.0.0/8, ::1)."""
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return False  # unresolvable: not known to be this machine
    return bool(addresses) and all(ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
                                   for address in addresses)


def trusts_proxy_settings(base_url: str | None) -> bool:
    """Whether requests to ``base_url`` may follow HTTP(S)_PROXY / ALL_PROXY from the environment.

    Not to this machine: a plain-http proxy would read the key the loopback exemption lets through
    (and a server on this machine is reached directly anyway). Elsewhere the user's proxy applies:
    https is tunnelled through it, and plain http with a key needs the opt-in of
    ``protect_credentials``."""
    return not (base_url and is_this_machine(urlsplit(base_url).hostname))


def _split(url: str) -> SplitResult:
    """The URL's parts, once both ``urlsplit`` and the HTTP client that will send it accept it: ``urlsplit``
    alone reads ``http://[::1]]:80`` as host ::1 and drops tabs, which httpx refuses at the first request."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number in range
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as exc:
        raise ConfigError(f"model URL {without_userinfo(url)!r} is not a valid URL: {exc}") from None
    return parts


def _masked_userinfo(text: str) -> str:
    scheme, separator, rest = text.partition("://")
    if not separator:
        scheme, rest = "", text
    host = rest.rsplit("@", 1)[1] if "@" in rest else rest
    return f"{scheme}{separator}***@{host}"
