"""The gateway tutorial and the multiplexing guides run as written and print what they say."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from test_server_guides import DOCS, check_programs_print_their_output, programs

PAGES: dict[str, list[str | tuple[str, None]]] = {
    "tutorials/build-a-gateway.md": [
        ("weather_server.py", None),
        ("notes_server.py", None),
        "try_gateway.py",
        "try_filters.py",
        "try_failure.py",
        "try_config.py",
    ],
    "how-to/mount-servers.md": ["mounted.py", "at_run_time.py"],
    "how-to/serve-several-servers.md": ["by_path.py"],
    "how-to/run-a-gateway.md": [("upstreams.py", None), "in_code.py", "status.py"],
}


@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_shows_its_programs_each_with_its_output(page: str) -> None:
    shown = [p.name if p.output is not None else (p.name, None) for p in programs(page)]
    assert shown == PAGES[page]


@pytest.mark.parametrize("page", list(PAGES))
def test_every_program_prints_what_the_page_says(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "python" in a gateway.json is this one (with mcptrio importable).
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    # A page's JSON block is the gateway.json its programs read.
    text = (DOCS / page).read_text(encoding="utf-8")
    for body in re.findall(r"^```json\n(.*?)^```", text, re.S | re.M):
        (tmp_path / "gateway.json").write_text(body, encoding="utf-8")
    check_programs_print_their_output(page, tmp_path)
