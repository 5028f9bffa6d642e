"""Which worker owns a handshake-era session, whether it is alive, and its mailbox.

A handshake-era session is an actor on the worker that handled its ``initialize``; a request for
it that reaches another worker is forwarded there (see
:mod:`mcptrio.transports.http.relay.session_relay`). The directory answers the two questions
forwarding asks, *who owns this session* and *is it still there*, and carries the forwarded
messages.

Ownership is written into the session id rather than into a shared map: every worker (each
process start, a restarted worker included) draws an *instance* name, and its session ids are
``"<instance>.<128 random bits>"``. Finding the owner costs no round trip, the directory needs no
entry per session (nothing to clean up when sessions end), and a session id stays unguessable.
What the directory keeps per instance is a liveness key, refreshed every
:data:`HEARTBEAT_PERIOD` seconds and expiring :data:`LIVENESS_TTL` seconds after the last
refresh: when a worker dies its key expires and the directory forgets it, with all its sessions,
at once; requests naming them are then served by a worker that adopts each session from its
record (:mod:`.session_records`), or, with adoption off, answered 404 (their clients start new
sessions).

Each instance has a mailbox: a Redis list that only it pops. A forwarded request goes to the
owner's mailbox, its response back in pieces to the forwarding worker's. Lists rather than
pub/sub because a message to a worker that is busy must wait for it, not be lost; one blocking
reader per worker rather than one per exchange, so that a thousand forwarded streams hold one
Redis connection, not a thousand. A mailbox expires with its instance.
"""

from __future__ import annotations

import os
import re
import secrets
from typing import Final, Protocol

import trio

from .errors import StoreUnavailable

__all__ = [
    "HEARTBEAT_PERIOD",
    "LIVENESS_TTL",
    "DirectoryUnavailable",
    "SessionDirectory",
    "instance_of",
    "new_instance_name",
]

#: Seconds between refreshes of a live instance's key.
HEARTBEAT_PERIOD: Final = 1.0
#: Seconds after its last refresh that an instance counts as gone.
LIVENESS_TTL: Final = 5.0
_INSTANCE_CHARS = re.compile(r"[^A-Za-z0-9_]")


class DirectoryUnavailable(StoreUnavailable):
    """The directory (Redis) did not answer in time, or failed: forwarding cannot proceed now."""


def new_instance_name() -> str:
    """A fresh instance name: the worker's label (``MCPTRIO_WORKER_ID``), if any, and 48 random
    bits, so a restarted worker never takes over its predecessor's sessions."""
    label = _INSTANCE_CHARS.sub("", os.environ.get("MCPTRIO_WORKER_ID", ""))[:16]
    return f"{label}_{secrets.token_hex(6)}" if label else f"w{secrets.token_hex(6)}"


def instance_of(session_id: str) -> str | None:
    """The instance named by ``session_id``, or ``None`` for an id without one."""
    instance, dot, _rest = session_id.partition(".")
    return instance if dot and instance else None


class SessionDirectory(Protocol):
    """What forwarding needs from the directory; see the module docstring."""

    @property
    def instance(self) -> str:
        """This worker's instance name (the prefix of the session ids it makes)."""
        ...

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep this instance alive in the directory until cancelled; then leave it."""
        ...

    async def leave(self) -> None:
        """Leave the directory now, while :meth:`run` goes on (a worker that stops gracefully:
        others stop forwarding to it, and adopt its sessions); its mailbox is still read."""
        ...

    async def is_alive(self, instance: str) -> bool:
        """Whether ``instance`` refreshed its key within :data:`LIVENESS_TTL`."""
        ...

    async def send(self, instance: str, message: bytes) -> int:
        """Append ``message`` to ``instance``'s mailbox; the mailbox's length after it."""
        ...

    async def receive(self) -> list[bytes]:
        """The next messages of this instance's mailbox, in order (waits for at least one)."""
        ...
