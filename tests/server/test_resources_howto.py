"""The resources how-to (docs/how-to/resources.md) runs as written and prints what it shows."""

from __future__ import annotations

from pathlib import Path

from programs import programs_and_outputs, run_python

HOWTO = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "resources.md"


def test_the_howto_has_a_server_and_programs_with_their_output() -> None:
    programs, outputs = programs_and_outputs(HOWTO)
    assert list(programs) == [
        "library_server.py",
        "read_library.py",
        "library_errors.py",
        "safe_files.py",
    ]
    assert list(outputs) == ["read_library.py", "library_errors.py", "safe_files.py"]


def test_howto_programs_print_what_the_howto_shows(tmp_path: Path) -> None:
    programs, outputs = programs_and_outputs(HOWTO)
    for name, body in programs.items():
        (tmp_path / name).write_text(body)
    for name, expected in outputs.items():
        ran = run_python(name, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.splitlines() == expected.splitlines(), name
