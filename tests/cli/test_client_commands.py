"""``mcptrio list``, ``call``, ``read`` and ``prompt``: JSON on stdout, or one line on stderr
and the documented exit code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from cli_runner import EVERYTHING, mcptrio, served

from schema_validation import validate_definition

SIMPLE_TEXT = [{"type": "text", "text": "This is a simple text response for testing."}]


async def test_call_over_stdio_runs_the_command_after_the_separator() -> None:
    called = await mcptrio("call", "--json", "--", sys.executable, EVERYTHING, "test_simple_text")
    assert called.code == 0, called.stderr
    assert called.stderr == ""
    validate_definition(called.json(), "2026-07-28", "CallToolResult")
    assert called.json()["content"] == SIMPLE_TEXT


async def test_call_takes_the_tool_and_arguments_before_or_after_the_command() -> None:
    after = await mcptrio(
        "call", "--json", "--", sys.executable, EVERYTHING, "add_note", '{"name": "x", "text": "y"}'
    )
    before = await mcptrio(
        "call", "--json", "add_note", '{"name": "x", "text": "y"}', "--", sys.executable, EVERYTHING
    )
    for called in (after, before):
        assert called.code == 0, called.stderr
        assert called.json()["content"] == [{"type": "text", "text": "Saved note 'x'"}]


async def test_call_a_server_file_in_memory_with_pretty_output() -> None:
    called = await mcptrio("call", "--pretty", EVERYTHING, "describe", '{"values": [2, 4]}')
    assert called.code == 0, called.stderr
    assert called.stdout.startswith("{\n  ")
    assert called.json()["structuredContent"] == {"count": 2, "mean": 3.0, "stdev": 1.0}


async def test_list_prints_every_tool_and_on_request_the_rest() -> None:
    tools = await mcptrio("list", EVERYTHING)
    assert tools.code == 0, tools.stderr
    assert list(tools.json()) == ["tools"]
    for tool in tools.json()["tools"]:
        validate_definition(tool, "2026-07-28", "Tool")
    everything = await mcptrio("list", "--all", EVERYTHING)
    assert list(everything.json()) == ["tools", "resources", "resourceTemplates", "prompts"]
    prompts = await mcptrio("list", "--prompts", "--", sys.executable, EVERYTHING)
    assert "test_simple_prompt" in [p["name"] for p in prompts.json()["prompts"]]


async def test_read_and_prompt_print_their_results() -> None:
    read = await mcptrio("read", "--json", EVERYTHING, "test://static-text")
    assert read.code == 0, read.stderr
    validate_definition(read.json(), "2026-07-28", "ReadResourceResult")
    assert read.json()["contents"][0]["text"] == "This is the content of the static text resource."
    prompt = await mcptrio(
        "prompt",
        "--json",
        EVERYTHING,
        "test_prompt_with_arguments",
        '{"arg1": "one", "arg2": "two"}',
    )
    assert prompt.code == 0, prompt.stderr
    validate_definition(prompt.json(), "2026-07-28", "GetPromptResult")
    text = prompt.json()["messages"][0]["content"]["text"]
    assert "one" in text and "two" in text


async def test_a_tool_that_reports_an_error_prints_the_result_and_exits_1() -> None:
    called = await mcptrio("call", "--json", EVERYTHING, "test_error_handling")
    assert called.code == 1
    assert called.json()["isError"] is True
    assert called.error_line == "mcptrio: tool test_error_handling reported an error"


async def test_an_unknown_tool_exits_1_with_the_servers_answer() -> None:
    with trio.fail_after(90):
        async with served(EVERYTHING, "--transport", "http", "--port", "0") as url:
            called = await mcptrio("call", url, "no_such_tool")
    assert called.code == 1
    assert called.stdout == ""
    assert called.error_line == f"mcptrio: error: {url} answered -32602: Unknown tool: no_such_tool"


async def test_an_unknown_resource_and_prompt_exit_1() -> None:
    read = await mcptrio("read", EVERYTHING, "test://nothing-here")
    assert read.code == 1
    assert read.error_line.startswith(f"mcptrio: error: {EVERYTHING} answered -3")
    prompt = await mcptrio("prompt", EVERYTHING, "no_such_prompt")
    assert prompt.code == 1
    assert "no_such_prompt" in prompt.error_line


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{bad", "ARGS is not valid JSON"),
        ("[1, 2]", "ARGS must be a JSON object"),
        ('"text"', "ARGS must be a JSON object"),
    ],
)
async def test_bad_json_arguments_are_a_usage_error(arguments: str, message: str) -> None:
    called = await mcptrio("call", EVERYTHING, "add_note", arguments)
    assert called.code == 2
    assert called.stdout == ""
    assert called.error_line.startswith(f"mcptrio: error: {message}")


async def test_prompt_arguments_must_be_strings() -> None:
    prompt = await mcptrio("prompt", EVERYTHING, "test_prompt_with_arguments", '{"arg1": 1}')
    assert prompt.code == 2
    assert "prompt arguments are strings" in prompt.error_line


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/mcp", "ws://127.0.0.1:9/mcp"], ids=["http", "websocket"]
)
async def test_an_unreachable_url_exits_3(url: str) -> None:
    for command in (["list", url], ["call", url, "test_simple_text"]):
        ran = await mcptrio(*command, "--timeout", "10")
        assert ran.code == 3
        assert ran.error_line.startswith(f"mcptrio: error: cannot connect to {url}: ")


async def test_a_command_that_does_not_start_or_serve_exits_3() -> None:
    missing = await mcptrio("call", "--", "no-such-program-anywhere", "test_simple_text")
    assert missing.code == 3
    assert missing.error_line.startswith("mcptrio: error: cannot connect to no-such-program")
    silent = await mcptrio("list", "--", sys.executable, "-c", "pass")
    assert silent.code == 3
    assert silent.error_line.startswith(f"mcptrio: error: cannot connect to {sys.executable} -c")


async def test_a_file_without_a_server_and_one_with_several_are_usage_errors(
    tmp_path: Path,
) -> None:
    (tmp_path / "empty.py").write_text("x = 1\n")
    (tmp_path / "two.py").write_text(
        "import mcptrio\na = mcptrio.Server('a')\nb = mcptrio.Server('b')\n"
    )
    for command in (["list", "empty.py"], ["call", "empty.py", "t"], ["read", "empty.py", "u://x"]):
        ran = await mcptrio(*command, cwd=tmp_path)
        assert ran.code == 2
        assert ran.error_line.startswith("mcptrio: error: empty.py has no mcptrio.Server")
    several = await mcptrio("list", "two.py", cwd=tmp_path)
    assert several.code == 2
    assert several.error_line == (
        "mcptrio: error: two.py has several servers (a, b): name one, as two.py:a"
    )
    named = await mcptrio("list", "two.py:b", cwd=tmp_path)
    assert named.code == 0, named.stderr
    assert named.json() == {"tools": []}


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["call"], "give a TARGET"),
        (["call", "server.py"], "usage: mcptrio call TARGET TOOL [ARGS]"),
        (["call", "--"], "after -- give the server's command"),
        (["list", "ftp://example.com/mcp"], "the client speaks http(s):// and ws(s):// URLs"),
        (["frobnicate"], "argument COMMAND: invalid choice"),
        (["call", "--no-such-option", "x", "y"], "unrecognized arguments"),
        (["run", "server.py", "--", "x"], "mcptrio run takes no command after --"),
    ],
)
async def test_a_wrong_command_line_is_one_line_and_exit_2(
    command: list[str], message: str
) -> None:
    ran = await mcptrio(*command)
    assert ran.code == 2
    assert message in ran.error_line
