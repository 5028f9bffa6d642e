"""What you need to test your own MCP server with pytest-trio.

- :func:`open_test_client`: a client connected in memory to your server, whose every message
  (both ways) is checked against the official JSON schema of the revision they negotiated;
- :class:`Transcript`: the messages exchanged, in order, to assert on;
- :class:`ScriptedSampling`, :class:`ScriptedElicitation`, :func:`roots`: a client that answers
  your server's sampling, elicitation and roots requests as the test says;
- :func:`validate_message` and :func:`validate_exchange`: the schema check itself, with the
  official schemas of every revision mcptrio speaks shipped as package data;
- :mod:`mcptrio.testing.pytest_plugin`: the same as pytest fixtures (``mcp_client``,
  ``mcp_transcript``), opted into from a ``conftest.py``.

See ``docs/how-to/test-your-server.md``.
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

__all__ = [
    "REVISIONS",
    "Entry",
    "SchemaViolation",
    "ScriptedElicitation",
    "ScriptedSampling",
    "Transcript",
    "ValidationError",
    "open_test_client",
    "roots",
    "validate_exchange",
    "validate_message",
]
