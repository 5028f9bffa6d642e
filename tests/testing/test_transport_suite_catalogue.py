"""The transport suite's own rules: a record says why a check does not apply or fails, never
silently; a case that runs out of time says where; and each check fails against a transport
that breaks what it checks (a suite whose checks cannot fail would prove nothing)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.protocol.codec import CarriedResult
from mcptrio.protocol.revisions import Era
from mcptrio.runtime.transport import FailedRequest, Frame, Outgoing, Transport, TransportAbilities
from mcptrio.testing import IN_MEMORY, TransportUnderTest, transport_suite_params
from mcptrio.testing.transport_suite import SuiteCase, suite_cases
from mcptrio.transports.memory import memory_transport_pair


def case_of(transport: TransportUnderTest, check: str, era: Era = "handshake") -> SuiteCase:
    (case,) = [c for c in suite_cases(transport) if c.check.name == check and c.era == era]
    return case


def test_a_record_without_half_close_must_say_why() -> None:
    silent = replace(IN_MEMORY, lacks={})
    with pytest.raises(
        ValueError, match=r"has no half_close.*lacks\['half_close_ends_the_session'\]"
    ):
        suite_cases(silent)


def test_a_reason_for_no_check_or_era_is_refused() -> None:
    typo = replace(IN_MEMORY, known_bugs={"half_close_ends_the_sesion": "a typo"})
    with pytest.raises(ValueError, match="known_bugs names no check or era"):
        suite_cases(typo)


def test_skips_and_known_bugs_become_marks_with_their_reasons() -> None:
    record = replace(
        IN_MEMORY,
        lacks={**IN_MEMORY.lacks, "stateless": "handshake only"},
        known_bugs={
            "large_messages_arrive_intact": "a bug",
            "large_messages_arrive_intact/handshake": "a bug of the handshake era",
        },
    )
    params = {param.id: param for param in transport_suite_params(record)}
    (skip,) = params["in-memory-large_messages_arrive_intact-stateless"].marks
    assert skip.name == "skip" and skip.kwargs["reason"] == "in-memory (stateless): handshake only"
    (xfail,) = params["in-memory-large_messages_arrive_intact-handshake"].marks
    assert xfail.name == "xfail"
    assert xfail.kwargs == {"strict": True, "reason": "a bug of the handshake era"}
    assert not params["in-memory-concurrent_calls_get_their_own_answers-handshake"].marks


async def test_a_case_that_does_not_apply_refuses_to_run() -> None:
    case = case_of(IN_MEMORY, "half_close_ends_the_session")
    assert case.skip is not None and "no half-close" in case.skip
    with pytest.raises(RuntimeError, match="does not apply"):
        await case.run()


async def test_a_case_out_of_time_says_what_it_was_waiting_for(
    autojump_clock: trio.abc.Clock,
) -> None:
    @asynccontextmanager
    async def never_connects(address: Any, **options: Any) -> AsyncIterator[mcptrio.Client]:
        await trio.sleep_forever()
        yield  # type: ignore[misc]

    stuck = replace(IN_MEMORY, connect=never_connects, deadline=1.0)
    case = case_of(stuck, "closing_the_client_ends_its_session")
    with pytest.raises(
        AssertionError, match=r"within 1\.0 s: it was stuck connecting a first client"
    ):
        await case.run()


# ------------------------------------------------------------------ transports that break things


class Tampered:
    """The server's end of an in-memory pair, which drops incoming frames holding
    ``drop_incoming``, outgoing ones holding ``drop_outgoing``, and with ``keep_open`` never
    closes (the client is not told that the server went away)."""

    def __init__(
        self,
        inner: Transport,
        drop_incoming: bytes | None,
        drop_outgoing: bytes | None,
        keep_open: bool,
    ) -> None:
        self.inner = inner
        self.drop_incoming = drop_incoming
        self.drop_outgoing = drop_outgoing
        self.keep_open = keep_open

    def abilities(self) -> TransportAbilities:
        # Every frame goes through send, where the tampering is.
        return TransportAbilities()

    async def receive(self) -> Frame | FailedRequest | CarriedResult:
        while True:
            frame = await self.inner.receive()
            if not (
                self.drop_incoming and isinstance(frame, bytes) and self.drop_incoming in frame
            ):
                return frame

    async def send(self, frames: Sequence[Outgoing]) -> None:
        drop = self.drop_outgoing
        await self.inner.send([f for f in frames if drop is None or drop not in f.data])

    async def aclose(self) -> None:
        if not self.keep_open:
            await self.inner.aclose()


class TamperedListener:
    def __init__(self, server: mcptrio.Server, nursery: trio.Nursery, **tampering: Any) -> None:
        self.server = server
        self.nursery = nursery
        self.buffer = tampering.pop("buffer", 256)
        self.tampering = tampering

    async def accept(self) -> Transport:
        client_end, server_end = memory_transport_pair(buffer=self.buffer)
        tampered = Tampered(server_end, **self.tampering)
        await self.nursery.start(self.server.serve_session, tampered)
        return client_end


def tampered(
    *,
    drop_incoming: bytes | None = None,
    drop_outgoing: bytes | None = None,
    keep_open: bool = False,
    buffer: int = 256,
) -> TransportUnderTest:
    @asynccontextmanager
    async def serve(server: mcptrio.Server, era: Era) -> AsyncIterator[TamperedListener]:
        async with trio.open_nursery() as nursery:
            yield TamperedListener(
                server,
                nursery,
                drop_incoming=drop_incoming,
                drop_outgoing=drop_outgoing,
                keep_open=keep_open,
                buffer=buffer,
            )
            nursery.cancel_scope.cancel()

    @asynccontextmanager
    async def connect(listener: TamperedListener, **options: Any) -> AsyncIterator[mcptrio.Client]:
        async with mcptrio.open_client(await listener.accept(), **options) as client:
            yield client

    return replace(IN_MEMORY, name="tampered", serve=serve, connect=connect, deadline=5.0)


@pytest.mark.parametrize(
    ("check", "why"),
    [
        ("client_cancel_interrupts_the_handler", "not done within 2.0 s: the handler being"),
        ("client_timeout_raises_and_interrupts_the_handler", "the handler being cancelled"),
    ],
)
async def test_a_transport_losing_cancellations_fails(
    check: str, why: str, autojump_clock: trio.abc.Clock
) -> None:
    case = case_of(tampered(drop_incoming=b'"notifications/cancelled"'), check)
    with pytest.raises(AssertionError, match=why):
        await case.run()


async def test_a_transport_losing_log_messages_fails(autojump_clock: trio.abc.Clock) -> None:
    lossy = tampered(drop_outgoing=b'"notifications/message"')
    case = case_of(lossy, "notifications_arrive_in_order_before_the_result")
    with pytest.raises(AssertionError, match="what reached the client, in order"):
        await case.run()


async def test_a_transport_that_never_says_the_server_left_fails(
    autojump_clock: trio.abc.Clock,
) -> None:
    case = case_of(tampered(keep_open=True), "server_going_away_fails_pending_calls")
    left = r"not done within 2\.0 s: the pending calls failing once the server left"
    with pytest.raises(AssertionError, match=left):
        await case.run()


@pytest.mark.parametrize(
    "check",
    [
        "stalled_peer_holds_up_no_other_session",
        "slow_reader_gets_every_notification_then_the_answer",
    ],
)
async def test_a_transport_buffering_without_bound_fails(
    check: str, autojump_clock: trio.abc.Clock
) -> None:
    case = case_of(tampered(buffer=1_000_000), check)
    with pytest.raises(AssertionError, match="the server sent all 1000 messages"):
        await case.run()
