"""Toolsets: named groups of upstream tools that each client of the gateway switches on and off.

A :class:`Toolset` takes a tool by its upstream (``upstreams``), by a shell-style pattern over the
name clients see (``tools``), or by a tag (``tags``, see :func:`tool_tags`). A client sees:

- the gateway's own tools (its decorated tools, and the toolset tools below), always;
- an upstream tool that is in no toolset, always (toolsets switch what they group);
- an upstream tool that is in some toolset, when one of its toolsets is enabled for the client.

Each client starts with the toolsets that are ``enabled`` by default, and switches them with
three gateway tools: ``gateway_list_toolsets``, ``gateway_enable_toolset`` and
``gateway_disable_toolset``. A tool that is not shown cannot be called either (-32602, naming
the toolsets that would show it).

Whose choice it is: a handshake-era client's session (the spec's list-changed is per session:
two agents on one gateway keep their own lists); a stateless-era (2026-07-28) client has no
session, so its choice is kept for whoever the server knows it as
(:func:`~mcptrio.server.requestor.requestor_key`: the authenticated subject, else the client's
address, else the one peer of a stdio or in-memory connection). The client is told its list
changed with ``notifications/tools/list_changed`` on its session, or on every listen stream of
the gateway in the stateless era (the bus names no requestor: the others relist and see theirs
unchanged).
"""

from __future__ import annotations

import fnmatch
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol.errors import InvalidParams
from ..protocol.types import CacheScope, CallToolRequest, ListToolsRequest, ListToolsResult, Tool
from ..runtime.session import Session
from ..server import Server
from ..server.context import Context
from ..server.forwarding import ForwardedTool
from ..server.handler_context import HandlerContext
from ..server.middleware import Call, CallNext
from ..server.pagination import paginate
from ..server.requestor import requestor_key
from .config_entries import checked_entry

__all__ = ["ToolView", "Toolset", "parse_toolsets", "tool_tags"]


@dataclass(frozen=True, kw_only=True)
class Toolset:
    """A named group of upstream tools (see the module docstring); ``enabled``: shown to every
    client from its start."""

    name: str
    description: str = ""
    upstreams: Sequence[str] = ()
    tools: Sequence[str] = ()
    tags: Sequence[str] = ()
    enabled: bool = False

    def __post_init__(self) -> None:
        for key in ("upstreams", "tools", "tags"):
            if isinstance(getattr(self, key), str):
                raise TypeError(f"Toolset {self.name!r}: {key!r} takes a list")

    def takes(self, upstream: str, tool: Tool) -> bool:
        """Whether the tool ``tool`` (as clients see it) of upstream ``upstream`` is in it."""
        return (
            upstream in self.upstreams
            or any(fnmatch.fnmatchcase(tool.name, pattern) for pattern in self.tools)
            or not tool_tags(tool).isdisjoint(self.tags)
        )


#: How many stateless-era requestors' toolset choices are kept (see :meth:`ToolView._set`).
MAX_REQUESTORS = 10_000

_HINT_TAGS = {
    "read_only_hint": "read-only",
    "destructive_hint": "destructive",
    "idempotent_hint": "idempotent",
    "open_world_hint": "open-world",
}


def tool_tags(tool: Tool) -> frozenset[str]:
    """A tool's tags: MCP has no field for them, so they are what servers send where they put
    them: the strings of ``_meta.tags`` and of FastMCP's ``_meta._fastmcp.tags``, and one tag per
    annotation hint that is true (``read-only``, ``destructive``, ``idempotent``,
    ``open-world``)."""
    tags: set[str] = set()
    meta = tool.meta or {}
    fastmcp = meta.get("_fastmcp")
    for found in (meta.get("tags"), fastmcp.get("tags") if isinstance(fastmcp, dict) else None):
        if isinstance(found, list):
            tags.update(tag for tag in found if isinstance(tag, str))
    if tool.annotations is not None:
        for field, tag in _HINT_TAGS.items():
            if getattr(tool.annotations, field) is True:
                tags.add(tag)
    return frozenset(tags)


class ToolView:
    """What each client of ``gateway`` sees of its tools (toolsets) and may call: a middleware
    on ``tools/list`` and ``tools/call``, and the toolset tools. :meth:`install` it once."""

    def __init__(self, gateway: Server, toolsets: Iterable[Toolset]) -> None:
        self.gateway = gateway
        self.toolsets = {toolset.name: toolset for toolset in toolsets}
        self._default = frozenset(t.name for t in self.toolsets.values() if t.enabled)
        self._by_session: weakref.WeakKeyDictionary[Session, frozenset[str]] = (
            weakref.WeakKeyDictionary()
        )
        self._by_requestor: dict[str, frozenset[str]] = {}
        #: Hidden from the list of every client whatever its toolsets (tool search shows its
        #: two tools instead of the upstreams').
        self.listed_upstream_tools = True

    def install(self) -> None:
        """Add the middleware, and the toolset tools when there are toolsets."""
        self.gateway.add_middleware(self._middleware, outermost=True)
        if not self.toolsets:
            return
        self.gateway.add_tool(
            self._list_toolsets,
            name="gateway_list_toolsets",
            description="List the gateway's toolsets: each one's tools and whether it is enabled.",
        )
        self.gateway.add_tool(
            self._enable_toolset,
            name="gateway_enable_toolset",
            description="Enable a toolset of the gateway: its tools join your tool list.",
        )
        self.gateway.add_tool(
            self._disable_toolset,
            name="gateway_disable_toolset",
            description="Disable a toolset of the gateway: its tools leave your tool list.",
        )

    # ---------------------------------------------------------------- who sees what

    def enabled(self, ctx: HandlerContext) -> frozenset[str]:
        """The toolsets enabled for the client of ``ctx``."""
        if ctx.request_meta is None:
            return self._by_session.get(ctx.session, self._default)
        return self._by_requestor.get(requestor_key(ctx), self._default)

    def _set(self, ctx: HandlerContext, enabled: frozenset[str]) -> None:
        if ctx.request_meta is None:
            self._by_session[ctx.session] = enabled
            self.gateway.session_state(ctx.session).mark_changed("tools")
        else:
            key = requestor_key(ctx)
            self._by_requestor.pop(key, None)
            if len(self._by_requestor) >= MAX_REQUESTORS:
                # Requestors never say they are gone: the one that switched longest ago goes
                # back to the defaults rather than the gateway growing without bound.
                del self._by_requestor[next(iter(self._by_requestor))]
            self._by_requestor[key] = enabled
            self.gateway.subscriptions.publish(("list_changed", "tools"))

    def upstream_tools(self) -> dict[str, tuple[str, ForwardedTool]]:
        """Every upstream tool the gateway serves now, by name: its upstream, and the tool."""
        owners: dict[str, str] = {}
        for name, connection in getattr(self.gateway, "upstreams", {}).items():
            for tool in connection.tool_names:
                owners[tool] = name
        return {
            key: (owners[key], item)
            for key, item in self.gateway.tools.items()
            if key in owners and isinstance(item, ForwardedTool)
        }

    def toolsets_of(self, upstream: str, tool: Tool) -> list[str]:
        """The toolsets that take ``tool`` of ``upstream``."""
        return [name for name, ts in self.toolsets.items() if ts.takes(upstream, tool)]

    def shown(self, ctx: HandlerContext) -> dict[str, tuple[str, ForwardedTool]]:
        """The upstream tools the toolsets let the client of ``ctx`` see and call."""
        enabled = self.enabled(ctx)
        shown = {}
        for key, (upstream, item) in self.upstream_tools().items():
            sets = self.toolsets_of(upstream, item.definition)
            if not sets or not enabled.isdisjoint(sets):
                shown[key] = (upstream, item)
        return shown

    def listed(self, ctx: HandlerContext) -> list[Tool]:
        """The tools ``tools/list`` shows the client of ``ctx``, in the gateway's order."""
        upstream = self.upstream_tools()
        shown = self.shown(ctx) if self.listed_upstream_tools else {}
        return [
            item.definition
            for key, item in self.gateway.tools.items()
            if key not in upstream or key in shown
        ]

    async def _middleware(self, call: Call, call_next: CallNext) -> Any:
        request, ctx = call.params, call.context
        if ctx is None:
            return await call_next(call)
        if isinstance(request, ListToolsRequest):
            cursor = request.cursor if isinstance(request.cursor, str) else None
            page, next_cursor = paginate("tools", self.listed(ctx), cursor, self.gateway.page_size)
            ttl = self.gateway.cache_ttl_ms
            # The list is this client's: a cache may keep it for this client only.
            scope: CacheScope | None = None if ttl is None else "private"
            return ListToolsResult(
                tools=list(page), next_cursor=next_cursor, ttl_ms=ttl, cache_scope=scope
            )
        if isinstance(request, CallToolRequest):
            self.check_callable(ctx, request.name)
        return await call_next(call)

    def check_callable(self, ctx: HandlerContext, name: str) -> None:
        """``InvalidParams`` naming the toolsets to enable when ``name`` is an upstream tool the
        client's toolsets hide."""
        upstream = self.upstream_tools().get(name)
        if upstream is None or name in self.shown(ctx):
            return
        sets = ", ".join(repr(s) for s in self.toolsets_of(upstream[0], upstream[1].definition))
        raise InvalidParams(
            f"Tool {name!r} is in no enabled toolset; gateway_enable_toolset one of: {sets}"
        )

    # ---------------------------------------------------------------- the toolset tools

    async def _list_toolsets(self, ctx: Context) -> dict[str, Any]:
        """The toolsets, their tools and whether each is enabled for this client."""
        enabled = self.enabled(ctx)
        tools = self.upstream_tools()
        return {
            "toolsets": [
                {
                    "name": name,
                    "description": toolset.description,
                    "enabled": name in enabled,
                    "tools": [k for k, (u, t) in tools.items() if toolset.takes(u, t.definition)],
                }
                for name, toolset in self.toolsets.items()
            ]
        }

    async def _enable_toolset(self, ctx: Context, name: str) -> str:
        """Enable toolset ``name`` for this client."""
        return self._switch(ctx, name, on=True)

    async def _disable_toolset(self, ctx: Context, name: str) -> str:
        """Disable toolset ``name`` for this client."""
        return self._switch(ctx, name, on=False)

    def _switch(self, ctx: HandlerContext, name: str, *, on: bool) -> str:
        if name not in self.toolsets:
            known = ", ".join(repr(n) for n in self.toolsets)
            raise InvalidParams(f"No toolset {name!r} (the toolsets: {known})")
        enabled = self.enabled(ctx)
        wanted = enabled | {name} if on else enabled - {name}
        if wanted == enabled:
            return f"Toolset {name!r} was already {'enabled' if on else 'disabled'}"
        self._set(ctx, wanted)
        return f"Toolset {name!r} {'enabled' if on else 'disabled'}; your tool list changed"


_KEYS = {"description", "upstreams", "tools", "tags", "enabled"}


def parse_toolsets(value: Any, upstreams: Iterable[str]) -> list[Toolset]:
    """The configuration's ``"toolsets"`` key; ``ValueError`` naming the toolset and the key."""
    if value is None:
        return []
    if not isinstance(value, dict):
        raise ValueError('"toolsets" must be an object of toolset names')
    known = set(upstreams)
    toolsets = []
    for name, entry in value.items():
        entry = checked_entry(f"Toolset {name!r}", entry, _KEYS)
        lists = {key: entry.get(key, []) for key in ("upstreams", "tools", "tags")}
        for key, items in lists.items():
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise ValueError(f"Toolset {name!r}: {key!r} must be a list of strings")
        for upstream in lists["upstreams"]:
            if upstream not in known:
                raise ValueError(f"Toolset {name!r}: no server {upstream!r} in mcpServers")
        description, enabled = entry.get("description", ""), entry.get("enabled", False)
        if not isinstance(description, str) or not isinstance(enabled, bool):
            raise ValueError(f"Toolset {name!r}: 'description' is a string, 'enabled' a boolean")
        tuples = {key: tuple(items) for key, items in lists.items()}
        toolsets.append(Toolset(name=name, description=description, enabled=enabled, **tuples))
    return toolsets
