"""A keep-alive POST answered at once costs the server one task step and no task.

The built-in front end runs the app in the connection's task, and a request whose handler
answers without waiting is answered inside ``Session.deliver``, in that same task: no hand-off to
a session reader or a request actor and back, no task spawned per request, no extra checkpoint
(see ``engine/builtin_connection`` and ``docs/benchmarks.md``, "Server CPU per HTTP call").
Counted with a ``trio.abc.Instrument``, which does not depend on the machine's load: every task
but the client's (this test's own) is the server's.
"""

from __future__ import annotations

import pytest
import trio
from http_client_for_tests import open_test_connection
from test_streamable_http import (
    POST_HEADERS,
    call_body,
    initialize,
    make_server,
    serve,
    session_headers,
)

from mcptrio.transports.http.endpoints.app import McpHttpApp

CALLS = 50


class ServerSteps(trio.abc.Instrument):
    """Counts the steps and spawns of every task but ``client``."""

    def __init__(self, client: trio.lowlevel.Task) -> None:
        self.client = client
        self.steps = 0
        self.spawned = 0
        self.stepping: set[str] = set()

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is not self.client:
            self.steps += 1
            self.stepping.add(task.name)

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


@pytest.mark.parametrize("front_end", ["builtin-httptools", "builtin-h11"])
async def test_a_call_answered_at_once_costs_one_step_of_the_connection_task_and_no_task(
    front_end: str,
) -> None:
    revision = "2025-11-25"
    with trio.fail_after(30):
        async with (
            serve(front_end, McpHttpApp(make_server())) as url,
            open_test_connection(url) as conn,
        ):
            session_id = await initialize(conn, revision)
            headers = [*POST_HEADERS, *session_headers(session_id, revision)]
            # The first call warms what is made once (the tool's argument decoder, say).
            await conn.request(
                "POST", "/mcp", headers=headers, body=call_body(1, "add", {"a": 1, "b": 2})
            )
            counter = ServerSteps(trio.lowlevel.current_task())
            trio.lowlevel.add_instrument(counter)
            try:
                for rid in range(2, CALLS + 2):
                    body = call_body(rid, "add", {"a": rid, "b": 1})
                    response = await conn.request("POST", "/mcp", headers=headers, body=body)
                    assert response.status == 200
                    assert response.json()["result"]["content"][0]["text"] == str(rid + 1)
            finally:
                trio.lowlevel.remove_instrument(counter)
    # One step per call: the connection task wakes when the POST arrives, answers it and waits
    # for the next. A hand-off to another task and back would be three; a yield per request,
    # two. The bound leaves room for a timer's occasional wakeup, not for either.
    assert counter.steps <= CALLS * 1.5, (counter.steps, sorted(counter.stepping))
    assert counter.spawned == 0
