"""A client connected in memory to the server under test, every frame checked against the
official schema of the revision they speak.

::

    async with open_test_client(server) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})

:func:`open_test_client` serves ``server`` in memory in the test's own nursery (its lifespan
included), connects a :class:`~mcptrio.Client` to it, and records every frame both ways in a
:class:`~.transcript.Transcript`. When the block ends without an error, every recorded message
is validated against the schema of the negotiated revision: a message that breaks it fails the
test with :class:`~.transcript.SchemaViolation`, naming the message and what is wrong.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Unpack

from ..client import Client, ClientOptions, open_client
from ..runtime.nurseries import open_unwrapping_nursery
from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE, Transport
from ..transports.memory import memory_transport_pair
from .transcript import RecordingTransport, Transcript

__all__ = ["open_test_client"]


@asynccontextmanager
async def open_test_client(
    server: Any,
    *,
    transcript: Transcript | None = None,
    check_schema: bool = True,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    **options: Unpack[ClientOptions],
) -> AsyncIterator[Client]:
    """A :class:`~mcptrio.Client` of ``server`` (anything with ``serve_session``, such as a
    :class:`mcptrio.Server`), connected in memory; see the module docstring.

    ``options`` are :func:`mcptrio.open_client`'s (``revisions=HANDSHAKE_ERA`` for the
    handshake era; the client probes the stateless era first otherwise; ``handlers=`` with
    :mod:`scripted handlers <.scripted>`). Pass a ``transcript`` to read the messages
    exchanged; ``check_schema=False`` leaves the check out (for a test that sends bad input
    on purpose).
    """
    record = Transcript() if transcript is None else transcript
    client_end, server_end = memory_transport_pair(
        max_frame_size=max_frame_size, carry_results=True
    )
    recording: Transport = RecordingTransport(client_end, record)
    async with open_unwrapping_nursery() as nursery:
        await nursery.start(server.serve_session, server_end)
        async with open_client(recording, **options) as client:
            yield client
        nursery.cancel_scope.cancel()
    if check_schema:
        record.check()
