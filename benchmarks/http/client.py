"""A Streamable HTTP session opened from Python, and the check of every workload's answer.

The runner opens the session that wrk's ``xN`` loads call on, checks one answer of the workload
before measuring (a missing fixture is then reported clearly, not as thousands of bad answers),
warms the server up with a burst of calls, and deletes sessions afterwards. It speaks plain
HTTP/1.1 over one keep-alive connection (``http.client``): it is not the library under test.

For the stateless era (revision 2026-07-28) :class:`StatelessCaller` does the same check and
warm-up with stateless POSTs (no ``initialize``, no session id; every request with its
``_meta`` and the era's headers, built by :func:`stateless_params` and
:func:`stateless_headers`, which ``stateless.lua`` is handed too, so that both send the same
bytes).
"""

from __future__ import annotations

import http.client
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks.matrix import (
    FIXTURES,
    LISTED_TOOLS,
    STATELESS_VERSION,
    SWEEP_SIZES,
    TEXT_10K_SIZE,
)

PATH = "/mcp"
#: The revision the benchmark's sessions ask for (every library under test supports it).
PROTOCOL_VERSION = "2025-11-25"
#: Who the stateless era's requests say they come from (``io.modelcontextprotocol/clientInfo``).
CLIENT_INFO = {"name": "benchmarks.http", "version": "1"}
#: Long enough for a slow server to drain what the previous run's 100 connections left in flight
#: (the SDK answers about 20 list-50 calls per second on this machine).
_TIMEOUT = 30.0
#: Connections deleting the sessions a run left open (a slow server answers a DELETE in tens of
#: milliseconds: one after the other, 100 of them would take seconds of the budget).
_DELETERS = 8

#: How the Lua scripts check each workload's answer: (kind, arg1, arg2), see check.lua.
LUA_CHECKS: dict[str, tuple[str, str, str]] = {
    "call": ("text", "3", "1"),
    "call-sync": ("text", "3", "1"),
    "call-10k": ("text", "x", str(TEXT_10K_SIZE)),
    "list-50": ("tools", str(LISTED_TOOLS), ""),
    **{workload: ("text", "y", str(size)) for workload, size in SWEEP_SIZES.items()},
}


class SessionError(Exception):
    """The session could not be opened, or an answer was not the expected one."""


def stateless_params(workload: str) -> dict[str, Any]:
    """The workload's request params with the stateless era's ``_meta`` (CHECKLIST 6.2)."""
    _, params = FIXTURES[workload]
    meta = {
        "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    return {**params, "_meta": meta}


def stateless_headers(workload: str) -> dict[str, str]:
    """The stateless era's routing headers of the workload's POST (CHECKLIST 7.6): the revision,
    ``Mcp-Method``, and ``Mcp-Name`` (the tool's name or the resource's URI) where there is one.
    """
    method, params = FIXTURES[workload]
    headers = {"MCP-Protocol-Version": STATELESS_VERSION, "Mcp-Method": method}
    name = params.get("name", params.get("uri"))
    if isinstance(name, str):
        headers["Mcp-Name"] = name
    return headers


def check_result(workload: str, result: dict[str, Any]) -> str | None:
    """Why ``result`` is not the workload's expected answer, or ``None`` if it is."""
    if workload == "list-50":
        tools = result.get("tools")
        if not isinstance(tools, list) or len(tools) != LISTED_TOOLS:
            return f"expected {LISTED_TOOLS} tools, got {len(tools or [])}"
        return None
    expected = {"call": "3", "call-sync": "3", "call-10k": "x" * TEXT_10K_SIZE}
    expected.update((workload, "y" * size) for workload, size in SWEEP_SIZES.items())
    if result.get("isError"):
        return f"a tool error: {str(result)[:300]}"
    blocks = result.get("contents" if workload in SWEEP_SIZES else "content") or [{}]
    text = blocks[0].get("text")
    if text != expected[workload]:
        return f"wrong text: {str(text)[:100]!r} ({len(text or '')} chars)"
    return None


class Session:
    """One Streamable HTTP session over one keep-alive connection to ``127.0.0.1:port``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=_TIMEOUT)
        self.session_id = ""
        self.protocol_version = ""
        self._next_id = 0

    def _send(
        self,
        method: str,
        body: dict[str, Any] | None,
        session_id: str,
        extra_headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes, http.client.HTTPResponse]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if session_id:
            headers["Mcp-Session-Id"] = session_id
            headers["MCP-Protocol-Version"] = self.protocol_version or PROTOCOL_VERSION
        if extra_headers:
            headers.update(extra_headers)
        data = None if body is None else json.dumps(body)
        try:
            self.connection.request(method, PATH, data, headers)
            response = self.connection.getresponse()
            return response.status, response.read(), response
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()
            raise SessionError(f"{method} failed: {error!r}") from error

    def post(
        self, message: dict[str, Any], extra_headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, Any] | None, str | None]:
        """POST one message: the status, the JSON-RPC answer (JSON or SSE) and the session id."""
        status, body, response = self._send("POST", message, self.session_id, extra_headers)
        session_id = response.getheader("mcp-session-id")
        if not body:
            return status, None, session_id
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            for line in body.decode().splitlines():
                if line.startswith("data:") and line[5:].strip():
                    answer: dict[str, Any] = json.loads(line[5:])
                    if "id" in answer:
                        return status, answer, session_id
            return status, None, session_id
        return status, json.loads(body), session_id

    def open(self) -> None:
        """``initialize`` and ``notifications/initialized``."""
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "benchmarks.http", "version": "1"},
        }
        message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        status, answer, session_id = self.post(message)
        if status != 200 or answer is None or "result" not in answer or not session_id:
            raise SessionError(f"initialize got {status} {answer} (session id {session_id!r})")
        self.session_id = session_id
        self.protocol_version = answer["result"]["protocolVersion"]
        status, _, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise SessionError(f"notifications/initialized got {status}")

    def call(self, workload: str) -> None:
        """One call of ``workload``, its answer checked."""
        method, params = FIXTURES[workload]
        self._call(workload, method, params, None)

    def _call(
        self,
        workload: str,
        method: str,
        params: dict[str, Any],
        extra_headers: dict[str, str] | None,
    ) -> None:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        status, answer, _ = self.post(message, extra_headers)
        if status != 200 or answer is None or "result" not in answer:
            raise SessionError(f"{method} got {status}: {str(answer)[:300]}")
        problem = check_result(workload, answer["result"])
        if problem is not None:
            raise SessionError(f"{workload}: {problem}")

    def burst(self, workload: str, seconds: float) -> None:
        """Calls of ``workload`` one after the other for ``seconds`` (at least a few)."""
        deadline = time.monotonic() + seconds
        for done in range(1_000_000):
            if done >= 5 and time.monotonic() >= deadline:
                return
            self.call(workload)

    def delete(self, session_id: str | None = None) -> None:
        """End a session (this one by default) with DELETE; the answer is not checked."""
        self._send("DELETE", None, session_id or self.session_id)

    def close(self) -> None:
        self.connection.close()


class StatelessCaller(Session):
    """Stateless-era calls (revision 2026-07-28) over one keep-alive connection: no session.

    Every call is a POST of its own with the era's ``_meta`` and headers and no
    ``Mcp-Session-Id``; :meth:`Session.burst` and :meth:`Session.close` work as for a session.
    """

    def call(self, workload: str) -> None:
        """One stateless call of ``workload``, its answer checked."""
        method, _ = FIXTURES[workload]
        self._call(workload, method, stateless_params(workload), stateless_headers(workload))


def delete_sessions(port: int, session_ids: list[str], protocol_version: str) -> int:
    """DELETE every session of ``session_ids`` over a few connections; how many failed.

    Failures are counted, not raised: the measurement is over, and a session the server could not
    delete (or had already ended) only costs it memory.
    """

    def delete_share(share: list[str]) -> int:
        session = Session(port)
        session.protocol_version = protocol_version
        failed = 0
        try:
            for session_id in share:
                try:
                    session.delete(session_id)
                except SessionError:
                    failed += 1
        finally:
            session.close()
        return failed

    shares = [session_ids[start::_DELETERS] for start in range(_DELETERS)]
    with ThreadPoolExecutor(_DELETERS) as pool:
        return sum(pool.map(delete_share, [share for share in shares if share]))
