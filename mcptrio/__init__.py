"""mcptrio: a Trio-native, structured-concurrency runtime for the Model Context Protocol.

The names here are the curated public API; ``tests/test_exports.py`` guards them.
"""

from .client import Client as Client
from .client import open_client as open_client
from .protocol.errors import CapabilityNotNegotiated as CapabilityNotNegotiated
from .protocol.errors import ConnectionClosed as ConnectionClosed
from .protocol.errors import InternalError as InternalError
from .protocol.errors import InvalidParams as InvalidParams
from .protocol.errors import InvalidRequest as InvalidRequest
from .protocol.errors import McpError as McpError
from .protocol.errors import MethodNotFound as MethodNotFound
from .protocol.errors import RequestTimeout as RequestTimeout
from .protocol.errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion
from .runtime.context import RequestContext as RequestContext
from .runtime.session import Session as Session
from .server import Server as Server

__version__ = "0.1.0"
