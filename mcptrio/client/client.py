"""The :class:`Client`: a connected, initialized session and a typed call per server feature.

Every call takes the keywords of :class:`~mcptrio.client.options.CallOptions` (``timeout``,
``max_total_timeout``, ``on_progress``), as :meth:`~mcptrio.runtime.session.Session.request`
does: progress pushes the timeout back, never past ``max_total_timeout``; a timeout raises
:class:`~mcptrio.protocol.errors.RequestTimeout`; leaving the caller's cancel scope sends
``notifications/cancelled``. An error answer raises the matching
:class:`~mcptrio.protocol.errors.McpError` subclass (``InvalidParams``, ``ResourceNotFound``...).

Listing comes one page at a time (``list_*``) or as an async iterator over every page
(``iter_*``), which refuses a cursor that repeats rather than loop for ever.

In the stateless era (2026-07-28) list pages, reads and ``server/discover`` answers are cached
for the ``ttlMs`` the server gives (:mod:`~mcptrio.client.cache`; ``cache=`` per call), and the
server's notifications come on listen streams (:meth:`Client.listen`; ``subscribe()``,
``list_changes()`` and the callbacks use the client's own, :mod:`~mcptrio.client.listen_actor`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, TypeVar, Unpack, overload

import trio

from ..protocol.base import Request, Result
from ..protocol.errors import HeaderMismatch, InvalidParams, ResourceNotFound
from ..protocol.http_headers import PropertyPath
from ..protocol.revisions import revision_of
from ..protocol.skills_extension import (
    GetSkillRequest,
    ListSkillsRequest,
    ListSkillsResult,
    ReadResourceDirectoryRequest,
    ReadResourceDirectoryResult,
    Skill,
)
from ..protocol.types.completion import (
    CompleteArgument,
    CompleteContext,
    CompleteRequest,
    CompleteResult,
    PromptReference,
    ResourceTemplateReference,
)
from ..protocol.types.discovery import DiscoverRequest, DiscoverResult
from ..protocol.types.lifecycle import (
    Implementation,
    InitializeResult,
    PingRequest,
    ServerCapabilities,
)
from ..protocol.types.logging import LoggingLevel, SetLevelRequest
from ..protocol.types.prompts import (
    GetPromptRequest,
    GetPromptResult,
    ListPromptsRequest,
    ListPromptsResult,
    Prompt,
)
from ..protocol.types.resources import (
    ListResourcesRequest,
    ListResourcesResult,
    ListResourceTemplatesRequest,
    ListResourceTemplatesResult,
    ReadResourceRequest,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
)
from ..protocol.types.roots import Root
from ..protocol.types.tools import (
    CallToolRequest,
    CallToolResult,
    ListToolsRequest,
    ListToolsResult,
    Tool,
)
from ..runtime.session import Session
from .cache import CachePolicy, ResultCache
from .client_streams import UNSUBSCRIBE_TIMEOUT, ClientStreams
from .header_params import HeaderParamsOfTools
from .listen import ListenStream
from .notifications import ListKind, LogMessages, MergedUpdates, NotificationRouter
from .options import CallOptions, check_options
from .output_validation import OutputSchemas
from .pages import every_item
from .sending import RequestSender, SendHook
from .server_requests import ReceiveHook, ServerRequestRouter
from .skills import SkillFile, skill_file_uri, verified_file
from .task_extension import start_extension_task
from .tasks import TaskHandle, start_tool_task

__all__ = ["UNSUBSCRIBE_TIMEOUT", "Client", "SendHook"]

log = logging.getLogger("mcptrio.client")

ResultT = TypeVar("ResultT", bound=Result)


class Client:
    """A connected, initialized MCP client session (made by :func:`~mcptrio.open_client`).

    Its requests go through a :class:`~.sending.RequestSender` (cache, send hook, input
    rounds) and its notification streams (``subscribe``, ``listen``, ``list_changes``,
    ``log_messages``) are held by a :class:`~.client_streams.ClientStreams`.
    """

    def __init__(
        self,
        session: Session,
        initialize_result: InitializeResult,
        *,
        request_timeout: float | None = None,
        handlers: ServerRequestRouter,
        notifications: NotificationRouter,
        listen_timeout: float = 10.0,
        cache: CachePolicy | None = None,
    ) -> None:
        self.session = session
        self.initialize_result = initialize_result
        # Output schemas exist only in some revisions; the revision is settled for the session.
        self._has_output_schemas = revision_of(initialize_result.protocol_version).structured_output
        #: The timeout of every call that passes none (``None``: wait as long as it takes).
        self.request_timeout = request_timeout
        self._handlers = handlers
        self._output_schemas = OutputSchemas()
        #: The ``x-mcp-header`` arguments of the listed tools (the stateless era's HTTP headers).
        self._header_params = HeaderParamsOfTools()
        stateless = session.connection.request_meta is not None
        #: The results kept for their ``ttlMs`` (stateless era; handshake-era results have none,
        #: so nothing is kept there). See :mod:`~mcptrio.client.cache`.
        self.cache = ResultCache((cache or CachePolicy()).size if stateless else 0)
        #: Wraps every request this client sends from now on (:data:`~.sending.SendHook`);
        #: ``None``, the default, sends each as it is.
        self.send_hook: SendHook | None = None
        self._sender = RequestSender(session, handlers, self)
        self._streams = ClientStreams(
            self._sender,
            initialize_result.capabilities,
            notifications,
            self._output_schemas,
            listen_timeout,
        )

    async def _listen_for_callbacks(self) -> None:
        """Stateless era, with an ``on_list_changed`` callback: open the client's listen stream
        (:func:`~mcptrio.open_client` calls it once)."""
        await self._streams.listen_for_callbacks()

    # ---------------------------------------------------------------- the connection

    @property
    def receive_hook(self) -> ReceiveHook | None:
        """Wraps the answering of every request the server sends from now on (sampling,
        elicitation, roots; in the stateless era those an input-required result carries);
        ``None``, the default, answers each as it is."""
        return self._handlers.hook

    @receive_hook.setter
    def receive_hook(self, hook: ReceiveHook | None) -> None:
        self._handlers.hook = hook

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        return self.initialize_result.protocol_version

    @property
    def instructions(self) -> str | None:
        """The server's hint for the model, if it gave one."""
        value = self.initialize_result.instructions
        return value if isinstance(value, str) else None

    @property
    def server_info(self) -> Implementation:
        """The server's ``serverInfo``: its name, version and, by revision, title, icons..."""
        return self.initialize_result.server_info

    @property
    def roots(self) -> list[Root] | None:
        """The roots this client answers ``roots/list`` with (``None``: it has none)."""
        return None if self._handlers.roots is None else list(self._handlers.roots)

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared; a feature it lacks is ``None``."""
        return self.initialize_result.capabilities

    def tool_header_params(self, name: str) -> dict[PropertyPath, str] | None:
        """The ``x-mcp-header`` arguments of tool ``name`` as last listed (stateless era)."""
        return self._header_params.get(name)

    # ---------------------------------------------------------------- any request

    async def request(
        self, request: Request[ResultT], /, **options: Unpack[CallOptions]
    ) -> ResultT:
        """Send any request and return its typed result (see :meth:`Session.request`); a
        cacheable one may be answered from the cache (``cache=``, see
        :mod:`~mcptrio.client.cache`)."""
        return await self._sender.fetch(request, options)

    async def ping(self, **options: Unpack[CallOptions]) -> None:
        """Check that the server answers.

        The stateless era (2026-07-28) has no ``ping``: there the check is a
        ``server/discover``, the one request every server of that era must answer, and its
        result is dropped (a decision: see ``docs/explanation/client-design.md``).
        """
        if options:
            check_options("A Client call", options, CallOptions)
        if self.session.connection.request_meta is not None:
            # Never from the cache: the point is to hear from the server now.
            await self._sender.send(DiscoverRequest(), options)
            return
        await self._sender.send(PingRequest(), options)

    async def discover(self, **options: Unpack[CallOptions]) -> DiscoverResult:
        """``server/discover`` (stateless era): the revisions, capabilities and instructions the
        server offers now, cached for its ``ttlMs`` like a list page. The handshake era has no
        such request (:class:`~mcptrio.protocol.errors.CapabilityNotNegotiated`)."""
        return await self.request(DiscoverRequest(), **options)

    # ---------------------------------------------------------------- tools

    async def list_tools(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListToolsResult:
        """One page of ``tools/list`` (the tools' output schemas are remembered).

        In the stateless era the tools' ``x-mcp-header`` arguments are remembered too (they
        travel in HTTP headers), and a tool whose annotations break the rules is left out of
        the page, with a warning, as the spec has clients do.
        """
        request = ListToolsRequest(cursor=_cursor(cursor))
        return await self._sender.fetch(request, options, self._learn)

    def _learn(self, page: ListToolsResult) -> ListToolsResult:
        if self.session.connection.request_meta is not None:
            page = self._header_params.learn(page)
        self._output_schemas.learn(page.tools)
        return page

    async def iter_tools(self, **options: Unpack[CallOptions]) -> AsyncIterator[Tool]:
        """Every tool, following ``nextCursor`` from page to page."""
        generation = self._output_schemas.generation
        async for tool in every_item(self.list_tools, lambda page: page.tools, options):
            yield tool
        # A list change during the listing means the listing may already be stale.
        self._output_schemas.complete = generation == self._output_schemas.generation

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        as_task: Literal[False] = False,
        **options: Unpack[CallOptions],
    ) -> CallToolResult: ...
    @overload
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        as_task: Literal[True],
        task_ttl: float | None = None,
        **options: Unpack[CallOptions],
    ) -> TaskHandle[CallToolResult]: ...
    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        as_task: bool = False,
        task_ttl: float | None = None,
        **options: Unpack[CallOptions],
    ) -> CallToolResult | TaskHandle[CallToolResult]:
        """Call tool ``name``; a tool failure comes back as a result with ``is_error`` set.

        With ``validate_output`` a result is checked against the tool's ``outputSchema``
        (learnt from the last listing; for a tool not listed yet, the tools are listed once
        first) and :class:`~mcptrio.client.errors.OutputValidationError` is raised on mismatch.
        Revisions before 2025-06-18 have no output schemas: nothing is checked there.

        With ``as_task`` the server runs the call as a task and this returns at once with a
        :class:`~mcptrio.client.tasks.TaskHandle` to poll, await and cancel (``task_ttl``:
        how long, in seconds, the server should keep it; it may grant less). See
        :func:`~mcptrio.client.tasks.start_tool_task`.
        """
        stateless = self.session.connection.request_meta is not None
        if as_task and stateless:
            return await start_extension_task(
                self._sender, self.server_capabilities, name, arguments, options
            )
        if as_task:
            return await start_tool_task(
                self._sender, self.server_capabilities, name, arguments, task_ttl, options
            )
        validate_output = validate_output and self._has_output_schemas
        if validate_output and not self._output_schemas.knows(name):
            listing = options.copy()
            listing.pop("on_progress", None)  # the progress of this call, not of the listing
            # A tool missing from what was listed: the listing may be stale, whatever its ttlMs.
            listing.setdefault("cache", "refresh")
            async for _tool in self.iter_tools(**listing):
                pass
        if options:
            check_options("A Client call", options, CallOptions)
        request = CallToolRequest(
            name=name, arguments=None if arguments is None else dict(arguments)
        )
        try:
            result = await self._sender.send(request, options)
        except HeaderMismatch:
            # The tool's x-mcp-header arguments may have changed: list again, then once more.
            if not stateless:
                raise
            async for _tool in self.iter_tools(cache="refresh"):
                pass
            result = await self._sender.send(request, options)
        if not isinstance(result, CallToolResult):
            # A task (2026-07-28 extension) this call did not declare it could take.
            raise InvalidParams(
                f"The server answered tools/call {name!r} with a {type(result).__name__}, which"
                " this call did not ask for (as_task=True declares the tasks extension)"
            )
        if validate_output:
            self._output_schemas.check(name, result)
        return result

    # ---------------------------------------------------------------- resources

    async def list_resources(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListResourcesResult:
        """One page of ``resources/list``."""
        return await self.request(ListResourcesRequest(cursor=_cursor(cursor)), **options)

    def iter_resources(self, **options: Unpack[CallOptions]) -> AsyncIterator[Resource]:
        """Every resource, page after page."""
        return every_item(self.list_resources, lambda page: page.resources, options)

    async def list_resource_templates(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``."""
        return await self.request(ListResourceTemplatesRequest(cursor=_cursor(cursor)), **options)

    def iter_resource_templates(
        self, **options: Unpack[CallOptions]
    ) -> AsyncIterator[ResourceTemplate]:
        """Every resource template, page after page."""
        return every_item(
            self.list_resource_templates, lambda page: page.resource_templates, options
        )

    async def read_resource(
        self,
        uri: str,
        **options: Unpack[CallOptions],
    ) -> ReadResourceResult:
        """``resources/read``; an unknown URI raises ``ResourceNotFound`` in both eras.

        The stateless era (2026-07-28) answers a missing resource -32602 (SEP-2164) where
        earlier revisions had -32002 of its own. Since -32602 is the error that revision names
        for it, a -32602 answer to ``resources/read`` there is raised as ``ResourceNotFound``
        with the code as it came (-32602), so that ``except ResourceNotFound`` works in either
        era (a decision: see ``docs/explanation/client-design.md``).
        """
        try:
            return await self.request(ReadResourceRequest(uri=uri), **options)
        except InvalidParams as exc:
            if type(exc) is not InvalidParams or self.session.connection.request_meta is None:
                raise
            raise ResourceNotFound(exc.message, exc.data, code=exc.code) from exc

    # ---------------------------------------------------------------- prompts, completion

    async def list_prompts(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListPromptsResult:
        """One page of ``prompts/list``: each prompt's name, description and arguments (to fill
        in with :meth:`get_prompt`)."""
        return await self.request(ListPromptsRequest(cursor=_cursor(cursor)), **options)

    def iter_prompts(self, **options: Unpack[CallOptions]) -> AsyncIterator[Prompt]:
        """Every prompt, page after page."""
        return every_item(self.list_prompts, lambda page: page.prompts, options)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        **options: Unpack[CallOptions],
    ) -> GetPromptResult:
        """``prompts/get``: the prompt's messages, filled with ``arguments``."""
        return await self.request(
            GetPromptRequest(name=name, arguments=None if arguments is None else dict(arguments)),
            **options,
        )

    async def complete(
        self,
        ref: PromptReference | ResourceTemplateReference,
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        **options: Unpack[CallOptions],
    ) -> CompleteResult:
        """``completion/complete``: suggestions for ``argument`` of ``ref``, typed so far
        ``value``. ``context`` (arguments already chosen) exists from 2025-06-18 and is left
        out for older servers."""
        request = CompleteRequest(
            ref=ref,
            argument=CompleteArgument(name=argument, value=value),
            context=None if context is None else CompleteContext(arguments=dict(context)),
        )
        return await self.request(request, **options)

    # ---------------------------------------------------------------- logging, notifications

    async def set_logging_level(
        self,
        level: LoggingLevel,
        **options: Unpack[CallOptions],
    ) -> None:
        """``logging/setLevel``: ask for log messages at ``level`` and above.

        In the stateless era there is no such request: every later request carries ``level``
        in its ``_meta`` instead, as the spec has it.
        """
        meta = self.session.connection.request_meta
        if meta is not None:
            if options:
                check_options("A Client call", options, CallOptions)
            meta.log_level = level
            await trio.lowlevel.checkpoint()
            return
        await self.request(SetLevelRequest(level=level), **options)

    # ---------------------------------------------------------------- roots

    async def set_roots(self, roots: Sequence[Root]) -> None:
        """Replace the roots answered to ``roots/list``; send
        ``notifications/roots/list_changed`` when ``roots.listChanged`` was declared."""
        await self._handlers.set_roots(self.session, roots)

    # ---------------------------------------------------------------- notification streams

    async def subscribe_resource(self, uri: str, **options: Unpack[CallOptions]) -> None:
        """The raw ``resources/subscribe`` (prefer :meth:`subscribe`, which counts users);
        handshake era only."""
        await self._streams.subscribe_resource(uri, **options)

    async def unsubscribe_resource(self, uri: str, **options: Unpack[CallOptions]) -> None:
        """The raw ``resources/unsubscribe``; handshake era only."""
        await self._streams.unsubscribe_resource(uri, **options)

    def subscribe(
        self, uri: str, **options: Unpack[CallOptions]
    ) -> AbstractAsyncContextManager[AsyncIterator[str]]:
        """Subscribe to ``uri`` for the block; iterate to get each update (the URI).

        ::

            async with client.subscribe("file:///notes/a") as updates:
                async for uri in updates:
                    text = await client.read_resource(uri)

        Blocks on the same URI share one server subscription: the first subscribes, the last
        to leave unsubscribes (waiting at most :data:`UNSUBSCRIBE_TIMEOUT` seconds, even when
        the block is being cancelled). Updates that arrive while one is still unread are merged
        into it, so a slow reader never holds up the session. The iteration ends when the
        connection ends. Leaving the block with an error, or after the connection ended, never
        raises an unsubscription failure over it.

        In the stateless era the URI is added to the client's own listen stream (the block
        starts once the server acknowledged it, within ``Timeouts.listen``; the call options
        have no request to apply to), and leaving takes it out without waiting. A server that
        does not declare ``resources.subscribe`` raises
        :class:`~mcptrio.protocol.errors.CapabilityNotNegotiated` in both eras; one whose
        acknowledgement leaves the URI out, :class:`~mcptrio.client.errors.SubscriptionRefused`.
        """
        return self._streams.subscribe(uri, **options)

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Iterable[str] = (),
    ) -> AbstractAsyncContextManager[ListenStream]:
        """A stream of the server's notifications for the block: list changes of ``tools``,
        ``prompts``, ``resources``, and updates of the resources at ``uris``.

        ::

            async with client.listen(tools=True, uris=["file:///a"]) as stream:
                async for notification in stream:
                    ...  # a ToolListChangedNotification or a ResourceUpdatedNotification

        The block starts once the server has acknowledged what it will send
        (``stream.acknowledged``; it leaves out what it does not support); no acknowledgement
        within ``Timeouts.listen`` raises :class:`~mcptrio.protocol.errors.RequestTimeout`, and
        an error answer raises that error. The iteration ends when the block is left, the server
        ends the stream, or the connection closes (``stream.ended`` says which). A slow reader
        holds up nothing: equal notifications still unread are merged (see
        :class:`~mcptrio.client.listen.ListenStream`).

        **Stateless era**: one ``subscriptions/listen`` request of the block's own, run in a
        nursery of the block's; leaving the block ends it (the POST's stream closes over HTTP,
        ``notifications/cancelled`` elsewhere). Its notifications go to this stream only (and
        to the ``on_notification`` hook), not to the other callbacks or streams.

        **Handshake era**: there is no such request, so the block reads the session's own
        notifications. List changes are acknowledged for the kinds the server declares
        ``listChanged`` for (it sends those unasked); each URI is subscribed with
        ``resources/subscribe`` (shared with :meth:`subscribe` blocks on it, and left like
        them) when the server declares ``resources.subscribe``. The session's notifications
        reach the callbacks and the other streams as well.
        """
        return self._streams.listen(tools=tools, prompts=prompts, resources=resources, uris=uris)

    def log_messages(self) -> AbstractAsyncContextManager[LogMessages]:
        """The server's log messages from now on, for the block.

        The stream holds the last :data:`~mcptrio.client.notifications.LOG_BUFFER` unread
        messages; older ones are dropped and counted in ``messages.dropped``.
        """
        return self._streams.log_messages()

    def list_changes(self) -> AbstractAsyncContextManager[MergedUpdates[ListKind]]:
        """Which lists (``"tools"``, ``"resources"``, ``"prompts"``) changed, for the block;
        a kind that changes again before it is read is reported once.

        In the stateless era the kinds the server declares ``listChanged`` for are added to the
        client's own listen stream, and the block starts once the server acknowledged them.
        """
        return self._streams.list_changes()

    # ---------------------------------------------------------------- skills (SEP-2640)

    async def list_skills(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListSkillsResult:
        """One page of ``skills/list`` (reads no file: see :mod:`~mcptrio.client.skills`)."""
        return await self.request(ListSkillsRequest(cursor=cursor), **options)

    def iter_skills(self, **options: Unpack[CallOptions]) -> AsyncIterator[Skill]:
        """Every skill entry, page after page."""
        return every_item(self.list_skills, lambda page: page.skills, options)

    async def get_skill(self, uri: str, **options: Unpack[CallOptions]) -> Skill:
        """The entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``)."""
        return (await self.request(GetSkillRequest(uri=uri), **options)).skill

    async def read_skill_file(
        self,
        skill: Skill,
        path: str,
        *,
        allow_dynamic: bool = False,
        **options: Unpack[CallOptions],
    ) -> SkillFile:
        """Read a file of ``skill`` (a URI, or a path relative to the skill's root) and return
        it only if it matches the entry; :class:`~.skills.SkillVerificationError` otherwise.
        Nothing is read before it is asked for: listing reads no file."""
        uri = skill_file_uri(skill, path)
        result = await self.read_resource(uri, **options)
        return verified_file(skill, uri, result, allow_dynamic=allow_dynamic)

    async def load_skill(
        self, skill: Skill, *, allow_dynamic: bool = False, **options: Unpack[CallOptions]
    ) -> SkillFile:
        """Read the skill's ``SKILL.md``, verified (size, digest, frontmatter)."""
        return await self.read_skill_file(skill, skill.uri, allow_dynamic=allow_dynamic, **options)

    async def read_directory(
        self, uri: str, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ReadResourceDirectoryResult:
        """One page of ``resources/directory/read``: the direct children of ``uri`` (the server
        must declare ``directoryRead``)."""
        request = ReadResourceDirectoryRequest(uri=uri, cursor=cursor)
        return await self.request(request, **options)


def _cursor(cursor: str | None) -> str | Any:
    return cursor
