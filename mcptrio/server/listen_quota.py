"""What one client may hold of a server's ``subscriptions/listen`` streams: :class:`ListenQuota`.

A listen stream is cheap to ask for and lives until its client ends it: a request actor, its
response stream, and a listener on the subscription bus keeping the URIs it subscribed to (up
to the bus's ``max_uris_per_listener``, each as long as a frame allows). The bus bounds the
streams of the whole server and the URIs of each stream, not what one client holds: one client
over 40 WebSocket connections could hold about 1.7 GB of them. So each client may hold at most
``max_streams_per_client`` listen streams (32) and ``max_bytes_per_client`` bytes of subscribed
URIs across them (1 MiB); past either, a listen request is refused with -32600 naming the
setting, and starts nothing.

A client is its principal when the server authenticates (:func:`.requestor.requestor_key`),
else its address (HTTP and WebSocket), else the one peer of the session (stdio, in memory).
Clients behind one proxy share an address, and so one quota: an authenticator gives each user
their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

from ..protocol.errors import InvalidRequest

__all__ = [
    "DEFAULT_MAX_LISTEN_BYTES_PER_CLIENT",
    "DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT",
    "ListenQuota",
]

DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT: Final = 32
DEFAULT_MAX_LISTEN_BYTES_PER_CLIENT: Final = 1 << 20


@dataclass(slots=True, eq=False)
class ListenQuota:
    """The listen streams each client may hold at once (``Server(listen_quota=...)``; see the
    module docstring)."""

    max_streams_per_client: int = DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT
    max_bytes_per_client: int = DEFAULT_MAX_LISTEN_BYTES_PER_CLIENT
    #: Per client key: its streams and the bytes of their URIs (a client holding none is not
    #: kept).
    _held: dict[str, tuple[int, int]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_streams_per_client < 1 or self.max_bytes_per_client < 0:
            raise ValueError(
                "ListenQuota: max_streams_per_client must be at least 1 and max_bytes_per_client"
                " at least 0"
            )

    def held(self, client: str) -> tuple[int, int]:
        """The streams ``client`` holds and the bytes of their URIs."""
        return self._held.get(client, (0, 0))

    @contextmanager
    def taken(self, client: str, uris: Sequence[str]) -> Iterator[None]:
        """Count a listen stream of ``client`` subscribed to ``uris`` while the block runs;
        ``InvalidRequest`` (-32600) if that would pass either bound."""
        streams, nbytes = self.held(client)
        size = sum(len(uri.encode()) for uri in uris)
        if streams >= self.max_streams_per_client:
            raise InvalidRequest(
                f"This client already has {streams} listen streams, the most it may hold"
                f" (Server(listen_quota=ListenQuota(max_streams_per_client=...)))",
                {"maxListenStreamsPerClient": self.max_streams_per_client},
            )
        if nbytes + size > self.max_bytes_per_client:
            raise InvalidRequest(
                f"This client's listen streams would subscribe to {nbytes + size} bytes of URIs,"
                f" more than it may (Server(listen_quota=ListenQuota(max_bytes_per_client="
                f"{self.max_bytes_per_client})))",
                {"maxListenBytesPerClient": self.max_bytes_per_client},
            )
        self._held[client] = (streams + 1, nbytes + size)
        try:
            yield
        finally:
            streams, nbytes = self._held.pop(client)
            if streams > 1:
                self._held[client] = (streams - 1, nbytes - size)
