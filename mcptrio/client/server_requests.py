"""The server's requests to the client: sampling, elicitation and roots.

The application hands :func:`~mcptrio.client.open_client` its :class:`Handlers`, one per
feature it supports; :func:`derive_capabilities` declares exactly those (merged with any the
application passes explicitly), in the newest shape (the connection fits them to the revision
the client offers), and :class:`ServerRequestRouter` answers the requests:

- a request whose typed handler was given goes to it; any other goes to the low-level
  ``fallback`` handler, if given; otherwise it is refused with -32601;
- a handler raising :class:`~mcptrio.protocol.errors.McpError` answers with that error; any
  other exception answers -32603 naming the handler, is logged, and leaves the session running;
- answers are fitted to the negotiated revision by the connection, so the server never sees a
  member its revision lacks (a list of sampling content blocks before 2025-11-25, say): what can
  be reshaped is, what cannot is answered -32603 with the reason.

Each handler runs in the request's own task (see :class:`~mcptrio.runtime.session.Session`),
so a slow one (a person answering a form) holds up nothing else; the server cancelling the
request cancels the handler.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, TypeAlias

import msgspec
import trio

from ..protocol.base import Request, Result
from ..protocol.connection import capability_declared
from ..protocol.errors import InternalError, InvalidParams, McpError, MethodNotFound
from ..protocol.types import (
    CancelTaskRequest,
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    GetTaskPayloadRequest,
    GetTaskRequest,
    ListRootsRequest,
    ListRootsResult,
    ListTasksRequest,
    Root,
    RootsListChangedNotification,
    TaskMetadata,
)
from ..runtime.context import RequestContext
from ..runtime.session import RequestHandler, Session
from ..tasks import TaskReceiver, TaskSupervisor, owner_of

__all__ = [
    "ElicitationHandler",
    "ElicitationMode",
    "Handlers",
    "ReceiveHook",
    "SamplingHandler",
    "ServerRequestRouter",
    "derive_capabilities",
    "elicitation_modes_declared",
]

log = logging.getLogger("mcptrio.client")

ElicitationMode: TypeAlias = Literal["form", "url"]
#: ``async (ctx, request) -> CreateMessageResult``: sample the application's LLM.
SamplingHandler: TypeAlias = Callable[
    [RequestContext, CreateMessageRequest], Awaitable[CreateMessageResult]
]
#: ``async (ctx, request) -> ElicitResult``: ask the user (form mode or, 2025-11-25, URL mode).
ElicitationHandler: TypeAlias = Callable[[RequestContext, ElicitRequest], Awaitable[ElicitResult]]
#: Wraps the answering of each request from the server (either era): ``hook(ctx, request,
#: answer)`` returns ``answer(ctx, request)``'s awaitable or one around it. For tracing
#: (:mod:`mcptrio.otel`).
ReceiveHook: TypeAlias = Callable[
    [RequestContext, Request[Any], Callable[[RequestContext, Request[Any]], Awaitable[Result]]],
    Awaitable[Result],
]


@dataclass(frozen=True, kw_only=True)
class Handlers:
    """How a client answers the server's requests; the client declares exactly these.

    ``sampling``
        ``async (ctx, CreateMessageRequest) -> CreateMessageResult``: sample the application's
        LLM. Declares ``sampling`` (with ``tools`` and ``context`` from 2025-11-25).
    ``elicitation``
        ``async (ctx, ElicitRequest) -> ElicitResult``: ask the user. Declares ``elicitation``
        in the modes of ``elicitation_modes`` (URL mode from 2025-11-25).
    ``roots``
        The roots to answer ``roots/list`` with (:meth:`~mcptrio.Client.set_roots` replaces
        them). Declares ``roots: {listChanged: true}``.
    ``fallback``
        ``async (ctx, request) -> Result``, the low-level hook: answers any request that has no
        typed handler above. Without it such a request is refused with -32601.
    ``tasks``
        Run the server's task-augmented sampling and elicitation requests as tasks (2025-11-25):
        ``True`` for a :class:`~mcptrio.TaskSupervisor` of the client's own (records in
        memory), or the one to use. Declares ``tasks`` with ``list``, ``cancel`` and the
        requests whose handlers are given; the client then answers ``tasks/*``. Without it a
        task-augmented request is answered as a plain one, as the spec says of a receiver that
        declared no tasks.

    A handler raising :class:`~mcptrio.protocol.errors.McpError` answers with that error; any
    other exception answers -32603, is logged, and leaves the session running. Each runs in the
    request's own task, so a slow one holds up nothing else.
    """

    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    elicitation_modes: Collection[ElicitationMode] = ("form", "url")
    roots: Sequence[Root] | None = None
    fallback: RequestHandler | None = None
    tasks: TaskSupervisor | bool = False


# ------------------------------------------------------------------------------ capabilities


def derive_capabilities(
    *,
    sampling: bool,
    elicitation_modes: Collection[ElicitationMode] | None,
    roots: bool,
    extra: ClientCapabilities | None = None,
    tasks: bool = False,
) -> ClientCapabilities:
    """The capabilities to declare in ``initialize``, in the newest shape.

    ``sampling`` declares ``sampling`` (with ``tools`` and ``context``), ``elicitation_modes``
    (``None``: no elicitation) declares ``elicitation`` (``{form?, url?}``), ``roots`` declares
    ``roots: {listChanged: true}``, ``tasks`` declares ``tasks`` (list, cancel, and the
    sampling and elicitation requests declared). ``extra`` is merged in (its members win). The
    connection
    cuts them to what the offered revision defines (``{}`` for form mode in 2025-06-18,
    nothing earlier).
    """
    derived: dict[str, Any] = {}
    if sampling:
        derived["sampling"] = {"tools": {}, "context": {}}
    if elicitation_modes is not None:
        if not elicitation_modes:
            raise ValueError("An elicitation handler needs at least one of the modes form, url")
        unknown = set(elicitation_modes) - {"form", "url"}
        if unknown:
            raise ValueError(f"Unknown elicitation modes: {sorted(unknown)}")
        derived["elicitation"] = {mode: {} for mode in ("form", "url") if mode in elicitation_modes}
    if roots:
        derived["roots"] = {"listChanged": True}
    if tasks:
        requests: dict[str, Any] = {}
        if sampling:
            requests["sampling"] = {"createMessage": {}}
        if elicitation_modes is not None:
            requests["elicitation"] = {"create": {}}
        derived["tasks"] = {"list": {}, "cancel": {}, "requests": requests}
    if extra is not None:
        _merge(derived, msgspec.to_builtins(extra))
    return msgspec.convert(derived, ClientCapabilities)


def _merge(into: dict[str, Any], other: dict[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def elicitation_modes_declared(capabilities: ClientCapabilities) -> frozenset[ElicitationMode]:
    """The elicitation modes ``capabilities`` declare (a revision without modes has
    ``elicitation: {}``, which is form mode)."""
    elicitation = capabilities.elicitation
    if elicitation is None:
        return frozenset()
    modes: set[ElicitationMode] = set()
    if elicitation.form is not None:
        modes.add("form")
    if elicitation.url is not None:
        modes.add("url")
    # An empty object is form mode only (for compatibility with 2025-06-18).
    return frozenset(modes or {"form"})


# ------------------------------------------------------------------------------ answering


class ServerRequestRouter:
    """Answers the server's requests with the application's :class:`Handlers` (see the module
    docs). Use an instance as a :class:`~mcptrio.runtime.session.Session`'s ``handle_request``.
    """

    def __init__(self, handlers: Handlers) -> None:
        self.sampling = handlers.sampling
        self.elicitation = handlers.elicitation
        self.roots: list[Root] | None = None if handlers.roots is None else list(handlers.roots)
        self.fallback = handlers.fallback
        #: Wraps each answer (``None``, the default: none is wrapped).
        self.hook: ReceiveHook | None = None
        #: Runs task-augmented requests as tasks and answers tasks/* (``Handlers.tasks``).
        self.tasks: TaskReceiver | None = None
        if handlers.tasks is not False:
            supervisor = TaskSupervisor() if handlers.tasks is True else handlers.tasks
            self.tasks = TaskReceiver(supervisor)

    async def __call__(self, ctx: RequestContext, request: Request[Any]) -> Result:
        hook = self.hook
        if hook is None:
            return await self._answer(ctx, request)
        result: Result = await hook(ctx, request, self._answer)
        return result

    async def _answer(self, ctx: RequestContext, request: Request[Any]) -> Result:
        receiver = self.tasks
        if receiver is not None:
            owner = owner_of(None, ctx.session)
            task = getattr(request, "task", None)
            if isinstance(task, TaskMetadata) and self._handles(request):
                return await receiver.start(ctx, task, owner, partial(self._answer_now, request))
            match request:
                case GetTaskRequest():
                    return await receiver.get(owner, request)
                case GetTaskPayloadRequest():
                    return await receiver.result(ctx, owner, request)
                case ListTasksRequest():
                    return await receiver.list(owner, request)
                case CancelTaskRequest():
                    return await receiver.cancel(owner, request)
        return await self._answer_now(request, ctx)

    def _handles(self, request: Request[Any]) -> bool:
        """Whether a typed handler answers ``request`` (what a task may be made of)."""
        if isinstance(request, CreateMessageRequest):
            return self.sampling is not None
        return isinstance(request, ElicitRequest) and self.elicitation is not None

    async def _answer_now(self, request: Request[Any], ctx: RequestContext) -> Result:
        if isinstance(request, CreateMessageRequest) and self.sampling is not None:
            _check_sampling_request(ctx.session, request)
            sampled: CreateMessageResult = await _run(
                "sampling", self.sampling, ctx, request, CreateMessageResult
            )
            return sampled
        if isinstance(request, ElicitRequest) and self.elicitation is not None:
            _check_elicitation_mode(ctx.session, request)
            answer = await _run("elicitation", self.elicitation, ctx, request, ElicitResult)
            return _elicit_result_for(answer, request)
        if isinstance(request, ListRootsRequest) and self.roots is not None:
            return ListRootsResult(roots=list(self.roots))
        if self.fallback is not None:
            return await self.fallback(ctx, request)
        raise MethodNotFound(f"Method not found: {request.METHOD} (this client has no handler)")

    async def set_roots(self, session: Session, roots: Sequence[Root]) -> None:
        """Answer later ``roots/list`` with ``roots``; tell the server if it may be told.

        ``notifications/roots/list_changed`` is sent when this client declared
        ``roots.listChanged``; otherwise the new roots are simply what the next
        ``roots/list`` gets. The stateless era has no such notification: a server there asks
        for the roots in each request that needs them, and gets the new ones.
        """
        self.roots = list(roots)
        if session.connection.request_meta is not None:
            await trio.lowlevel.checkpoint()
            return
        if capability_declared(session.connection.capabilities, ("roots", "listChanged")):
            await session.notify(RootsListChangedNotification())


async def _run(
    feature: str,
    handler: Callable[[RequestContext, Any], Awaitable[Any]],
    ctx: RequestContext,
    request: Request[Any],
    expected: type[Result],
) -> Any:
    try:
        result = await handler(ctx, request)
    except McpError:
        raise
    except Exception as exc:
        log.exception("the %s handler failed (request %r)", feature, ctx.request_id)
        raise InternalError(
            f"The client's {feature} handler failed: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(result, expected):
        raise InternalError(
            f"The client's {feature} handler returned {type(result).__name__},"
            f" not {expected.__name__}"
        )
    return result


def _check_sampling_request(session: Session, request: CreateMessageRequest) -> None:
    # The client MUST answer an error when tools arrive without sampling.tools declared (the
    # connection already refused them in a revision without sampling with tools).
    if (request.tools is not None or request.tool_choice is not None) and not capability_declared(
        session.connection.capabilities, ("sampling", "tools")
    ):
        raise InvalidParams("This client did not declare sampling.tools: tools cannot be sent")


def _check_elicitation_mode(session: Session, request: ElicitRequest) -> None:
    capabilities = session.connection.capabilities
    assert isinstance(capabilities, ClientCapabilities)
    mode = request.effective_mode
    if mode not in elicitation_modes_declared(capabilities):
        raise InvalidParams(f"This client did not declare {mode}-mode elicitation")


def _elicit_result_for(answer: ElicitResult, request: ElicitRequest) -> ElicitResult:
    if request.effective_mode == "url" or answer.action != "accept":
        # Only an accepted form carries content.
        return msgspec.structs.replace(answer, content=None)
    return answer
