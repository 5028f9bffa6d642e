"""What the HTTP client transports need to know about the frames they carry.

A transport moves opaque frames, but an HTTP client must look inside a little: which request ids
a POST carries (to answer them with an error when the HTTP exchange fails, and to know when a
POST's SSE stream has delivered every response), which method it is (``initialize`` and
``notifications/initialized`` are remembered for a session renewal), and which revision the
server answered ``initialize`` with (for the ``MCP-Protocol-Version`` header). This module peeks
with a lenient msgspec decode that skips everything else, and builds the error responses.
"""

from __future__ import annotations

import copy
import html
import re
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, TypeGuard

import msgspec
from msgspec import UNSET, UnsetType

from ....protocol import codec
from ....protocol.base import RequestId
from ....protocol.codec import Envelope
from ....protocol.errors import INTERNAL_ERROR, McpError
from ....protocol.unreadable import unreadable_message_id
from ..engine.client_pool import HttpStatusError

#: How much of an error body an :class:`HttpStatusError` keeps.
ERROR_BODY_QUOTE = 4096

__all__ = [
    "OutgoingInfo",
    "copy_error",
    "http_error",
    "initialize_revision",
    "is_page",
    "not_an_endpoint",
    "offered_revision",
    "peek_incoming",
    "peek_outgoing",
    "response_ids",
]


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: int | str | UnsetType = UNSET


class _InitializeResult(msgspec.Struct, rename="camel"):
    protocol_version: str | UnsetType = UNSET


class _InitializeRequest(msgspec.Struct):
    params: _InitializeResult | UnsetType = UNSET


_peek_decoder = msgspec.json.Decoder(Envelope | list[Envelope])
_cancel_decoder = msgspec.json.Decoder(_CancelParams)
_init_decoder = msgspec.json.Decoder(_InitializeResult)
_any_decoder = msgspec.json.Decoder()
_offer_decoder = msgspec.json.Decoder(_InitializeRequest)
_title = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
# A page title quoted in an error is cut to this many characters.
_TITLE_MAX = 80


@dataclass(frozen=True, slots=True)
class OutgoingInfo:
    """What one outgoing frame is: its request ids, and its method when it is one message."""

    request_ids: tuple[RequestId, ...]
    method: str | None
    #: For ``notifications/cancelled``: the request it cancels.
    cancels: RequestId | None = None


def _items(data: bytes) -> list[Envelope]:
    try:
        value = _peek_decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return []
    return value if isinstance(value, list) else [value]


def _is_id(value: object) -> TypeGuard[RequestId]:
    return isinstance(value, int | str) and not isinstance(value, bool)


def peek_outgoing(data: bytes) -> OutgoingInfo:
    """Classify an outgoing frame (a message or a batch)."""
    items = _items(data)
    ids: list[RequestId] = []
    for item in items:
        if isinstance(item.method, str) and _is_id(item.id):
            ids.append(item.id)
    method = items[0].method if len(items) == 1 and isinstance(items[0].method, str) else None
    cancels: RequestId | None = None
    if method == "notifications/cancelled" and isinstance(items[0].params, msgspec.Raw):
        try:
            rid = _cancel_decoder.decode(items[0].params).request_id
        except (msgspec.DecodeError, UnicodeDecodeError):
            rid = UNSET
        if isinstance(rid, int | str):
            cancels = rid
    return OutgoingInfo(tuple(ids), method, cancels)


def response_ids(data: bytes) -> list[RequestId]:
    """The ids of the responses (results and errors) in an incoming frame."""
    return peek_incoming(data)[0]


def peek_incoming(data: bytes) -> tuple[list[RequestId], Envelope | None]:
    """The ids of the responses in an incoming frame, and the frame's one message when it is
    exactly one response (which a session can take without decoding it again)."""
    try:
        value = _peek_decoder.decode(data)
    except RecursionError:
        # Too deep to read: the session fails the call it answers (see protocol.unreadable),
        # and the exchange must know that call is answered all the same (not reissue it).
        unreadable = unreadable_message_id(data)
        return ([unreadable[0]] if unreadable is not None and unreadable[1] else []), None
    except (msgspec.DecodeError, UnicodeDecodeError):
        return [], None
    found: list[RequestId] = []
    for item in value if isinstance(value, list) else (value,):
        is_response = item.result is not UNSET or item.error is not UNSET
        if item.method is UNSET and is_response and _is_id(item.id):
            found.append(item.id)
    return found, value if found and isinstance(value, Envelope) else None


def initialize_revision(data: bytes, request_id: RequestId) -> str | None:
    """The ``protocolVersion`` of the result for ``request_id`` in ``data``, if it holds it."""
    for item in _items(data):
        if item.id == request_id and isinstance(item.result, msgspec.Raw):
            try:
                version = _init_decoder.decode(item.result).protocol_version
            except (msgspec.DecodeError, UnicodeDecodeError):
                return None
            return version if isinstance(version, str) else None
    return None


def offered_revision(data: bytes) -> str | None:
    """The ``protocolVersion`` an ``initialize`` request offers."""
    try:
        params = _offer_decoder.decode(data).params
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(params, _InitializeResult) and isinstance(params.protocol_version, str):
        return params.protocol_version
    return None


def error_response(request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
    """An encoded JSON-RPC error response."""
    return codec.encode_error(request_id, McpError(message, data, code=code))


def http_error(status: int, reason: str, body: bytes | None, content_type: str = "") -> McpError:
    """The error a caller gets when its request's POST was answered ``status``.

    When the body is itself a JSON-RPC error (servers often send one, with no id), that is the
    server's answer: its code, message and data are kept (a -32022's data names the revisions to
    retry with) and it is rebuilt as the class owning its code, as any error answer is.
    Otherwise the exchange failed at the HTTP level: :class:`HttpStatusError`, with the status
    and the start of the body on one line, or for a web page (``text/html``: a web server, not
    an MCP endpoint) a summary: see :func:`not_an_endpoint`. Either way the message quotes the
    HTTP status. The reason phrase
    is optional on the wire (h11 sends none unless told, HTTP/2 has none at all), so an empty
    ``reason`` becomes the standard phrase for ``status``: the message reads
    ``HTTP 400 Bad Request: ...`` whatever the server is.
    """
    if not reason:
        reason = _standard_phrase(status)
    message = f"HTTP {status} {reason}".rstrip()
    if body:
        try:
            value = _any_decoder.decode(body)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            value = None
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            code = error.get("code")
            if not isinstance(code, int) or isinstance(code, bool):
                code = INTERNAL_ERROR
            return McpError.from_wire(code, f"{message}: {error['message']}", error.get("data"))
        if is_page(content_type, body):
            message = not_an_endpoint(status, reason, content_type, body)
        else:
            detail = " ".join(body[:200].decode("utf-8", "replace").split())
            if detail:
                message += f": {detail}"
    elif is_page(content_type, body):
        message = not_an_endpoint(status, reason, content_type, body)
    return HttpStatusError(message, status=status, body=body[:ERROR_BODY_QUOTE] if body else b"")


def not_an_endpoint(status: int, reason: str, content_type: str, body: bytes | None) -> str:
    """One line for an answer that no MCP endpoint gives, such as a web page: its status, its
    content type and the page's ``<title>`` when it has one (``body``: the start of it).

    ``HTTP 404 Not Found, a text/html page titled "Not Found": not an MCP endpoint``
    """
    message = f"HTTP {status} {reason or _standard_phrase(status)}".rstrip()
    kind = content_type or "no content type"
    found = _title.search(body or b"")
    title = " ".join(html.unescape(found[1].decode("utf-8", "replace")).split()) if found else ""
    if len(title) > _TITLE_MAX:
        title = title[: _TITLE_MAX - 3] + "..."
    page = f'a {kind} page titled "{title}"' if title else f"a {kind} answer"
    return f"{message}, {page}: not an MCP endpoint"


def is_page(content_type: str, body: bytes | None) -> bool:
    """Whether an answer is a web page (by its type, or by how it opens when it names none)."""
    if content_type in ("text/html", "application/xhtml+xml"):
        return True
    # A server that names no type: a body that opens as HTML is a page all the same.
    start = (body or b"")[:100].lstrip().lower()
    return not content_type and start.startswith((b"<!doctype html", b"<html"))


def copy_error(error: McpError) -> McpError:
    """A fresh instance like ``error``, for a second caller to raise (one exception object
    raised in two tasks would mix their tracebacks)."""
    try:
        fresh = copy.copy(error)
    except Exception:
        return error
    fresh.__traceback__ = None
    return fresh


def _standard_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
