"""What the gateway can tell about an upstream's command: before it runs, that it was written as
one string (``"command": "mcptrio run notes.py"``); after it failed to start, that it cannot
start at all (no such program, no such folder, not executable), which no retry would change.

Both are mistakes of the configuration, so each is said once, in one line naming the upstream
and what to write instead, rather than retried with backoff for as long as the gateway runs.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..client import Target
from ..client.targets import StdioTarget

__all__ = ["cannot_start", "check_command"]


def check_command(
    command: str, args: Sequence[str], cwd: Path, env: Mapping[str, str] | None
) -> None:
    """``ValueError`` for a ``command`` that is a program and its arguments in one string:
    one with spaces that names no file (from ``cwd``) and no program on ``PATH``. The message
    shows the ``command`` and ``args`` to write instead."""
    if not any(c.isspace() for c in command.strip()):
        return
    path = (env or os.environ).get("PATH")
    if (cwd / command).exists() or shutil.which(command, path=path) is not None:
        return  # a program whose name has spaces
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    split = {"command": words[0], "args": [*words[1:], *args]}
    written = json.dumps(split)[1:-1]
    raise ValueError(
        f'"command" is a whole command line ({command!r}): give the program alone in "command"'
        f' and its arguments in "args": {written}'
    )


def cannot_start(target: Target, error: BaseException) -> str | None:
    """Why a stdio ``target`` whose start raised ``error`` can never start, in a few words;
    ``None`` when ``error`` is not such a failure (the server may start next time)."""
    if not isinstance(target, StdioTarget):
        return None
    program = os.fspath(target.command[0])
    cwd = None if target.cwd is None else os.fspath(target.cwd)
    if isinstance(error, FileNotFoundError | NotADirectoryError):
        if cwd is not None and error.filename is not None and os.fspath(error.filename) == cwd:
            return f"its folder {cwd} does not exist"
        if os.sep in program:
            return f"its command {program!r} is no such file"
        return f"its command {program!r} is not a program on PATH"
    if isinstance(error, PermissionError):
        return f"its command {program!r} is not an executable program"
    return None
