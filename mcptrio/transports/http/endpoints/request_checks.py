"""What the MCP endpoints check of a request before they act on it: ``Accept``, ``Content-Type``,
the body limit and routing headers sent once, with the answers (406, 415, 413, 400) that refuse it.

Both the Streamable HTTP endpoint and the legacy HTTP+SSE one read their POST bodies through
:func:`read_json_body`, so the two refuse a wrong body alike.
"""

from __future__ import annotations

from ....protocol import http_headers as hh
from ..engine.exchange import BodyTooLarge, Headers, HttpRequest, HttpResponder, header
from .responses import send_error

__all__ = [
    "NOT_JSON",
    "accepts",
    "accepts_json_and_sse",
    "is_json",
    "read_json_body",
    "repeated_routing_header",
    "too_large",
]


def accepts(value: bytes | None, media_type: bytes) -> bool:
    """Whether an ``Accept`` header value admits ``media_type`` (wildcards count)."""
    if value is None:
        return False
    kind = media_type.split(b"/", 1)[0] + b"/*"
    for part in value.split(b","):
        candidate = part.split(b";", 1)[0].strip().lower()
        if candidate in (media_type, kind, b"*/*"):
            return True
    return False


# Verdicts on recent ``Accept`` values: a client sends the same one with every POST.
_ACCEPT_VERDICTS: dict[bytes, bool] = {}
_ACCEPT_VERDICTS_MAX = 64


def accepts_json_and_sse(value: bytes | None) -> bool:
    """Whether an ``Accept`` value lists both media types a POST's answer may take."""
    if value is None:
        return False
    verdict = _ACCEPT_VERDICTS.get(value)
    if verdict is None:
        verdict = accepts(value, b"application/json") and accepts(value, b"text/event-stream")
        if len(_ACCEPT_VERDICTS) >= _ACCEPT_VERDICTS_MAX:
            _ACCEPT_VERDICTS.clear()
        _ACCEPT_VERDICTS[value] = verdict
    return verdict


def is_json(content_type: bytes | None) -> bool:
    """Whether a ``Content-Type`` value is ``application/json`` (parameters aside)."""
    if content_type is None:
        return False
    if content_type == b"application/json":
        return True
    return content_type.split(b";", 1)[0].strip().lower() == b"application/json"


async def read_json_body(
    request: HttpRequest, responder: HttpResponder, limit: int
) -> bytes | None:
    """The body of a POST that must be JSON; ``None`` once it was refused (415 for another
    ``Content-Type``, 413 past ``limit`` bytes)."""
    if not is_json(header(request.headers, b"content-type")):
        await send_error(responder, 415, NOT_JSON)
        return None
    try:
        return await request.read_body(limit)
    except BodyTooLarge:
        await send_error(responder, 413, too_large(limit))
        return None


_ROUTING_LABELS = {
    hh.PROTOCOL_VERSION_HEADER: "MCP-Protocol-Version",
    hh.METHOD_HEADER: "Mcp-Method",
    hh.NAME_HEADER: "Mcp-Name",
}


def repeated_routing_header(headers: Headers) -> str | None:
    """The name of a routing header (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
    ``Mcp-Param-*``) that ``headers`` holds more than once, or ``None``.

    The endpoints read a header's first value; an intermediary in front may route on its last.
    With one value each, what is checked against the body is what was routed on.
    """
    seen: set[bytes] = set()
    prefix = hh.PARAM_HEADER_PREFIX
    for name, _ in headers:
        if name in _ROUTING_LABELS or name.startswith(prefix):
            if name in seen:
                label = _ROUTING_LABELS.get(name)
                return label or "Mcp-Param-" + name[len(prefix) :].decode("latin-1")
            seen.add(name)
    return None


#: The message of the 415 for a body that is not JSON.
NOT_JSON = "Content-Type must be application/json"


def too_large(limit: int) -> str:
    """The message of the 413 for a body over ``limit`` bytes."""
    return f"Body exceeds the limit of {limit} bytes"
