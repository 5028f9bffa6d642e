"""The standalone GET stream of a handshake-era session is kept for the session's life: a
stream the server opened and later lost (its worker killed or restarted) is opened again
however often that happens; attempts that get no stream at all back off, up to the longest
delay, and go at once when a POST of the session is answered (the server is reachable again)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import trio
import trio.testing
from fake_server import Cut, FakeExchange, FakeRequest
from test_streamable_client import FakeMcp, _sse_head, open_fake_client

from mcptrio.protocol.sse import encode_event


def _note(text: str) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": text},
        }
    )


async def test_a_standalone_stream_lost_more_often_than_the_attempts_allow_is_opened_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gets: list[float] = []

    async def lost_again_and_again(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if request.method != "GET":
            return False
        gets.append(trio.current_time())
        await exchange.start(200, _sse_head())
        if len(gets) <= 8:
            # Opened, silent a while, then cut: what a client sees when each worker that held
            # its stream is killed in turn (no event, so no cursor either).
            await trio.sleep(3)
            raise Cut
        await exchange.send(encode_event(_note("still here")))
        await trio.sleep_forever()
        return True

    heard = trio.Event()
    logged: list[str] = []

    def on_note(session: Any, notification: Any) -> None:
        logged.append(notification.data)
        heard.set()

    with trio.fail_after(120):
        async with open_fake_client(
            FakeMcp(lost_again_and_again), reconnect_delay=1.0, max_reconnect_attempts=3
        ) as (_, client):
            client.session._handle_notification = on_note
            await heard.wait()
    assert logged == ["still here"]
    # Each stream that was opened resets the backoff: the next attempt waits the base delay.
    delays = [round(b - a, 1) for a, b in itertools.pairwise(gets)]
    assert delays == [4.0] * 8


async def test_a_standalone_stream_never_answered_backs_off_and_keeps_trying(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gets: list[float] = []

    async def refused(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if request.method != "GET":
            return False
        gets.append(trio.current_time())
        await exchange.respond(503)
        return True

    with trio.fail_after(300):
        async with open_fake_client(
            FakeMcp(refused), reconnect_delay=1.0, max_reconnect_attempts=3
        ) as (_, client):
            await trio.sleep(150)
            await client.ping()
    delays = [round(b - a, 1) for a, b in itertools.pairwise(gets)]
    # Past max_reconnect_attempts it still tries, at most every max_delay (30 s by default).
    assert delays[:7] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


async def test_a_standalone_stream_backing_off_goes_at_once_when_a_post_is_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    gets: list[float] = []
    back = trio.Event()

    async def down_then_back(
        fake: FakeMcp, request: FakeRequest, exchange: FakeExchange, message: dict[str, Any]
    ) -> bool:
        if request.method != "GET":
            return False
        gets.append(trio.current_time())
        if not back.is_set():
            await exchange.respond(503)
            return True
        await exchange.start(200, _sse_head())
        await exchange.send(encode_event(_note("back")))
        await trio.sleep_forever()
        return True

    heard = trio.Event()

    def on_note(session: Any, notification: Any) -> None:
        heard.set()

    with trio.fail_after(120):
        async with open_fake_client(
            FakeMcp(down_then_back), reconnect_delay=1.0, max_reconnect_attempts=3
        ) as (_, client):
            client.session._handle_notification = on_note
            # GETs at 0, 1, 3, 7 and 15 s; the next would wait 16 s more.
            await trio.sleep(20)
            back.set()
            answered_at = trio.current_time()
            await client.ping()
            await heard.wait()
    assert gets[-1] - answered_at < 0.5
