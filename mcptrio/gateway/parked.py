"""Parked calls: a handshake-era upstream's questions put to a stateless-era client.

A stateless-era (2026-07-28) client is asked for input by ending its request with an
input-required result and answered in a retry, a new request; a handshake-era upstream asks in
a request of its own while the gateway's call to it waits. To join the two, a tool call from a
stateless-era client to a handshake-era upstream is *parked*: the upstream call runs as an actor
in the upstream connection's nursery, not in the downstream request's task, so that it outlives
the round that ends with the question:

1. the round starts the parked call (or finds it again: its id is in the keys of the answers the
   retry carries, :attr:`~mcptrio.server.Context.input_answers`) and waits on it;
2. the upstream asks: the question is kept under the key ``gateway.<id>.<n>`` and the round ends
   with an input-required result asking it (:meth:`~mcptrio.server.Context.ask`);
3. the client retries with the answer under that key: the round finds the parked call, hands the
   answer to the upstream, and waits again, until the upstream's result, which answers it.

A parked call waits for an answer at most :data:`ANSWER_TIMEOUT` seconds (then the upstream's
question is refused), and lives at most its upstream's ``timeout`` in all; cancelling the round
that waits on it (the client's ``notifications/cancelled``) cancels it, and the upstream sees
``notifications/cancelled``. A retry that finds no parked call (it ended, or the retry reached
another gateway process) starts the call again.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ..protocol.base import Request, Result
from ..protocol.errors import RequestTimeout
from ..protocol.types import CallToolResult, ClientCapabilities
from ..server.handler_context import HandlerContext

__all__ = ["ANSWER_TIMEOUT", "ParkedCall", "ParkedCalls"]

#: How long a parked call waits for a client's answer to one question.
ANSWER_TIMEOUT = 600.0
_PREFIX = "gateway."


class ParkedCall:
    """One upstream call waiting across a stateless-era client's rounds."""

    def __init__(self, call_id: str) -> None:
        self.id = call_id
        #: The round waiting on the call (``None`` between rounds).
        self.ctx: HandlerContext | None = None
        #: What the client declared in its latest round: only what it can answer is asked.
        self.client_capabilities: ClientCapabilities | None = None
        #: Questions not answered yet, by key.
        self.pending: dict[str, Request[Any]] = {}
        self.result: CallToolResult | None = None
        self.error: BaseException | None = None
        self.done = trio.Event()
        self._changed = trio.Event()
        self._answers: dict[str, Result] = {}
        self._answered: dict[str, trio.Event] = {}
        self._asked = 0
        self.scope = trio.CancelScope()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def ask(self, request: Request[Any]) -> Result:
        """The upstream's question: wait for the client's answer (in a later round)."""
        self._asked += 1
        key = f"{_PREFIX}{self.id}.{self._asked}"
        self.pending[key] = request
        answered = self._answered[key] = trio.Event()
        self._notify()
        with trio.move_on_after(ANSWER_TIMEOUT):
            await answered.wait()
            return self._answers.pop(key)
        self.pending.pop(key, None)
        raise RequestTimeout(f"No answer to {request.METHOD} within {ANSWER_TIMEOUT} s")

    def answer(self, key: str, result: Result) -> None:
        self.pending.pop(key, None)
        self._answers[key] = result
        self._answered.pop(key).set()

    async def wait_for_change(self) -> None:
        await self._changed.wait()

    async def run(
        self,
        call: Callable[[ParkedCall], Awaitable[CallToolResult]],
        timeout: float,
        forget: Callable[[], None],
    ) -> None:
        """The actor: make the upstream call, keep its outcome for the round that collects it."""
        try:
            with self.scope, trio.fail_after(timeout):
                self.result = await call(self)
        except Exception as exc:
            self.error = exc
        finally:
            self.done.set()
            self._notify()
        # Kept for the retry that collects it, if one comes.
        with trio.move_on_after(ANSWER_TIMEOUT):
            await trio.sleep_forever()
        forget()


class ParkedCalls:
    """The parked calls of one upstream connection, by id."""

    def __init__(self) -> None:
        self._calls: dict[str, ParkedCall] = {}

    def find(self, ctx: HandlerContext) -> ParkedCall | None:
        """The parked call a retry resumes (named in the keys of its answers)."""
        for key in ctx.input_answers:
            if key.startswith(_PREFIX):
                found = self._calls.get(key[len(_PREFIX) :].split(".", 1)[0])
                if found is not None:
                    return found
        return None

    def start(
        self,
        nursery: trio.Nursery,
        call: Callable[[ParkedCall], Awaitable[CallToolResult]],
        timeout: float,
    ) -> ParkedCall:
        parked = ParkedCall(secrets.token_urlsafe(12))
        self._calls[parked.id] = parked
        nursery.start_soon(parked.run, call, timeout, lambda: self.forget(parked))
        return parked

    def forget(self, parked: ParkedCall) -> None:
        self._calls.pop(parked.id, None)

    async def wait(self, ctx: HandlerContext, parked: ParkedCall) -> CallToolResult:
        """One round's part: pass on the answers it carries, ask what is still open (ending the
        round), or return the upstream's result."""
        parked.ctx = ctx
        parked.client_capabilities = ctx.client_capabilities
        try:
            while True:
                for key, request in list(parked.pending.items()):
                    # Raises InputRequired (ending this round) when the client has no answer yet.
                    answers = await ctx.ask({key: request})
                    parked.answer(key, answers[key])
                if parked.done.is_set():
                    self.forget(parked)
                    if parked.error is not None:
                        raise parked.error
                    assert parked.result is not None
                    return parked.result
                await parked.wait_for_change()
        except trio.Cancelled:
            # The client cancelled this round: the upstream call goes too.
            parked.scope.cancel()
            raise
        finally:
            parked.ctx = None
