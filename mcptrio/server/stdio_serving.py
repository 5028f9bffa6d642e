"""Serving one session on this process's stdin and stdout, and ending it when stdin ends.

End of input is how an MCP client over stdio says it is done (it closes the server's stdin,
then waits for the server to exit), and how ``echo '{...}' | mcptrio run app.py`` ends. Either
way the requests already read are owed an answer, so the session does not end at once: the
transport's reader, at end of input, waits until every request in flight has answered and
every answer is written, for at most ``end_of_input_grace`` seconds. Then the session ends as it
does over any transport, cancelling whatever still runs. The bound keeps a server whose client
has gone from lingering over work no one will read (a client that waits longer than the grace
stops the server with ``SIGTERM`` anyway, as the spec says).

A ``shutdown`` event (set by ``Server.run`` on SIGTERM or Ctrl-C) ends the session the same
way: the requests in flight are answered (a request read meanwhile too), then the session ends;
bound that wait yourself, as ``Server.run`` does with its ``grace``.

A person who starts a stdio server in a terminal sees nothing happen, as the server waits for
a client that will never come: when stdin is a terminal, one line on stderr says what is served
and how to stop it.
"""

from __future__ import annotations

import math
import sys
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any, Final, Protocol

import trio

from ..protocol.types import Implementation
from ..runtime.session import Session
from ..runtime.session_drain import requests_answered
from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE, Transport
from ..transports.stdio import open_stdio_server_transport

__all__ = ["END_OF_INPUT_GRACE", "serve_stdio_session"]

#: Seconds the requests in flight get to answer once stdin has ended.
END_OF_INPUT_GRACE: Final = 5.0

_ON_A_TERMINAL = (
    "Serving {name} over stdio: MCP clients start this command and speak JSON-RPC on its stdin"
    " and stdout; type one message a line to try it, Ctrl-D or Ctrl-C to stop"
)


class _StdioServer(Protocol):
    """What serving over stdio needs of a server (a :class:`mcptrio.Server` is one)."""

    info: Implementation

    def open_lifespan(self) -> AbstractAsyncContextManager[Any]: ...

    def session(self, transport: Transport) -> Session: ...


async def serve_stdio_session(
    server: _StdioServer,
    *,
    stdin: trio.abc.ReceiveStream | None = None,
    stdout: trio.abc.SendStream | None = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    end_of_input_grace: float = END_OF_INPUT_GRACE,
    shutdown: trio.Event | None = None,
    task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve one session of ``server`` on stdin and stdout until stdin ends and the requests in
    flight have answered (see the module docstring); reports the ``Session``. ``stdin`` and
    ``stdout`` are streams to use instead of the process's own (see
    :func:`~mcptrio.transports.stdio.open_stdio_server_transport`); ``shutdown``, when set,
    ends the session once the requests in flight have answered (see the module docstring)."""
    if stdin is None and sys.stdin is not None and sys.stdin.isatty():
        print(_ON_A_TERMINAL.format(name=server.info.name), file=sys.stderr, flush=True)
    async with (
        open_stdio_server_transport(
            stdin=stdin, stdout=stdout, max_frame_size=max_frame_size
        ) as transport,
        server.open_lifespan(),
    ):
        session = server.session(transport)
        # Set before the session reads: its first read may already be the end of input.
        transport.at_end_of_input = partial(requests_answered, session, end_of_input_grace)
        async with trio.open_nursery() as nursery:

            async def run_session(task_status: trio.TaskStatus[None]) -> None:
                await session.run(task_status=task_status)
                # Ended (by the end of input, or a shutdown): so does the shutdown's watch.
                nursery.cancel_scope.cancel()

            if shutdown is not None:
                nursery.start_soon(_end_on_shutdown, shutdown, session)
            await nursery.start(run_session)
            task_status.started(session)


async def _end_on_shutdown(shutdown: trio.Event, session: Session) -> None:
    await shutdown.wait()
    await requests_answered(session, math.inf)
    session.close()
