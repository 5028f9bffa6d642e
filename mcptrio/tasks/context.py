"""The request context a task's work runs with: the creating request's, bound to the task.

A task runs after its request was answered (with the task), so what its work sends about it
cannot be "about that request" any more. :class:`TaskRequestContext` keeps the request (its id,
params and progress token: the spec keeps a task's progress token valid for the task's
lifetime) and changes what it sends:

- every notification and request carries ``_meta["io.modelcontextprotocol/related-task"]``;
- a request to the requestor (elicitation, sampling) moves the task to ``input_required`` until
  it is answered, and is related to the ``tasks/result`` request waiting for the task, if one
  is (HTTP then sends it on that stream, as the spec suggests);
- :attr:`cancel_scope` is the task's own scope (``tasks/cancel``, the TTL, the server's end);
- once the session that created the task has ended, notifications are dropped (the task goes
  on; its outcome waits in the store), and requests fail with ``ConnectionClosed``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import msgspec

from ..protocol.base import Notification, Request, RequestId, Result
from ..protocol.types import ProgressNotification
from ..runtime.context import RequestContext
from .supervisor import RunningTask

if TYPE_CHECKING:
    from ..runtime.outgoing import RequestOptions
    from .receiver import TaskReceiver

__all__ = ["TaskRequestContext"]

log = logging.getLogger("mcptrio.tasks")
ResultT = TypeVar("ResultT", bound=Result)
M = TypeVar("M", Notification, Request[Any])


class TaskRequestContext(RequestContext):
    """The context of a task's work (see the module docstring)."""

    __slots__ = ("_receiver", "running")

    def __init__(
        self, origin: RequestContext, running: RunningTask, receiver: TaskReceiver
    ) -> None:
        super().__init__(origin.session, origin.request_id, origin.request, running.cancel_scope)
        #: The task this context runs: its id, status and scope.
        self.running = running
        self._receiver = receiver

    @property
    def task_id(self) -> str:
        """The id of the task being run."""
        return self.running.task_id

    def _related(self, message: M) -> M:
        from .receiver import related_task_meta

        meta = message.meta if isinstance(message.meta, dict) else None
        return msgspec.structs.replace(message, meta=related_task_meta(self.task_id, meta))

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        token = self.progress_token
        if token is None:
            return
        await self.notify(
            ProgressNotification(
                progress_token=token, progress=progress, total=total, message=message
            )
        )

    async def notify(self, notification: Notification) -> None:
        if self.session.closed.is_set():
            log.debug("task %s: session ended, %s dropped", self.task_id, notification.METHOD)
            return
        await self.session.notify(self._related(notification), related=self.request_id)

    async def send_request(
        self,
        request: Request[ResultT],
        on_id: Callable[[RequestId], object] | None = None,
        **options: Unpack[RequestOptions],
    ) -> ResultT:
        """Send ``request`` to the requestor for the task (``on_id``: called with its id, as
        :meth:`Session.request <mcptrio.runtime.session.Session.request>` does)."""
        related = self._receiver.result_stream(self.task_id, self.session) or self.request_id
        async with self.running.waiting_for_input():
            return await self.session.request(
                self._related(request), **options, related=related, on_id=on_id
            )
