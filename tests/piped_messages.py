"""JSON-RPC messages as a person pipes them into a stdio server: a handshake, then calls."""

from __future__ import annotations

import json
from typing import Any

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "pipe", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


def tool_call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def lines(*messages: dict[str, Any]) -> bytes:
    """``messages`` as a stdio server reads them: one JSON document a line."""
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)
