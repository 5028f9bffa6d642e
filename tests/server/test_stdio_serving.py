"""Serving over stdio ends when stdin ends, once the requests already read have answered (within
a grace period)."""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing
from piped_messages import INITIALIZE, INITIALIZED, lines, tool_call

import mcptrio
from mcptrio.server.stdio_serving import END_OF_INPUT_GRACE, serve_stdio_session


def slow_server() -> mcptrio.Server:
    server = mcptrio.Server("slow")

    @server.tool
    async def wait(seconds: float) -> str:
        await trio.sleep(seconds)
        return f"waited {seconds:g} s"

    return server


async def serve_piped(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], float]:
    """Serve ``messages`` piped in, then the end of input; what the server wrote, and how long
    it served after the end of input."""
    to_server, stdin = trio.testing.memory_stream_one_way_pair()
    stdout, from_server = trio.testing.memory_stream_one_way_pair()
    written = bytearray()

    async def read_all() -> None:
        while data := await from_server.receive_some():
            written.extend(data)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read_all)
        async with trio.open_nursery() as serving:
            serving.start_soon(
                lambda: serve_stdio_session(slow_server(), stdin=stdin, stdout=stdout)
            )
            await to_server.send_all(lines(*messages))
            await to_server.aclose()
            ended_input = trio.current_time()
        served_after = trio.current_time() - ended_input
    return [json.loads(line) for line in written.splitlines()], served_after


async def test_end_of_input_lets_the_requests_in_flight_answer(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(30):
        answers, _ = await serve_piped(
            [
                INITIALIZE,
                INITIALIZED,
                tool_call(2, "wait", seconds=1),
                tool_call(3, "wait", seconds=2),
            ]
        )
    results = {answer["id"]: answer.get("result") for answer in answers}
    assert results[2]["content"] == [{"type": "text", "text": "waited 1 s"}]
    assert results[3]["content"] == [{"type": "text", "text": "waited 2 s"}]


async def test_a_request_that_outlasts_the_grace_is_cut_when_it_ends(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(300):
        answers, served_after = await serve_piped(
            [
                INITIALIZE,
                INITIALIZED,
                tool_call(2, "wait", seconds=1),
                tool_call(3, "wait", seconds=120),
            ]
        )
    assert [answer["id"] for answer in answers] == [1, 2]
    assert END_OF_INPUT_GRACE <= served_after < END_OF_INPUT_GRACE + 1


async def test_with_nothing_in_flight_the_end_of_input_ends_the_session_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with trio.fail_after(30):
        answers, served_after = await serve_piped([INITIALIZE, INITIALIZED])
    assert [answer["id"] for answer in answers] == [1]
    assert served_after < 0.1
