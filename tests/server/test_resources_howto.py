"""The resources how-to (docs/how-to/resources.md) runs as written and prints what it shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HOWTO = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "resources.md"
# A fenced block: its language, and its body.
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def programs_and_outputs(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """The ``# name.py`` python blocks, and the text block that follows each of them."""
    programs: dict[str, str] = {}
    outputs: dict[str, str] = {}
    previous: str | None = None
    for language, body in _BLOCK.findall(text):
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


def test_the_howto_has_a_server_and_programs_with_their_output() -> None:
    programs, outputs = programs_and_outputs(HOWTO.read_text())
    assert list(programs) == ["library_server.py", "read_library.py", "library_errors.py"]
    assert list(outputs) == ["read_library.py", "library_errors.py"]


def test_howto_programs_print_what_the_howto_shows(tmp_path: Path) -> None:
    programs, outputs = programs_and_outputs(HOWTO.read_text())
    for name, body in programs.items():
        (tmp_path / name).write_text(body)
    for name, expected in outputs.items():
        ran = subprocess.run(
            [sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.splitlines() == expected.splitlines(), name
