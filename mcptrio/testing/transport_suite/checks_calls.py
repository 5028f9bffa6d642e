"""The checks of calls and what they carry: concurrency, ordering, large and oversized
messages, the server's requests to the client.

Each is a plain async function of a :class:`~.trial.Trial`; :mod:`.catalogue` lists them.
"""

from __future__ import annotations

from typing import Any

import trio

from ...client import Client, Handlers, NotificationCallbacks
from ...protocol.errors import ConnectionClosed
from ...protocol.revisions import revision_of
from ...protocol.types import LoggingMessageNotification, TextContent
from ..scripted import ScriptedElicitation, ScriptedSampling, roots
from .outcomes import expect_equal, failure_of, text_of
from .subject import Oversized
from .suite_server import digest, text_of_size
from .trial import Trial

__all__ = [
    "concurrent_calls_get_their_own_answers",
    "large_messages_arrive_intact",
    "notifications_arrive_in_order_before_the_result",
    "oversized_answer_fails_its_call",
    "oversized_request_is_refused",
    "server_requests_reach_the_client_and_come_back",
    "slow_reader_gets_every_notification_then_the_answer",
]

#: Characters in a large message: past 1 MiB, and under the default 4 MiB limit once encoded.
LARGE = 1_250_000
#: How far past the limit an oversized message goes.
PAST_LIMIT = 64 * 1024


async def concurrent_calls_get_their_own_answers(trial: Trial) -> None:
    """Many calls in flight on one connection each get their own answer, whatever order the
    answers come in: the server runs them at once (each waits for all to arrive) and answers
    them in the reverse order of the requests."""
    count = 16
    answers: dict[int, str] = {}
    async with trial.client() as client:

        async def call(index: int) -> None:
            arguments = {"key": "race", "index": index, "count": count}
            answers[index] = text_of(await client.call_tool("in_turn", arguments))

        trial.step(f"waiting for the answers to {count} concurrent calls")
        async with trio.open_nursery() as nursery:
            for index in range(count):
                nursery.start_soon(call, index)
    expect_equal(answers, {i: f"race {i}" for i in range(count)}, "the answers, by call")
    expect_equal(
        trial.witness.finished,
        [f"race {i}" for i in reversed(range(count))],
        "the order the server answered in",
    )


async def notifications_arrive_in_order_before_the_result(trial: Trial) -> None:
    """The progress notifications and log messages a handler sends reach the client in the
    order it sent them, all before its answer."""
    count = 8
    seen: list[tuple[str, Any]] = []

    def on_log(message: LoggingMessageNotification) -> None:
        seen.append(("log", message.data))

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(("progress", progress))

    async with trial.client(notifications=NotificationCallbacks(on_log=on_log)) as client:
        trial.step("calling a tool that notifies as it goes")
        result = await client.call_tool("chatter", {"count": count}, on_progress=on_progress)
        seen.append(("answer", text_of(result)))
    expected: list[tuple[str, Any]] = []
    for step in range(1, count + 1):
        expected += [("progress", step), ("log", f"line {step}")]
    expected.append(("answer", f"said {count}"))
    expect_equal(seen, expected, "what reached the client, in order")


async def slow_reader_gets_every_notification_then_the_answer(trial: Trial) -> None:
    """A handler that sends more notifications than the buffers between it and the client
    hold (16 MiB of log messages) to a client that pauses a moment at the first one and then
    reads on: the handler is held back meanwhile, nothing is lost, and every message arrives,
    in order, then the answer, promptly."""
    count, size = 1000, 16384
    witness = trial.witness
    received: list[int] = []
    answers: list[str] = []
    all_received, answered = trio.Event(), trio.Event()
    held_at: list[int] = []

    async def on_log(message: LoggingMessageNotification) -> None:
        if not received:
            await trio.sleep(trial.short)
            held_at.append(witness.sent["slow"])
        received.append(len(message.data))
        if len(received) == count:
            all_received.set()

    async with trial.client(notifications=NotificationCallbacks(on_log=on_log)) as client:

        async def flood() -> None:
            arguments = {"key": "slow", "count": count, "size": size}
            answers.append(text_of(await client.call_tool("flood", arguments)))
            answered.set()
            all_received.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood)
            trial.step(f"waiting for {count} log messages")
            await all_received.wait()
            with trial.within(trial.promptly, "waiting for the answer after the last message"):
                await answered.wait()
    if held_at and held_at[0] >= count:
        raise AssertionError(f"the server sent all {count} messages while its client paused")
    expect_equal(answers, [f"flooded {count}"], "the answer")
    expect_equal(received, [size] * count, "the log messages received before the answer")


async def large_messages_arrive_intact(trial: Trial) -> None:
    """A request and an answer of over 1 MiB, holding every kind of character JSON escapes
    or UTF-8 encodes in several bytes, arrive whole and unchanged."""
    large = text_of_size(LARGE)
    async with trial.client() as client:
        trial.step("sending a large request")
        measured = text_of(await client.call_tool("measure", {"text": large}))
        expect_equal(measured, digest(large), "the length and SHA-256 the server measured")
        trial.step("waiting for a large answer")
        blob = text_of(await client.call_tool("blob", {"size": LARGE}))
        if blob != large:
            where = _first_difference(blob, large)
            raise AssertionError(f"the large answer differs from character {where} on")
        trial.step("calling after the large messages")
        expect_equal(text_of(await client.call_tool("echo", {"text": "small"})), "small", "echo")


async def oversized_request_is_refused(trial: Trial) -> None:
    """A request over the transport's size limit fails its call with the error the transport
    documents, and the session carries on (or, where the transport ends the connection
    instead, every later call fails with ``ConnectionClosed``)."""
    transport = trial.transport
    assert transport.max_frame_size is not None
    oversized = text_of_size(transport.max_frame_size + PAST_LIMIT, plain=True)
    outcome = transport.oversized_request
    async with trial.client() as client:
        trial.step("sending a request over the size limit")
        await failure_of(
            lambda: client.call_tool("measure", {"text": oversized}),
            (outcome.error,),
            "a request over the size limit",
        )
        await _after_oversized(trial, client, outcome)


async def oversized_answer_fails_its_call(trial: Trial) -> None:
    """An answer over the transport's size limit fails its call with the error the transport
    documents, and the session carries on (or ends, as for an oversized request)."""
    transport = trial.transport
    assert transport.max_frame_size is not None
    size = transport.max_frame_size + PAST_LIMIT
    outcome = transport.oversized_answer
    async with trial.client() as client:
        trial.step("waiting for an answer over the size limit")
        await failure_of(
            lambda: client.call_tool("blob", {"size": size, "plain": True}),
            (outcome.error,),
            "an answer over the size limit",
        )
        await _after_oversized(trial, client, outcome)


async def _after_oversized(trial: Trial, client: Client, outcome: Oversized) -> None:
    trial.step("calling after the oversized message")
    if outcome.ends_connection:
        await failure_of(
            lambda: client.call_tool("echo", {"text": "after"}),
            (ConnectionClosed,),
            "a call after the connection ended",
        )
    else:
        answer = text_of(await client.call_tool("echo", {"text": "after"}))
        expect_equal(answer, "after", "a call after the oversized message")


async def server_requests_reach_the_client_and_come_back(trial: Trial) -> None:
    """A handler's sampling, elicitation (where the revision has it) and roots requests reach
    the client's handlers, and their answers come back to the handler."""
    sampling = ScriptedSampling("a sampled reply")
    elicitation = ScriptedElicitation({"name": "Ada"})
    handlers = Handlers(sampling=sampling, elicitation=elicitation, roots=roots("file:///suite"))
    async with trial.client(handlers=handlers) as client:
        has_elicitation = revision_of(client.protocol_version).elicitation
        trial.step("calling the tool that asks the client")
        answer = text_of(await client.call_tool("ask_client"))
    expected = ["sampled a sampled reply"]
    if has_elicitation:
        expected.append("elicited Ada")
    expected.append("roots file:///suite")
    expect_equal(answer, "; ".join(expected), "what the handler got from the client")
    asked = [request.messages[0].content for request in sampling.requests]
    expect_equal(asked, [TextContent(text="Say something")], "the sampling the client was asked")
    expect_equal(
        [request.message for request in elicitation.requests],
        ["Your name?"] if has_elicitation else [],
        "the elicitations the client got",
    )


def _first_difference(actual: str, expected: str) -> int:
    return next(
        (i for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b),
        min(len(actual), len(expected)),
    )
