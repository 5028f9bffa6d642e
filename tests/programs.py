"""Programs of this repository and of its pages: importing one to call its functions, running
one to read what it prints, and finding those a page shows."""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["ROOT", "import_program", "programs_and_outputs", "run_python"]

ROOT = Path(__file__).resolve().parents[1]
# A fenced block of a page: its language, and its body.
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def import_program(name: str, path: Path) -> ModuleType:
    """The file at ``path`` (an example, a script: in no package) as the module ``name``, run
    once per test session."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        # Dataclasses look their module up while the file runs.
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def run_python(program: str | Path, *, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``python PROGRAM`` in ``cwd``, run to its end (60 s at most) with this checkout
    importable; what it printed, as text."""
    return subprocess.run(
        [sys.executable, str(program)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def programs_and_outputs(page: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The ``# name.py`` python blocks of ``page``, and the text block that follows each."""
    programs: dict[str, str] = {}
    outputs: dict[str, str] = {}
    previous: str | None = None
    for language, body in _BLOCK.findall(page.read_text()):
        if language == "python":
            first, _, _ = body.partition("\n")
            name = first.removeprefix("# ").strip()
            assert name.endswith(".py"), f"python block without a '# name.py' line: {first!r}"
            programs[name] = body
            previous = name
        elif language == "text" and previous is not None:
            outputs[previous] = body
            previous = None
    return programs, outputs


def free_port() -> int:
    """A loopback port free now, for a program that takes its port on its command line (a test
    that binds its own socket uses port 0 instead)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
