"""The context of the request a handler answers: :class:`HandlerContext`, the base of
:class:`~mcptrio.server.context.Context`, the one type a server's handlers ask for.

Any tool, resource, resource template, prompt, completer or completion handler may declare a
parameter annotated ``Context`` (see :mod:`.handler`); the server passes the context of the
request being answered, and it never appears in an input schema. Through it a handler reaches
the request (its id, method, arguments and progress token), the session and the server, the
request's cancel scope, and talks back to the client about *this* request: progress, log
messages, sampling, elicitation, roots, and any other request or notification. Each client-side
feature is refused with :class:`CapabilityNotNegotiated` before anything is sent when the client
did not declare the capability.

All is here but that ``server`` is a :class:`~mcptrio.Server`, which ``Context`` adds: the
modules a ``Server`` is made of name this base, whose ``server`` is what a context reads of it
(:class:`ContextServer`), and so do not depend on the ``Server`` class, which depends on them.

The runtime's own per-request object (:class:`~mcptrio.runtime.context.RequestContext`, which a
client's sampling and elicitation handlers receive) stays behind it: a server handler annotated
with it is refused at registration. See ``docs/explanation/handlers.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, TypeVar, Unpack

import trio

from ..protocol.base import Notification, Request, RequestId, Result
from ..protocol.errors import (
    CapabilityNotNegotiated,
    InvalidRequest,
    McpError,
)
from ..protocol.request_meta import RequestMeta
from ..protocol.types import (
    CacheScope,
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitationCompleteNotification,
    ElicitRequest,
    ElicitResult,
    Implementation,
    InputRequiredResult,
    ListRootsRequest,
    LoggingMessageNotification,
    ModelHint,
    ModelPreferences,
    Root,
    SamplingMessage,
    TextContent,
    Tool,
    ToolChoice,
)
from ..protocol.types.logging import LOGGING_LEVELS, LoggingLevel
from ..protocol.types.sampling import IncludeContext
from ..runtime.context import RequestContext
from ..runtime.session import Session
from ..tasks.context import TaskRequestContext
from ..tasks.handle import TaskHandle
from ..transports.http.endpoints.security import Principal, current_principal
from .elicitation_schema import Elicited, elicited, schema_for_elicitation
from .input_rounds import InputRequired, InputRound
from .lifespan import LifespanRunner
from .read_budget import ReadBudget
from .request_state import RequestStateKey
from .session_state import ServerSessionState
from .task_inputs import BeginTask, TaskInputs
from .task_requests import has_core_tasks, send_as_task

if TYPE_CHECKING:
    from ..runtime.outgoing import RequestOptions

__all__ = [
    "DEFAULT_CLIENT_TIMEOUT",
    "ContextServer",
    "HandlerContext",
    "RequestHook",
    "Route",
]

T = TypeVar("T")
ResultT = TypeVar("ResultT", bound=Result)
_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})
#: The methods whose handlers may ask the client for input in the stateless era.
_MAY_ASK = frozenset({"tools/call", "prompts/get", "resources/read"})
_SEVERITY = {level: rank for rank, level in enumerate(LOGGING_LEVELS)}

#: How long ``sample``, ``elicit`` and ``list_roots`` wait for the client by default (seconds).
#: A person may be answering an elicitation, so the default is generous; pass ``timeout=``.
DEFAULT_CLIENT_TIMEOUT = 600.0


class RequestHook(Protocol):
    """Wraps each request a server's handlers send to the client (``Server.request_hook``; for
    tracing, :mod:`mcptrio.otel`)."""

    def __call__(
        self, ctx: HandlerContext, request: Request[Any], send: Callable[..., Awaitable[Any]]
    ) -> Awaitable[Any]:
        """Handshake era: ``send(request, on_id=None)`` sends ``request`` (perhaps changed, of
        the same type) and waits for its result, calling ``on_id`` with the id it goes under;
        return that awaitable or one around it."""
        ...

    def asking(
        self, ctx: HandlerContext, requests: dict[str, Request[Any]]
    ) -> dict[str, Request[Any]]:
        """Stateless era: the requests about to go out in an input-required result, by key;
        returns them (perhaps changed) to go out instead. The round ends right after."""
        ...


class ContextServer(Protocol):
    """What a context reads of the server answering its request (a :class:`~mcptrio.Server`
    has all of it)."""

    request_hook: RequestHook | None
    request_state_key: RequestStateKey
    read_budget: ReadBudget
    cache_ttl_ms: int | None
    cache_scope: CacheScope
    _lifespan: LifespanRunner[Any]

    def session_state(self, session: Session) -> ServerSessionState: ...


#: What answers one request method: ``async (ctx, request) -> result``.
Route = Callable[["HandlerContext", Any], Awaitable[Result]]


class HandlerContext:
    """The request being answered, and what its handler can do for it.

    Made by the server for each request (as a :class:`~mcptrio.server.context.Context`); a
    handler receives it by annotating a parameter ``Context``. It is valid while the request is
    being handled.
    """

    __slots__ = ("_origin", "_round", "_runtime", "_task_inputs", "_task_prelude", "server")

    def __init__(self, request_context: RequestContext, server: ContextServer) -> None:
        self._runtime = request_context
        #: The :class:`~mcptrio.server.Server` answering the request.
        self.server = server
        self._round: InputRound | None = None
        # The context this one was made from by for_server: the request's rounds are its.
        self._origin: HandlerContext | None = None
        # A 2026-07-28 task's asks and request _meta (answered with the task: .task_extension).
        self._task_inputs: TaskInputs | None = None
        # The handler runs in its request until begin_task() (input_before_task tools).
        self._task_prelude = False

    def for_server(self, server: ContextServer) -> Self:
        """This request's context as ``server`` sees it: for a mounted server answering it."""
        other = type(self)(self._runtime, server)
        other._origin = self._origin or self
        other._task_inputs = self._task_inputs
        other._task_prelude = self._task_prelude
        return other

    def _for_task(self, task_context: RequestContext) -> Self:
        """The context of a task's work, started by this request (its ``task_context``
        carries what the task reports), for the same server."""
        return type(self)(task_context, self.server)

    @property
    def request_meta(self) -> RequestMeta | None:
        """What a stateless-era request's ``_meta`` says of its client (``None``: this is a
        handshake-era request, and the session's handshake said it)."""
        inputs = self._task_inputs
        if inputs is not None:
            return inputs.meta
        return self.session.connection.request_meta_of(self.request_id)

    async def begin_task(self) -> None:
        """Where a tool registered with ``input_before_task=True`` becomes a task (2026-07-28
        tasks extension): called in the request, it ends the handler's run there, and the
        request is answered with a task that runs the handler again from the start, with the
        answers its asks got; called anywhere else (in the task, in another era, in a call that
        is no task), it does nothing. See :mod:`.task_extension`."""
        if self._task_prelude:
            raise BeginTask

    # ------------------------------------------------------------------ the request

    @property
    def principal(self) -> Principal | None:
        """Who made the request, as the server's authenticator established it; ``None`` when
        there is none (stdio, or HTTP without an authenticator).

        With :class:`mcptrio.auth.server.BearerAuth` it is the verified
        :class:`~mcptrio.auth.server.AccessToken` (``subject``, ``client_id``, ``scopes``,
        ``claims``). The token string is not in it: it was issued for this server, and is never
        to be passed on to another service.
        """
        principal = current_principal.get()
        if principal is None:
            principal = getattr(self.session.transport, "principal", None)
        return principal

    def require_scopes(self, scopes: frozenset[str] | set[str] | tuple[str, ...]) -> None:
        """Raise ``InvalidRequest`` (-32600, ``data.error`` ``"insufficient_scope"``) unless the
        request's principal carries every one of ``scopes``; nothing is checked when there is no
        principal (no authenticator). Over HTTP the endpoint has usually answered 403 already;
        this is the check for batches and WebSocket connections, and for a handler's own needs.
        """
        if not scopes:
            return  # most calls: nothing to look up
        principal = self.principal
        if principal is None:
            return
        have: frozenset[str] = getattr(principal, "scopes", frozenset())
        missing = set(scopes) - set(have)
        if missing:
            scope = " ".join(sorted(set(scopes)))
            raise InvalidRequest(
                f"insufficient_scope: this needs scope {scope}",
                data={"error": "insufficient_scope", "scope": scope},
            )

    @property
    def request_id(self) -> RequestId:
        """The JSON-RPC id of the request."""
        return self._runtime.request_id

    @property
    def request(self) -> Request[Any]:
        """The request itself, as decoded (``CallToolRequest``, ``ReadResourceRequest``...)."""
        return self._runtime.request

    @property
    def method(self) -> str:
        """The request's method (``"tools/call"``, ``"prompts/get"``...)."""
        return self._runtime.request.METHOD

    @property
    def arguments(self) -> Mapping[str, Any]:
        """The arguments the client sent, as it sent them (read-only).

        A ``tools/call``'s arguments before they are converted to the tool's parameters, a
        ``prompts/get``'s strings; empty for a request that has none. A gateway forwards these.
        """
        arguments = getattr(self._runtime.request, "arguments", None)
        if isinstance(arguments, dict):
            return MappingProxyType(arguments)
        return _NO_ARGUMENTS

    @property
    def input_answers(self) -> Mapping[str, Any]:
        """The answers to earlier asks a stateless-era request carries, by key (those of earlier
        rounds, sealed in its ``requestState``, and its ``inputResponses``), as they came; empty
        in the handshake era. A gateway finds the upstream call a retry resumes by them."""
        if self.request_meta is None or self._task_inputs is not None:
            return _NO_ARGUMENTS
        return MappingProxyType(self._input_round().given())

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan yielded (``None`` when it has none; see
        :mod:`~mcptrio.server.lifespan`). ``RuntimeError`` if it is not running."""
        return self.server._lifespan.value

    @property
    def progress_token(self) -> int | str | None:
        """The token the client asked progress for, or ``None`` if it did not."""
        return self._runtime.progress_token

    @property
    def session(self) -> Session:
        """The session the request came in on."""
        return self._runtime.session

    @property
    def cancel_scope(self) -> trio.CancelScope:
        """The scope ``notifications/cancelled`` (or the session ending) cancels.

        Cancel it to abandon the request: no answer is sent, as for a cancelled request.
        """
        return self._runtime.cancel_scope

    @property
    def revision(self) -> str:
        """The protocol revision of this request (negotiated for the session, or named by a
        stateless-era request itself)."""
        meta = self.request_meta
        return meta.revision.version if meta else self.session.connection.revision or ""

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        """What the client declared (in the handshake, or in this request's ``_meta``)."""
        meta = self.request_meta
        if meta is not None:
            return meta.client_capabilities
        caps = self.session.connection.peer_capabilities
        return caps if isinstance(caps, ClientCapabilities) else None

    @property
    def client_info(self) -> Implementation | None:
        meta = self.request_meta
        return meta.client_info if meta is not None else self.session.connection.peer_info

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress for the caller's token; a no-op when the caller asked for none."""
        await self._runtime.report_progress(progress, total, message)

    async def notify(self, notification: Notification) -> None:
        """Send any notification, related to this request (HTTP sends it on its stream)."""
        await self._runtime.notify(notification)

    async def send_request(
        self,
        request: Request[ResultT],
        *,
        key: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> ResultT:
        """Send any request to the client as part of this one, and wait for its result.

        :meth:`sample`, :meth:`elicit` and :meth:`list_roots` are this with the capability
        checked first; use it for what they do not cover (a gateway forwarding a request).
        ``options`` are :class:`~mcptrio.runtime.outgoing.RequestOptions`; ``timeout`` is
        ``DEFAULT_CLIENT_TIMEOUT`` when not given.

        In the stateless era the request goes out inside an input-required result, under
        ``key`` (see :mod:`.input_rounds`): the answer comes with the client's retry.
        """
        inputs = self._task_inputs
        if inputs is not None:
            key = key or inputs.next_key(request.METHOD)
            timeout = options.get("timeout", DEFAULT_CLIENT_TIMEOUT)
            return (await inputs.ask({key: request}, timeout=timeout))[key]  # type: ignore[return-value]
        if self.request_meta is not None:
            answers = await self.ask({key or self._input_round().next_key(request.METHOD): request})
            return answers.popitem()[1]  # type: ignore[return-value]
        options.setdefault("timeout", DEFAULT_CLIENT_TIMEOUT)
        return await self._send(request, options)

    async def _send(self, request: Request[ResultT], options: RequestOptions) -> ResultT:
        # The hook of the server serving the session (a mounted server's handler asks through it).
        hook = (self._origin or self).server.request_hook
        runtime = self._runtime
        if hook is None:
            return await runtime.send_request(request, **options)
        if isinstance(runtime, TaskRequestContext):
            # A task's requests carry its id and make it input_required, hook or not.
            send = functools.partial(runtime.send_request, **options)
        else:
            send = functools.partial(runtime.session.request, related=runtime.request_id, **options)
        result: ResultT = await hook(self, request, send)
        return result

    async def request_as_task(
        self, request: Request[ResultT], *, ttl: float | None = None
    ) -> TaskHandle[ResultT]:
        """Send a sampling or elicitation request to the client as a task (2025-11-25, when the
        client declared it takes that request as a task); returns its
        :class:`~mcptrio.TaskHandle` at once. ``ttl`` in seconds.

        The client must have declared ``tasks.requests.<that request>``:
        :class:`CapabilityNotNegotiated` otherwise, before anything is sent."""
        core = has_core_tasks(self.request_meta, self.session.connection)
        return await send_as_task(self.send_request, self.client_capabilities, core, request, ttl)

    async def ask(
        self, requests: Mapping[str, Request[Any]], *, timeout: float | None = None
    ) -> dict[str, Result]:
        """Ask the client several things at once (sampling, elicitation, roots), by key.

        In the stateless era they go out together in one input-required result; in the
        handshake era they are sent concurrently. In a 2026-07-28 task they are the task's
        ``inputRequests`` until ``tasks/update`` answers them. Returns the results by the same
        keys.
        """
        if self._task_inputs is not None:
            wait = DEFAULT_CLIENT_TIMEOUT if timeout is None else timeout
            return await self._task_inputs.ask(requests, timeout=wait)
        if self.request_meta is None:
            results: dict[str, Result] = {}

            async def one(key: str, request: Request[Any]) -> None:
                results[key] = await self._send(
                    request, {"timeout": DEFAULT_CLIENT_TIMEOUT if timeout is None else timeout}
                )

            async with trio.open_nursery() as nursery:
                for key, request in requests.items():
                    nursery.start_soon(one, key, request)
            return {key: results[key] for key in requests}
        if self.method not in _MAY_ASK:
            raise CapabilityNotNegotiated(
                f"A {self.method} handler cannot ask the client for input in the stateless era"
            )
        input_round = self._input_round()
        found: dict[str, Result] = {}
        missing: dict[str, Request[Any]] = {}
        for key, request in requests.items():
            answer = input_round.answer(key, request.RESULT)
            if answer is None:
                missing[key] = request
            else:
                found[key] = answer
        if missing:
            hook = (self._origin or self).server.request_hook
            raise InputRequired(missing if hook is None else hook.asking(self, missing))
        return found

    def _input_round(self) -> InputRound:
        if self._origin is not None:
            # One round per request, sealed with the key of the server that answers it.
            return self._origin._input_round()
        if self._round is None:
            self._round = InputRound(self.request, self.server.request_state_key, self.principal)
        return self._round

    def input_required(self, asked: InputRequired) -> InputRequiredResult:
        """The input-required result that ends this request's round (the server calls this)."""
        meta = self.request_meta
        assert meta is not None
        return self._input_round().result(asked, meta.revision)

    def _missing(self, message: str, capability: dict[str, Any]) -> McpError:
        """The error for an ask the client's declared capabilities do not allow."""
        if self.request_meta is not None:
            return CapabilityNotNegotiated(message, required=capability)
        return CapabilityNotNegotiated(message)

    # ------------------------------------------------------------------ logging

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if ``level`` is at or above the session's level.

        Until the client sends ``logging/setLevel`` every level is sent. In the stateless era
        a message is sent only when the request named a ``logLevel`` and ``level`` is at or
        above it.
        """
        meta = self.request_meta
        if meta is not None:
            if meta.log_level is None or _SEVERITY[level] < _SEVERITY[meta.log_level]:
                return
        elif not self.server.session_state(self.session).log_enabled(level):
            return
        message = LoggingMessageNotification(level=level, data=data, logger=logger)
        await self._runtime.notify(message)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    # ------------------------------------------------------------------ client features

    def _capabilities(self) -> ClientCapabilities:
        return self.client_capabilities or ClientCapabilities()

    async def sample(
        self,
        messages: str | Sequence[str | SamplingMessage],
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        include_context: IncludeContext | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: ModelPreferences | Sequence[str] | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        tools: Sequence[Tool] | None = None,
        tool_choice: ToolChoice | Literal["auto", "required", "none"] | None = None,
        timeout: float | None = DEFAULT_CLIENT_TIMEOUT,
        key: str | None = None,
    ) -> CreateMessageResult:
        """Ask the client to sample its LLM (``sampling/createMessage``).

        ``messages`` may be plain strings (user turns). ``model_preferences`` may be model name
        hints. ``tools`` and ``tool_choice`` (2025-11-25) need the client's ``sampling.tools``
        capability; ``include_context`` other than ``"none"`` needs ``sampling.context``.
        ``key`` names the ask in the stateless era (:mod:`.input_rounds`).
        """
        caps = self._capabilities()
        if caps.sampling is None:
            raise self._missing(
                "The client did not declare the sampling capability", {"sampling": {}}
            )
        sampling = caps.sampling
        if (tools or tool_choice is not None) and sampling.tools is None:
            raise self._missing(
                "The client did not declare sampling.tools", {"sampling": {"tools": {}}}
            )
        # sampling.context gates includeContext only where the revision has it.
        features = self.session.connection.features
        if (
            include_context not in (None, "none")
            and features is not None
            and features.sampling_tools
            and sampling.context is None
        ):
            raise CapabilityNotNegotiated("The client did not declare sampling.context")
        if isinstance(messages, str):
            messages = [messages]
        wire_messages = [
            m
            if isinstance(m, SamplingMessage)
            else SamplingMessage(role="user", content=TextContent(text=m))
            for m in messages
        ]
        if isinstance(model_preferences, str):
            model_preferences = [model_preferences]
        if model_preferences is not None and not isinstance(model_preferences, ModelPreferences):
            model_preferences = ModelPreferences(
                hints=[ModelHint(name=name) for name in model_preferences]
            )
        if isinstance(tool_choice, str):
            tool_choice = ToolChoice(mode=tool_choice)
        request = CreateMessageRequest(
            messages=wire_messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            include_context=include_context,
            temperature=temperature,
            stop_sequences=None if stop_sequences is None else list(stop_sequences),
            model_preferences=model_preferences,
            metadata=None if metadata is None else dict(metadata),
            tools=None if not tools else list(tools),
            tool_choice=tool_choice,
        )
        return await self.send_request(request, key=key, timeout=timeout)

    async def elicit(
        self,
        message: str,
        schema: type[T] | Mapping[str, Any],
        *,
        timeout: float | None = DEFAULT_CLIENT_TIMEOUT,
        key: str | None = None,
    ) -> Elicited[T]:
        """Ask the user for structured input through the client (form-mode elicitation).

        ``schema`` is either a ``requestedSchema`` dict (the restricted JSON Schema subset:
        string, number, integer, boolean and single- or multi-select enums, titled or not, with
        defaults) or a class (msgspec Struct, dataclass, TypedDict, attrs, pydantic model) whose
        fields are such primitives; an answer that does not fit it raises :class:`InvalidParams`.
        ``key`` names the ask in the stateless era (:mod:`.input_rounds`).
        """
        caps = self._capabilities()
        elicitation = caps.elicitation
        if elicitation is None or (elicitation.url is not None and elicitation.form is None):
            raise self._missing(
                "The client did not declare form-mode elicitation", {"elicitation": {}}
            )
        requested, target = schema_for_elicitation(schema)
        request = ElicitRequest(message=message, requested_schema=requested, mode="form")
        result = await self.send_request(request, key=key, timeout=timeout)
        return elicited(result, target)

    async def elicit_url(
        self,
        message: str,
        url: str,
        elicitation_id: str,
        *,
        timeout: float | None = DEFAULT_CLIENT_TIMEOUT,
    ) -> ElicitResult:
        """Send the user to ``url`` (URL-mode elicitation, 2025-11-25).

        The client answers once the user consents (or not); when the out-of-band interaction
        finishes, call :meth:`complete_elicitation` with the same ``elicitation_id``.
        """
        caps = self._capabilities()
        if caps.elicitation is None or caps.elicitation.url is None:
            raise CapabilityNotNegotiated("The client did not declare URL-mode elicitation")
        request = ElicitRequest(message=message, mode="url", url=url, elicitation_id=elicitation_id)
        return await self.send_request(request, timeout=timeout)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Send ``notifications/elicitation/complete`` for a URL-mode elicitation."""
        await self.session.notify(
            ElicitationCompleteNotification(elicitation_id=elicitation_id),
            related=self.request_id,
        )

    async def list_roots(
        self, *, timeout: float | None = 60.0, key: str | None = None
    ) -> list[Root]:
        """The client's roots (``roots/list``); ``key`` names the ask in the stateless era."""
        if self._capabilities().roots is None:
            raise self._missing("The client did not declare the roots capability", {"roots": {}})
        result = await self.send_request(ListRootsRequest(), key=key, timeout=timeout)
        return result.roots
