"""Three middleware for a mcptrio server: request logging with timing, a per-session rate limit,
and a per-tool permission check.

Run it (``python examples/middleware.py``) to watch them work on an in-memory client; copy the
one you need. ``docs/how-to/use-middleware.md`` explains each; ``tests/examples`` runs them on
every transport, in both eras.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Collection, Mapping, MutableMapping
from typing import Any

import msgspec
import trio

import mcptrio
from mcptrio.client import ClientIdentity
from mcptrio.protocol.base import Result
from mcptrio.protocol.types import CallToolRequest, Implementation, ListToolsResult
from mcptrio.runtime.session import Session
from mcptrio.server.middleware import Call, CallNext

log = logging.getLogger("examples.middleware")

#: The JSON-RPC code of a refusal by these middleware: -32000 to -32099 are the
#: implementation-defined server errors of JSON-RPC 2.0, and MCP defines none of them as this.
REFUSED = -32000


# ---------------------------------------------------------------- logging with timing


async def log_requests(call: Call, call_next: CallNext) -> Result | None:
    """One log line per request and notification: the method, the tool or resource, how long
    it took, and how it ended."""
    what = _what(call)
    started = trio.current_time()
    outcome = "ok"
    try:
        return await call_next(call)
    except mcptrio.McpError as exc:
        outcome = f"error {exc.code}"
        raise
    except trio.Cancelled:
        outcome = "cancelled"
        raise
    except Exception as exc:
        outcome = f"failed ({type(exc).__name__})"
        raise
    finally:
        elapsed_ms = (trio.current_time() - started) * 1000
        log.info("%s%s %s in %.1f ms", call.method, what, outcome, elapsed_ms)


def _what(call: Call) -> str:
    name = getattr(call.params, "name", None) or getattr(call.params, "uri", None)
    return f" {name}" if isinstance(name, str) else ""


# ---------------------------------------------------------------- a per-session rate limit


class RateLimit:
    """At most ``rate`` requests a second per session, in bursts of up to ``burst`` (a token
    bucket). A request over the limit is refused with error ``REFUSED``; its data says how
    long to wait (``retryAfter``, seconds).

    A bucket is kept per authenticated principal when the server has an authenticator (its
    ``subject``: the same user on several sessions shares one), else per session.
    Stateless-era requests (2026-07-28) have no session of their own: without an
    authenticator, those of one HTTP endpoint all count against one bucket.
    """

    def __init__(self, rate: float, burst: int) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = rate
        self.burst = burst
        # Per session: tokens left, and when they were counted. Weak keys: a session that
        # ends takes its bucket with it.
        self._buckets: weakref.WeakKeyDictionary[Session, tuple[float, float]] = (
            weakref.WeakKeyDictionary()
        )
        # Per principal (by subject): kept as long as the limiter; bounded by the users.
        self._by_subject: dict[str, tuple[float, float]] = {}

    async def __call__(self, call: Call, call_next: CallNext) -> Result | None:
        if not call.is_request:
            return await call_next(call)
        now = trio.current_time()
        principal = call.principal
        buckets: MutableMapping[Any, tuple[float, float]]
        if principal is not None:
            buckets, key = self._by_subject, principal.subject
        else:
            buckets, key = self._buckets, call.session
        tokens, then = buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        if tokens < 1:
            buckets[key] = (tokens, now)
            wait = (1 - tokens) / self.rate
            raise mcptrio.McpError(
                f"Rate limit: {self.rate:g} requests a second, in bursts of {self.burst}",
                {"retryAfter": round(wait, 3)},
                code=REFUSED,
            )
        buckets[key] = (tokens - 1, now)
        return await call_next(call)


# ---------------------------------------------------------------- a per-tool permission check


class ToolPermissions:
    """Each tool needs a permission; a client may call, and sees listed, only the tools whose
    permission it holds. Tools not in ``required`` are open to all.

    ``granted(call)`` says what the caller holds: :func:`granted_by_scopes`, the OAuth scopes of
    the authenticated principal, is the one to use behind an authenticator. The demo below
    grants by the name the client gives in its ``clientInfo`` instead (it runs in memory, with
    no authenticator), which the client chooses itself: fine to separate a trusted agent from
    a test tool, not a security boundary.
    """

    def __init__(
        self, required: Mapping[str, str], granted: Callable[[Call], Collection[str]]
    ) -> None:
        self.required = dict(required)
        self.granted = granted

    def allows(self, call: Call, tool: str) -> bool:
        needed = self.required.get(tool)
        return needed is None or needed in self.granted(call)

    async def __call__(self, call: Call, call_next: CallNext) -> Result | None:
        params = call.params
        if isinstance(params, CallToolRequest) and not self.allows(call, params.name):
            raise mcptrio.McpError(
                f"Not allowed to call tool {params.name!r}",
                {"tool": params.name, "needs": self.required[params.name]},
                code=REFUSED,
            )
        result = await call_next(call)
        if isinstance(result, ListToolsResult):
            # Changing the answer: a tool the client may not call is not listed to it either.
            allowed = [tool for tool in result.tools if self.allows(call, tool.name)]
            result = msgspec.structs.replace(result, tools=allowed)
        return result


def granted_by_scopes(call: Call) -> Collection[str]:
    """``granted`` for :class:`ToolPermissions`: the scopes of the authenticated principal
    (none without an authenticator)."""
    principal = call.principal
    scopes = getattr(principal, "scopes", None)
    return frozenset(scopes) if scopes is not None else frozenset()


def granted_by_client_name(grants: Mapping[str, Collection[str]]) -> Callable[[Call], set[str]]:
    """``granted`` for :class:`ToolPermissions`: by the client's self-declared name."""

    def granted(call: Call) -> set[str]:
        info = call.context.client_info if call.context is not None else None
        return set(grants.get(info.name, ())) if info is not None else set()

    return granted


# ---------------------------------------------------------------- a server using all three


def build_server(*, rate: float = 1.0, burst: int = 4) -> mcptrio.Server:
    """A server with the three middleware, outermost first: logging sees refusals too."""
    permissions = ToolPermissions(
        {"delete_note": "notes:write"},
        granted_by_client_name({"editor": {"notes:write"}}),
    )
    server = mcptrio.Server(
        "guarded-notes", middleware=[log_requests, RateLimit(rate, burst), permissions]
    )
    notes = {"todo": "buy milk"}

    @server.tool
    async def read_note(name: str) -> str:
        """Read a note."""
        return notes.get(name, "")

    @server.tool
    async def delete_note(name: str) -> bool:
        """Delete a note."""
        return notes.pop(name, None) is not None

    return server


def as_client(name: str) -> ClientIdentity:
    return ClientIdentity(info=Implementation(name=name, version="1.0"))


async def main() -> None:
    server = build_server()
    async with mcptrio.open_client(server, identity=as_client("viewer")) as c:
        tools = await c.list_tools()
        print("viewer sees:", [tool.name for tool in tools.tools])
        print("read_note:", (await c.call_tool("read_note", {"name": "todo"})).content[0].text)
        try:
            await c.call_tool("delete_note", {"name": "todo"})
        except mcptrio.McpError as exc:
            print("delete_note refused:", exc.code, exc.message)
        try:
            await c.call_tool("read_note", {"name": "todo"})
        except mcptrio.McpError as exc:
            print("then refused:", exc.message, sorted(exc.data))
    async with mcptrio.open_client(server, identity=as_client("editor")) as c:
        tools = await c.list_tools()
        print("editor sees:", [tool.name for tool in tools.tools])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    trio.run(main)
