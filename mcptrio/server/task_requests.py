"""Requests a server's handler sends its client as tasks (2025-11-25 core tasks): sampling and
elicitation, when the client declared that it takes them as tasks (``tasks.requests``).
``ctx.request_as_task`` is :func:`send_as_task`; :func:`has_core_tasks` says whether a request's
revision has core tasks at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..protocol.base import Request, Result
from ..protocol.connection import Connection
from ..protocol.errors import CapabilityNotNegotiated
from ..protocol.request_meta import RequestMeta
from ..protocol.types import ClientCapabilities
from ..tasks.handle import CoreTaskBackend, TaskHandle, task_augmented

__all__ = ["has_core_tasks", "send_as_task"]

ResultT = TypeVar("ResultT", bound=Result)

#: Where a client declares that it takes a request as a task, by method.
_CLIENT_TASK_REQUESTS = {
    "sampling/createMessage": ("sampling", "createMessage"),
    "elicitation/create": ("elicitation", "create"),
}


def has_core_tasks(meta: RequestMeta | None, connection: Connection) -> bool:
    """Whether a request's revision (named by its ``meta`` in the stateless era, else
    negotiated on ``connection``) has 2025-11-25 core tasks."""
    features = meta.revision if meta is not None else connection.features
    return features is not None and features.tasks


async def send_as_task(
    send: Callable[[Request[Any]], Awaitable[Any]],
    capabilities: ClientCapabilities | None,
    core_tasks: bool,
    request: Request[ResultT],
    ttl: float | None,
) -> TaskHandle[ResultT]:
    """Send ``request`` with ``send`` as a task, ``ttl`` in seconds; its handle.

    The client (its ``capabilities``) must have declared ``tasks.requests.<that request>`` in a
    revision with ``core_tasks``: :class:`CapabilityNotNegotiated` otherwise, before anything
    is sent.
    """
    path = _CLIENT_TASK_REQUESTS.get(request.METHOD)
    declared: Any = None
    if capabilities is not None and capabilities.tasks is not None:
        declared = capabilities.tasks.requests
    for step in path or ():
        declared = None if declared is None else getattr(declared, _snake(step), None)
    if path is None or declared is None or not core_tasks:
        raise CapabilityNotNegotiated(
            f"The client does not take {request.METHOD} as a task (tasks.requests undeclared)"
        )
    augmented = task_augmented(request, None if ttl is None else round(ttl * 1000))
    created = await send(augmented)
    return TaskHandle.created(CoreTaskBackend(send), created, request.RESULT)  # type: ignore[arg-type]


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
