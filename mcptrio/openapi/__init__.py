"""MCP servers made from OpenAPI 3.0 and 3.1 documents (``mcptrio run --openapi``).

::

    from mcptrio.openapi import server_from_openapi

    server = server_from_openapi("openapi.json", "http://127.0.0.1:8000")

See ``docs/how-to/openapi.md``, and ``docs/explanation/openapi.md`` for the decisions.
"""

from .document import OpenApiDocument as OpenApiDocument
from .document import OpenApiError as OpenApiError
from .document import fetch_document as fetch_document
from .document import parse_document as parse_document
from .document import read_document as read_document
from .pass_through import HeaderPrincipal as HeaderPrincipal
from .pass_through import PassThroughHeaders as PassThroughHeaders
from .selection import OperationFilter as OperationFilter
from .server import GetsAs as GetsAs
from .server import server_from_openapi as server_from_openapi

__all__ = [
    "GetsAs",
    "HeaderPrincipal",
    "OpenApiDocument",
    "OpenApiError",
    "OperationFilter",
    "PassThroughHeaders",
    "fetch_document",
    "parse_document",
    "read_document",
    "server_from_openapi",
]
