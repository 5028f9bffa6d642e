"""``mcptrio run`` stopped by SIGTERM or Ctrl-C, as ``docker stop``, systemd and Kubernetes stop
it: the calls in flight are answered and the process exits 0, over HTTP in one process and with
workers, on either front end, and over stdio; a second signal stops at once (issue 39, item 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import h11
import pytest
import trio
import trio_websocket
from cli_runner import announced_url, mcptrio_env
from piped_messages import INITIALIZE, INITIALIZED, lines, tool_call
from test_run_workers import CALL_CUT, RUN, SERVER, supervised, whoami

CALLS = 50


@pytest.mark.parametrize(
    "options",
    [[], ["--front-end", "hypercorn"], ["--workers", "2"]],
    ids=["one-process", "hypercorn", "two-workers"],
)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
async def test_a_stop_signal_during_slow_calls_answers_every_one_and_exits_0(
    options: list[str], stop: signal.Signals, tmp_path: Path
) -> None:
    calls_started = tmp_path / "calls"
    calls_started.touch()
    env = {"WORKER_SERVER_CALL_LOG": str(calls_started)}
    with trio.fail_after(90):
        async with supervised(*options, "--grace", "30", env=env) as supervisor:
            answers: list[tuple[str, int]] = []

            async def slow_call() -> None:
                answers.append(await whoami(supervisor.url, delay=2))

            async with trio.open_nursery() as nursery:
                for _ in range(CALLS):
                    nursery.start_soon(slow_call)
                # Every call has reached the server (and waits in the tool) before the signal.
                while len(calls_started.read_text().splitlines()) < CALLS:  # noqa: ASYNC110
                    await trio.sleep(0.05)
                started = trio.current_time()
                supervisor.process.send_signal(stop)
                code = await supervisor.process.wait()
            assert code == 0, supervisor.log
            assert len(answers) == CALLS
            # Stopped once the calls were answered, long before the grace ran out.
            assert trio.current_time() - started < 15
            assert "Traceback" not in supervisor.log


@pytest.mark.parametrize(
    "options",
    [[], ["--front-end", "hypercorn"], ["--workers", "2"]],
    ids=["one-process", "hypercorn", "two-workers"],
)
async def test_a_second_signal_stops_at_once(options: list[str]) -> None:
    with trio.fail_after(60):
        async with supervised(*options, "--grace", "60") as supervisor:
            async with trio.open_nursery() as nursery:
                failures: list[BaseException] = []

                async def endless_call() -> None:
                    try:
                        await whoami(supervisor.url, delay=120)
                    except CALL_CUT as error:
                        failures.append(error)

                nursery.start_soon(endless_call)
                await trio.sleep(0.5)
                supervisor.process.send_signal(signal.SIGTERM)
                await trio.sleep(0.5)
                # Still draining: the call is in flight and the grace is a minute.
                assert supervisor.process.returncode is None
                started = trio.current_time()
                supervisor.process.send_signal(signal.SIGINT)
                with trio.fail_after(5):
                    assert await supervisor.process.wait() == 0
            assert trio.current_time() - started < 5
            assert len(failures) == 1


async def test_a_stop_signal_with_nothing_in_flight_exits_at_once() -> None:
    with trio.fail_after(60):
        async with supervised("--grace", "60") as supervisor:
            await whoami(supervisor.url)
            started = trio.current_time()
            supervisor.process.send_signal(signal.SIGTERM)
            with trio.fail_after(5):
                assert await supervisor.process.wait() == 0
            assert trio.current_time() - started < 5


async def _exchange(
    stream: trio.SocketStream, netloc: str, method: str, headers: list[tuple[str, str]], body: bytes
) -> tuple[h11.Connection, h11.Response]:
    """Send one request on ``stream``; the connection (to read the body from) and the head."""
    connection = h11.Connection(h11.CLIENT)
    head = [("Host", netloc), ("Content-Length", str(len(body))), *headers]
    data = connection.send(h11.Request(method=method, target="/mcp", headers=head))
    data += connection.send(h11.Data(data=body)) if body else b""
    data += connection.send(h11.EndOfMessage())
    await stream.send_all(data)
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await stream.receive_some())
        elif isinstance(event, h11.Response):
            return connection, event


@pytest.mark.parametrize("front_end", ["builtin", "hypercorn"])
async def test_an_open_get_stream_ends_at_a_stop_and_holds_nothing_up(front_end: str) -> None:
    # A handshake-era client's GET stream waits on the server for as long as it is open: a stop
    # ends it (its client reconnects, to another worker or once the server is back) instead of
    # holding the process for the whole grace.
    revision = "2025-11-25"
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }
    accept_both = ("Accept", "application/json, text/event-stream")
    with trio.fail_after(60):
        async with supervised("--front-end", front_end, "--grace", "60") as supervisor:
            parts = urlsplit(supervisor.url)
            assert parts.hostname is not None and parts.port is not None
            first = await trio.open_tcp_stream(parts.hostname, parts.port)
            stream = await trio.open_tcp_stream(parts.hostname, parts.port)
            async with first, stream:
                json_body = ("Content-Type", "application/json")
                _, answer = await _exchange(
                    first,
                    parts.netloc,
                    "POST",
                    [accept_both, json_body],
                    json.dumps(initialize).encode(),
                )
                session_id = dict(answer.headers)[b"mcp-session-id"].decode()
                session = [("Mcp-Session-Id", session_id), ("MCP-Protocol-Version", revision)]
                _, opened = await _exchange(
                    stream, parts.netloc, "GET", [("Accept", "text/event-stream"), *session], b""
                )
                assert opened.status_code == 200
                started = trio.current_time()
                supervisor.process.send_signal(signal.SIGTERM)
                with trio.fail_after(10):
                    assert await supervisor.process.wait() == 0
            assert trio.current_time() - started < 10


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
async def test_a_stop_signal_over_stdio_answers_the_call_in_flight_and_exits_0(
    stop: signal.Signals, tmp_path: Path
) -> None:
    calls_started = tmp_path / "calls"
    calls_started.touch()
    env = {**mcptrio_env(), "WORKER_SERVER_CALL_LOG": str(calls_started)}
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*RUN, str(SERVER), "--grace", "30"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            call = tool_call(2, "whoami", delay=1.5)
            await process.stdin.send_all(lines(INITIALIZE, INITIALIZED, call))
            while not calls_started.read_text():  # noqa: ASYNC110
                await trio.sleep(0.05)
            process.send_signal(stop)
            output = b""
            while chunk := await process.stdout.receive_some():
                output += chunk
            assert await process.wait() == 0
        finally:
            with trio.CancelScope(shield=True):
                if process.returncode is None:
                    process.kill()
                    await process.wait()
    answers = {answer["id"]: answer for answer in map(json.loads, output.splitlines())}
    assert answers[2]["result"]["content"][0]["text"].split() == [str(process.pid)]


async def test_a_stop_signal_over_websocket_answers_the_call_in_flight_and_exits_0() -> None:
    with trio.fail_after(60):
        async with supervised("--transport", "websocket", "--grace", "30") as supervisor:
            url = supervisor.url
            async with trio_websocket.open_websocket_url(url, subprotocols=["mcp"]) as socket:
                await socket.send_message(json.dumps(INITIALIZE))
                assert json.loads(await socket.get_message())["id"] == 1
                await socket.send_message(json.dumps(INITIALIZED))
                await socket.send_message(json.dumps(tool_call(2, "whoami", delay=1.0)))
                await trio.sleep(0.3)
                supervisor.process.send_signal(signal.SIGTERM)
                answer = json.loads(await socket.get_message())
                assert answer["id"] == 2 and "result" in answer
                # Then the server goes away, saying so.
                with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                    await socket.get_message()
                assert closed.value.reason.code == 1001
            assert await supervisor.process.wait() == 0


@pytest.mark.parametrize("front_end", ["builtin", "hypercorn"])
async def test_a_websocket_on_the_http_endpoint_is_drained_by_a_stop(front_end: str) -> None:
    """A WebSocket upgraded on the HTTP endpoint answers its call in flight, is closed with
    1001, and holds the stop up no longer than that call."""
    with trio.fail_after(60):
        async with supervised("--front-end", front_end, "--grace", "60") as supervisor:
            url = "ws" + supervisor.url.removeprefix("http")
            async with trio_websocket.open_websocket_url(url, subprotocols=["mcp"]) as socket:
                await socket.send_message(json.dumps(INITIALIZE))
                assert json.loads(await socket.get_message())["id"] == 1
                await socket.send_message(json.dumps(INITIALIZED))
                await socket.send_message(json.dumps(tool_call(2, "whoami", delay=1.0)))
                await trio.sleep(0.3)
                started = trio.current_time()
                supervisor.process.send_signal(signal.SIGTERM)
                answer = json.loads(await socket.get_message())
                assert answer["id"] == 2 and "result" in answer
                with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                    await socket.get_message()
                assert closed.value.reason.code == 1001
            with trio.fail_after(10):
                assert await supervisor.process.wait() == 0
            assert trio.current_time() - started < 10


async def test_ctrl_c_to_the_whole_group_drains_the_workers_once(tmp_path: Path) -> None:
    # A terminal's Ctrl-C is SIGINT to the whole process group. The workers are in a session of
    # their own, so only the supervisor hears it: it stops them once (they drain), rather than
    # each hearing the Ctrl-C and then the supervisor's SIGTERM as a second signal.
    calls_started = tmp_path / "calls"
    calls_started.touch()
    env = {**mcptrio_env(), "WORKER_SERVER_CALL_LOG": str(calls_started)}
    command = [*RUN, str(SERVER), "--transport", "http", "--port", "0", "--workers", "2"]
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*command, "--grace", "30"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert process.stderr is not None
        try:
            received = b""
            while (url := announced_url(received)) is None:
                chunk = await process.stderr.receive_some()
                assert chunk, received.decode()
                received += chunk
            answers: list[tuple[str, int]] = []

            async def slow_call() -> None:
                answers.append(await whoami(url, delay=1.5))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(slow_call)
                while not calls_started.read_text():  # noqa: ASYNC110
                    await trio.sleep(0.05)
                os.killpg(process.pid, signal.SIGINT)
            assert await process.wait() == 0
            assert len(answers) == 1
        finally:
            with trio.CancelScope(shield=True):
                if process.returncode is None:
                    process.kill()
                    await process.wait()


async def test_a_stop_before_the_workers_serve_is_a_clean_exit() -> None:
    command = [*RUN, str(SERVER), "--transport", "http", "--port", "0", "--workers", "2"]
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            command,
            env={**mcptrio_env(), "WORKER_SERVER_SLOW_START": "5"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        # Once the supervisor runs (it says so when it has no Redis), before any worker serves.
        received = b""
        while b"workers and no Redis" not in received:
            chunk = await process.stderr.receive_some()
            assert chunk, received.decode()
            received += chunk
        # The supervisor has started its workers, which take seconds to load.
        await trio.sleep(1)
        process.send_signal(signal.SIGTERM)
        while chunk := await process.stderr.receive_some():
            received += chunk
        assert await process.wait() == 0
    assert b"Traceback" not in received, received.decode()
