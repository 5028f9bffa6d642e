"""``mcptrio run --openapi SPEC``: the server, from the options of the command line.

The options (``mcptrio run --help`` lists them) map onto :func:`~.server.server_from_openapi`'s
keywords. A header value written ``$NAME`` (or ``${NAME}``) is read from the environment
variable ``NAME``, so that a credential need not be on a command line other users can read.
Every mistake is an :class:`~.document.OpenApiError`, one line naming the option or the
document.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence

import trio

from ..server import Server
from ..server.serving_options import ServingOptions
from .document import OpenApiDocument, OpenApiError, fetch_document, read_document
from .pass_through import PassThroughServing
from .selection import OperationFilter
from .server import server_from_openapi

__all__ = ["server_from_arguments", "serving_with_pass_through"]

_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def _headers(given: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for text in given:
        name, colon, value = text.partition(":")
        if not colon or not name.strip():
            raise OpenApiError(f"--api-header {text!r}: write NAME: VALUE")
        value = value.strip()
        variable = _VARIABLE.fullmatch(value)
        if variable is not None:
            found = os.environ.get(variable[1])
            if found is None:
                raise OpenApiError(f"--api-header {name.strip()}: ${variable[1]} is not set")
            value = found
        headers[name.strip()] = value
    return headers


def _document(spec: str, timeout: float) -> OpenApiDocument:
    if spec.startswith(("http://", "https://")):
        return trio.run(lambda: fetch_document(spec, timeout=timeout))
    return read_document(spec)


def server_from_arguments(args: argparse.Namespace) -> Server:
    """The server ``mcptrio run --openapi`` serves."""
    select = OperationFilter(
        include=args.operation or (),
        exclude=args.exclude_operation or (),
        tags=args.tag or (),
        methods=args.method or (),
        paths=args.route or (),
    )
    if args.forward_header and args.transport == "stdio":
        raise OpenApiError(
            "--forward-header passes on headers of HTTP requests: serve --transport http"
        )
    return server_from_openapi(
        _document(args.openapi, args.api_timeout),
        args.base_url,
        select=select,
        gets_as=args.gets_as,
        headers=_headers(args.api_header or ()),
        forward_headers=args.forward_header or (),
        timeout=args.api_timeout,
    )


def serving_with_pass_through(serving: ServingOptions, args: argparse.Namespace) -> ServingOptions:
    """``serving``, recording the ``--forward-header`` headers of each request (unchanged
    without them)."""
    if not getattr(args, "forward_header", None):
        return serving
    return PassThroughServing.of(serving, args.forward_header)
