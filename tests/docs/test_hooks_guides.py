"""The middleware, lifespan and testing how-tos run as written and print what they show."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_server_guides import check_programs_print_their_output, programs

PAGES: dict[str, list[str | tuple[str, None]]] = {
    "how-to/use-middleware.md": ["timing.py", "refuse_answer_change.py"],
    "how-to/share-resources-with-a-lifespan.md": [
        "lifespan_store.py",
        "lifespan_failure.py",
        "lifespan_shared.py",
    ],
}


@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_shows_its_programs_each_with_its_output(page: str) -> None:
    shown = [p.name if p.output is not None else (p.name, None) for p in programs(page)]
    assert shown == PAGES[page]


@pytest.mark.parametrize("page", list(PAGES))
def test_every_program_prints_what_the_page_says(page: str, tmp_path: Path) -> None:
    check_programs_print_their_output(page, tmp_path)
