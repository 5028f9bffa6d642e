"""One parser setting for the built-in server and the HTTP client: httptools when it can be
imported, h11 otherwise (mcptrio.transports.http.engine.parser_choice)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import trio

from mcptrio.transports.http.engine.builtin_server import serve_builtin
from mcptrio.transports.http.engine.client_wire import ConnectionParser
from mcptrio.transports.http.engine.parser_choice import httptools_chosen


def test_auto_and_httptools_choose_httptools_where_it_is_installed() -> None:
    pytest.importorskip("httptools")
    assert httptools_chosen("auto")
    assert httptools_chosen("httptools")
    assert ConnectionParser("auto").kind == "httptools"


def test_h11_is_chosen_when_asked_for() -> None:
    assert not httptools_chosen("h11")
    assert ConnectionParser("h11").kind == "h11"


@pytest.fixture
def httptools_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import httptools`` fails in the test, as where it is not installed."""
    monkeypatch.setitem(sys.modules, "httptools", None)


@pytest.mark.usefixtures("httptools_missing")
def test_auto_falls_back_to_h11_where_httptools_cannot_be_imported() -> None:
    assert not httptools_chosen("auto")
    assert ConnectionParser("auto").kind == "h11"


@pytest.mark.usefixtures("httptools_missing")
def test_httptools_insisted_on_where_it_cannot_be_imported_raises_import_error() -> None:
    with pytest.raises(ImportError):
        httptools_chosen("httptools")


def test_an_unknown_parser_name_is_refused_by_server_and_client() -> None:
    bogus: Any = "llhttp"
    with pytest.raises(ValueError, match="unknown parser 'llhttp'"):
        ConnectionParser(bogus)
    with pytest.raises(ValueError, match="unknown parser 'llhttp'"):
        httptools_chosen(bogus)


async def test_the_server_refuses_an_unknown_parser_name_before_listening() -> None:
    never_served: Any = object()
    bogus: Any = "llhttp"
    with trio.fail_after(5), pytest.raises(ValueError, match="unknown parser 'llhttp'"):
        await serve_builtin(never_served, parser=bogus)
