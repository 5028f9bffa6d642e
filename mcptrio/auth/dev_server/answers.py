"""The development authorization server's HTTP answers: JSON, OAuth errors, forms, redirects."""

from __future__ import annotations

import json
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...transports.http.engine.exchange import BodyTooLarge, HttpRequest, HttpResponder, header

__all__ = ["FormError", "oauth_error", "read_form", "redirect", "send_html", "send_json"]

#: Form and JSON bodies past this are refused (413).
MAX_BODY: Final = 64 * 1024
_NO_STORE: Final = ((b"cache-control", b"no-store"), (b"pragma", b"no-cache"))
#: Browser-based clients (the MCP Inspector in a browser) call the metadata, registration and
#: token endpoints cross-origin; none of them uses cookies, so any origin may.
CORS: Final = ((b"access-control-allow-origin", b"*"),)
PREFLIGHT: Final = (
    *CORS,
    (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
    (b"access-control-allow-headers", b"*"),
    (b"access-control-max-age", b"86400"),
)


class FormError(Exception):
    """A request body that is not the form (or JSON document) an endpoint takes."""


async def send_json(
    responder: HttpResponder,
    status: int,
    document: Any,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    body = json.dumps(document).encode() if not isinstance(document, bytes) else document
    await responder.send_response(
        status, [(b"content-type", b"application/json"), *_NO_STORE, *CORS, *headers], body
    )


async def oauth_error(
    responder: HttpResponder,
    error: str,
    description: str,
    *,
    status: int = 400,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    """An OAuth error answer (RFC 6749 section 5.2)."""
    await send_json(responder, status, {"error": error, "error_description": description}, headers)


async def send_html(
    responder: HttpResponder,
    status: int,
    html: str,
    extra_headers: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (
            b"content-security-policy",
            b"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
        ),
        (b"x-frame-options", b"DENY"),
        *_NO_STORE,
        *extra_headers,
    ]
    await responder.send_response(status, headers, html.encode())


async def redirect(responder: HttpResponder, uri: str, params: dict[str, str]) -> None:
    """302 to ``uri`` with ``params`` added to its query."""
    parts = urlsplit(uri)
    query = parts.query + ("&" if parts.query else "") + urlencode(params)
    location = urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    await responder.send_response(302, [(b"location", location.encode()), *_NO_STORE])


def query_params(request: HttpRequest) -> dict[str, str]:
    """The query's parameters; a repeated one counts as malformed (RFC 6749 section 3.1)."""
    return _single(parse_qsl(request.query_string.decode("latin-1"), keep_blank_values=True))


async def read_form(request: HttpRequest) -> dict[str, str]:
    """The ``application/x-www-form-urlencoded`` body; :class:`FormError` otherwise."""
    content_type = (header(request.headers, b"content-type") or b"").split(b";")[0].strip()
    if content_type.lower() != b"application/x-www-form-urlencoded":
        raise FormError("the body must be application/x-www-form-urlencoded")
    try:
        body = await request.read_body(MAX_BODY)
    except BodyTooLarge:
        raise FormError("the body is too large") from None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FormError("the body is not UTF-8") from None
    return _single(parse_qsl(text, keep_blank_values=True))


async def read_json(request: HttpRequest) -> bytes:
    """The body of a JSON request; :class:`FormError` when it is not JSON or too large."""
    content_type = (header(request.headers, b"content-type") or b"").split(b";")[0].strip()
    if content_type.lower() != b"application/json":
        raise FormError("the body must be application/json")
    try:
        return await request.read_body(MAX_BODY)
    except BodyTooLarge:
        raise FormError("the body is too large") from None


def _single(pairs: list[tuple[str, str]]) -> dict[str, str]:
    params: dict[str, str] = {}
    for key, value in pairs:
        if key in params:
            raise FormError(f"parameter {key!r} is repeated")
        params[key] = value
    return params
