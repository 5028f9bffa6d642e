"""The client tutorial and guides run as written and print what they say they print.

The pages follow the rules of ``test_server_guides.py``: every python block is a whole
program whose first line names it; a block followed by a ``text`` block is run and must print
exactly that text; one with no output block is a module the next programs import. The blocks of
a page are written and run in order, in one temporary folder per page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_server_guides import DOCS, check_programs_print_their_output, programs

# Each page, and its programs in order: name, or (name, None) for a module run by no one.
PAGES: dict[str, list[str | tuple[str, None]]] = {
    "tutorials/use-two-servers-from-a-trio-app.md": [
        ("notes_server.py", None),
        "step2.py",
        ("weather.py", None),
        "step3.py",
        "step4.py",
        "step5.py",
        "step6.py",
    ],
    "how-to/client-connect.md": [
        ("hello_server.py", None),
        "connect_targets.py",
        "connect_stdio_options.py",
        "server_facts.py",
        "connect_options.py",
    ],
    "how-to/client-call-tools.md": [
        "list_tools.py",
        "call_tools.py",
        "output_validation.py",
    ],
    "how-to/client-resources.md": [
        ("memo_server.py", None),
        "read_resources.py",
        "subscribe.py",
        "cache.py",
    ],
    "how-to/client-prompts-and-completion.md": [
        ("review_server.py", None),
        "prompts.py",
        "complete.py",
    ],
    "how-to/client-sampling.md": [
        "answer_sampling.py",
        "sampling_tools.py",
    ],
    "how-to/client-elicitation.md": [
        "answer_form.py",
        "answer_url.py",
    ],
    "how-to/client-roots.md": [
        "roots.py",
    ],
    "how-to/client-notifications.md": [
        "callbacks.py",
        "streams.py",
        "listen.py",
    ],
    "how-to/client-timeouts-and-cancellation.md": [
        "timeouts.py",
        "cancellation.py",
    ],
    "how-to/client-log-in.md": [
        ("stand_in.py", None),
        "log_in.py",
        "remember.py",
        "machine.py",
    ],
    "how-to/client-several-servers.md": [
        ("notes_server.py", None),
        "group_basics.py",
        "group_failures.py",
    ],
}


_LINK = re.compile(r"\]\(([^)#]+)(?:#[^)]*)?\)")


def test_every_client_guide_is_run_here() -> None:
    guides = {f"how-to/{path.name}" for path in (DOCS / "how-to").glob("client-*.md")}
    assert guides <= set(PAGES)


@pytest.mark.parametrize("page", [*PAGES, "explanation/client-design.md"])
def test_the_pages_links_to_other_pages_resolve(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    for target in _LINK.findall(text):
        if not target.startswith("http"):
            assert (DOCS / page).parent.joinpath(target).exists(), f"{page}: {target}"


@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_shows_its_programs_each_with_its_output(page: str) -> None:
    shown = [p.name if p.output is not None else (p.name, None) for p in programs(page)]
    assert shown == PAGES[page]


@pytest.mark.parametrize("page", list(PAGES))
def test_every_program_prints_what_the_page_says(page: str, tmp_path: Path) -> None:
    check_programs_print_their_output(page, tmp_path)
