"""``Server.serve_*`` take the options of the free function of the same name, with the same
defaults, so that moving from one to the other changes nothing but the first argument."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

import mcptrio
from mcptrio.transports.http.serve import serve_http
from mcptrio.transports.websocket_server import serve_websocket


def options(fn: Callable[..., Any], skip: int) -> dict[str, Any]:
    """``fn``'s parameters after the first ``skip``, with their defaults."""
    parameters = list(inspect.signature(fn).parameters.values())[skip:]
    return {p.name: p.default for p in parameters}


@pytest.mark.parametrize(
    ("method", "free"),
    [(mcptrio.Server.serve_http, serve_http), (mcptrio.Server.serve_websocket, serve_websocket)],
    ids=["serve_http", "serve_websocket"],
)
def test_a_serve_method_takes_the_free_functions_options(
    method: Callable[..., Any], free: Callable[..., Any]
) -> None:
    # The method's first parameter is self; the free function's, the server.
    mine, theirs = options(method, 1), options(free, 1)
    assert {name: mine.get(name, "missing") for name in theirs} == theirs
