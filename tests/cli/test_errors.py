"""The client commands' connection and loading errors: each is one line that says what went
wrong in the user's terms (the server's exit and last words, the TLS reason, what answered
instead of an MCP endpoint, the user's file and line, the URL a bare address meant)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import pytest
import trio
from cli_runner import mcptrio

HINT = "(-v shows the server's stderr)"

CRASH_AT_IMPORT = """\
import sys
print("starting the notes server", file=sys.stderr)
raise RuntimeError("NOTES_DIR is not set")
"""


async def test_a_stdio_server_that_dies_at_start_names_its_exit_code_and_last_words(
    tmp_path: Path,
) -> None:
    (tmp_path / "crash.py").write_text(CRASH_AT_IMPORT)
    ran = await mcptrio("list", "--", sys.executable, "crash.py", cwd=tmp_path)
    assert ran.code == 3
    assert ran.error_line == (
        f"mcptrio: error: cannot connect to {sys.executable} crash.py: the server exited with"
        f" code 1: RuntimeError: NOTES_DIR is not set {HINT}"
    )


async def test_a_stdio_server_that_exits_silently_says_its_code_and_that_stderr_was_empty(
    tmp_path: Path,
) -> None:
    (tmp_path / "exit3.py").write_text("import sys\nsys.exit(3)\n")
    ran = await mcptrio("call", "--", sys.executable, "exit3.py", "some_tool", cwd=tmp_path)
    assert ran.code == 3
    assert ran.error_line == (
        f"mcptrio: error: cannot connect to {sys.executable} exit3.py: the server exited with"
        f" code 3 (nothing on stderr) {HINT}"
    )


async def test_verbose_still_shows_the_whole_stderr_of_a_server_that_dies(tmp_path: Path) -> None:
    (tmp_path / "crash.py").write_text(CRASH_AT_IMPORT)
    ran = await mcptrio("list", "-v", "--", sys.executable, "crash.py", cwd=tmp_path)
    assert ran.code == 3
    assert "starting the notes server" in ran.stderr
    assert 'File "' in ran.stderr  # the traceback's frames, as the server printed them
    assert ran.stderr.splitlines()[-1] == (
        f"mcptrio: error: cannot connect to {sys.executable} crash.py: the server exited with"
        " code 1: RuntimeError: NOTES_DIR is not set"
    )


@asynccontextmanager
async def web_server(status: str, body: bytes, content_type: str) -> AsyncIterator[int]:
    """A loopback HTTP server that is no MCP endpoint: every request gets ``status`` and
    ``body``; yields its port."""

    async def answer(stream: trio.SocketStream) -> None:
        received = b""
        try:
            # A TLS hello (record type 0x16) is no HTTP: answered at once, as web servers do.
            while b"\r\n\r\n" not in received and received[:1] != b"\x16":
                chunk = await stream.receive_some()
                if not chunk:
                    return
                received += chunk
            head, _, rest = received.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(rest) < length:
                chunk = await stream.receive_some()
                if not chunk:
                    return
                rest += chunk
            await stream.send_all(
                f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                + body
            )
        except trio.BrokenResourceError:
            pass  # a TLS client that gave up on our plain answer
        finally:
            await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, answer, 0, host="127.0.0.1"))
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


PAGE = b"""<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Page not found &middot; My Site</title>
  </head>
  <body><h1>Not here</h1><p>Try the home page.</p></body>
</html>
"""


async def test_https_to_a_plain_http_server_gives_the_tls_reason() -> None:
    with trio.fail_after(30):
        async with web_server("400 Bad Request", b"plain HTTP here", "text/plain") as port:
            ran = await mcptrio("list", f"https://127.0.0.1:{port}/mcp", "--timeout", "10")
    assert ran.code == 3
    assert ran.error_line == (
        f"mcptrio: error: cannot connect to https://127.0.0.1:{port}/mcp: Cannot connect to"
        f" https://127.0.0.1:{port}: TLS handshake failed: the server does not speak TLS"
        " (wrong version number)"
    )


@pytest.mark.parametrize(
    ("status", "content_type"),
    [("404 Not Found", "text/html; charset=utf-8"), ("200 OK", "text/html")],
    ids=["not-found-page", "home-page"],
)
async def test_a_web_page_instead_of_an_mcp_endpoint_is_summarised_in_one_line(
    status: str, content_type: str
) -> None:
    with trio.fail_after(30):
        async with web_server(status, PAGE, content_type) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            ran = await mcptrio("list", url, "--timeout", "10")
    assert ran.code == 3
    assert ran.error_line == (
        f"mcptrio: error: cannot connect to {url}: HTTP {status}, a text/html page titled"
        ' "Page not found · My Site": not an MCP endpoint'
    )


async def test_a_plain_text_refusal_is_quoted_on_one_line() -> None:
    with trio.fail_after(30):
        async with web_server("403 Forbidden", b"Go away.\nNot for you.\n", "text/plain") as port:
            url = f"http://127.0.0.1:{port}/mcp"
            ran = await mcptrio("list", url, "--timeout", "10")
    assert ran.code == 3
    assert ran.error_line == (
        f"mcptrio: error: cannot connect to {url}: HTTP 403 Forbidden: Go away. Not for you."
    )


SYNTAX_ERROR = "import mcptrio\n\nserver = = mcptrio.Server('app')\n"


@pytest.mark.parametrize(
    "command",
    [["run", "app.py"], ["config", "app.py"], ["list", "app.py"], ["call", "app.py", "add"]],
    ids=["run", "config", "list", "call"],
)
async def test_a_syntax_error_names_the_users_file_and_line(
    command: list[str], tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(SYNTAX_ERROR)
    ran = await mcptrio(*command, cwd=tmp_path)
    assert ran.code == 2
    assert ran.error_line == "mcptrio: error: app.py:3: SyntaxError: invalid syntax"


async def test_an_error_raised_while_loading_names_the_users_line_and_what_was_loaded(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.py").write_text(
        "import json\n\ndef read():\n    return json.loads('{nope')\n"
    )
    (tmp_path / "app.py").write_text("import mcptrio\nimport settings\n\nsettings.read()\n")
    ran = await mcptrio("run", "app.py", cwd=tmp_path)
    assert ran.code == 2
    # The place is the user's own line, not the json module's, where it was raised.
    assert ran.error_line == (
        "mcptrio: error: settings.py:4: JSONDecodeError: Expecting property name enclosed in"
        " double quotes: line 1 column 2 (char 1) (loading app.py)"
    )


async def test_a_failing_server_factory_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "import mcptrio\n\ndef make() -> mcptrio.Server:\n    raise KeyError('API_KEY')\n"
    )
    ran = await mcptrio("config", "app.py", cwd=tmp_path)
    assert ran.code == 2
    assert ran.error_line == (
        "mcptrio: error: app.py:4: KeyError: 'API_KEY' (calling app.py:make())"
    )


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
        ("localhost:8000", "http://localhost:8000"),
        ("[::1]:8000/mcp", "http://[::1]:8000/mcp"),
        ("example.com:443/mcp", "https://example.com:443/mcp"),
    ],
)
async def test_an_address_without_a_scheme_suggests_the_url(
    written: str, meant: str, tmp_path: Path
) -> None:
    ran = await mcptrio("list", written, cwd=tmp_path)
    assert ran.code == 2
    assert ran.error_line == f"mcptrio: error: no such file: {written}; did you mean {meant}?"


async def test_a_gateway_command_written_as_one_string_is_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    config = tmp_path / "gateway.json"
    config.write_text('{"mcpServers": {"notes": {"command": "mcptrio run notes.py"}}}')
    ran = await mcptrio("gateway", config, "--port", "0")
    assert ran.code == 2
    assert ran.error_line == (
        "mcptrio: error: Server 'notes': \"command\" is a whole command line ('mcptrio run"
        ' notes.py\'): give the program alone in "command" and its arguments in "args":'
        ' "command": "mcptrio", "args": ["run", "notes.py"]'
    )
