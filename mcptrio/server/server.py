"""The decorator-level :class:`Server`.

A ``Server`` is a description (its info, instructions, tools, resources, prompts and
completions) plus the request handler every session of it shares. It owns no tasks: each
``serve_*`` method runs inside the caller's nursery, one server object can serve any number of
sessions over any mix of transports at once, and what it does per session (list-changed
notifications, resource subscriptions, queued log messages) runs as actors in that session's own
nursery (see :mod:`.session_state`).

::

    server = mcptrio.Server("demo")

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return NOTES[name]

    @server.prompt(title="Code review")
    def review(code: str) -> str:
        return f"Please review:\\n{code}"

Every decorator works bare (``@server.tool``) and with options (``@server.tool(title=...)``);
each kind's options are declared once, in :class:`~.tools.ToolOptions`,
:class:`~.resources.ResourceOptions` and :class:`~.prompts.PromptOptions`. The functions are
read once, at registration, by one reader (see :mod:`.handler`).

    server.run()                                     # a stdio server process
    server.run("http")                               # http://127.0.0.1:8000/mcp
    await nursery.start(server.serve_http)           # in your nursery: reports the URL
    await nursery.start(server.serve_session, t)     # one session over any transport

Everything can also be added and removed while sessions run (``add_tool``, ``remove_tool``,
``add_resource``, ...): every session that negotiated the feature then gets the matching
``notifications/<kind>/list_changed``.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

import trio

from ..protocol.base import Notification, Request, Result
from ..protocol.connection import Connection
from ..protocol.errors import MethodNotFound
from ..protocol.http_headers import PropertyPath, header_params
from ..protocol.revisions import SUPPORTED
from ..protocol.skills_extension import EXTENSION_ID as SKILLS_ID
from ..protocol.types import (
    CacheScope,
    Icon,
    Implementation,
    PromptsCapability,
    ResourcesCapability,
    ServerCapabilities,
    ToolsCapability,
)
from ..runtime.context import RequestContext
from ..runtime.session import Session
from ..runtime.transport import Transport
from ..tasks import TaskSupervisor
from .changes import ChangeMethods
from .completion import CompletionEngine
from .composition import Change, CompositionMethods
from .context import Context, RequestHook
from .forwarding import (
    ForwardedPrompt,
    ForwardedResource,
    ForwardedTemplate,
    ForwardedTool,
)
from .input_rounds import InputRequired
from .lifespan import LifespanRunner
from .logging_bridge import ClientLogHandler, current_context
from .method_handlers import MethodHandlers
from .middleware import Call, CallNext, Middleware, MiddlewareChains, notify_through
from .prompts import PromptOptions, RegisteredPrompt, make_prompt
from .registry import Registry, decorator, with_first
from .request_state import RequestStateKey
from .resources import (
    RegisteredResource,
    RegisteredTemplate,
    ResourceOptions,
    make_resource,
    make_template,
)
from .serving import ServingMethods
from .session_state import ListKind, ServerSessionState
from .skills import Skills
from .subscription_bus import LocalSubscriptionBus, SubscriptionBus
from .task_calls import any_task_tools, open_serving, tasks_capability
from .task_extension import ExtensionTasks, tasks_extension_capability
from .tools import RegisteredTool, ToolOptions, make_tool

if TYPE_CHECKING:
    from ..stores.bundle import Stores
    from .mount import Mount

__all__ = ["Server"]

log = logging.getLogger("mcptrio.server")

F = TypeVar("F", bound=Callable[..., Any])
_NO_SCOPES: frozenset[str] = frozenset()


class Server(CompositionMethods, ServingMethods, ChangeMethods):
    """An MCP server: tools, resources, prompts and completions, served over any transport.

    ``max_subscriptions`` bounds the distinct resources one session may subscribe to (one
    subscription actor each); a ``resources/subscribe`` past it gets -32600.

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
        supported_revisions: tuple[str, ...] = SUPPORTED,
        request_state_key: bytes | str | None = None,
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
        #: Where list changes and resource updates reach the listen streams (2026-07-28).
        self.subscriptions: SubscriptionBus = (
            LocalSubscriptionBus() if subscriptions is None else subscriptions
        )
        self.follow_remote_changes()
        if cache_ttl_ms is not None and cache_ttl_ms < 0:
            raise ValueError(f"cache_ttl_ms must be >= 0, not {cache_ttl_ms}")
        #: The cache hints of 2026-07-28 (SEP-2549) on discover, list and read results: how long
        #: a client may reuse them (``None``: not at all, ``ttlMs: 0``) and who may
        #: (``"private"``: this authorization context only). A resource may say otherwise.
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: CacheScope = cache_scope
        # The trio run serving this server, for changes made from a sync handler's thread.
        self._trio_token: trio.lowlevel.TrioToken | None = None
        # tool_header_params, by tool name, until the tool list changes.
        self._header_params: dict[str, dict[PropertyPath, str]] = {}
        #: The registered tools by name (live and read-only: register through the server).
        self.tools: Registry[RegisteredTool | ForwardedTool] = Registry(
            "A tool named {key!r}", "Unknown tool: {key}", lambda: self._changed("tools")
        )
        #: The registered resources with a fixed URI, by URI.
        self.resources: Registry[RegisteredResource | ForwardedResource] = Registry(
            "A resource with URI {key!r}", on_change=lambda: self._changed("resources")
        )
        #: The registered resource templates, by URI template.
        self.templates: Registry[RegisteredTemplate | ForwardedTemplate] = Registry(
            "A resource template {key!r}", on_change=lambda: self._changed("resources")
        )
        #: The registered prompts by name.
        self.prompts: Registry[RegisteredPrompt | ForwardedPrompt] = Registry(
            "A prompt named {key!r}", "Unknown prompt: {key!r}", lambda: self._changed("prompts")
        )
        self.completions = CompletionEngine(self.prompts, self.templates)
        self._states: weakref.WeakKeyDictionary[Session, ServerSessionState] = (
            weakref.WeakKeyDictionary()
        )
        #: Runs the tools called as tasks, in a nursery open while the server is served (see
        #: :mod:`mcptrio.tasks`); pass your own for another store or other limits.
        self.tasks = TaskSupervisor() if tasks is None else tasks
        #: The 2026-07-28 tasks extension's side of this server (on the same supervisor).
        self.task_extension = ExtensionTasks(self)
        # Bound once, and shared by every session: a bound method made per session is 64 bytes
        # each session keeps.
        self._bound_handle_request = self.handle_request
        self._bound_handle_notification = self._handle_notification
        self._bound_session_started = self._session_started
        self._bound_session_ended = self._session_ended
        handlers = MethodHandlers(self)
        self._routes = handlers.routes
        self._bound_answers_at_once = handlers.answers_at_once
        self._watchers: list[Callable[[Change], None]] = []
        self._mounts: dict[str, Mount] = {}
        #: Opened before serving, closed after (see :mod:`.lifespan`); ``ctx.lifespan`` is
        #: what it yields.
        self._lifespan = LifespanRunner(lifespan, f"server {name!r}")
        self._middleware = MiddlewareChains(self._dispatch)
        # The request chain (None while no middleware is installed: then one test is the whole
        # cost of middleware to a request, see handle_request).
        self._request_chain: CallNext | None = None
        #: Wraps every request the handlers send to the client (:class:`.context.RequestHook`;
        #: ``None``, the default, costs one attribute test a request).
        self.request_hook: RequestHook | None = None
        #: The published skills (SEP-2640), once :meth:`add_skills` has published a folder.
        self.skills: Skills | None = None
        for mw in middleware:
            self.add_middleware(mw)

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
        tool = make_tool(fn, **options)
        header_params(tool.definition.input_schema)
        self.tools.add(tool.name, tool)
        return tool

    def tool_header_params(self, name: str) -> dict[PropertyPath, str] | None:
        """The ``x-mcp-header`` arguments of tool ``name`` (property path -> header name), for the
        Streamable HTTP checks of the stateless era; ``None`` for an unknown tool."""
        found = self._header_params.get(name)
        if found is None:
            tool = self.tools.get(name)
            if tool is None:
                return None
            found = self._header_params[name] = header_params(tool.definition.input_schema)
        return found

    def required_scopes(self, method: str, key: str) -> frozenset[str]:
        """The OAuth scopes a call needs: of the tool or prompt named ``key`` (``tools/call``,
        ``prompts/get``), or the resource (or first matching template) at URI ``key``
        (``resources/read``). Empty for anything else, and for what is not registered."""
        found: (
            RegisteredTool
            | RegisteredPrompt
            | RegisteredResource
            | RegisteredTemplate
            | ForwardedTool
            | ForwardedPrompt
            | ForwardedResource
            | ForwardedTemplate
            | None
        )
        if method == "tools/call":
            found = self.tools.get(key)
        elif method == "prompts/get":
            found = self.prompts.get(key)
        elif method == "resources/read":
            found = self.resources.get(key)
            if found is None:
                found = next((t for t in self.templates.values() if t.match(key) is not None), None)
        else:
            found = None
        return _NO_SCOPES if found is None else found.scopes

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
        """Add a resource: fixed text (``str``), fixed binary (``bytes``) or a function.

        A ``uri`` with ``{variables}`` makes a template, whose ``source`` must be a function.
        """
        if "{" in uri:
            if not callable(source):
                raise TypeError("A resource template needs a function to read it")
            template = make_template(source, uri_template=uri, **options)
            self.templates.add(template.uri_template, template)
            return template
        resource = make_resource(source, uri=uri, **options)
        self.resources.add(resource.uri, resource)
        return resource

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
            self._routes.update(skills.routes())
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
        """Register the decorated function as a prompt; its parameters are the arguments.

        ``@server.prompt``, or with options (:class:`~.prompts.PromptOptions`),
        ``@server.prompt(title=...)``; ``@server.prompt("name")`` names it.
        """
        if isinstance(fn, str):
            fn, options = None, with_first("name", fn, options)
        return decorator(self.add_prompt, fn, options)

    def add_prompt(
        self, fn: Callable[..., Any], **options: Unpack[PromptOptions]
    ) -> RegisteredPrompt:
        """Register ``fn`` as a prompt (see :func:`~.prompts.make_prompt`); a second prompt of
        the same name is refused."""
        prompt = make_prompt(fn, **options)
        self.prompts.add(prompt.name, prompt)
        return prompt

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

    # ---------------------------------------------------------------- logging

    def bridge_logging(
        self, logger: str | logging.Logger | None = None, level: int = logging.DEBUG
    ) -> ClientLogHandler:
        """Forward the records of a stdlib logger (the root logger by default) to clients."""
        handler = ClientLogHandler(self, level)
        target = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        target.addHandler(handler)
        return handler

    # ---------------------------------------------------------------- middleware

    def add_middleware(self, middleware: Middleware, *, outermost: bool = False) -> Middleware:
        """Install ``middleware`` inside those installed before it (``outermost``: around
        them all; see :mod:`.middleware`); returns it, so this works as a decorator. Requests
        and notifications that arrive from now on go through it, on sessions running already
        too."""
        self._middleware.add(middleware, outermost=outermost)
        self._request_chain = self._middleware.request
        return middleware

    def remove_middleware(self, middleware: Middleware) -> bool:
        """Uninstall ``middleware``; ``False`` if it was not installed."""
        removed = self._middleware.remove(middleware)
        self._request_chain = self._middleware.request
        return removed

    @property
    def middleware(self) -> tuple[Middleware, ...]:
        """The installed middleware, outermost first."""
        return self._middleware.installed

    async def _dispatch(self, call: Call) -> Result:
        """The end of a request's chain: its handler, with the params the chain passed on."""
        ctx = call.context
        assert ctx is not None
        request = call.params
        assert isinstance(request, Request)
        if request is not ctx.request:
            ctx._runtime.request = request
        route = self._routes.get(type(request))
        if route is None:
            raise MethodNotFound(f"Method not found: {request.METHOD}")
        try:
            return await route(ctx, request)
        except InputRequired as asked:
            return ctx.input_required(asked)

    async def _through_chain(
        self, chain: CallNext, rctx: RequestContext, request: Request[Any]
    ) -> Result:
        ctx = Context(rctx, self)
        token = current_context.set(ctx)
        try:
            result = await chain(Call(request, rctx.session, ctx, rctx.request_id))
        finally:
            current_context.reset(token)
        if not isinstance(result, Result):
            raise TypeError(
                f"The middleware of {request.METHOD} returned {result!r}, not a result: return"
                " what call_next returns, or a result of your own"
            )
        return result

    def _handle_notification(
        self, session: Session, notification: Notification
    ) -> Awaitable[None] | None:
        """A session's incoming notification, through the middleware when there is some (the
        server itself acts on none of those that reach it)."""
        chain = self._middleware.notification
        if chain is None:
            return None
        return notify_through(chain, Call(notification, session))

    # ---------------------------------------------------------------- sessions

    def session_state(self, session: Session) -> ServerSessionState:
        """The server's state for ``session`` (its log level, subscriptions...)."""
        state = self._states.get(session)
        if state is None:
            state = self._states[session] = ServerSessionState(session, self.max_subscriptions)
        return state

    def session_states(self) -> list[ServerSessionState]:
        """The state of every session of this server that is still running."""
        return [s for s in list(self._states.values()) if not s.session.is_ended]

    def _session_started(self, session: Session) -> None:
        state = self._states.get(session)
        if state is not None:
            state.session_started()

    def _session_ended(self, session: Session) -> None:
        # The state refers to its session: left in the weak dictionary, it would keep both.
        self._states.pop(session, None)

    # ---------------------------------------------------------------- protocol

    def capabilities(self) -> ServerCapabilities:
        """What this server declares to a client whose session starts now."""
        declared = self.declared
        has_resources = bool(self.resources or self.templates)
        task_tools = any_task_tools(self.tools.values())
        return ServerCapabilities(
            tools=(
                ToolsCapability(list_changed=True) if self.tools or "tools" in declared else None
            ),
            resources=ResourcesCapability(subscribe=True, list_changed=True)
            if has_resources or "resources" in declared
            else None,
            prompts=PromptsCapability(list_changed=True)
            if self.prompts or "prompts" in declared
            else None,
            completions={} if self.completions.has_any() else None,
            logging={},
            experimental=self.experimental,
            tasks=tasks_capability() if task_tools else None,
            extensions={
                **(tasks_extension_capability() if task_tools else {}),
                **({} if self.skills is None else {SKILLS_ID: self.skills.capability()}),
            }
            or None,
        )

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
        """Answer one request (the session calls this in the request's own task)."""
        chain = self._request_chain
        if chain is not None:
            return await self._through_chain(chain, rctx, request)
        route = self._routes.get(type(request))
        if route is None:
            raise MethodNotFound(f"Method not found: {request.METHOD}")
        ctx = Context(rctx, self)
        token = current_context.set(ctx)
        try:
            return await route(ctx, request)
        except InputRequired as asked:
            return ctx.input_required(asked)
        finally:
            current_context.reset(token)

    # ---------------------------------------------------------------- serving

    def session(self, transport: Transport) -> Session:
        """A session of this server over ``transport``, ready to ``run``."""
        if self._trio_token is None:
            self._trio_token = trio.lowlevel.current_trio_token()
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
        already), so that every entry point started inside shares it; yields its value. The
        task nursery (:attr:`tasks`) is open inside it, and so are the lifespans of the servers
        mounted at the time (:meth:`mount`)."""
        mounted = [mount.child.open_lifespan() for mount in self._mounts.values()]
        return open_serving(self._lifespan.running(self), self.tasks, mounted)
