"""The WebSocket how-to (docs/how-to/connect-over-websocket.md) runs and prints what it shows."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

HOWTO = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "connect-over-websocket.md"
# A fenced block: its language, and its body.
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)

PROGRAMS = [
    "ws_standalone.py",
    "ws_client_options.py",
    "ws_over_http.py",
    "ws_server_goes_away.py",
]


def programs_and_outputs() -> tuple[dict[str, str], dict[str, str]]:
    """The ``# name.py`` python blocks, and the text block that follows each of them."""
    programs: dict[str, str] = {}
    outputs: dict[str, str] = {}
    previous: str | None = None
    for language, body in _BLOCK.findall(HOWTO.read_text()):
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


def test_every_program_in_the_howto_shows_its_output() -> None:
    programs, outputs = programs_and_outputs()
    assert list(programs) == PROGRAMS
    assert list(outputs) == PROGRAMS


@pytest.mark.parametrize("name", PROGRAMS)
def test_howto_program_prints_what_the_howto_shows(name: str, tmp_path: Path) -> None:
    if (
        name == "ws_over_http.py"
        and importlib.util.find_spec("mcptrio.transports.http.serve") is None
    ):
        pytest.skip("serve_http (mcptrio/transports/http/serve.py) is not in this checkout")
    programs, outputs = programs_and_outputs()
    (tmp_path / name).write_text(programs[name])
    ran = subprocess.run(
        [sys.executable, name], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == outputs[name].splitlines()
