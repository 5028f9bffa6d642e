"""pytest fixtures for testing an MCP server with :func:`~mcptrio.testing.open_test_client`.

Opt in from your ``conftest.py`` (the fixtures are async: pytest-trio runs them)::

    pytest_plugins = ["mcptrio.testing.pytest_plugin"]

    @pytest.fixture
    def mcp_server() -> mcptrio.Server:
        return my_server

and a test asks for ``mcp_client``. The fixtures:

- ``mcp_server``: yours to define, the server under test (anything with ``serve_session``);
- ``mcp_client_options``: the options of :func:`mcptrio.open_client` (``{}`` unless you
  override it: ``{"revisions": HANDSHAKE_ERA}`` for the handshake era, ``{"handlers": ...}``
  for scripted answers; parametrize it to run each test in both eras);
- ``mcp_transcript``: the :class:`~mcptrio.testing.Transcript` of the exchange;
- ``mcp_client``: a connected :class:`~mcptrio.Client`; when the test ends, every message
  exchanged is checked against the official schema of the negotiated revision, and one that
  breaks it fails the test (as an error in teardown).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ..client import Client
from .client import open_test_client
from .transcript import Transcript

__all__ = ["mcp_client", "mcp_client_options", "mcp_transcript"]


@pytest.fixture
def mcp_transcript() -> Transcript:
    """The messages ``mcp_client`` exchanges with ``mcp_server``."""
    return Transcript()


@pytest.fixture
def mcp_client_options() -> dict[str, Any]:
    """Options for :func:`mcptrio.open_client`; override this fixture to change them."""
    return {}


@pytest.fixture
async def mcp_client(
    mcp_server: Any, mcp_transcript: Transcript, mcp_client_options: dict[str, Any]
) -> AsyncIterator[Client]:
    """A client connected in memory to ``mcp_server``, every frame schema-checked."""
    async with open_test_client(
        mcp_server, transcript=mcp_transcript, **mcp_client_options
    ) as client:
        yield client
