"""``mcptrio run --workers N``: real processes on one port, supervised.

Every call is a stateless (2026-07-28) POST on a connection of its own, so that the kernel hands
each to whichever worker accepts first; the tool answers ``ID PID`` of the worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import h11
import trio
from cli_runner import EVERYTHING, ROOT, announced_url, mcptrio, mcptrio_env
from redis_servers import RedisServer

SERVER = ROOT / "tests" / "servers" / "worker_server.py"
STATELESS = "2026-07-28"
HTTP_PORT_0 = ["--transport", "http", "--port", "0"]
TWO_WORKERS = [*HTTP_PORT_0, "--workers", "2"]
RUN = [sys.executable, "-m", "mcptrio", "run"]
#: How a call the server cut fails in :func:`whoami`.
CALL_CUT = (AssertionError, KeyError, ValueError, OSError, h11.RemoteProtocolError)


@dataclass
class Supervisor:
    process: trio.Process
    url: str
    stderr: bytearray = field(default_factory=bytearray)

    @property
    def log(self) -> str:
        return self.stderr.decode(errors="replace")


@asynccontextmanager
async def supervised(
    *options: str | os.PathLike[str], target: Path = SERVER, env: dict[str, str] | None = None
) -> AsyncIterator[Supervisor]:
    """``mcptrio run TARGET --transport http --port 0 OPTIONS`` until its ``Serving`` line; the
    process is stopped (SIGTERM, then SIGKILL) when the block ends, if it still runs."""
    async with trio.open_nursery() as nursery:
        process = await trio.lowlevel.open_process(
            [*RUN, str(target), "--transport", "http", "--port", "0", *map(str, options)],
            cwd=ROOT,
            env={**mcptrio_env(), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            assert process.stderr is not None
            stderr = bytearray()
            with trio.fail_after(30):
                while (url := announced_url(stderr)) is None:
                    chunk = await process.stderr.receive_some()
                    assert chunk, f"mcptrio run ended before serving: {stderr.decode()}"
                    stderr += chunk
            supervisor = Supervisor(process, url, stderr)
            nursery.start_soon(_keep_reading, process.stderr, stderr)
            yield supervisor
        finally:
            with trio.CancelScope(shield=True):
                if process.returncode is None:
                    process.terminate()
                    with trio.move_on_after(15):
                        await process.wait()
                    if process.returncode is None:
                        process.kill()
                        await process.wait()
            nursery.cancel_scope.cancel()


async def _keep_reading(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
    while chunk := await stream.receive_some():
        into += chunk


async def whoami(url: str, delay: float = 0.0) -> tuple[str, int]:
    """Call ``whoami`` as a stateless request on a new connection; (worker id, pid)."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    params = {
        "name": "whoami",
        "arguments": {"delay": delay},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
        },
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {STATELESS}\r\nMcp-Method: tools/call\r\nMcp-Name: whoami\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    stream = await trio.open_tcp_stream(parts.hostname, parts.port)
    # The response is read to its end as HTTP frames it (a JSON body, or one SSE event in
    # chunks for a call slow to answer), not to the connection's end: a front end need not
    # close at once after answering a request that asked it to (Hypercorn may wait for its
    # keep-alive timeout).
    status = 0
    received = b""
    async with stream:
        await stream.send_all(head.encode() + body.encode())
        reader = h11.Connection(h11.CLIENT)
        reader.send(h11.Request(method="POST", target=parts.path, headers=[("Host", parts.netloc)]))
        reader.send(h11.EndOfMessage())
        while True:
            event = reader.next_event()
            if event is h11.NEED_DATA:
                reader.receive_data(await stream.receive_some())
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                received += event.data
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                break
    assert status == 200, received
    lines = [line for line in received.splitlines() if b'"jsonrpc"' in line]
    assert lines, f"no answer in {received!r}"
    answer = json.loads(lines[0].removeprefix(b"data: "))
    worker_id, _, pid = answer["result"]["content"][0]["text"].partition(" ")
    return worker_id, int(pid)


async def answering_workers(url: str, wanted: int) -> dict[str, int]:
    """Call until ``wanted`` different workers have answered; their pids by id."""
    seen: dict[str, int] = {}
    while len(seen) < wanted:
        worker_id, pid = await whoami(url)
        seen[worker_id] = pid
    return seen


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _gone(pid: int) -> None:
    """Wait until ``pid`` (not our child: nothing to wait on but polling) no longer runs."""
    while _alive(pid):  # noqa: ASYNC110
        await trio.sleep(0.05)


async def test_two_workers_answer_on_one_port_with_their_own_ids() -> None:
    with trio.fail_after(60):
        async with supervised("--workers", "2") as supervisor:
            pids = await answering_workers(supervisor.url, 2)
            assert set(pids) == {"w0", "w1"}
            assert len(set(pids.values())) == 2
            assert supervisor.process.pid not in pids.values()


async def test_a_killed_worker_is_restarted_and_calls_keep_working() -> None:
    with trio.fail_after(90):
        async with supervised("--workers", "2") as supervisor:
            before = await answering_workers(supervisor.url, 2)
            os.kill(before["w1"], signal.SIGKILL)
            # A connection the kernel queued at w1 while it was dying is reset (each worker has
            # its own queue, see worker_sockets); once it is gone, w0 answers every call, and
            # w1 comes back as a new process under the same id.
            await _gone(before["w1"])
            after = await answering_workers(supervisor.url, 2)
            while after["w1"] == before["w1"]:
                after = await answering_workers(supervisor.url, 2)
            assert after["w0"] == before["w0"]
            assert "worker w1 was killed by SIGKILL; restarting it" in supervisor.log


async def test_sigterm_stops_every_worker_within_the_grace() -> None:
    with trio.fail_after(60):
        async with supervised("--workers", "2", "--grace", "3") as supervisor:
            pids = await answering_workers(supervisor.url, 2)
            supervisor.process.send_signal(signal.SIGTERM)
            with trio.fail_after(3 + 2):
                code = await supervisor.process.wait()
                for pid in pids.values():
                    await _gone(pid)
            assert code == 0


async def test_a_request_being_served_when_sigterm_comes_is_answered() -> None:
    with trio.fail_after(60):
        async with supervised("--workers", "2", "--grace", "10") as supervisor:
            await answering_workers(supervisor.url, 2)
            async with trio.open_nursery() as nursery:
                answers: list[tuple[str, int]] = []

                async def slow_call() -> None:
                    answers.append(await whoami(supervisor.url, delay=1.5))

                nursery.start_soon(slow_call)
                await trio.sleep(0.5)
                started = trio.current_time()
                supervisor.process.send_signal(signal.SIGTERM)
            assert len(answers) == 1
            assert await supervisor.process.wait() == 0
            # Stopped once the call was answered, long before the grace ran out.
            assert trio.current_time() - started < 5


async def test_a_request_longer_than_the_grace_is_cut_and_the_workers_stop() -> None:
    with trio.fail_after(60):
        async with supervised("--workers", "2", "--grace", "1") as supervisor:
            await answering_workers(supervisor.url, 2)
            async with trio.open_nursery() as nursery:
                failures: list[BaseException] = []

                async def endless_call() -> None:
                    try:
                        await whoami(supervisor.url, delay=60)
                    except CALL_CUT as error:
                        failures.append(error)

                nursery.start_soon(endless_call)
                await trio.sleep(0.5)
                started = trio.current_time()
                supervisor.process.send_signal(signal.SIGTERM)
                with trio.fail_after(1 + 3):
                    assert await supervisor.process.wait() == 0
            assert trio.current_time() - started < 4
            assert len(failures) == 1


async def test_crash_looping_workers_make_the_supervisor_give_up() -> None:
    with trio.fail_after(90):
        ran = await mcptrio(
            "run", SERVER, *TWO_WORKERS, timeout=80, env={"WORKER_SERVER_CRASH": "1"}
        )
    assert ran.code == 3
    last = ran.stderr.strip().splitlines()[-1]
    assert last.startswith("mcptrio: error: worker w")
    assert "exited with code 2 before serving 5 times in a row; giving up" in last


async def test_without_redis_several_workers_warn_about_the_handshake_era(
    redis_server: RedisServer,
) -> None:
    with trio.fail_after(60):
        async with supervised("--workers", "2") as supervisor:
            assert "2 workers and no Redis" in supervisor.log
        async with supervised("--workers", "2", "--redis", redis_server.url) as supervisor:
            assert "no Redis" not in supervisor.log


async def test_a_redis_that_is_not_there_is_one_line_before_any_worker_starts() -> None:
    with trio.fail_after(60):
        ran = await mcptrio(
            "run", SERVER, *TWO_WORKERS, "--redis", "redis://127.0.0.1:1", timeout=50
        )
    assert ran.code == 3
    [line] = ran.stderr.strip().splitlines()
    assert line.startswith("mcptrio: error: --redis: Redis failed (connect to redis://127.0.0.1:1)")
    assert "worker" not in ran.stderr


async def test_workers_with_redis_but_without_the_redis_extra_is_one_line(tmp_path: Path) -> None:
    # What Python says when the redis extra (coredis) is not installed.
    (tmp_path / "coredis.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'coredis'\", name='coredis')\n"
    )
    pythonpath = os.pathsep.join([str(tmp_path), mcptrio_env().get("PYTHONPATH", "")])
    with trio.fail_after(60):
        ran = await mcptrio(
            "run",
            SERVER,
            *TWO_WORKERS,
            "--redis",
            "redis://127.0.0.1:1",
            timeout=50,
            env={"PYTHONPATH": pythonpath},
        )
    assert ran.code == 2
    assert ran.stderr.strip().splitlines() == [
        "mcptrio: error: No module named 'coredis': pip install 'mcptrio[redis]'"
    ]


async def test_one_worker_is_the_plain_server() -> None:
    with trio.fail_after(60):
        async with supervised() as supervisor:
            worker_id, pid = await whoami(supervisor.url)
            assert (worker_id, pid) == ("", supervisor.process.pid)
            assert " workers " not in supervisor.log and "no Redis" not in supervisor.log


async def test_everything_server_takes_the_same_flags() -> None:
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            process = await trio.lowlevel.open_process(
                [sys.executable, str(EVERYTHING), *HTTP_PORT_0, "--workers", "2", "--grace", "2"],
                cwd=ROOT,
                env=mcptrio_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            assert process.stderr is not None
            stderr = bytearray()
            while (url := announced_url(stderr)) is None:
                chunk = await process.stderr.receive_some()
                assert chunk, stderr.decode()
                stderr += chunk
            nursery.start_soon(_keep_reading, process.stderr, stderr)
            assert " with 2 workers " in stderr.decode()
            called = await mcptrio("call", url, "test_simple_text")
            assert called.code == 0, called.stderr
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0


async def test_bad_scale_out_options_are_usage_errors() -> None:
    with trio.fail_after(60):
        for options, message in [
            (["--workers", "0"], "--workers 0: give 1 or more"),
            (["--workers", "2"], "--workers serves HTTP only"),
            (["--redis", "http://x"], "is not a Redis URL"),
            (["--grace", "-1"], "--grace -1: give 0 or more seconds"),
        ]:
            ran = await mcptrio("run", SERVER, *options)
            assert ran.code == 2
            assert message in ran.error_line
