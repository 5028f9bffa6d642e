"""The checks of cancellation, both ways, and of timeouts.

A call the client gives up on (its cancel scope left, or its ``timeout=`` passed) must
interrupt the server's handler and leave the session serving; a request the server gives up
on must interrupt the client's handler the same way.
"""

from __future__ import annotations

import trio

from ...client import Client, Handlers
from ...protocol.errors import RequestTimeout
from ...protocol.types import CreateMessageRequest, CreateMessageResult
from ...runtime.context import RequestContext
from .outcomes import expect_equal, failure_of, text_of
from .trial import Trial

__all__ = [
    "client_cancel_interrupts_the_handler",
    "client_timeout_raises_and_interrupts_the_handler",
    "server_timeout_interrupts_the_client_handler",
]


async def client_cancel_interrupts_the_handler(trial: Trial) -> None:
    """Leaving the cancel scope of a call in flight cancels the server's handler at its next
    checkpoint, promptly (it never returns), and the session carries on: the next call on the
    same client gets its own answer."""
    witness = trial.witness
    async with trial.client() as client:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "hold", {"key": "cancelled"})
                trial.step("waiting for the handler to start")
                await witness.entered("cancelled").wait()
                trial.step("leaving the call's cancel scope")
                scope.cancel()
        expect_equal(scope.cancelled_caught, True, "the call was left by its cancel scope")
        with trial.within(trial.promptly, "the handler being cancelled"):
            await witness.ended("cancelled").wait()
        expect_equal(witness.outcomes["cancelled"], "cancelled", "how the handler ended")
        await _call_again(trial, client)


async def client_timeout_raises_and_interrupts_the_handler(trial: Trial) -> None:
    """A call's ``timeout=`` passing raises ``RequestTimeout`` in the caller and cancels the
    server's handler, promptly; the session carries on."""
    witness = trial.witness
    async with trial.client() as client:
        trial.step("calling with a timeout")
        await failure_of(
            lambda: client.call_tool("hold", {"key": "timed out"}, timeout=trial.short),
            (RequestTimeout,),
            "a call past its timeout",
        )
        with trial.within(trial.promptly, "the handler being cancelled"):
            await witness.ended("timed out").wait()
        expect_equal(witness.outcomes["timed out"], "cancelled", "how the handler ended")
        await _call_again(trial, client)


async def server_timeout_interrupts_the_client_handler(trial: Trial) -> None:
    """A sampling request the server gives up on (its ``timeout`` passes) cancels the client's
    sampling handler, promptly, and the server's handler carries on with ``RequestTimeout``."""
    entered, cancelled = trio.Event(), trio.Event()

    async def sample_slowly(
        ctx: RequestContext, request: CreateMessageRequest
    ) -> CreateMessageResult:
        entered.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()

    async with trial.client(handlers=Handlers(sampling=sample_slowly)) as client:
        trial.step("calling the tool that gives up on sampling")
        answer = await client.call_tool("ask_and_give_up", {"after": trial.short})
        expect_equal(text_of(answer), "gave up", "what the tool did past its timeout")
        with trial.within(trial.promptly, "the client's sampling handler being cancelled"):
            await cancelled.wait()
        expect_equal(entered.is_set(), True, "the sampling request reached the client")


async def _call_again(trial: Trial, client: Client) -> None:
    trial.step("calling again on the same client")
    expect_equal(text_of(await client.call_tool("echo", {"text": "after"})), "after", "echo")
