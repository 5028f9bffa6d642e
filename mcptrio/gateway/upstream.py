"""One upstream server of a gateway: what it is (:class:`Upstream`) and the actor that keeps it
connected (:class:`UpstreamConnection`).

The actor's life, in a loop until the gateway stops:

1. connect (:func:`~mcptrio.open_client`, either era, any transport) and list everything, page
   by page: the tools, resources, templates and prompts that pass the filters become forwarded
   items of the gateway (:mod:`mcptrio.server.forwarding`), named ``<namespace>_<name>`` or as
   renamed; the gateway's clients get list-changed;
2. while connected, a list-changed from the upstream relists that kind (one relisting actor,
   merging bursts), and resource updates are passed on; forwarded requests run in the
   downstream request's own task, so cancelling one cancels the upstream request too
   (``notifications/cancelled`` goes upstream);
3. when the connection ends (the process exits, the socket breaks) or cannot be made, the
   upstream's items are removed at once (list-changed again), requests waiting on it fail with a
   tool error naming the upstream, and so do later calls of its tools; then it waits (0.5 s,
   doubling up to 30 s, back to 0.5 s after a connection that lasted) and connects again;
   a command that cannot start (:func:`~.commands.cannot_start`) is logged once and not retried.

Every wait on the upstream has a deadline: connecting (``connect_timeout``), each forwarded
request (``timeout``, pushed back by the upstream's progress), each relisting.
"""

from __future__ import annotations

import fnmatch
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
import trio

from ..client import (
    Client,
    ClientIdentity,
    NotificationCallbacks,
    Revisions,
    Target,
    Timeouts,
    open_client,
)
from ..client.apps import declare_apps, tool_view
from ..protocol.errors import (
    ConnectionClosed,
    InternalError,
    McpError,
    RequestTimeout,
    TransportError,
)
from ..protocol.revisions import revision_of
from ..protocol.types import (
    CallToolResult,
    ClientCapabilities,
    GetPromptResult,
    Implementation,
    LoggingMessageNotification,
    PromptReference,
    ResourceContents,
    ResourceTemplateReference,
    RootsCapability,
)
from ..server import Server
from ..server.apps import namespaced_tool_meta, namespaced_view_reader, served_view_uri, view_uri
from ..server.forwarding import (
    CompleteForwarder,
    ForwardedItem,
    ForwardedPrompt,
    ForwardedResource,
    ForwardedTemplate,
    ReadForwarder,
)
from ..server.handler_context import HandlerContext
from ..server.mount import check_namespace
from ..server.session_state import ListKind
from ..server.tool_results import error_result
from .commands import cannot_start
from .parked import ParkedCall, ParkedCalls
from .routing import DownstreamRouter
from .transforms import ToolTransform, transformed_tool, warn_unmatched

__all__ = ["Backoff", "Upstream", "UpstreamConnection", "UpstreamState"]

log = logging.getLogger("mcptrio.gateway")

UpstreamState = Literal["connecting", "up", "down"]
_KINDS: tuple[ListKind, ...] = ("tools", "resources", "prompts")


@dataclass(frozen=True, kw_only=True)
class Backoff:
    """How long an upstream waits before connecting again: ``initial`` seconds, times
    ``factor`` after each failure, at most ``maximum``; back to ``initial`` after a connection
    that stayed up ``reset_after`` seconds."""

    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 30.0
    reset_after: float = 10.0


@dataclass(frozen=True, kw_only=True)
class Upstream:
    """One upstream MCP server of a gateway.

    ``target`` is anything :func:`~mcptrio.open_client` connects to: a command (stdio), an
    ``http(s)://`` URL (Streamable HTTP, or the legacy HTTP+SSE endpoint), a ``ws(s)://`` URL,
    an in-process :class:`~mcptrio.Server`. ``namespace`` (default: ``name``) prefixes the names
    of its tools and prompts (``<namespace>_<name>``); ``rename`` maps an upstream tool or
    prompt name to the whole name the gateway's clients see instead. ``include`` and
    ``exclude`` are shell-style patterns (``"get_*"``) matched against the upstream's own tool
    and prompt names and resource URIs: an item is served when it matches some ``include``
    (all do when it is ``None``) and no ``exclude``. ``revisions`` are the revisions spoken to it
    (default: probe the stateless era, fall back to the handshake). ``timeout`` bounds each
    forwarded request (progress pushes it back), ``connect_timeout`` connecting. An
    :class:`~mcptrio.Server` target is mounted (:class:`~.in_process.InProcessUpstream`: no
    protocol between the two) unless ``in_process`` is false, which connects to it in memory
    like any target. ``tools`` transforms upstream tools by their own names (re-describe, hide,
    fix arguments: :class:`~.transforms.ToolTransform`); an upstream with some is connected, even a
    ``Server`` in this process.
    """

    name: str
    target: Target
    namespace: str | None = None
    include: Sequence[str] | None = None
    exclude: Sequence[str] = ()
    rename: Mapping[str, str] = field(default_factory=dict)
    revisions: Revisions | None = None
    timeout: float = 300.0
    connect_timeout: float = 30.0
    in_process: bool = True
    tools: Mapping[str, ToolTransform] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_namespace(self.name)
        if self.namespace is not None:
            check_namespace(self.namespace)
        for patterns in (self.include, self.exclude):
            if isinstance(patterns, str):
                raise TypeError(f"Upstream {self.name!r}: include/exclude take a list of patterns")
        if self.timeout <= 0 or self.connect_timeout <= 0:
            raise ValueError(f"Upstream {self.name!r}: timeouts must be positive")

    @property
    def prefix(self) -> str:
        """The namespace its tool and prompt names begin with (before the ``_`` separator)."""
        return self.namespace or self.name

    def wants(self, name: str) -> bool:
        """Whether an item called (or at URI) ``name`` passes the filters."""
        included = self.include is None or any(fnmatch.fnmatchcase(name, p) for p in self.include)
        return included and not any(fnmatch.fnmatchcase(name, p) for p in self.exclude)

    def exposed(self, name: str) -> str:
        """The name the gateway's clients see for tool or prompt ``name``."""
        renamed = self.rename.get(name)
        if renamed is not None:
            return renamed
        return f"{self.prefix}_{name}"


class UpstreamConnection:
    """The actor that keeps one :class:`Upstream` connected to ``gateway`` (see the module
    docstring); :meth:`run` it in the gateway's nursery."""

    def __init__(self, spec: Upstream, gateway: Server, backoff: Backoff) -> None:
        self.spec = spec
        self.gateway = gateway
        self.backoff = backoff
        self.state: UpstreamState = "connecting"
        #: Why the upstream is down (the last failure), or ``None``.
        self.error: BaseException | None = None
        #: How many times it has connected.
        self.connections = 0
        #: The exposed tool names it served when last connected (calls to them while it is down
        #: get a tool error that says so).
        self.tool_names: set[str] = set()
        self.router = DownstreamRouter(spec.name)
        self._parked = ParkedCalls()
        self._client: Client | None = None
        self._keys: dict[ListKind, list[tuple[str, str]]] = {kind: [] for kind in _KINDS}
        self._dirty: set[ListKind] = set()
        self._wake = trio.Event()
        self._followed: set[str] = set()
        self._nursery: trio.Nursery | None = None
        self._closing = False

    def __repr__(self) -> str:
        return f"<UpstreamConnection {self.spec.name!r} {self.state}>"

    # ---------------------------------------------------------------- the actor

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Connect, serve, reconnect, until cancelled; reports once the first attempt is over
        (connected or failed: a failing upstream does not hold the gateway up)."""
        reported = False

        def ready() -> None:
            nonlocal reported
            if not reported:
                reported = True
                task_status.started()

        delay = self.backoff.initial
        while True:
            started = trio.current_time()
            try:
                await self._connected(ready)
            except Exception as exc:
                reason = cannot_start(self.spec.target, exc)
                if reason is not None:
                    # No retry would change it: said once, and the upstream stays down.
                    self.state, self.error = "down", exc
                    log.error("Upstream %r cannot start: %s; not retrying", self.spec.name, reason)
                    ready()
                    return
                self._down(exc)
            ready()
            if trio.current_time() - started >= self.backoff.reset_after:
                delay = self.backoff.initial
            await trio.sleep(delay)
            delay = min(delay * self.backoff.factor, self.backoff.maximum)

    async def _connected(self, ready: Callable[[], None]) -> None:
        # An upstream that failed stays "down" while it is retried: "connecting" is the first try.
        self._closing = False
        self.router.connecting()
        spec = self.spec
        with trio.fail_after(spec.connect_timeout) as connecting:
            async with open_client(
                spec.target,
                identity=ClientIdentity(
                    info=Implementation(name="mcptrio-gateway", version=self.gateway.info.version),
                    # roots/list is answered with the waiting client's roots (see .routing).
                    # It hands MCP Apps views on, so it declares them (docs/explanation/apps.md).
                    capabilities=declare_apps(ClientCapabilities(roots=RootsCapability())),
                ),
                revisions=spec.revisions or Revisions(),
                timeouts=Timeouts(initialize=spec.connect_timeout, request=spec.timeout),
                handlers=self.router.handlers(),
                notifications=NotificationCallbacks(
                    on_list_changed=self._list_changed,
                    on_resource_updated=self._updated,
                    on_log=self._log,
                ),
            ) as client:
                await self._serve(client, ready, connecting)

    async def _serve(
        self, client: Client, ready: Callable[[], None], connecting: trio.CancelScope
    ) -> None:
        async with trio.open_nursery() as nursery:
            for kind in _KINDS:
                await self._sync(client, kind)
            connecting.deadline = math.inf
            self._up(client, nursery)
            ready()
            nursery.start_soon(self._relister, client)
            for uri in sorted(self._followed):
                await nursery.start(self._follow, client, uri)
            await client.session.closed.wait()
            # Out of the gateway before the (maybe slow) close of the transport.
            self._down(ConnectionClosed("the connection ended"))
            nursery.cancel_scope.cancel()

    def _up(self, client: Client, nursery: trio.Nursery) -> None:
        self._client, self._nursery = client, nursery
        self.state, self.error = "up", None
        self.connections += 1
        log.info("Upstream %r connected (%s)", self.spec.name, client.protocol_version)

    def _down(self, error: BaseException) -> None:
        if self._closing:
            return  # already down; what closing the connection raised says nothing new
        self._closing = True
        was = self.state
        self._client, self._nursery = None, None
        self.state, self.error = "down", error
        for kind in _KINDS:
            self._replace(kind, [])
        # Once per outage at warning level; each failed retry after it at info level.
        level = logging.INFO if was == "down" else logging.WARNING
        log.log(level, "Upstream %r is down: %s", self.spec.name, describe(error))

    def unavailable(self) -> str:
        """What a call to this upstream's tools answers while it is down."""
        reason = describe(self.error) if self.error is not None else "not connected yet"
        return (
            f"The upstream server {self.spec.name!r} is unavailable ({reason}); the gateway is"
            " reconnecting to it"
        )

    def close(self) -> None:
        """Remove everything this upstream added (the gateway is dropping it)."""
        self._client = None
        for kind in _KINDS:
            self._replace(kind, [])

    # ---------------------------------------------------------------- following changes

    def _list_changed(self, kind: ListKind) -> None:
        self._dirty.add(kind)
        self._wake.set()

    async def _relister(self, client: Client) -> None:
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            kinds, self._dirty = self._dirty, set()
            for kind in _KINDS:
                if kind in kinds:
                    await self._sync(client, kind)

    def _updated(self, uri: str) -> None:
        self.gateway.notify_resource_updated(view_uri(self.spec.prefix, uri))

    def _log(self, message: LoggingMessageNotification) -> None:
        """Pass a log message on to the client waiting on this upstream, or else to every
        handshake-era session (each at its own level; queued, never waiting)."""
        logger = self.spec.name if message.logger is None else f"{self.spec.name}.{message.logger}"
        message = msgspec.structs.replace(message, logger=logger)
        try:
            waiter, _own = self.router.downstream()
        except McpError:
            waiter = None  # several clients wait on it: the message goes to every session
        ctx = waiter.ctx if isinstance(waiter, ParkedCall) else waiter
        states = (
            [self.gateway.session_state(ctx.session)]
            if ctx is not None and ctx.request_meta is None
            else self.gateway.session_states()
        )
        for state in states:
            if state.log_enabled(message.level):
                state.enqueue_log(message)

    async def _subscribe(self, uri: str) -> None:
        """A client of the gateway subscribed to ``uri``: follow it upstream (once; kept
        until the gateway stops, and again after a reconnection)."""
        client, nursery = self._client, self._nursery
        if client is None or nursery is None:
            raise InternalError(self.unavailable())
        uri = served_view_uri(self.spec.prefix, uri)
        if uri in self._followed:
            return
        if (
            client.server_capabilities.resources is None
            or not client.server_capabilities.resources.subscribe
        ):
            return  # the upstream sends no updates; the subscription is kept here only
        self._followed.add(uri)
        await nursery.start(self._follow, client, uri)

    async def _follow(
        self,
        client: Client,
        uri: str,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            async with client.subscribe(uri, timeout=self.spec.timeout) as updates:
                task_status.started()
                async for updated in updates:
                    self.gateway.notify_resource_updated(updated)
        except McpError as exc:
            # One refused subscription leaves the connection (and the others) as they are.
            log.warning("Upstream %r: following %r failed: %s", self.spec.name, uri, exc)
            self._followed.discard(uri)
            task_status.started()

    # ---------------------------------------------------------------- listing

    async def _sync(self, client: Client, kind: ListKind) -> None:
        """List ``kind`` upstream (every page) and replace what the gateway serves of it."""
        spec = self.spec
        items: list[ForwardedItem | None] = []
        caps = client.server_capabilities
        if kind == "tools" and caps.tools is not None:
            tools = [tool async for tool in client.iter_tools(cache="refresh")]
            views = any(tool_view(tool) is not None for tool in tools)  # a view calls them too
            for tool in tools:
                if spec.wants(tool.name):
                    exposed, transform = spec.exposed(tool.name), spec.tools.get(tool.name)
                    caller, app_name = self._caller(tool.name), tool.name if views else None
                    meta = namespaced_tool_meta(spec.prefix, tool.meta)
                    items.append(
                        transformed_tool(
                            spec.name, tool, exposed, transform, caller, meta, app_name=app_name
                        )
                    )
            warn_unmatched(spec.name, spec.tools, [tool.name for tool in tools])
        elif kind == "prompts" and caps.prompts is not None:
            completes = _completes(client)
            async for prompt in client.iter_prompts(cache="refresh"):
                if spec.wants(prompt.name):
                    complete = self._completer(PromptReference(name=prompt.name), completes)
                    items.append(
                        _item(
                            ForwardedPrompt,
                            msgspec.structs.replace(prompt, name=spec.exposed(prompt.name)),
                            self._renderer(prompt.name),
                            complete=complete,
                        )
                    )
        elif kind == "resources" and caps.resources is not None:
            completes = _completes(client)
            async for resource in client.iter_resources(cache="refresh"):
                if spec.wants(resource.uri):
                    served = view_uri(spec.prefix, resource.uri)  # MCP Apps views: namespaced
                    read: ReadForwarder = self._read
                    if served != resource.uri:
                        read = namespaced_view_reader(spec.prefix, read)
                    resource = msgspec.structs.replace(resource, uri=served)
                    items.append(
                        _item(ForwardedResource, resource, read, subscribe=self._subscribe)
                    )
            async for template in client.iter_resource_templates(cache="refresh"):
                if spec.wants(template.uri_template):
                    ref = ResourceTemplateReference(uri=template.uri_template)
                    items.append(
                        _item(
                            ForwardedTemplate,
                            template,
                            self._read,
                            complete=self._completer(ref, completes),
                            subscribe=self._subscribe,
                        )
                    )
        self._replace(kind, [item for item in items if item is not None])

    def _replace(self, kind: ListKind, items: list[ForwardedItem]) -> None:
        gateway = self.gateway
        for registry, key in self._keys[kind]:
            getattr(gateway, registry).remove(key)
        keys: list[tuple[str, str]] = []
        for item in items:
            try:
                gateway.add_forwarded(item)
            except ValueError as exc:
                log.warning("Upstream %r: %s; left out", self.spec.name, exc)
                continue
            keys.append(_key(item))
        self._keys[kind] = keys
        if kind == "tools" and items:
            self.tool_names = {key for _registry, key in keys}

    # ---------------------------------------------------------------- forwarding

    async def _forward_call(
        self,
        client: Client,
        waiter: HandlerContext | ParkedCall,
        name: str,
        arguments: dict[str, Any] | None,
        progress: Callable[..., Awaitable[None]] | None,
    ) -> CallToolResult:
        # The router sees how the call ends: one the upstream did not answer may still be in
        # progress there, and cause questions later.
        try:
            with self.router.forwarding(waiter):
                return await client.call_tool(
                    name, arguments, validate_output=False, on_progress=progress
                )
        except ConnectionClosed as exc:
            # The connection is gone: the follower reconnects (see _down).
            self.error = exc
            return error_result(self.unavailable())
        except TransportError as exc:
            # This call could not be carried (an HTTP upstream's refusal, timeout or error
            # status): the connection itself may be fine, so nothing is reconnected.
            return error_result(
                f"The upstream server {self.spec.name!r} could not carry this call: {describe(exc)}"
            )
        except RequestTimeout as exc:
            return error_result(f"The upstream server {self.spec.name!r}: {exc}")

    def _caller(
        self, name: str
    ) -> Callable[[HandlerContext, dict[str, Any] | None], Awaitable[CallToolResult]]:
        async def call(ctx: HandlerContext, arguments: dict[str, Any] | None) -> CallToolResult:
            client = self._client
            if client is None:
                return error_result(self.unavailable())
            nursery = self._nursery
            if (
                ctx.request_meta is not None
                and client.session.connection.request_meta is None
                and nursery is not None
            ):
                # A stateless-era client, a handshake-era upstream: the call outlives rounds.
                parked = self._parked.find(ctx)
                if parked is None:

                    async def parked_call(parked: ParkedCall) -> CallToolResult:
                        progress = _progress_to_parked(parked)
                        return await self._forward_call(client, parked, name, arguments, progress)

                    parked = self._parked.start(nursery, parked_call, self.spec.timeout)
                return await self._parked.wait(ctx, parked)
            return await self._forward_call(client, ctx, name, arguments, _progress_to(ctx))

        return call

    def _renderer(
        self, name: str
    ) -> Callable[[HandlerContext, dict[str, str] | None], Awaitable[GetPromptResult]]:
        async def render(ctx: HandlerContext, arguments: dict[str, str] | None) -> GetPromptResult:
            client = self._require()
            with self.router.forwarding(ctx):
                return await client.get_prompt(name, arguments)

        return render

    async def _read(self, ctx: HandlerContext, uri: str) -> list[ResourceContents]:
        client = self._require()
        with self.router.forwarding(ctx):
            return (await client.read_resource(uri)).contents

    def _completer(
        self, ref: PromptReference | ResourceTemplateReference, completes: bool
    ) -> CompleteForwarder | None:
        if not completes:
            return None

        async def complete(
            ctx: HandlerContext, argument: str, value: str, arguments: dict[str, str]
        ) -> list[str]:
            client = self._require()
            with self.router.forwarding(ctx):
                answer = await client.complete(ref, argument, value, context=arguments or None)
            return list(answer.completion.values)

        return complete

    def _require(self) -> Client:
        client = self._client
        if client is None:
            raise InternalError(self.unavailable())
        return client


def _progress_to_parked(parked: ParkedCall) -> Callable[..., Awaitable[None]]:
    """A parked call's progress goes to the round waiting on it, if one is."""

    async def progress(value: float, total: float | None, message: str | None) -> None:
        ctx = parked.ctx
        if ctx is not None and ctx.progress_token is not None:
            await ctx.report_progress(value, total, message)

    return progress


def _completes(client: Client) -> bool:
    """Whether to ask ``client``'s server for completions: a revision without the
    ``completions`` capability (2024-11-05) has the request but no way to declare it, so a server
    of such a revision is asked (and may refuse)."""
    if client.server_capabilities.completions is not None:
        return True
    return not revision_of(client.protocol_version).completions_capability


def _progress_to(ctx: HandlerContext) -> Callable[..., Awaitable[None]] | None:
    """The upstream call's progress callback: passed on to the downstream caller, if it asked."""
    if ctx.progress_token is None:
        return None

    async def progress(value: float, total: float | None, message: str | None) -> None:
        await ctx.report_progress(value, total, message)

    return progress


def _item(make: Callable[..., ForwardedItem], *args: Any, **kwargs: Any) -> ForwardedItem | None:
    """``make(*args, **kwargs)``, or ``None`` (with a warning) for a definition the gateway
    cannot serve (a name the tool-name rules forbid, say)."""
    try:
        return make(*args, **kwargs)
    except ValueError as exc:
        log.warning("Left out of the gateway: %s", exc)
        return None


def _key(item: ForwardedItem) -> tuple[str, str]:
    if isinstance(item, ForwardedResource):
        return "resources", item.uri
    if isinstance(item, ForwardedTemplate):
        return "templates", item.uri_template
    if isinstance(item, ForwardedPrompt):
        return "prompts", item.name
    return "tools", item.name


def describe(error: BaseException) -> str:
    """An error in a few words, for tool errors and logs."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
