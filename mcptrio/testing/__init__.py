"""What you need to test your own MCP server with pytest-trio.

- :func:`open_test_client`: a client connected in memory to your server, whose every message
  (both ways) is checked against the official JSON schema of the revision they negotiated;
- :class:`Transcript`: the messages exchanged, in order, to assert on;
- :class:`ScriptedSampling`, :class:`ScriptedElicitation`, :func:`roots`: a client that answers
  your server's sampling, elicitation and roots requests as the test says;
- :func:`validate_message` and :func:`validate_exchange`: the schema check itself, with the
  official schemas of every revision mcptrio speaks shipped as package data;
- :mod:`mcptrio.testing.pytest_plugin`: the same as pytest fixtures (``mcp_client``,
  ``mcp_transcript``), opted into from a ``conftest.py``;
- :mod:`mcptrio.testing.transport_suite`: the transport conformance suite, which mcptrio runs
  against each of its transports and you run against your own: describe it in a
  :class:`TransportUnderTest` and parametrize a test with :func:`transport_suite_params`.

See ``docs/how-to/test-your-server.md`` and ``docs/how-to/test-your-transport.md``.
"""

from __future__ import annotations

from .client import open_test_client as open_test_client
from .schema_check import REVISIONS as REVISIONS
from .schema_check import ValidationError as ValidationError
from .schema_check import validate_exchange as validate_exchange
from .schema_check import validate_message as validate_message
from .scripted import ScriptedElicitation as ScriptedElicitation
from .scripted import ScriptedSampling as ScriptedSampling
from .scripted import roots as roots
from .transcript import Entry as Entry
from .transcript import SchemaViolation as SchemaViolation
from .transcript import Transcript as Transcript
from .transport_suite import CHECKS as CHECKS
from .transport_suite import IN_MEMORY as IN_MEMORY
from .transport_suite import Oversized as Oversized
from .transport_suite import SuiteCase as SuiteCase
from .transport_suite import TransportUnderTest as TransportUnderTest
from .transport_suite import transport_suite_params as transport_suite_params

__all__ = [
    "CHECKS",
    "IN_MEMORY",
    "REVISIONS",
    "Entry",
    "Oversized",
    "SchemaViolation",
    "ScriptedElicitation",
    "ScriptedSampling",
    "SuiteCase",
    "Transcript",
    "TransportUnderTest",
    "ValidationError",
    "open_test_client",
    "roots",
    "transport_suite_params",
    "validate_exchange",
    "validate_message",
]
