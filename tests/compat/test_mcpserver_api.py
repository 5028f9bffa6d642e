"""``mcptrio.compat.mcpserver`` as a user of the official SDK meets it: what it refuses (by name),
that it never imports the SDK, that ``run("streamable-http")`` serves both eras, and that the
engine behind it is mcptrio's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

pytest.importorskip("pydantic")

from processes import stop_process

from mcptrio.compat import mcpserver
from mcptrio.compat.mcpserver import Context, MCPServer, Unmirrored
from mcptrio.compat.mcpserver.unmirrored import UNMIRRORED_MEMBERS, UNMIRRORED_NAMES

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).parent / "servers"


@pytest.mark.parametrize("name", sorted(UNMIRRORED_NAMES))
def test_an_unmirrored_name_of_the_sdk_raises_an_error_naming_it(name: str) -> None:
    with pytest.raises(Unmirrored, match=rf"official SDK's {name}; use .+migrate-from"):
        getattr(mcpserver, name)


def test_importing_an_unmirrored_name_names_it() -> None:
    with pytest.raises(Unmirrored, match="Extension"):
        from mcptrio.compat.mcpserver import Extension  # noqa: F401


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Nonsense"):
        mcpserver.Nonsense  # noqa: B018


@pytest.mark.parametrize(
    "option", ["auth", "token_verifier", "extensions", "middleware", "cache_hints", "tools"]
)
def test_an_unmirrored_constructor_option_is_refused_by_name(option: str) -> None:
    with pytest.raises(Unmirrored, match=rf"MCPServer\(\): {option}= is an option"):
        MCPServer("x", **{option: object()})


def test_the_sse_transport_and_unmirrored_run_options_are_refused_by_name() -> None:
    server = MCPServer("x")
    with pytest.raises(Unmirrored, match="transport= is an option"):
        server.run("sse")
    with pytest.raises(Unmirrored, match="json_response= is an option"):
        server.run("streamable-http", json_response=True)
    with pytest.raises(ValueError, match="Unknown transport: carrier-pigeon"):
        server.run("carrier-pigeon")  # type: ignore[arg-type]


def test_decorators_used_without_calling_them_say_so() -> None:
    server = MCPServer("x")

    def fn() -> str:
        return ""

    with pytest.raises(TypeError, match=r"Use @tool\(\) instead of @tool"):
        server.tool(fn)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Use @prompt\(\) instead of @prompt"):
        server.prompt(fn)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Use @resource\('uri'\) instead of @resource"):
        server.resource(fn)  # type: ignore[arg-type]


def test_a_template_whose_variables_are_not_the_parameters_is_refused() -> None:
    server = MCPServer("x")
    with pytest.raises(ValueError, match="Mismatch between URI parameters"):

        @server.resource("notes://{name}")
        def note(title: str, ctx: Context) -> str:
            return title


def test_removing_an_unknown_tool_is_a_tool_error() -> None:
    from mcptrio.compat.mcpserver.exceptions import ToolError

    with pytest.raises(ToolError, match="Unknown tool: nope"):
        MCPServer("x").remove_tool("nope")


def test_the_mirror_never_imports_the_sdk() -> None:
    program = (
        "import sys, mcptrio.compat.mcpserver as m\n"
        "m.MCPServer('x').tool()(lambda a: a) if False else None\n"
        "assert not [n for n in sys.modules if n == 'mcp' or n.startswith('mcp.')], 'mcp imported'"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", program], check=True, env=env, timeout=60)


def start_http_server() -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COMPAT_UNDER": "mcptrio"}
    command = [sys.executable, str(SERVERS / "http_server.py"), "0"]
    return subprocess.Popen(command, stderr=subprocess.PIPE, env=env)


async def test_run_streamable_http_serves_the_sdk_client_in_both_eras() -> None:
    from mcp.client import Client

    process = start_http_server()
    try:
        with trio.fail_after(30):
            assert process.stderr is not None
            line = await trio.to_thread.run_sync(process.stderr.readline)
            url = line.decode().rsplit(" ", 1)[-1].strip()
            assert url.startswith("http://127.0.0.1:")
            for mode, revision in [("legacy", "2025-11-25"), ("auto", "2026-07-28")]:
                async with Client(url, mode=mode) as client:
                    assert client.protocol_version == revision
                    result = await client.call_tool("add", {"a": 2, "b": 3})
                    assert result.structured_content == {"result": 5}
    finally:
        stop_process(process)


def test_the_engine_is_a_mcptrio_server() -> None:
    import mcptrio

    server = MCPServer("x", instructions="Be brief.")

    @server.tool()
    def add(a: int) -> int:
        return a

    assert isinstance(server.engine, mcptrio.Server)
    assert list(server.engine.tools) == ["add"]
    assert server.instructions == "Be brief."
    server.remove_tool("add")
    assert list(server.engine.tools) == []


@pytest.mark.parametrize(
    ("owner", "name"),
    [(owner, name) for owner, names in UNMIRRORED_MEMBERS.items() for name in sorted(names)],
)
def test_an_unmirrored_member_of_the_sdk_raises_an_error_naming_it(owner: str, name: str) -> None:
    import mcptrio

    server = MCPServer("x")
    target = (
        server
        if owner == "MCPServer"
        else Context(mcptrio.Context.__new__(mcptrio.Context), server)
    )
    with pytest.raises(Unmirrored, match=rf"official SDK's {owner}\.{name}; use "):
        getattr(target, name)


async def test_a_second_tool_prompt_or_resource_of_a_name_is_ignored_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import mcptrio

    server = MCPServer("x")
    quiet = MCPServer("y", warn_on_duplicate_tools=False)
    for target in (server, quiet):

        @target.tool(name="same")
        def first() -> str:
            return "first"

        @target.tool(name="same")
        def second() -> str:
            return "second"

        with trio.fail_after(10):
            async with mcptrio.open_client(target.engine) as client:
                result = await client.call_tool("same", {})
        assert result.structured_content == {"result": "first"}

    @server.prompt(name="p")
    def p1() -> str:
        return ""

    @server.prompt(name="p")
    def p2() -> str:
        return ""

    @server.resource("r://x")
    def r1() -> str:
        return ""

    @server.resource("r://x")
    def r2() -> str:
        return ""

    warnings = [r.getMessage() for r in caplog.records if r.name == "mcptrio.compat"]
    assert warnings == [
        "Tool already exists: same",
        "Prompt already exists: p",
        "Resource already exists: r://x",
    ]
