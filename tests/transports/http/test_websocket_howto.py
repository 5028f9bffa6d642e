"""The WebSocket how-to (docs/how-to/connect-over-websocket.md) runs and prints what it shows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from programs import programs_and_outputs, run_python

HOWTO = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "connect-over-websocket.md"

PROGRAMS = [
    "ws_standalone.py",
    "ws_client_options.py",
    "ws_over_http.py",
    "ws_server_goes_away.py",
]


def test_every_program_in_the_howto_shows_its_output() -> None:
    programs, outputs = programs_and_outputs(HOWTO)
    assert list(programs) == PROGRAMS
    assert list(outputs) == PROGRAMS


@pytest.mark.parametrize("name", PROGRAMS)
def test_howto_program_prints_what_the_howto_shows(name: str, tmp_path: Path) -> None:
    if (
        name == "ws_over_http.py"
        and importlib.util.find_spec("mcptrio.transports.http.serve") is None
    ):
        pytest.skip("serve_http (mcptrio/transports/http/serve.py) is not in this checkout")
    programs, outputs = programs_and_outputs(HOWTO)
    (tmp_path / name).write_text(programs[name])
    ran = run_python(name, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == outputs[name].splitlines()
