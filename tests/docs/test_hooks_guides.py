"""The middleware, lifespan and testing how-tos run as written and print what they show."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_server_guides import DOCS, check_programs_print_their_output, programs

PAGES: dict[str, list[str | tuple[str, None]]] = {
    "how-to/use-middleware.md": ["timing.py", "refuse_answer_change.py"],
    "how-to/share-resources-with-a-lifespan.md": [
        "lifespan_store.py",
        "lifespan_failure.py",
        "lifespan_shared.py",
    ],
    "how-to/trace-with-opentelemetry.md": ["traced.py", "traced_asks.py"],
}


@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_shows_its_programs_each_with_its_output(page: str) -> None:
    shown = [p.name if p.output is not None else (p.name, None) for p in programs(page)]
    assert shown == PAGES[page]


@pytest.mark.parametrize("page", list(PAGES))
def test_every_program_prints_what_the_page_says(page: str, tmp_path: Path) -> None:
    check_programs_print_their_output(page, tmp_path)


def test_the_testing_howto_suite_passes_as_written(tmp_path: Path) -> None:
    page = (DOCS / "how-to" / "test-your-server.md").read_text(encoding="utf-8")
    toml = re.search(r"```toml\n(.*?)```", page, re.S)
    assert toml is not None
    (tmp_path / "pyproject.toml").write_text(toml.group(1), encoding="utf-8")
    names = [program.name for program in programs("how-to/test-your-server.md")]
    assert names == [
        "test_greet.py",
        "my_server.py",
        "test_my_server.py",
        "conftest.py",
        "test_with_fixtures.py",
    ]
    for program in programs("how-to/test-your-server.md"):
        (tmp_path / program.name).write_text(program.source, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # test_greet once, test_my_server's four in two eras, and the fixture test in two eras
    # (conftest.py parametrizes the client's options for every test that takes mcp_client).
    assert "11 passed" in run.stdout, run.stdout
