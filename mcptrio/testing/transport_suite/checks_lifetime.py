"""The checks of a connection's lifetime: closing it, half-closing it, the server going away,
and a peer that stops reading while other sessions of the same server go on."""

from __future__ import annotations

from functools import partial

import trio

from ...client import Client, NotificationCallbacks
from ...protocol.errors import ConnectionClosed, McpError
from ...protocol.types import LoggingMessageNotification
from .outcomes import expect_equal, failure_of, text_of
from .trial import Trial

__all__ = [
    "closing_the_client_ends_its_session",
    "half_close_ends_the_session",
    "server_going_away_fails_pending_calls",
    "stalled_peer_holds_up_no_other_session",
]


async def closing_the_client_ends_its_session(trial: Trial) -> None:
    """Leaving the client's block while a call is in flight ends the session on the server:
    the handler is cancelled and the pending call fails with ``ConnectionClosed``, both
    promptly, and the server is left with the sessions it had before the client came (another
    client came and went first, so that what a server keeps for any client, such as the
    stateless era's shared session over HTTP, is counted in)."""
    witness = trial.witness
    trial.step("connecting a first client")
    async with trial.client() as first:
        expect_equal(text_of(await first.call_tool("echo", {"text": "hi"})), "hi", "echo")
    before = len(trial.server.session_states())
    pending = _PendingCalls((ConnectionClosed,))
    async with trio.open_nursery() as nursery:
        trial.step("connecting")
        async with trial.client() as client:
            pending.start(nursery, client, "closed")
            trial.step("waiting for the handler to start")
            await witness.entered("closed").wait()
            trial.step("closing the client")
        with trial.within(trial.promptly, "the handler ending once the client closed"):
            await witness.ended("closed").wait()
        with trial.within(trial.promptly, "the pending call failing once the client closed"):
            await pending.all_failed.wait()
    expect_equal(witness.outcomes["closed"], "cancelled", "how the handler ended")
    trial.step(f"waiting for the server to be back to {before} session(s)")
    # No event marks a session's end on the server's side: its count is polled.
    while len(trial.server.session_states()) > before:  # noqa: ASYNC110
        await trio.sleep(0.01)


async def half_close_ends_the_session(trial: Trial) -> None:
    """Ending the client's sending direction alone (it still reads) ends the session on the
    server: the handler in flight is cancelled and the server closes its side, so the
    client's pending call fails with ``ConnectionClosed``, both promptly, instead of waiting
    forever."""
    half_close = trial.transport.half_close
    assert half_close is not None
    witness = trial.witness
    pending = _PendingCalls((ConnectionClosed,))
    async with trial.client() as client, trio.open_nursery() as nursery:
        pending.start(nursery, client, "half-closed")
        trial.step("waiting for the handler to start")
        await witness.entered("half-closed").wait()
        trial.step("half-closing")
        await half_close(client)
        with trial.within(trial.promptly, "the handler ending after the half-close"):
            await witness.ended("half-closed").wait()
        with trial.within(trial.promptly, "the pending call failing after the half-close"):
            await pending.all_failed.wait()
    expect_equal(witness.outcomes["half-closed"], "cancelled", "how the handler ended")


async def server_going_away_fails_pending_calls(trial: Trial) -> None:
    """When the server goes away, every call pending on it fails with the error the transport
    documents (``ConnectionClosed`` unless it says otherwise), promptly, and so does the next
    call; no call waits forever."""
    errors = trial.transport.server_gone_errors
    witness = trial.witness
    pending = _PendingCalls(errors)
    async with trial.client() as client:
        async with trio.open_nursery() as nursery:
            for key in ("gone 1", "gone 2", "gone 3"):
                pending.start(nursery, client, key)
                trial.step(f"waiting for handler {key!r} to start")
                await witness.entered(key).wait()
            trial.stop_server()
            with trial.within(trial.promptly, "the pending calls failing once the server left"):
                await pending.all_failed.wait()
        with trial.within(trial.promptly, "a call failing after the server went away"):
            await failure_of(
                lambda: client.call_tool("echo", {"text": "anyone?"}),
                errors,
                "a call after the server went away",
            )


async def stalled_peer_holds_up_no_other_session(trial: Trial) -> None:
    """A client that stops reading (its notification callback blocks the reader) while the
    server floods it with log messages holds back that handler, through every bounded buffer
    in between, and nothing else: another client of the same server is served meanwhile.
    Once the stalled client reads again, every message arrives, in order, then the answer."""
    witness = trial.witness
    count, size = 1000, 16384
    reading, all_received, answered = trio.Event(), trio.Event(), trio.Event()
    received: list[int] = []

    async def stall_then_count(message: LoggingMessageNotification) -> None:
        if not received:
            received.append(0)
            await reading.wait()
        else:
            received.append(len(message.data))
        if len(received) == count:
            all_received.set()

    stalling = NotificationCallbacks(on_log=stall_then_count)
    answers: list[str] = []
    async with (
        trial.client(notifications=stalling) as stalled,
        trial.client() as other,
        trio.open_nursery() as nursery,
    ):

        async def flood() -> None:
            arguments = {"key": "flood", "count": count, "size": size}
            answers.append(text_of(await stalled.call_tool("flood", arguments)))
            answered.set()
            all_received.set()

        nursery.start_soon(flood)
        trial.step("waiting for the flood to be held back")
        await _until_held_back(trial, "flood")
        if witness.sent["flood"] >= count:
            raise AssertionError(f"the server sent all {count} messages to a stalled client")
        for turn in range(3):
            with trial.within(trial.promptly, f"a call of the other client ({turn + 1})"):
                text = f"meanwhile {turn}"
                echoed = text_of(await other.call_tool("echo", {"text": text}))
            expect_equal(echoed, text, "the other client's answer")
        if answers:
            raise AssertionError("the flood was answered while its client read nothing")
        reading.set()
        trial.step("waiting for the rest of the flood once the stalled client reads again")
        await all_received.wait()
        with trial.within(trial.promptly, "waiting for the answer after the last message"):
            await answered.wait()
    expect_equal(answers, [f"flooded {count}"], "the flood's answer")
    expect_equal(received, [0] + [size] * (count - 1), "the log messages, in order")


class _PendingCalls:
    """Calls of ``hold``, which never answers: each must fail with one of ``errors``, and
    ``all_failed`` is set once every one started has."""

    def __init__(self, errors: tuple[type[McpError], ...]) -> None:
        self.errors = errors
        self.started = 0
        self.failures: list[McpError] = []
        self.all_failed = trio.Event()

    def start(self, nursery: trio.Nursery, client: Client, key: str) -> None:
        self.started += 1
        nursery.start_soon(self._call, client, key)

    async def _call(self, client: Client, key: str) -> None:
        call = partial(client.call_tool, "hold", {"key": key})
        self.failures.append(await failure_of(call, self.errors, f"the pending call {key!r}"))
        if len(self.failures) == self.started:
            self.all_failed.set()


async def _until_held_back(trial: Trial, key: str) -> None:
    """Wait until the flooding handler ``key`` has sent something and then nothing more for a
    while (or everything: the check then fails)."""
    witness = trial.witness
    await witness.sending(key).wait()
    last = -1
    while witness.sent[key] != last:
        last = witness.sent[key]
        await trio.sleep(trial.short)
