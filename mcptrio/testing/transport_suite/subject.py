"""The transport under test: :class:`TransportUnderTest`, one record of what it is and has.

A transport is tested through two functions its author writes, and nothing else:

- ``serve(server, era)``, an async context manager that serves ``server`` (a
  :class:`mcptrio.Server`) over the transport for the block's duration and yields the *address*
  clients connect to: a URL, a listener object, whatever ``connect`` understands. Leaving the
  block (the suite leaves it, cancelled, to make the server go away) ends every session it
  serves. ``era`` is the era the clients will speak, for a transport served differently in each.
- ``connect(address, **options)``, an async context manager yielding a :class:`mcptrio.Client`
  connected to that address over the transport; ``options`` are
  :func:`mcptrio.open_client`'s (the suite passes the era's ``revisions``, and ``handlers``,
  ``notifications``, ``timeouts`` as each check needs). It may be entered several times at once
  against one address: one check serves two clients.

Everything else is declared, so that a check that cannot apply is skipped with the reason the
record gives, never silently (:mod:`.catalogue` refuses a record that leaves a reason out).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, Unpack

from ...client import Client, ClientOptions
from ...protocol.errors import ConnectionClosed, InvalidRequest, McpError, TransportError
from ...protocol.revisions import Era
from ...runtime.transport import DEFAULT_MAX_FRAME_SIZE
from ...server import Server

__all__ = ["ERAS", "Connect", "HalfClose", "Oversized", "Serve", "TransportUnderTest"]

#: Both eras, in the order the suite runs them.
ERAS: tuple[Era, ...] = ("handshake", "stateless")


class Serve(Protocol):
    """Serve ``server`` over the transport for the block; yield the address clients reach."""

    def __call__(self, server: Server, era: Era, /) -> AbstractAsyncContextManager[Any]: ...


class Connect(Protocol):
    """A client of the server at ``address``, over the transport, for the block."""

    def __call__(
        self, address: Any, /, **options: Unpack[ClientOptions]
    ) -> AbstractAsyncContextManager[Client]: ...


#: End the sending direction of ``client``'s connection while it still reads (stdio: close
#: the server's stdin). The transport's own code keeps what it needs to find the connection.
HalfClose = Callable[[Client], Awaitable[None]]


@dataclass(frozen=True)
class Oversized:
    """What a call whose message is over the size limit gets: it raises ``error``, and then
    the session carries on, or, with ``ends_connection`` (a transport that cannot skip part of
    a message, as WebSocket, which closes with 1009), every later call fails with
    ``ConnectionClosed``. The defaults are those of stdio and memory: a request over the limit
    is answered -32600 with its id (:class:`~mcptrio.InvalidRequest`), an answer over it fails
    its call with a :class:`~mcptrio.TransportError`."""

    error: type[McpError]
    ends_connection: bool = False


@dataclass(frozen=True, kw_only=True)
class TransportUnderTest:
    """One transport, as the conformance suite runs it.

    ``name`` names it in test ids. ``serve`` and ``connect`` are described in the module
    docstring. The other fields say what the transport has, each with the behaviour the checks
    then expect:

    - ``half_close``: how to end a client's sending direction alone (``None``: it has none, and
      ``lacks["half_close_ends_the_session"]`` must say why);
    - ``max_frame_size``: the limit on one message that ``serve`` and ``connect`` set on both
      ends (``None``: no limit; ``lacks`` then says so for the two oversized checks);
      ``oversized_request`` and ``oversized_answer`` are what the transport documents for a
      call whose request, or whose answer, is over it (:class:`Oversized`);
    - ``server_gone_errors``: what a pending call raises when the server goes away;
    - ``autojump_clock``: every wait is in memory, so the checks may run under pytest-trio's
      ``autojump_clock`` (the test then asks for that fixture); otherwise their waits are real
      and short;
    - ``deadline``: seconds each check may take in all, under ``trio.fail_after``;
    - ``lacks``: why a check does not apply, by check name, era (``"stateless"``, for a
      transport that does not carry that era) or both (``"check_name/stateless"``): those
      cases are skipped with that reason;
    - ``known_bugs``: the same keys, for a check that fails because of a bug: those cases are
      ``xfail(strict=True)`` with that reason, so that the fix is noticed.
    """

    name: str
    serve: Serve
    connect: Connect
    half_close: HalfClose | None = None
    max_frame_size: int | None = DEFAULT_MAX_FRAME_SIZE
    oversized_request: Oversized = Oversized(InvalidRequest)
    oversized_answer: Oversized = Oversized(TransportError)
    server_gone_errors: tuple[type[McpError], ...] = (ConnectionClosed,)
    autojump_clock: bool = False
    deadline: float = 15.0
    lacks: Mapping[str, str] = field(default_factory=dict)
    known_bugs: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_frame_size is not None and self.max_frame_size < 1024:
            raise ValueError(f"TransportUnderTest {self.name!r}: max_frame_size is too small")
