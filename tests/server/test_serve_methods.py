"""``Server.serve_*`` take the options of the free function of the same name, with the same
defaults, so that moving from one to the other changes nothing but the first argument."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

import mcptrio
from mcptrio.transports.http.serve import serve_http
from mcptrio.transports.websocket_server import serve_websocket


def options(fn: Callable[..., Any], skip: int, free: Callable[..., Any]) -> dict[str, Any]:
    """``fn``'s parameters after the first ``skip``, with their defaults. Those of a
    ``**options: Unpack[TypedDict]`` are passed on only when given, so their defaults are
    ``free``'s by construction."""
    parameters = list(inspect.signature(fn).parameters.values())[skip:]
    found = {p.name: p.default for p in parameters if p.kind is not p.VAR_KEYWORD}
    for parameter in parameters:
        if parameter.kind is parameter.VAR_KEYWORD:
            # The TypedDict is defined beside the free function (imported for type checking).
            hints = typing.get_type_hints(fn, localns=vars(inspect.getmodule(free)))
            (typed,) = typing.get_args(hints[parameter.name])
            defaults = inspect.signature(free).parameters
            found |= {name: defaults[name].default for name in typing.get_type_hints(typed)}
    return found


@pytest.mark.parametrize(
    ("method", "free"),
    [(mcptrio.Server.serve_http, serve_http), (mcptrio.Server.serve_websocket, serve_websocket)],
    ids=["serve_http", "serve_websocket"],
)
def test_a_serve_method_takes_the_free_functions_options(
    method: Callable[..., Any], free: Callable[..., Any]
) -> None:
    # The method's first parameter is self; the free function's, the server.
    mine, theirs = options(method, 1, free), options(free, 1, free)
    assert {name: mine.get(name, "missing") for name in theirs} == theirs
