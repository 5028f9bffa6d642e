"""The headers of a stateless-era POST (2026-07-28, SEP-2243), read off the frame itself.

A frame whose request ``_meta`` names a revision is of the stateless era: it goes without a
session id, with ``MCP-Protocol-Version`` (the revision it names), ``Mcp-Method``, ``Mcp-Name``
(for ``tools/call``, ``prompts/get`` and ``resources/read``; the task id for ``tasks/get``,
``tasks/update`` and ``tasks/cancel``) and one ``Mcp-Param-{Name}`` per
argument the tool's input schema annotates with ``x-mcp-header`` (from ``header_params``, which
the client fills as it lists tools). Values are encoded as :mod:`mcptrio.protocol.http_headers`
says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from ....protocol import http_headers as hh
from ....protocol.errors import STATELESS_ERROR_CODES
from ....protocol.request_meta import PROTOCOL_VERSION_KEY

__all__ = ["HeaderParams", "is_stateless_refusal", "is_stateless_request", "stateless_headers"]

#: The annotated arguments of a tool (property path -> header name), ``None`` when not known.
HeaderParams = Callable[[str], Mapping[hh.PropertyPath, str] | None]

_MARKER = PROTOCOL_VERSION_KEY.encode()
_any = msgspec.json.Decoder()


def stateless_headers(
    data: bytes, header_params: HeaderParams | None
) -> list[tuple[str, str]] | None:
    """The stateless-era headers of ``data``, or ``None`` when it is not such a request."""
    if _MARKER not in data:
        return None
    frame = hh.read_request_head(data)
    if frame is None:
        return None
    params = frame.params
    version = params.meta.get(PROTOCOL_VERSION_KEY) if isinstance(params.meta, dict) else None
    if not isinstance(version, str):
        return None
    method = frame.method
    headers = [("mcp-protocol-version", version), ("mcp-method", hh.encode_value(method))]
    member = hh.name_member(method)
    name = params.member(member) if member is not None else None
    if isinstance(name, str):
        headers.append(("mcp-name", hh.encode_value(name)))
    if method == "tools/call" and isinstance(params.name, str) and header_params is not None:
        arguments = params.arguments if isinstance(params.arguments, dict) else None
        headers += hh.param_headers(header_params(params.name) or {}, arguments)
    return headers


def is_stateless_request(data: bytes) -> bool:
    """Whether ``data`` is a stateless-era request (its ``_meta`` names a revision)."""
    return stateless_headers(data, None) is not None


def is_stateless_refusal(body: bytes | None) -> bool:
    """Whether an HTTP error ``body`` is a stateless-era JSON-RPC error (-32020, -32021 or
    -32022): the server speaks that era, so a client must not fall back from it (7.7)."""
    if not body:
        return False
    try:
        value = _any.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    error = value.get("error") if isinstance(value, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code in STATELESS_ERROR_CODES
