"""``call``, ``read`` and ``prompt`` as people use them: ``NAME=VALUE`` arguments, output to
read rather than parse, ``--header``, and the progress of a call on a terminal."""

from __future__ import annotations

import os
import sys
from functools import partial

import pytest
import trio
from cli_runner import EVERYTHING, mcptrio, mcptrio_env


async def test_call_takes_name_value_arguments_typed_by_the_tools_schema() -> None:
    # values is a list of numbers: "[2, 4]" is read as JSON; the result is structured content.
    described = await mcptrio("call", EVERYTHING, "describe", "values=[2, 4]")
    assert described.code == 0, described.stderr
    assert described.stdout == '{\n  "count": 2,\n  "mean": 3.0,\n  "stdev": 1.0\n}\n'
    # seconds is an integer (the server refuses the string "0"); after --, the arguments are
    # the command's last words.
    counted = await mcptrio("call", "--", sys.executable, EVERYTHING, "countdown", "seconds=0")
    assert counted.code == 0, counted.stderr
    assert counted.stdout == "Lift-off\n"
    # text is a string: "1" stays one.
    noted = await mcptrio("call", EVERYTHING, "add_note", "name=n", "text=1")
    assert noted.stdout == "Saved note 'n'\n"


async def test_json_arguments_and_name_value_words_combine() -> None:
    called = await mcptrio(
        "call", EVERYTHING, "add_note", '{"name": "a", "text": "t"}', 'name:="b"'
    )
    assert called.code == 0, called.stderr
    assert called.stdout == "Saved note 'b'\n"


async def test_a_value_of_the_wrong_type_is_one_line_and_exit_2() -> None:
    called = await mcptrio("call", EVERYTHING, "countdown", "seconds=soon")
    assert called.code == 2
    assert called.stdout == ""
    assert called.error_line == (
        "mcptrio: error: tool countdown, argument seconds: expected an integer, got 'soon'"
        " (seconds:=JSON gives any JSON value)"
    )


async def test_a_word_that_is_no_argument_is_a_usage_error() -> None:
    called = await mcptrio("call", EVERYTHING, "countdown", "seconds=1", "soon")
    assert called.code == 2
    assert called.error_line.startswith("mcptrio: error: 'soon' is not an argument")


async def test_a_tool_error_is_printed_on_stderr_and_exits_1() -> None:
    called = await mcptrio("call", EVERYTHING, "test_error_handling")
    assert called.code == 1
    assert called.stdout == ""
    assert called.error_line == (
        "mcptrio: tool test_error_handling reported an error:"
        " This tool intentionally returns an error for testing"
    )


async def test_read_and_prompt_print_text_for_people() -> None:
    read = await mcptrio("read", EVERYTHING, "test://static-text")
    assert read.code == 0, read.stderr
    assert read.stdout == "This is the content of the static text resource.\n"
    prompt = await mcptrio("prompt", EVERYTHING, "test_prompt_with_arguments", "arg1=one", "arg2=2")
    assert prompt.code == 0, prompt.stderr
    assert prompt.stdout == "[user]\nPrompt with arguments: arg1='one', arg2='2'\n"


async def test_content_that_is_not_text_is_summarised_in_one_line() -> None:
    called = await mcptrio("call", EVERYTHING, "test_multiple_content_types")
    assert called.code == 0, called.stderr
    assert called.stdout == (
        "Multiple content types test:\n"
        "[image: image/png, 70 bytes]\n"
        "[resource: test://mixed-content-resource, application/json, 30 bytes]\n"
    )


async def test_pretty_still_prints_the_wire_result() -> None:
    called = await mcptrio("call", "--pretty", EVERYTHING, "test_simple_text")
    assert called.code == 0, called.stderr
    assert called.stdout.startswith("{\n  ")
    assert '"resultType": "complete"' in called.stdout


@pytest.mark.parametrize("scheme", ["http", "ws"], ids=["http", "websocket"])
async def test_header_options_go_with_every_request_to_the_server(scheme: str) -> None:
    heads: list[bytes] = []

    async def refuse(stream: trio.SocketStream) -> None:
        head = b""
        while b"\r\n\r\n" not in head and (chunk := await stream.receive_some()):
            head += chunk
        heads.append(head)
        await stream.send_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n")
        await stream.aclose()

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, refuse, 0, host="127.0.0.1"))
            port = listeners[0].socket.getsockname()[1]
            called = await mcptrio(
                "list",
                f"{scheme}://127.0.0.1:{port}/mcp",
                "--header",
                "Authorization: Bearer s3cret",
                "-H",
                "X-Tenant:blue",
                "--timeout",
                "10",
            )
            nursery.cancel_scope.cancel()
    assert called.code == 3
    assert heads
    for head in heads:
        lines = head.decode().lower().split("\r\n")
        assert "authorization: bearer s3cret" in lines
        assert "x-tenant: blue" in lines


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            ["call", "-H", "A: b", "--", "python3", "server.py", "tool"],
            "--header is for http(s):// and ws(s):// servers: a server started after -- is"
            " spoken to over stdio",
        ),
        (
            ["list", "-H", "A: b", str(EVERYTHING)],
            f"--header is for http(s):// and ws(s):// servers: {EVERYTHING} is run in memory",
        ),
        (
            ["list", "-H", "no colon", "http://127.0.0.1:9/mcp"],
            "--header 'no colon': give NAME:VALUE, like --header 'Authorization: Bearer TOKEN'",
        ),
        (
            ["list", "-H", "A: 1", "-H", "a: 2", "http://127.0.0.1:9/mcp"],
            "--header a is given twice",
        ),
    ],
)
async def test_a_header_that_cannot_be_sent_is_refused_in_one_line(
    command: list[str], message: str
) -> None:
    ran = await mcptrio(*command)
    assert ran.code == 2
    assert ran.error_line == f"mcptrio: error: {message}"


async def test_without_a_terminal_progress_is_asked_for_but_not_shown() -> None:
    called = await mcptrio("call", EVERYTHING, "test_tool_with_progress")
    assert called.code == 0, called.stderr
    assert called.stderr == ""
    # The tool answers with the progressToken it was given: there was one.
    assert called.stdout.strip() not in ("", "None")


async def test_on_a_terminal_progress_is_one_line_rewritten_then_cleared() -> None:
    terminal, stderr = os.openpty()
    try:
        with trio.fail_after(60):
            done = await trio.run_process(
                [sys.executable, "-m", "mcptrio", "call", EVERYTHING, "test_tool_with_progress"],
                stderr=stderr,
                capture_stdout=True,
                env=mcptrio_env(),
            )
        shown = os.read(terminal, 65536).decode()
    finally:
        os.close(terminal)
        os.close(stderr)
    assert done.returncode == 0
    assert shown.startswith("\r\x1b[Ktest_tool_with_progress: 0/100 (0%) Completed step 0 of 100")
    assert "\r\x1b[Ktest_tool_with_progress: 50/100 (50%) Completed step 50 of 100" in shown
    assert shown.endswith("\r\x1b[K")
    assert "\n" not in shown
