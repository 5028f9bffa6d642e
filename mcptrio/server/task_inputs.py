"""What a running 2026-07-28 task asks its client, and what it does instead of talking to it.

A task of the tasks extension (:mod:`.task_extension`) asks for input as any handler does
(``ctx.elicit``, ``ctx.sample``, ``ctx.ask``); its asks go to its :class:`TaskInputs`: each gets a
key unique for the task's lifetime, the task moves to ``input_required`` with every outstanding
ask in ``inputRequests``, and ``tasks/update`` (or, from another worker, the task's record)
brings the answers. Its progress becomes its status message and its log messages are dropped
(:class:`ExtensionTaskContext`). :class:`BeginTask` ends the run in the request of a tool that
asks for input before its task begins.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import msgspec
import trio

from ..protocol.base import Notification, Request, Result
from ..protocol.errors import RequestTimeout
from ..protocol.fitting import fit_outgoing
from ..protocol.request_meta import RequestMeta
from ..protocol.types import InputRequest
from ..runtime.context import RequestContext
from ..stores.task_store import TaskStore
from ..tasks import RunningTask
from .input_rounds import ask_key, typed_answer

if TYPE_CHECKING:
    from ..runtime.outgoing import RequestOptions

__all__ = ["BeginTask", "ExtensionTaskContext", "TaskInputs"]

log = logging.getLogger("mcptrio.server")
ResultT = TypeVar("ResultT", bound=Result)


class BeginTask(BaseException):
    """Unwinds a handler that called ``ctx.begin_task()`` in its request: the task takes over.

    A ``BaseException``, as :class:`~.input_rounds.InputRequired` is, so that a handler's
    ``except Exception`` does not swallow it.
    """


class TaskInputs:
    """One running task's requests for input and the answers ``tasks/update`` brings (see the
    module docstring); lives as long as the task runs in this process."""

    __slots__ = (
        "_answers",
        "_asked",
        "_changed",
        "_outstanding",
        "_store",
        "_used",
        "meta",
        "running",
    )

    def __init__(
        self,
        running: RunningTask,
        store: TaskStore,
        meta: RequestMeta,
        seeded: Mapping[str, Any],
    ) -> None:
        self.running = running
        self._store = store
        #: The ``_meta`` of the request that created the task (the client's capabilities).
        self.meta = meta
        # key -> the answer as it came; seeded with those the creating request carried.
        self._answers: dict[str, Any] = dict(seeded)
        # key -> (the ask in wire form, the result type its answer must fit).
        self._outstanding: dict[str, tuple[InputRequest, type[Result]]] = {}
        self._used: set[str] = set(seeded)
        self._asked = 0
        self._changed = trio.Event()

    @property
    def waiting(self) -> bool:
        """Whether some ask waits for its answer."""
        return bool(self._outstanding)

    def next_key(self, method: str) -> str:
        """A key not used in this task yet (keys are unique over a task's lifetime)."""
        while True:
            self._asked += 1
            key = ask_key(method, self._asked)
            if key not in self._used:
                return key

    async def ask(
        self, requests: Mapping[str, Request[Any]], *, timeout: float | None = None
    ) -> dict[str, Result]:
        """Answers to ``requests`` by key: at once for those answered already, else once
        ``tasks/update`` brings them (the task is ``input_required`` meanwhile).

        Waits at most ``timeout`` seconds (``None``: until the task's TTL), then raises
        :class:`~mcptrio.protocol.errors.RequestTimeout`, its asks withdrawn.
        """
        found: dict[str, Result] = {}
        for key, request in requests.items():
            answer = self._typed(key, request.RESULT)
            if answer is not None:
                found[key] = answer
        missing = {key: r for key, r in requests.items() if key not in found}
        if not missing:
            return found
        for key, request in missing.items():
            wire = InputRequest(
                method=request.METHOD,  # type: ignore[arg-type]
                params=msgspec.to_builtins(fit_outgoing(request, self.meta.revision)),
            )
            self._outstanding[key] = (wire, request.RESULT)
            self._used.add(key)
            self._answers.pop(key, None)
        with trio.move_on_after(math.inf if timeout is None else timeout) as waited:
            try:
                await self._publish()
                async with trio.open_nursery() as nursery:
                    # Answers that another worker took (tasks/update landing there) come
                    # through the store; those taken here come straight through deliver().
                    nursery.start_soon(self._answers_from_store)
                    while any(key in self._outstanding for key in missing):
                        await self._changed.wait()
                    nursery.cancel_scope.cancel()
            finally:
                for key in missing:
                    self._outstanding.pop(key, None)
        if waited.cancelled_caught:
            # Withdrawn: the record shows only the asks still waiting.
            if self._outstanding:
                await self._publish()
            else:
                await self.running.set_status("working")
            raise RequestTimeout(
                f"No answer to {', '.join(missing)} within {timeout} s (task"
                f" {self.running.task_id})"
            )
        for key, request in missing.items():
            answer = self._typed(key, request.RESULT)
            assert answer is not None  # deliver() only takes answers that fit
            found[key] = answer
        if not self._outstanding:
            await self.running.set_status("working")
        return {key: found[key] for key in requests}

    def _typed(self, key: str, result_type: type[Result]) -> Result | None:
        return typed_answer(self._answers.get(key), result_type)

    async def deliver(self, responses: Mapping[str, Any]) -> int:
        """Take the answers to outstanding asks (others are ignored); how many were taken."""
        taken = 0
        for key, raw in responses.items():
            asked = self._outstanding.get(key)
            if asked is None:
                continue
            try:
                msgspec.convert(raw, asked[1])
            except msgspec.ValidationError:
                log.info("task %s: answer to %r does not fit, ignored", self.running.task_id, key)
                continue
            self._answers[key] = raw
            del self._outstanding[key]
            taken += 1
        if taken:
            self._changed.set()
            self._changed = trio.Event()
            if self._outstanding:
                await self._publish()
        return taken

    async def _answers_from_store(self) -> None:
        """Deliver the answers other workers write into the task's record, until cancelled."""
        task_id = self.running.task_id
        version = -1
        while True:
            record = await self._store.wait_for_change(task_id, version)
            if record is None or record.terminal:
                return
            version = record.version
            if record.input_responses:
                await self.deliver(msgspec.json.decode(record.input_responses))

    async def _publish(self) -> None:
        """Show every outstanding ask in the task's record (``input_required``)."""
        asks = {key: wire for key, (wire, _type) in self._outstanding.items()}
        await self.running.set_status(
            "input_required", None, input_requests=msgspec.json.encode(asks)
        )


class ExtensionTaskContext(RequestContext):
    """The request context of a 2026-07-28 task's work: the creating request's, with nothing
    sent about it (see the module docstring) and its asks going to the task's inputs."""

    __slots__ = ("inputs",)

    def __init__(self, origin: RequestContext, inputs: TaskInputs) -> None:
        super().__init__(
            origin.session, origin.request_id, origin.request, inputs.running.cancel_scope
        )
        self.inputs = inputs

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        # Not while the task waits for input: its status says so, with what it asks.
        if message is not None and not self.inputs.waiting:
            await self.inputs.running.set_status("working", message)

    async def notify(self, notification: Notification) -> None:
        log.debug("task %s: %s not sent", self.inputs.running.task_id, notification.METHOD)

    async def send_request(
        self, request: Request[ResultT], **options: Unpack[RequestOptions]
    ) -> ResultT:
        key = self.inputs.next_key(request.METHOD)
        answers = await self.inputs.ask({key: request}, timeout=options.get("timeout"))
        return answers[key]  # type: ignore[return-value]
