"""``mcptrio dev`` and ``mcptrio run --reload``: a server started again when its file changes.

The reloading tests run the command as a user would (a subprocess, whose own child serves) on
a server file in a temporary folder, edit the file, and call the tool again over HTTP.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from cli_runner import mcptrio_env
from programs import free_port

import mcptrio
from mcptrio.cli import main


def server_file(answer: str) -> str:
    return (
        "import mcptrio\n"
        "server = mcptrio.Server('reloaded')\n\n"
        "@server.tool\n"
        "def answer() -> str:\n"
        f"    return {answer!r}\n"
    )


BROKEN = "import mcptrio\nserver = mcptrio.Server('reloaded'\n"


class Lines:
    """What a process writes on stderr, line by line, as it comes."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._changed = trio.Event()

    async def read(self, stream: trio.abc.ReceiveStream) -> None:
        pending = b""
        while chunk := await stream.receive_some():
            pending += chunk
            *complete, pending = pending.split(b"\n")
            self.lines += [line.decode() for line in complete]
            self._changed.set()
            self._changed = trio.Event()

    async def wait_for(self, found: Callable[[str], bool], since: int = 0) -> int:
        """The index of the first line from ``since`` on that ``found`` accepts, once it came."""
        while True:
            for index in range(since, len(self.lines)):
                if found(self.lines[index]):
                    return index
            await self._changed.wait()

    def url(self, index: int) -> str:
        return self.lines[index].split()[-1]


def serving(line: str) -> bool:
    return line.startswith("Serving reloaded over http at ")


@asynccontextmanager
async def reloading(*args: str | Path, cwd: Path) -> AsyncIterator[tuple[trio.Process, Lines]]:
    """``mcptrio ARGS`` in the background, its stderr read into :class:`Lines`."""
    lines = Lines()
    async with trio.open_nursery() as nursery:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "mcptrio", *map(str, args)],
            cwd=cwd,
            env=mcptrio_env(),
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        nursery.start_soon(lines.read, process.stderr)
        try:
            yield process, lines
        finally:
            with trio.CancelScope(shield=True):
                if process.returncode is None:
                    process.kill()
                await process.wait()


async def answer(url: str) -> str:
    async with mcptrio.open_client(mcptrio.client.http(url, timeout=10)) as client:
        result = await client.call_tool("answer", {})
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


async def test_dev_serves_the_changed_server_on_the_same_port_and_survives_a_broken_edit(
    tmp_path: Path,
) -> None:
    path = tmp_path / "app.py"
    path.write_text(server_file("first"))
    port = free_port()
    with trio.fail_after(120):
        async with reloading("dev", path, "--port", port, cwd=tmp_path) as (process, lines):
            served = await lines.wait_for(serving)
            url = lines.url(served)
            assert url == f"http://127.0.0.1:{port}/mcp"
            assert lines.lines[0] == f"mcptrio: watching the .py files under {tmp_path}"
            inspector = await lines.wait_for(lambda line: "Inspector" in line)
            assert lines.lines[inspector] == (
                "mcptrio: open the MCP Inspector on it: npx @modelcontextprotocol/inspector"
                f" --transport http --server-url {url}"
            )
            assert await answer(url) == "first"

            path.write_text(server_file("second, longer"))
            changed = await lines.wait_for(lambda line: "changed" in line, served + 1)
            assert lines.lines[changed] == "mcptrio: app.py changed: restarting"
            served = await lines.wait_for(serving, changed)
            assert lines.url(served) == url
            assert await answer(url) == "second, longer"

            path.write_text(BROKEN)
            changed = await lines.wait_for(lambda line: "changed" in line, served + 1)
            error = await lines.wait_for(lambda line: line.startswith("mcptrio: error:"), changed)
            assert lines.lines[error].startswith("mcptrio: error: app.py:2: SyntaxError: ")
            assert error == changed + 1

            path.write_text(server_file("third"))
            changed = await lines.wait_for(lambda line: "changed" in line, error + 1)
            served = await lines.wait_for(serving, changed)
            # Between the change and the server serving again, only the change's own line.
            assert served == changed + 1, lines.lines[changed : served + 1]
            assert await answer(url) == "third"
            # The Inspector's command is printed once: the URL has not changed.
            assert sum("Inspector" in line for line in lines.lines) == 1

            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
        # Its child has stopped too: nothing serves on the port any more.
        with pytest.raises(OSError):
            await trio.open_tcp_stream("127.0.0.1", port)


async def test_run_reload_starts_the_server_again_when_its_package_changes(
    tmp_path: Path,
) -> None:
    package = tmp_path / "notes"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "answers.py").write_text("ANSWER = 'before'\n")
    (package / "app.py").write_text(
        server_file("unused").replace("return 'unused'", "return answers.ANSWER")
        + "from notes import answers\n"
    )
    with trio.fail_after(120):
        args = ("run", "notes.app", "--reload", "--transport", "http", "--port", "0")
        async with reloading(*args, cwd=tmp_path) as (process, lines):
            served = await lines.wait_for(serving)
            assert lines.lines[0] == f"mcptrio: watching the .py files under {package}"
            assert await answer(lines.url(served)) == "before"
            (package / "answers.py").write_text("ANSWER = 'after'\n")
            changed = await lines.wait_for(lambda line: "changed" in line, served + 1)
            assert (
                lines.lines[changed]
                == f"mcptrio: {Path('notes', 'answers.py')} changed: restarting"
            )
            served = await lines.wait_for(serving, changed)
            assert await answer(lines.url(served)) == "after"
            assert not any("Inspector" in line for line in lines.lines)
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0


def test_run_reload_over_stdio_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app.py").write_text(server_file("x"))
    assert main(["run", str(tmp_path / "app.py"), "--reload"]) == 2
    assert capsys.readouterr().err == (
        "mcptrio: error: --reload restarts a server over HTTP or WebSocket (an MCP client"
        " starts a stdio server itself): add --transport http\n"
    )


@pytest.mark.parametrize("transport", ["stdio", "websocket"])
def test_dev_refuses_another_transport(
    transport: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app.py").write_text(server_file("x"))
    assert main(["dev", str(tmp_path / "app.py"), "--transport", transport]) == 2
    assert capsys.readouterr().err == (
        f"mcptrio: error: mcptrio dev serves over HTTP: leave out --transport {transport}\n"
    )


def test_dev_of_what_is_not_there_fails_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["dev", str(tmp_path / "missing.py")]) == 2
    assert capsys.readouterr().err == f"mcptrio: error: no such file: {tmp_path / 'missing.py'}\n"
    monkeypatch.chdir(tmp_path)
    assert main(["dev", "no_such_module"]) == 2
    assert capsys.readouterr().err == (
        f"mcptrio: error: no module named 'no_such_module' (from {tmp_path})\n"
    )


def test_dev_checks_the_options_of_run_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "app.py").write_text(server_file("x"))
    assert main(["dev", str(tmp_path / "app.py"), "--port", "70000"]) == 2
    assert capsys.readouterr().err == (
        "mcptrio: error: --port 70000 is not a TCP port (0 to 65535)\n"
    )
    assert main(["dev", str(tmp_path / "app.py"), "--no-such-option"]) == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_dev_help_says_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dev", "--help"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: mcptrio dev TARGET [options of mcptrio run]\n")
    assert "MCP Inspector" in shown
