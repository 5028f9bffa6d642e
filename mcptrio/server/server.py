"""The decorator-level :class:`Server` (see the package docstring), made of parts: its
contents (:mod:`.contents`), how it answers requests (:mod:`.dispatch`, :mod:`.method_handlers`),
how it tells of changes (:mod:`.changes`), its sessions' states (:mod:`.session_state`)."""

from __future__ import annotations

import functools
import logging
import os
import ssl
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Unpack, overload

import trio

from ..protocol.base import Request, Result
from ..protocol.connection import Connection
from ..protocol.http_headers import PropertyPath
from ..protocol.revisions import SUPPORTED
from ..protocol.types import CacheScope, Icon, Implementation, ServerCapabilities
from ..runtime.context import RequestContext
from ..runtime.session import Session
from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE, Transport
from ..tasks import TaskSupervisor
from .asyncio_handlers import AsyncioLoopSlot
from .changes import ChangeNotices
from .contents import ServerContents
from .context import Context, RequestHook
from .dispatch import RequestDispatch, RequestObserver
from .forwarding import ForwardedItem
from .lifespan import LifespanRunner
from .listen_quota import ListenQuota
from .logging_bridge import ClientLogHandler
from .method_handlers import MethodHandlers
from .middleware import Middleware
from .mount import Mount, Mounts
from .prompts import PromptOptions, RegisteredPrompt
from .read_budget import DEFAULT_MAX_READ_BYTES, ReadBudget
from .registry import decorator, with_first
from .request_state import KeySource, RequestStateKey
from .resources import RegisteredResource, RegisteredTemplate, ResourceOptions
from .running import RunOptions, TransportName, run_server
from .session_state import ListKind, ServerSessionState, SessionStates
from .skills import Skills
from .stdio_serving import serve_stdio_session
from .subscription_bus import Change, LocalSubscriptionBus, SubscriptionBus
from .task_calls import open_serving
from .task_extension import ExtensionTasks
from .tools import RegisteredTool, ToolOptions

if TYPE_CHECKING:
    from ..stores.bundle import Stores
    from ..transports.http.endpoints.security import HttpSecurity
    from ..transports.http.engine.builtin_server import ServerLimits
    from ..transports.websocket_server import WebSocketServing

__all__ = ["Server"]

F = TypeVar("F", bound=Callable[..., Any])


class Server:
    """An MCP server: tools, resources, prompts and completions, served over any transport.

    ``max_subscriptions`` bounds the distinct resources one session may subscribe to (one
    subscription actor each); a ``resources/subscribe`` past it gets -32600. ``max_read_bytes``
    bounds the bytes of resource contents prepared at once (:mod:`.read_budget`), and
    ``listen_quota`` the listen streams of each client (:mod:`.listen_quota`).

    ``page_size`` is the number of items per page of every ``*/list`` answer (``None``: one
    page). ``declare`` names features to declare even while nothing of that kind is registered
    (for a server that adds tools later, say); otherwise a feature is declared to a client when
    something of that kind is registered as its session starts.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon] | None = None,
        website_url: str | None = None,
        instructions: str | None = None,
        experimental: Mapping[str, dict[str, Any]] | None = None,
        declare: Iterable[ListKind] = (),
        page_size: int | None = 100,
        max_in_flight: int = 256,
        max_subscriptions: int = 1000,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
        listen_quota: ListenQuota | None = None,
        supported_revisions: tuple[str, ...] = SUPPORTED,
        request_state_key: KeySource = None,
        subscriptions: SubscriptionBus | None = None,
        cache_ttl_ms: int | None = None,
        cache_scope: CacheScope = "private",
        middleware: Sequence[Middleware] = (),
        lifespan: Callable[[Server], Any] | None = None,
        tasks: TaskSupervisor | None = None,
        stores: Stores | None = None,
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1 (or None for a single page)")
        self.info = Implementation(
            name=name,
            version=version,
            title=title,
            description=description,
            icons=None if icons is None else list(icons),
            website_url=website_url,
        )
        self.instructions = instructions
        self.experimental = dict(experimental) if experimental else None
        self.declared: frozenset[ListKind] = frozenset(declare)
        self.page_size = page_size
        self.max_in_flight = max_in_flight
        #: Distinct resources one session may be subscribed to at once.
        self.max_subscriptions = max_subscriptions
        self.read_budget = ReadBudget(max_read_bytes)
        self.listen_quota = ListenQuota() if listen_quota is None else listen_quota
        self.supported_revisions = supported_revisions
        #: What the workers of this server share (:func:`mcptrio.open_stores`); the arguments
        #: above and below that are given win over it.
        self.stores = stores
        if stores is not None:
            if request_state_key is None:
                request_state_key = stores.request_state_key
            if subscriptions is None:
                subscriptions = stores.subscription_bus
            if tasks is None:
                tasks = TaskSupervisor(stores.task_store)
        #: Seals the ``requestState`` of input-required results (share it between workers).
        self.request_state_key = RequestStateKey(request_state_key)
        if cache_ttl_ms is not None and cache_ttl_ms < 0:
            raise ValueError(f"cache_ttl_ms must be >= 0, not {cache_ttl_ms}")
        #: The cache hints of 2026-07-28 (SEP-2549) on discover, list and read results: how long
        #: a client may reuse them (``None``: not at all, ``ttlMs: 0``) and who may
        #: (``"private"``: this authorization context only). A resource may say otherwise.
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: CacheScope = cache_scope
        self._states = SessionStates()
        bus = LocalSubscriptionBus() if subscriptions is None else subscriptions
        self._changes = ChangeNotices(bus, self._states)
        self._changes.follow_remote()
        contents = self._contents = ServerContents(self._changes.list_changed)
        #: The registered tools by name (live and read-only: register through the server).
        self.tools = contents.tools
        #: The registered resources with a fixed URI, by URI.
        self.resources = contents.resources
        #: The registered resource templates, by URI template.
        self.templates = contents.templates
        #: The registered prompts by name.
        self.prompts = contents.prompts
        #: The completers of the prompts and templates, and the completion handler.
        self.completions = contents.completions
        #: Runs the tools called as tasks, in a nursery open while the server is served (see
        #: :mod:`mcptrio.tasks`); pass your own for another store or other limits.
        self.tasks = TaskSupervisor() if tasks is None else tasks
        #: Where the handlers marked ``@asyncio_handler`` run while the server is served (an
        #: asyncio loop in a thread of its own, see :mod:`.asyncio_handlers`).
        self.asyncio_loop = AsyncioLoopSlot()
        #: The 2026-07-28 tasks extension's side of this server (on the same supervisor).
        self.task_extension = ExtensionTasks(self)
        handlers = MethodHandlers(self)
        self._dispatch = RequestDispatch(
            handlers.routes, handlers.at_once, functools.partial(Context, server=self)
        )
        # Bound once, and shared by every session. A server whose class keeps
        # ``handle_request`` as written here (it only hands the request to the dispatch) gives
        # its sessions the dispatch's own method: one coroutine fewer per request. A subclass
        # that overrides it is called through its override.
        self._bound_handle_request = (
            self._dispatch.handle_request
            if type(self).handle_request is Server.handle_request
            else self.handle_request
        )
        self._bound_handle_notification = self._dispatch.handle_notification
        self._bound_session_started = self._states.session_started
        self._bound_session_ended = self._states.session_ended
        self._bound_answers_at_once = self._dispatch.answers_at_once
        self._mounts = Mounts(self)
        #: Opened before serving, closed after (see :mod:`.lifespan`); ``ctx.lifespan`` is
        #: what it yields.
        self._lifespan: LifespanRunner[Server] = LifespanRunner(lifespan, f"server {name!r}")
        #: Wraps every request the handlers send to the client (:class:`.context.RequestHook`;
        #: ``None``, the default: sent as they are).
        self.request_hook: RequestHook | None = None
        #: The published skills (SEP-2640), once :meth:`add_skills` has published a folder.
        self.skills: Skills | None = None
        for mw in middleware:
            self.add_middleware(mw)

    @property
    def subscriptions(self) -> SubscriptionBus:
        """Where list changes and resource updates reach the listen streams (2026-07-28); set
        by ``Server(subscriptions=...)`` or :meth:`use_stores`, which also follow it."""
        return self._changes.bus

    # ---------------------------------------------------------------- tools

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self, name: str | None = None, /, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...
    def tool(self, fn: Any = None, /, **options: Any) -> Any:
        """Register the decorated function as a tool: ``@server.tool``, or with options
        (:class:`~.tools.ToolOptions`), ``@server.tool(title=...)``; ``@server.tool("name")``
        names it."""
        if isinstance(fn, str):
            fn, options = None, with_first("name", fn, options)
        return decorator(self.add_tool, fn, options)

    def add_tool(self, fn: Callable[..., Any], **options: Unpack[ToolOptions]) -> RegisteredTool:
        """Register ``fn`` as a tool (see :func:`~.tools.make_tool`); a second tool of the same
        name is refused, and so is an input schema whose ``x-mcp-header`` annotations break the
        rules (:class:`~mcptrio.protocol.http_headers.InvalidHeaderAnnotation`)."""
        return self._contents.add_tool(fn, **options)

    def tool_header_params(self, name: str) -> dict[PropertyPath, str] | None:
        """The ``x-mcp-header`` arguments of tool ``name`` (property path -> header name), for the
        Streamable HTTP checks of the stateless era; ``None`` for an unknown tool."""
        return self._contents.tool_header_params(name)

    def required_scopes(self, method: str, key: str) -> frozenset[str]:
        """The OAuth scopes a call needs: of the tool or prompt named ``key`` (``tools/call``,
        ``prompts/get``), or the resource (or first matching template) at URI ``key``
        (``resources/read``). Empty for anything else, and for what is not registered."""
        return self._contents.required_scopes(method, key)

    def remove_tool(self, name: str) -> bool:
        """Remove the tool called ``name``; ``False`` if there was none."""
        return self.tools.remove(name)

    # ---------------------------------------------------------------- resources

    def resource(self, uri: str, /, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register the decorated function as a resource, or as a resource template when
        ``uri`` holds ``{variables}`` (RFC 6570): the function's parameters are the variables.

        The URI comes first, so this decorator is never bare: ``@server.resource("notes://x")``
        or ``@server.resource("notes://{name}", mime_type=...)`` (:class:`~.resources.
        ResourceOptions`).
        """
        if not isinstance(uri, str):
            raise TypeError(
                "@server.resource needs the resource's URI first:"
                f" @server.resource('scheme://...'), not {uri!r}"
            )
        return decorator(self.add_resource, None, {**options, "uri": uri})  # type: ignore[no-any-return]

    def add_resource(
        self,
        source: str | bytes | Callable[..., Any],
        uri: str,
        **options: Unpack[ResourceOptions],
    ) -> RegisteredResource | RegisteredTemplate:
        """Add a resource: fixed text (``str``), fixed binary (``bytes``) or a function; a
        ``uri`` with ``{variables}`` makes a template, whose ``source`` must be a function."""
        return self._contents.add_resource(source, uri, **options)

    def remove_resource(self, uri: str) -> bool:
        """Remove the resource (or template) registered under ``uri``."""
        return self.resources.remove(uri) or self.templates.remove(uri)

    def add_skills(
        self, path: str | os.PathLike[str], *, prefix: str | None = None, check_disk: bool = True
    ) -> Skills:
        """Publish every skill (a folder with a ``SKILL.md``) under ``path`` through the skills
        extension (:mod:`.skills`): ``skills/list``, ``skills/get``, ``resources/directory/read``
        and a resource per file at ``skill://[prefix/]<path>/<file>``. Raises
        :class:`~.skill_files.SkillsError` for a folder a client would reject."""
        if self.skills is None:
            skills = Skills(self, check_disk=check_disk)
            skills.add_folder(path, prefix)
            self.skills = skills
            self._dispatch.routes.update(skills.routes())
        else:
            self.skills.add_folder(path, prefix)
        return self.skills

    # ---------------------------------------------------------------- prompts and completion

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self, name: str | None = None, /, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...
    def prompt(self, fn: Any = None, /, **options: Any) -> Any:
        """Register the decorated function as a prompt; its parameters are the arguments:
        ``@server.prompt``, or with options (:class:`~.prompts.PromptOptions`),
        ``@server.prompt(title=...)``; ``@server.prompt("name")`` names it."""
        if isinstance(fn, str):
            fn, options = None, with_first("name", fn, options)
        return decorator(self.add_prompt, fn, options)

    def add_prompt(
        self, fn: Callable[..., Any], **options: Unpack[PromptOptions]
    ) -> RegisteredPrompt:
        """Register ``fn`` as a prompt (see :func:`~.prompts.make_prompt`); a second prompt of
        the same name is refused."""
        return self._contents.add_prompt(fn, **options)

    def remove_prompt(self, name: str) -> bool:
        """Remove the prompt called ``name``; ``False`` if there was none."""
        return self.prompts.remove(name)

    @overload
    def completion(self, fn: F, /) -> F: ...
    @overload
    def completion(self, fn: None = None, /) -> Callable[[F], F]: ...
    def completion(self, fn: Any = None, /) -> Any:
        """Register the decorated function as the completion handler for every argument
        that has no completer of its own (see :class:`~.completion.CompletionEngine`):
        ``@server.completion`` or ``@server.completion()``."""
        return decorator(self.completions.set_handler, fn, {})

    # ---------------------------------------------------------------- logging and middleware

    def bridge_logging(
        self, logger: str | logging.Logger | None = None, level: int = logging.DEBUG
    ) -> ClientLogHandler:
        """Forward the records of a stdlib logger (the root logger by default) to clients."""
        handler = ClientLogHandler(self, level)
        target = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        target.addHandler(handler)
        return handler

    def add_middleware(self, middleware: Middleware, *, outermost: bool = False) -> Middleware:
        """Install ``middleware`` inside those installed before it (``outermost``: around
        them all; see :mod:`.middleware`); returns it, so this works as a decorator. Requests
        and notifications that arrive from now on go through it, on sessions running already
        too."""
        self._dispatch.middleware.add(middleware, outermost=outermost)
        return middleware

    def remove_middleware(self, middleware: Middleware) -> bool:
        """Uninstall ``middleware``; ``False`` if it was not installed."""
        return self._dispatch.middleware.remove(middleware)

    @property
    def middleware(self) -> tuple[Middleware, ...]:
        """The installed middleware, outermost first."""
        return self._dispatch.middleware.installed

    def observe_requests(self, observer: RequestObserver | None) -> None:
        """Tell ``observer`` of every request's start and end (:mod:`.dispatch`); ``None``: stop."""
        self._dispatch.observer = observer

    def session_state(self, session: Session) -> ServerSessionState:
        """The server's state for ``session`` (its log level, subscriptions...)."""
        return self._states.of(session, self.max_subscriptions)

    def session_states(self) -> list[ServerSessionState]:
        """The state of every session of this server that is still running."""
        return self._states.running()

    # ---------------------------------------------------------------- sessions

    def capabilities(self) -> ServerCapabilities:
        """What this server declares to a client whose session starts now."""
        return self._contents.capabilities(self.declared, self.experimental, self.skills)

    def connection(self) -> Connection:
        """A fresh sans-IO connection for one session of this server."""
        return Connection(
            "server",
            info=self.info,
            capabilities=self.capabilities(),
            instructions=self.instructions,
            supported=self.supported_revisions,
            cache_hints=None
            if self.cache_ttl_ms is None
            else (self.cache_ttl_ms, self.cache_scope),
        )

    async def handle_request(self, rctx: RequestContext, request: Request[Any]) -> Result:
        """Answer one request (the session calls this in the request's own task; see
        :mod:`.dispatch`). It only hands the request on: a session of a server that does not
        override it calls the dispatch directly (``__init__``), so work added here belongs in
        the dispatch."""
        return await self._dispatch.handle_request(rctx, request)

    def session(self, transport: Transport) -> Session:
        """A session of this server over ``transport``, ready to ``run``."""
        if self._changes.trio_token is None:
            self._changes.trio_token = trio.lowlevel.current_trio_token()
        session = Session(
            self.connection(),
            transport,
            handle_request=self._bound_handle_request,
            handle_notification=self._bound_handle_notification,
            max_in_flight=self.max_in_flight,
            on_start=self._bound_session_started,
            on_end=self._bound_session_ended,
            answers_at_once=self._bound_answers_at_once,
        )
        self.session_state(session)
        return session

    def open_lifespan(self) -> AbstractAsyncContextManager[Any]:
        """Enter the server's lifespan for the ``async with`` block (unless it is open
        already), so that every entry point started inside shares it; yields its value. Open
        inside it: the lifespans of the servers mounted at the time (:meth:`mount`), the asyncio
        loop's slot (:attr:`asyncio_loop`), then the task nursery (:attr:`tasks`)."""
        outside_tasks = [self.asyncio_loop.running(), *self._mounts.lifespans()]
        return open_serving(self._lifespan.running(self), self.tasks, outside_tasks)

    # ---------------------------------------------------------------- changes and composition

    def notify_resource_updated(self, uri: str) -> int:
        """Tell every session subscribed to ``uri`` that it changed; returns how many. Never
        blocks: an update that finds one already pending is merged into it (see
        :mod:`.session_state`). Listen streams (2026-07-28), the other workers and the servers
        mounting this one hear of it too (see :mod:`.changes`)."""
        return self._changes.resource_updated(uri)

    def watch(self, watcher: Callable[[Change], None]) -> Callable[[], None]:
        """Call ``watcher`` with every list change and resource update of this server
        (``("list_changed", kind)`` or ``("updated", uri)``), synchronously; returns the
        function that stops watching."""
        return self._changes.watch(watcher)

    def add_forwarded(self, item: ForwardedItem) -> ForwardedItem:
        """Add a tool, resource, template or prompt whose definition and answers come from
        elsewhere (see :mod:`.forwarding`); removed as any other is (``remove_tool``...)."""
        return self._contents.add_forwarded(item)

    def mount(self, other: Server, namespace: str) -> Mount:
        """Serve ``other``'s tools, resources, templates, prompts and completions from this
        server, its tool and prompt names prefixed ``<namespace>_`` (see :mod:`.mount`).

        Allowed while sessions run: they get list-changed, as they do for ``other``'s own
        changes and resource updates later. ``ValueError`` for a namespace in use or one the
        tool-name rules forbid.
        """
        return self._mounts.add(other, namespace)

    def unmount(self, namespace: str) -> bool:
        """Remove what :meth:`mount` added under ``namespace``; ``False`` if nothing was."""
        return self._mounts.remove(namespace)

    # ---------------------------------------------------------------- entry points

    def use_stores(self, stores: Stores) -> None:
        """Keep what this server's workers share in ``stores`` (from
        :func:`mcptrio.open_stores`): the ``requestState`` key (unless the bundle has none),
        the subscription bus, the task store, and the SSE event store of the HTTP apps made
        afterwards. Call it before serving; ``Server(stores=...)`` does the same at creation."""
        if self.tasks.serving:
            raise RuntimeError("use_stores() must be called before the server is served")
        self.stores = stores
        if stores.request_state_key is not None:
            self.request_state_key = RequestStateKey(stores.request_state_key)
        self._changes.bus = stores.subscription_bus
        self._changes.follow_remote()
        self.tasks.store = stores.task_store

    async def serve_session(
        self,
        transport: Transport,
        *,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one session over ``transport`` until it ends; reports the ``Session``. Enters
        the server's lifespan first, unless it is open already (see :mod:`.lifespan`)."""
        async with self.open_lifespan():
            session = self.session(transport)
            async with trio.open_nursery() as nursery:
                await nursery.start(session.run)
                task_status.started(session)

    async def serve_stdio(
        self,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one session on this process's stdin/stdout until stdin ends and the requests
        in flight have answered (see :mod:`.stdio_serving`)."""
        await serve_stdio_session(self, max_frame_size=max_frame_size, task_status=task_status)

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        path: str = "/mcp",
        front_end: Literal["builtin", "hypercorn"] = "builtin",
        parser: Literal["auto", "h11", "httptools"] = "auto",
        json_response: bool = True,
        stateless: bool = False,
        security: HttpSecurity | None = None,
        limits: ServerLimits | None = None,
        ssl_context: ssl.SSLContext | None = None,
        stores: Stores | None = None,
        listeners: Sequence[trio.SocketListener] | None = None,
        shutdown: trio.Event | None = None,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve this server over HTTP until cancelled; reports the base URL.

        Streamable HTTP and WebSocket are served at ``path``, the legacy HTTP+SSE endpoints at
        ``/sse`` and ``/messages``. ``stores`` (from :func:`mcptrio.open_stores`) is what this
        worker shares with the others (see :meth:`use_stores`). See
        :func:`mcptrio.transports.http.serve.serve_http` to serve several servers on one port
        (and for ``listeners`` and a graceful ``shutdown``), and
        :class:`~mcptrio.transports.http.endpoints.app.McpHttpApp` for every option.
        """
        # Imported here so that stdio servers do not pay for loading the HTTP stack.
        from ..transports.http.endpoints.app import McpHttpApp
        from ..transports.http.serve import serve_http

        if stores is not None:
            self.use_stores(stores)
        app = McpHttpApp(
            self, path=path, json_response=json_response, stateless=stateless, security=security
        )
        # The free serve_http enters the server's lifespan (see its docstring).
        await serve_http(
            app,
            host=host,
            port=port,
            front_end=front_end,
            parser=parser,
            limits=limits,
            ssl_context=ssl_context,
            listeners=listeners,
            shutdown=shutdown,
            task_status=task_status,
        )

    async def serve_websocket(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
        **options: Unpack[WebSocketServing],
    ) -> None:
        """Serve this server over standalone WebSocket (``ws://host:port/mcp``); see
        :func:`mcptrio.transports.websocket_server.serve_websocket` for each option."""
        from ..transports.websocket_server import serve_websocket

        await serve_websocket(self, host=host, port=port, task_status=task_status, **options)

    def run(self, transport: TransportName = "stdio", **options: Unpack[RunOptions]) -> None:
        """Run this server as the whole program over ``"stdio"``, ``"http"`` (Streamable HTTP,
        WebSocket, legacy HTTP+SSE) or ``"websocket"``, binding ``host`` (``127.0.0.1`` by
        default) and ``port`` (8000; 0: a free one), until stdin ends, SIGTERM or Ctrl-C
        (``grace``: seconds a stop gives the requests in flight). ``workers`` above 1 runs that
        many copies on one port (``redis_url``: the Redis they share); ``serving``: hosts, TLS,
        authorization. In a Trio program, start a ``serve_*`` method instead. See
        :func:`~.running.run_server` for every option.
        """
        run_server(self, transport, **options)

    def run_stdio(self) -> None:
        """Run a stdio server in this process: ``trio.run(self.serve_stdio)``."""
        trio.run(self.serve_stdio)
