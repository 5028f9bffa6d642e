"""A 2025-03-26 batch over Streamable HTTP: the POST's stream ends with the batch's answers
however its members are run (answered at once, in actors, waiting for a slot) and whichever
of them end unanswered (cancelled).

A member answered before the others waits in the batch: it is owed until the batch's answers
go out, so the POST's task, which stops waiting for members the session no longer owes once it
has handed the batch over, keeps waiting for it.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
import trio
from test_streamable_http import (
    POST_HEADERS,
    call_body,
    initialize_body,
    messages_of,
    notification_body,
    serve,
    sse_events,
)

import mcptrio
from mcptrio.transports.http.endpoints.app import McpHttpApp


def batch_server(max_in_flight: int = 256, started: trio.Event | None = None) -> mcptrio.Server:
    server = mcptrio.Server("batches", max_in_flight=max_in_flight)
    started = trio.Event() if started is None else started

    @server.tool()
    async def eager(a: int) -> int:
        return a

    @server.tool()
    async def waits(a: int) -> int:
        await trio.lowlevel.checkpoint()
        return a

    @server.tool()
    async def blocks(a: int) -> int:
        started.set()
        await trio.sleep_forever()
        return a

    @server.tool()
    async def blocked() -> bool:
        await started.wait()
        return True

    return server


async def open_session(client: httpx2.AsyncClient, url: str) -> dict[str, str]:
    headers = dict(POST_HEADERS)
    answer = await client.post(url + "/mcp", content=initialize_body("2025-03-26"), headers=headers)
    headers["mcp-session-id"] = answer.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-03-26"
    await client.post(
        url + "/mcp", content=notification_body("notifications/initialized"), headers=headers
    )
    return headers


def batch_answer(response: httpx2.Response) -> list[Any]:
    """The batch's answers, whether they came as JSON or as the one message of an SSE stream
    (the server opens one for a POST still unanswered after a moment)."""
    if response.headers["content-type"].startswith("text/event-stream"):
        [answer] = messages_of(sse_events(response.content))
        assert isinstance(answer, list)
        return answer
    answer = response.json()
    assert isinstance(answer, list)
    return answer


def batch_of(names: list[str]) -> bytes:
    return b"[%s]" % b",".join(
        call_body(rid, name, {"a": rid}) for rid, name in enumerate(names, 2)
    )


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(["eager", "waits"], id="eager-then-waiting"),
        pytest.param(["waits", "eager"], id="waiting-then-eager"),
        pytest.param(["eager", "eager"], id="eager-only"),
    ],
)
async def test_a_batch_mixing_eager_and_waiting_tools_is_answered(names: list[str]) -> None:
    with trio.fail_after(10):
        async with (
            serve("builtin-h11", McpHttpApp(batch_server())) as url,
            httpx2.AsyncClient(timeout=5) as client,
        ):
            headers = await open_session(client, url)
            response = await client.post(url + "/mcp", content=batch_of(names), headers=headers)
            assert response.status_code == 200
            assert sorted(item["id"] for item in batch_answer(response)) == [2, 3]


async def test_a_batch_larger_than_max_in_flight_is_answered() -> None:
    # With one slot, the POST's task waits for it while the first member is answered.
    with trio.fail_after(10):
        async with (
            serve("builtin-h11", McpHttpApp(batch_server(max_in_flight=1))) as url,
            httpx2.AsyncClient(timeout=5) as client,
        ):
            headers = await open_session(client, url)
            batch = batch_of(["waits", "waits"])
            response = await client.post(url + "/mcp", content=batch, headers=headers)
            assert response.status_code == 200
            assert sorted(item["id"] for item in batch_answer(response)) == [2, 3]


async def test_a_batch_whose_member_is_cancelled_is_answered_with_the_others() -> None:
    # Member 2 blocks until cancelled (by another POST); member 3 is answered at once and
    # member 4 waits for member 2 to start: the batch's answer holds 3 and 4 only.
    started = trio.Event()
    with trio.fail_after(10):
        async with (
            serve("builtin-h11", McpHttpApp(batch_server(started=started))) as url,
            httpx2.AsyncClient(timeout=5) as client,
        ):
            headers = await open_session(client, url)
            answers: list[httpx2.Response] = []

            async def post() -> None:
                batch = batch_of(["blocks", "eager", "blocked"])
                answers.append(await client.post(url + "/mcp", content=batch, headers=headers))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(post)
                await started.wait()
                cancel = notification_body("notifications/cancelled", {"requestId": 2})
                await client.post(url + "/mcp", content=cancel, headers=headers)
            assert answers[0].status_code == 200
            assert sorted(item["id"] for item in batch_answer(answers[0])) == [3, 4]
