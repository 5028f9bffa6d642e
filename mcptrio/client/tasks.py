"""Tasks from the client's side: ``client.call_tool(name, args, as_task=True)``.

::

    handle = await client.call_tool("render", {"scene": "big"}, as_task=True)
    print(handle.task.status)            # "working": the server answered at once
    task = await handle.status()         # tasks/get
    result = await handle.result()       # waits until the task ends: the CallToolResult
    await handle.cancel()                # tasks/cancel (-32602 once it has ended)

The :class:`~mcptrio.tasks.handle.TaskHandle` is shared with the server side (a server is the
requestor of task-augmented sampling and elicitation); it is re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..protocol.errors import CapabilityNotNegotiated
from ..protocol.types import (
    CallToolRequest,
    CallToolResult,
    CreateTaskResult,
    ServerCapabilities,
    TaskMetadata,
)
from ..tasks.handle import CoreTaskBackend, TaskBackend, TaskHandle, payload_request

if TYPE_CHECKING:
    from .options import CallOptions
    from .sending import RequestSender

__all__ = [
    "CoreTaskBackend",
    "TaskBackend",
    "TaskCallToolRequest",
    "TaskHandle",
    "payload_request",
    "start_tool_task",
]


class TaskCallToolRequest(CallToolRequest, kw_only=True):
    """A ``tools/call`` with ``params.task``: its answer is a :class:`CreateTaskResult`."""

    RESULT = CreateTaskResult


async def start_tool_task(
    sender: RequestSender,
    capabilities: ServerCapabilities,
    name: str,
    arguments: Mapping[str, Any] | None,
    ttl: float | None,
    options: CallOptions,
) -> TaskHandle[CallToolResult]:
    """``client.call_tool(name, arguments, as_task=True)``: a task-augmented ``tools/call``.

    Needs a server that declared ``tasks.requests.tools.call`` (2025-11-25):
    :class:`CapabilityNotNegotiated` otherwise, before anything is sent, as the spec forbids
    task augmentation then. ``ttl`` is in seconds (the wire's ``ttl`` is in ms). The stateless
    era's calls declare the tasks extension instead, and the server picks the TTL
    (:func:`~.task_extension.start_extension_task`).
    """
    tasks = capabilities.tasks
    requests = None if tasks is None else tasks.requests
    tools = None if requests is None else requests.tools
    if tools is None or tools.call is None:
        raise CapabilityNotNegotiated(
            "The server did not declare tasks.requests.tools.call: it runs no tool as a task"
        )
    request = TaskCallToolRequest(
        name=name,
        arguments=None if arguments is None else dict(arguments),
        task=TaskMetadata(ttl=None if ttl is None else round(ttl * 1000)),
    )
    # The request's type says CallToolResult (it is a tools/call); its RESULT decodes the task.
    created = cast("CreateTaskResult", await sender.request(request, **options))
    return TaskHandle.created(CoreTaskBackend(sender.request), created, CallToolResult)
