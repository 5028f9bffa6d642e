"""``mcptrio run`` over stdio as a person meets it: in a terminal it says what it serves, and
requests piped in are answered before it exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import trio
from cli_runner import EVERYTHING, mcptrio_env
from piped_messages import INITIALIZE, INITIALIZED, PING, lines, tool_call

COUNTDOWN = tool_call(2, "countdown", seconds=1)
RUN = [sys.executable, "-m", "mcptrio", "run", str(EVERYTHING)]


async def test_requests_piped_in_are_answered_before_run_exits() -> None:
    piped = lines(INITIALIZE, INITIALIZED, COUNTDOWN)
    with trio.fail_after(60):
        done = await trio.run_process(
            RUN, stdin=piped, capture_stdout=True, capture_stderr=True, env=mcptrio_env()
        )
    assert done.returncode == 0, done.stderr
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert answers[2]["result"]["content"] == [{"type": "text", "text": "Lift-off"}]
    # Not a terminal: nothing is said on stderr.
    assert done.stderr == b""


async def test_a_ping_piped_in_is_answered() -> None:
    with trio.fail_after(60):
        done = await trio.run_process(
            RUN,
            stdin=lines(PING),
            capture_stdout=True,
            capture_stderr=True,
            env=mcptrio_env(),
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 7, "result": {}}


async def test_run_in_a_terminal_says_what_it_serves_and_ends_on_ctrl_d() -> None:
    terminal, stdin = os.openpty()
    try:
        with trio.fail_after(60):
            process = await trio.lowlevel.open_process(
                RUN, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=mcptrio_env()
            )
            assert process.stderr is not None and process.stdout is not None
            said = b""
            while not said.endswith(b"\n"):
                chunk = await process.stderr.receive_some()
                assert chunk, "mcptrio run ended without a word"
                said += chunk
            assert said.decode() == (
                "Serving mcptrio-everything over stdio: MCP clients start this command and speak"
                " JSON-RPC on its stdin and stdout; type one message a line to try it, Ctrl-D or"
                " Ctrl-C to stop\n"
            )
            os.write(terminal, json.dumps(PING).encode() + b"\n")
            assert json.loads(await process.stdout.receive_some()) == {
                "jsonrpc": "2.0",
                "id": 7,
                "result": {},
            }
            os.write(terminal, b"\x04")  # Ctrl-D: the end of input, on a terminal
            assert await process.wait() == 0
    finally:
        os.close(terminal)
        os.close(stdin)
