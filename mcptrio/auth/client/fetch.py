"""The OAuth client's own HTTP: JSON documents and form POSTs, with the checks every one needs.

Everything goes through mcptrio's trio HTTP client
(:class:`~mcptrio.transports.http.engine.client_pool.HttpClientPool`), under three rules that
keep a hostile or broken server from steering the client:

- **Size**: a document is read up to :data:`MAX_DOCUMENT` bytes; a longer one is refused, unread.
- **Redirects**: a redirect to the same origin is followed (at most :data:`MAX_REDIRECTS`), one
  to any other origin is refused: metadata names the endpoints the client will send its
  credentials to, so it must come from where the client asked.
- **Endpoints**: every URL the client sends credentials or codes to must be ``https``, or
  ``http`` on a loopback host (a development server on this machine), and have no fragment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import msgspec

from ...transports.http.engine.client_pool import HttpClientPool, HttpResponse, split_url
from ..metadata import is_loopback_host
from .errors import AuthorizationError, DiscoveryError, RegistrationError, TokenError

__all__ = [
    "MAX_DOCUMENT",
    "Answer",
    "check_endpoint",
    "get_json",
    "is_loopback",
    "origin_of",
    "post_form",
]

#: The largest metadata document or token response read (256 KiB).
MAX_DOCUMENT = 256 * 1024
#: Same-origin redirects followed for one document.
MAX_REDIRECTS = 3

_json = msgspec.json.Decoder()


@dataclass(frozen=True, slots=True)
class Answer:
    """A response read whole: status, headers (lower-case names) and the JSON object, if any."""

    status: int
    headers: list[tuple[bytes, bytes]]
    document: dict[str, Any] | None

    def header(self, name: bytes) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value.decode("latin-1")
        return None


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    return is_loopback_host(host.strip("[]"))


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-case."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}"


def check_endpoint(url: str, what: str) -> str:
    """``url`` if the client may send credentials there (https, or http on loopback)."""
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:
        raise DiscoveryError(f"The {what} {url!r} is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not hostname:
        raise DiscoveryError(f"The {what} {url!r} is not an http(s) URL")
    if scheme == "http" and not is_loopback(hostname):
        raise DiscoveryError(f"The {what} {url!r} is plain http on a host that is not loopback")
    if parts.fragment:
        raise DiscoveryError(f"The {what} {url!r} has a fragment")
    return url


async def _read(
    response: HttpResponse, url: str, error: type[AuthorizationError] = DiscoveryError
) -> dict[str, Any] | None:
    body = await response.read(MAX_DOCUMENT)
    if body is None:
        raise error(f"The answer of {url} is larger than {MAX_DOCUMENT} bytes")
    if not body.strip():
        return None
    try:
        value = _json.decode(body)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, dict) else None


async def get_json(
    http: HttpClientPool, url: str, *, headers: Sequence[tuple[str, str]] = ()
) -> Answer:
    """GET ``url`` (``Accept: application/json``), following same-origin redirects."""
    for _ in range(MAX_REDIRECTS + 1):
        split_url(url)
        request_headers = [("accept", "application/json"), *headers]
        async with http.request("GET", url, headers=request_headers) as response:
            if response.status in (301, 302, 303, 307, 308):
                location = response.header(b"location")
                if location is None:
                    raise DiscoveryError(f"{url} redirected without a Location")
                try:
                    target = urljoin(url, location.decode("latin-1"))
                    same = origin_of(target) == origin_of(url) and bool(split_url(target))
                except ValueError:
                    raise DiscoveryError(f"{url} redirected to an invalid URL") from None
                if not same:
                    raise DiscoveryError(
                        f"{url} redirected to another origin ({origin_of(target)}); refused"
                    )
                url = target
                continue
            document = await _read(response, url) if 200 <= response.status < 300 else None
            return Answer(response.status, list(response.headers), document)
    raise DiscoveryError(f"{url} redirected more than {MAX_REDIRECTS} times")


async def post_form(
    http: HttpClientPool,
    url: str,
    form: Mapping[str, str],
    *,
    headers: Sequence[tuple[str, str]] = (),
) -> Answer:
    """POST ``form`` (``application/x-www-form-urlencoded``) to ``url``; never follows
    redirects (a token or registration endpoint has no business redirecting)."""
    body = urlencode(form).encode("ascii")
    request_headers = [
        ("content-type", "application/x-www-form-urlencoded"),
        ("accept", "application/json"),
        *headers,
    ]
    async with http.request("POST", url, headers=request_headers, body=body) as response:
        return Answer(
            response.status, list(response.headers), await _read(response, url, TokenError)
        )


async def post_json(http: HttpClientPool, url: str, document: Mapping[str, Any]) -> Answer:
    """POST ``document`` as JSON to ``url`` (dynamic client registration)."""
    body = msgspec.json.encode(document)
    request_headers = [("content-type", "application/json"), ("accept", "application/json")]
    async with http.request("POST", url, headers=request_headers, body=body) as response:
        return Answer(
            response.status, list(response.headers), await _read(response, url, RegistrationError)
        )
