"""The guide to running a server written for the official SDK
(``docs/how-to/migrate-from-the-official-sdk.md``) runs as written and prints what it says, and
its table of what is left out names everything the mirror refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from programs import ROOT, programs_and_outputs, run_python

pytest.importorskip("pydantic")

from mcptrio.compat.mcpserver.unmirrored import UNMIRRORED_MEMBERS, UNMIRRORED_NAMES

PAGE = ROOT / "docs" / "how-to" / "migrate-from-the-official-sdk.md"


def test_the_guide_runs_as_written(tmp_path: Path) -> None:
    programs, outputs = programs_and_outputs(PAGE)
    assert list(programs) == ["weather_server.py", "try_weather.py"]
    for name, source in programs.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    run = run_python("try_weather.py", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == outputs["try_weather.py"].splitlines()


def test_the_guide_lists_everything_the_mirror_leaves_out() -> None:
    page = PAGE.read_text(encoding="utf-8")
    left_out = page.split("## What is left out", 1)[1]
    for name in UNMIRRORED_NAMES:
        assert f"`{name}`" in left_out, name
    for owner, members in UNMIRRORED_MEMBERS.items():
        for name in members:
            assert f"`{name}`" in left_out or f"`{owner}.{name}`" in left_out, name
