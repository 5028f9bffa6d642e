"""The server tutorial and guides run as written and print what they say they print.

Every python block of these pages is a whole program whose first line names it
(``# try_step1.py``). A block followed by a ``text`` block is run, and its standard output must
be exactly that text; a block with no output block is a module the next programs import (the
tutorial shows ``notes_server.py`` again at each step, and each version replaces the last).
The blocks of a page are written and run in order, in one temporary folder per page.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_HEADER = re.compile(r"# (\S+\.py)\n")


@dataclass(frozen=True)
class Program:
    name: str
    source: str
    output: str | None  # None: a module, only written to disk


def programs(page: str) -> list[Program]:
    """The programs of ``page`` in order, each with the output shown after it."""
    blocks = _FENCE.findall((DOCS / page).read_text(encoding="utf-8"))
    found: list[Program] = []
    for index, (language, body) in enumerate(blocks):
        if language != "python":
            continue
        header = _HEADER.match(body)
        assert header, f"{page}: a python block must start with '# name.py':\n{body[:80]}"
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        output = following[1] if following is not None and following[0] == "text" else None
        found.append(Program(header.group(1), body, output))
    return found


# Each page, and its programs in order: name, or (name, None) for a module run by no one.
PAGES: dict[str, list[str | tuple[str, None]]] = {
    "tutorials/build-a-notes-server.md": [
        ("notes_server.py", None),
        "try_step1.py",
        ("notes_server.py", None),
        "try_step2.py",
        ("notes_server.py", None),
        "try_step3.py",
        ("notes_server.py", None),
        "try_step4.py",
        ("notes_server.py", None),
        "try_step5.py",
        "try_stdio.py",
        "try_http.py",
    ],
    "how-to/use-pydantic-models.md": ["pydantic_tools.py"],
    "tutorials/show-a-chart-with-mcp-apps.md": [
        ("chart_server.py", None),
        "try_as_host.py",
        "try_without_apps.py",
    ],
    "how-to/asyncio-libraries.md": ["library_tools.py", ("interruptible.py", None)],
    "how-to/check-health-and-collect-metrics.md": ["probes_and_metrics.py"],
    "how-to/talk-back-to-the-client.md": [
        "progress_and_logs.py",
        "capability_fallback.py",
        "sampling.py",
        "sampling_with_tools.py",
        "elicit_form.py",
        "elicit_url.py",
        "roots.py",
        "cancellation.py",
    ],
    "how-to/change-the-server-at-run-time.md": [
        "plugins.py",
        "declare.py",
        "subscriptions.py",
        "slow_subscriber.py",
        "pagination.py",
    ],
    "how-to/long-running-tools.md": [
        ("render_server.py", None),
        "render_as_task.py",
        "limits.py",
        "client_side_task.py",
    ],
    "how-to/log-to-the-client.md": [
        "log_levels.py",
        "per_session_levels.py",
        "bridge_logging.py",
    ],
    "how-to/describe-your-server.md": [
        "describe.py",
        "capabilities.py",
        "who_is_calling.py",
    ],
    "how-to/protect-your-server.md": [
        "protect_with_dev_server.py",
        "real_provider.py",
        "introspection.py",
    ],
}


@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_shows_its_programs_each_with_its_output(page: str) -> None:
    shown = [p.name if p.output is not None else (p.name, None) for p in programs(page)]
    assert shown == PAGES[page]


@pytest.mark.parametrize("page", list(PAGES))
def test_every_program_prints_what_the_page_says(page: str, tmp_path: Path) -> None:
    check_programs_print_their_output(page, tmp_path)


def check_programs_print_their_output(page: str, tmp_path: Path) -> None:
    """Write every program of ``page`` into ``tmp_path``, run those with an output block, and
    compare what each prints with it (the client guides use this too)."""
    for program in programs(page):
        (tmp_path / program.name).write_text(program.source, encoding="utf-8")
        if program.output is None:
            continue
        run = subprocess.run(
            [sys.executable, program.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, f"{page}: {program.name} failed:\n{run.stderr}"
        assert run.stdout.splitlines() == program.output.splitlines(), (
            f"{page}: {program.name} printed something else:\n{run.stdout}"
        )
