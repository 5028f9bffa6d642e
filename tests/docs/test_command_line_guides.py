"""The command-line guides run as written: every ``console`` block's commands print what the
page shows.

A page's ``python`` blocks (first line ``# name.py``) are written, in order, into one temporary
folder; each ``console`` block is a list of commands (``$ ...``), each followed by what it
prints (stdout, then stderr). ``mcptrio`` is run as ``python -m mcptrio`` with this checkout
importable and ``python`` is this interpreter. A command ending in ``&`` is started in the
background: the lines shown under it are the first it prints on stderr, and it is stopped when
the page ends. Port 8000, in commands and programs, is replaced by a free port; in the output,
this interpreter reads as ``/path/to/python`` and the temporary folder as ``/path/to``.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
from processes import stop_process
from programs import free_port
from test_server_guides import DOCS

ROOT = DOCS.parent
PAGES = ["how-to/use-the-command-line.md", "how-to/run-a-server.md"]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_HEADER = re.compile(r"# (\S+\.py)\n")


@dataclass(frozen=True)
class Command:
    line: str
    output: list[str]


def blocks(page: str) -> list[tuple[str, str]]:
    return _FENCE.findall((DOCS / page).read_text(encoding="utf-8"))


def commands(body: str) -> list[Command]:
    found: list[Command] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            found.append(Command(line[2:], []))
        else:
            assert found, f"output before any command: {line!r}"
            found[-1].output.append(line)
    return found


class Page:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = str(free_port())
        self.background: list[subprocess.Popen[str]] = []
        # A guide's command may write the user's files (an MCP client's configuration, a token
        # cache): here they go to the page's own folder, never the real home.
        home = folder / "home"
        home.mkdir(exist_ok=True)
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "APPDATA": str(home / "AppData"),
        }

    def argv(self, line: str) -> list[str]:
        words = shlex.split(line.replace("8000", self.port))
        argv: list[str] = []
        for index, word in enumerate(words):
            if word == "python":
                argv.append(sys.executable)
            elif word == "mcptrio" and index == 0:
                argv += [sys.executable, "-m", "mcptrio"]
            else:
                argv.append(word)
        return argv

    def expected(self, output: list[str]) -> list[str]:
        return [line.replace("8000", self.port) for line in output]

    def readable(self, text: str) -> list[str]:
        text = text.replace(sys.executable, "/path/to/python").replace(str(self.folder), "/path/to")
        return text.rstrip("\n").splitlines() if text.strip() else []

    def run(self, command: Command) -> None:
        if command.line.endswith(" &"):
            self.start(command)
            return
        done = subprocess.run(
            self.argv(command.line),
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        printed = self.readable(done.stdout + done.stderr)
        assert printed == self.expected(command.output), f"$ {command.line}"

    def start(self, command: Command) -> None:
        process = subprocess.Popen(
            self.argv(command.line[:-2]),
            cwd=self.folder,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.background.append(process)  # type: ignore[arg-type]
        lines: queue.Queue[str] = queue.Queue()
        assert process.stderr is not None
        threading.Thread(target=_pump, args=(process.stderr, lines), daemon=True).start()
        printed = [lines.get(timeout=30).rstrip("\n") for _ in command.output]
        assert printed == self.expected(command.output), f"$ {command.line}"

    def stop(self) -> None:
        for process in self.background:
            stop_process(process)  # type: ignore[arg-type]


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)


@pytest.mark.parametrize("page", PAGES)
def test_every_command_prints_what_the_page_says(page: str, tmp_path: Path) -> None:
    runner = Page(tmp_path)
    ran = 0
    try:
        for language, body in blocks(page):
            if language == "python":
                header = _HEADER.match(body)
                assert header, f"{page}: a python block must start with '# name.py'"
                source = body.replace("8000", runner.port)
                (tmp_path / header.group(1)).write_text(source, encoding="utf-8")
            elif language == "console":
                for command in commands(body):
                    runner.run(command)
                    ran += 1
    finally:
        runner.stop()
    assert ran >= 3, f"{page} shows too few commands"
