"""The :class:`Gateway`: a :class:`~mcptrio.Server` whose contents come from upstream servers.

::

    gateway = Gateway("tools", upstreams=[
        Upstream(name="everything", target=["npx", "@modelcontextprotocol/server-everything"]),
        Upstream(name="notes", target="http://127.0.0.1:8000/mcp", exclude=["delete_*"]),
    ])
    async with trio.open_nursery() as nursery:
        await nursery.start(gateway.serve_upstreams)        # connect them all (once tried)
        url = await nursery.start(gateway.serve_http)       # serve clients, either era

The actor tree (see ``docs/explanation/gateway.md``)::

    user nursery
    ├── Gateway.serve_upstreams        one nursery
    │   └── UpstreamConnection.run     one actor per upstream: connect, list, follow, reconnect
    │       ├── the upstream client    (its session, transport, listen streams)
    │       ├── relister               relists a kind on the upstream's list-changed
    │       └── follower               one per resource subscribed to upstream
    └── Gateway.serve_http / serve_stdio / serve_session
        └── Session actor              one per downstream client (either era)
            └── request actor          one per downstream request; a forwarded one awaits the
                                       upstream's answer in this task, so cancelling it sends
                                       notifications/cancelled upstream

The gateway is itself a server: its own tools, mounts and everything else a ``Server`` has sit
beside the upstreams' items.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import trio

from .. import __version__
from ..protocol.base import Request, Result
from ..protocol.types import CallToolRequest, ServerCapabilities
from ..runtime.context import RequestContext
from ..server import Server
from ..server.tool_results import error_result
from .in_process import InProcessUpstream
from .names import check_apart
from .tool_search import ToolSearch, install_tool_search
from .toolsets import Toolset, ToolView
from .upstream import Backoff, Upstream, UpstreamConnection

__all__ = ["Gateway"]


class Gateway(Server):
    """A server fronting the MCP servers ``upstreams`` (each an :class:`Upstream`).

    ``name`` and ``version`` are the gateway's own ``serverInfo`` (by default its name and
    mcptrio's version), which every client sees, in either era: an upstream's is never passed
    on. ``reconnect`` is how long an upstream that failed waits before it is tried again. The
    other keywords are :class:`~mcptrio.Server`'s. Tools, resources, prompts and completions are
    declared to every client (they come and go with the upstreams), lists always with
    ``listChanged``.
    """

    def __init__(
        self,
        name: str = "mcptrio-gateway",
        version: str = __version__,
        *,
        upstreams: Iterable[Upstream] = (),
        reconnect: Backoff | None = None,
        toolsets: Iterable[Toolset] = (),
        tool_search: ToolSearch | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("declare", ("tools", "resources", "prompts"))
        super().__init__(name, version, **options)
        self.reconnect = reconnect or Backoff()
        self._upstreams: dict[str, UpstreamConnection | InProcessUpstream] = {}
        self._scopes: dict[str, trio.CancelScope] = {}
        self._nursery: trio.Nursery | None = None
        for upstream in upstreams:
            self.add_upstream(upstream)
        #: What each client sees of the upstreams' tools (:mod:`.toolsets`), when it is not all.
        toolsets = list(toolsets)
        self.tool_view: ToolView | None = None
        if toolsets or tool_search is not None:
            self.tool_view = ToolView(self, toolsets)
            self.tool_view.install()
            if tool_search is not None:
                install_tool_search(self, self.tool_view, tool_search)

    @property
    def upstreams(self) -> dict[str, UpstreamConnection | InProcessUpstream]:
        """The upstreams by name: each one's ``state`` (``"connecting"``, ``"up"``,
        ``"down"``), its last ``error`` and how many times it has connected."""
        return dict(self._upstreams)

    def add_upstream(self, upstream: Upstream) -> UpstreamConnection | InProcessUpstream:
        """Add an upstream; while :meth:`serve_upstreams` runs it is connected at once.

        ``ValueError`` for a name another upstream has, or names that could be another
        upstream's (:func:`~.names.check_apart`: the same namespace, one that another's begins
        with before the separator, a rename into another's namespace).
        """
        if upstream.name in self._upstreams:
            raise ValueError(f"An upstream named {upstream.name!r} is already added")
        for other in self._upstreams.values():
            check_apart(other.spec, upstream)
        connection: UpstreamConnection | InProcessUpstream
        if upstream.in_process and isinstance(upstream.target, Server) and not upstream.tools:
            connection = InProcessUpstream(upstream, self)
        else:
            connection = UpstreamConnection(upstream, self, self.reconnect)
        self._upstreams[upstream.name] = connection
        if self._nursery is not None:
            self._nursery.start_soon(self._run_upstream, connection)
        return connection

    def remove_upstream(self, name: str) -> bool:
        """Disconnect upstream ``name`` and remove its items; ``False`` if there was none."""
        connection = self._upstreams.pop(name, None)
        if connection is None:
            return False
        scope = self._scopes.pop(name, None)
        if scope is not None:
            scope.cancel()
        connection.close()
        return True

    async def serve_upstreams(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep every upstream connected until cancelled.

        Reports readiness once each upstream has been tried once, connected or not (one that
        failed is retried with backoff meanwhile, and serves nothing until it connects).
        """
        if self._nursery is not None:
            raise RuntimeError("serve_upstreams is already running for this gateway")
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                async with trio.open_nursery() as starting:
                    for connection in list(self._upstreams.values()):
                        starting.start_soon(nursery.start, self._run_upstream, connection)
                task_status.started()
                # Open for upstreams added later, even when there is none yet.
                await trio.sleep_forever()
        finally:
            self._nursery = None
            for connection in self._upstreams.values():
                connection.close()

    async def _run_upstream(
        self,
        connection: UpstreamConnection | InProcessUpstream,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        with trio.CancelScope() as scope:
            self._scopes[connection.spec.name] = scope
            await connection.run(task_status=task_status)

    def capabilities(self) -> ServerCapabilities:
        """A server's, with ``completions`` always: upstreams that complete may connect later."""
        return msgspec.structs.replace(super().capabilities(), completions={})

    def _owner(self, tool: str) -> UpstreamConnection | InProcessUpstream | None:
        """The upstream that is not up and last served a tool called ``tool``."""
        for connection in self._upstreams.values():
            if connection.state != "up" and tool in connection.tool_names:
                return connection
        return None

    async def handle_request(self, rctx: RequestContext, request: Request[Any]) -> Result:
        """As a server answers, except that a call of a tool whose upstream is down gets a tool
        error saying so (rather than "unknown tool")."""
        if isinstance(request, CallToolRequest) and request.name not in self.tools:
            owner = self._owner(request.name)
            if owner is not None:
                return error_result(owner.unavailable())
        return await super().handle_request(rctx, request)
