"""The floor's answers: one fixed JSON-RPC result per workload, built once, the id spliced in.

The floors (``matrix.FLOOR``) answer every call of a workload with the same result a library's
bench server sends for it (the text ``"3"`` for ``call``, the 50 tools of ``tools/list`` with
their input schemas, the 100 KiB text of ``read-100k``...), so that the bytes on the wire and
the check of every answer are those of the library cells. What a floor does not do is the MCP
work: no JSON parsing, no validation, no session state, no handler. It routes a request to its
answer by a plain search of the request body for the one value that tells the workloads apart
(the method, the tool's name or the resource's URI), and copies the request's id into the
answer.

Nothing here imports a library under test; a test checks that the listed tools are the ones
mcptrio's bench server lists.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..matrix import FIXTURES, SWEEP_SIZES, TEXT_10K_SIZE
from .fixtures import SEARCH_TOOL_NAMES, search_tool_description

#: The revision a floor's ``initialize`` answers with, and its fixed session id (HTTP only).
PROTOCOL_VERSION: Final = "2025-11-25"
SESSION_ID: Final = "floor"
INITIALIZE: Final = "initialize"

_INTEGER = {"type": "integer"}
_ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": _INTEGER, "b": _INTEGER},
    "required": ["a", "b"],
}
_SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "ratio": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer", "default": 10},
        "flag": {"type": "boolean", "default": False},
    },
    "required": ["query", "ratio", "tags"],
}

#: ``tools/list``'s 50 tools, as the bench servers list them (``benchmarks/servers/fixtures.py``).
LISTED_TOOLS: Final[list[dict[str, Any]]] = [
    {"name": "add", "description": "Add two integers.", "inputSchema": _ADD_SCHEMA},
    {
        "name": "add_sync",
        "description": "Add two integers (a plain function: the server runs it as a sync handler).",
        "inputSchema": _ADD_SCHEMA,
    },
    {
        "name": "text_10k",
        "description": "Return 10 KiB of text.",
        "inputSchema": {"type": "object", "properties": {}, "required": []},
    },
    *(
        {"name": name, "description": search_tool_description(name), "inputSchema": _SEARCH_SCHEMA}
        for name in SEARCH_TOOL_NAMES
    ),
]


def _text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _read_result(workload: str) -> dict[str, Any]:
    uri = FIXTURES[workload][1]["uri"]
    return {
        "contents": [{"uri": uri, "mimeType": "text/plain", "text": "y" * SWEEP_SIZES[workload]}]
    }


#: Each workload's result, and ``initialize``'s.
RESULTS: Final[dict[str, dict[str, Any]]] = {
    "call": _text_result("3"),
    "call-sync": _text_result("3"),
    "call-10k": _text_result("x" * TEXT_10K_SIZE),
    "list-50": {"tools": LISTED_TOOLS},
    **{workload: _read_result(workload) for workload in SWEEP_SIZES},
    INITIALIZE: {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {"tools": {}, "resources": {}},
        "serverInfo": {"name": "floor", "version": "1"},
    },
}


def route_key(workload: str) -> str:
    """The value in a request that tells ``workload`` apart: the tool's name, the resource's URI
    or the method (``tools/list``)."""
    method, params = FIXTURES[workload]
    key = params.get("name", params.get("uri", method))
    assert isinstance(key, str)
    return key


#: In memory: a request's route key to its result object.
RESULT_BY_KEY: Final = {route_key(w): RESULTS[w] for w in FIXTURES} | {
    INITIALIZE: RESULTS[INITIALIZE]
}


def _halves(result: dict[str, Any]) -> tuple[bytes, bytes]:
    """The encoded answer before and after its id: ``{"jsonrpc":"2.0","id":`` and the rest."""
    return b'{"jsonrpc":"2.0","id":', b',"result":' + json.dumps(
        result, separators=(",", ":")
    ).encode() + b"}"


#: Over the wire: ``(needle, (before id, after id))``, tried in order; the first needle found in
#: the request body names its answer. ``add`` and ``add_sync`` share the last answer (the text
#: "3"), which is also what a request no needle matches gets. Every needle is a quoted JSON
#: string, so that ``"initialize"`` is not found in ``"notifications/initialized"`` and a URI
#: is not found in a longer one.
ROUTES: Final[tuple[tuple[bytes, tuple[bytes, bytes]], ...]] = (
    (b'"initialize"', _halves(RESULTS[INITIALIZE])),
    *(
        (json.dumps(route_key(w)).encode(), _halves(RESULTS[w]))
        for w in FIXTURES
        if w not in ("call", "call-sync")
    ),
)
DEFAULT_ANSWER: Final = _halves(RESULTS["call"])


def request_id(body: bytes) -> bytes | None:
    """The raw JSON of the request's id (``7``, ``"a"``), or None for a notification.

    Relies on the floors' clients (wrk's scripts, ``benchmarks/http/client.py``, the floor's
    stdio driver) writing ``"id"`` before ``params``, as each does: the first ``"id"`` key of
    the body is then the request's, never a key inside its params.
    """
    at = body.find(b'"id"')
    if at < 0:
        return None
    colon = body.find(b":", at + 4)
    end = colon + 1
    length = len(body)
    while end < length and body[end] not in b",}":
        end += 1
    return body[colon + 1 : end].strip()


def answer_halves(body: bytes) -> tuple[bytes, bytes]:
    """The answer to the request ``body``, before and after its id."""
    for needle, halves in ROUTES:
        if needle in body:
            return halves
    return DEFAULT_ANSWER
