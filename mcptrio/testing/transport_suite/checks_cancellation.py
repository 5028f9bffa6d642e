"""The checks of cancellation, both ways, and of timeouts.

A call the client gives up on (its cancel scope left, or its ``timeout=`` passed) must
interrupt the server's handler and leave the session serving; a request the server gives up
on must interrupt the client's handler the same way.
"""

from __future__ import annotations

import trio

from ...client import Handlers
from ...protocol.errors import RequestTimeout
from ...protocol.types import CreateMessageRequest, CreateMessageResult
from ...runtime.context import RequestContext
from .outcomes import failure_of, text_of
from .trial import Trial

__all__ = [
    "client_cancel_interrupts_the_handler",
    "client_timeout_raises_and_interrupts_the_handler",
    "server_timeout_interrupts_the_client_handler",
]


async def client_cancel_interrupts_the_handler(trial: Trial) -> None:
    """Leaving the cancel scope of a call in flight cancels the server's handler at its next
    checkpoint (it never returns), and the session carries on: the next call on the same
    client gets its own answer."""
    witness = trial.witness
    async with trial.client() as client:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "hold", {"key": "cancelled"})
                trial.step("waiting for the handler to start")
                await witness.entered("cancelled").wait()
                trial.step("leaving the call's cancel scope")
                scope.cancel()
        assert scope.cancelled_caught
        trial.step("waiting for the handler to be cancelled")
        await witness.ended("cancelled").wait()
        assert witness.outcomes["cancelled"] == "cancelled"
        trial.step("calling again on the same client")
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"


async def client_timeout_raises_and_interrupts_the_handler(trial: Trial) -> None:
    """A call's ``timeout=`` passing raises ``RequestTimeout`` in the caller and cancels the
    server's handler; the session carries on."""
    witness = trial.witness
    async with trial.client() as client:
        trial.step("calling with a timeout")
        await failure_of(
            lambda: client.call_tool("hold", {"key": "timed out"}, timeout=trial.short),
            (RequestTimeout,),
            "a call past its timeout",
        )
        trial.step("waiting for the handler to be cancelled")
        await witness.ended("timed out").wait()
        assert witness.outcomes["timed out"] == "cancelled"
        trial.step("calling again on the same client")
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"


async def server_timeout_interrupts_the_client_handler(trial: Trial) -> None:
    """A sampling request the server gives up on (its ``timeout`` passes) cancels the client's
    sampling handler, and the server's handler carries on with ``RequestTimeout``."""
    entered, cancelled = trio.Event(), trio.Event()

    async def sample_slowly(
        ctx: RequestContext, request: CreateMessageRequest
    ) -> CreateMessageResult:
        entered.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async with trial.client(handlers=Handlers(sampling=sample_slowly)) as client:
        trial.step("calling the tool that gives up on sampling")
        answer = await client.call_tool("ask_and_give_up", {"after": trial.short})
        assert text_of(answer) == "gave up"
        assert entered.is_set()
        trial.step("waiting for the sampling handler to be cancelled")
        await cancelled.wait()
