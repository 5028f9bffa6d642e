"""One task that watches the sockets of every open streamed response of a built-in server.

While a streamed response is open (an SSE stream), its connection must still learn at once that
the client went away, and take in what the client pipelines meanwhile: that is the
:class:`~.builtin_exchange.DisconnectWatcher`'s job. Trio waits for one descriptor per task, so
the watcher of a TLS connection is a task in the connection's nursery; a server holding
thousands of open GET streams would then hold thousands of tasks, each with its nursery and
cancel scope, a large share of what a session with an open GET stream costs (the figures are in
``docs/explanation/cancellation-and-backpressure.md``, "What an idle session keeps").

On Linux, plain TCP connections are watched here instead: the hub keeps an epoll set of its
own, registers a connection's descriptor while its response streams, and one task (in the
server's nursery, started by :func:`~.builtin_server.serve_builtin`) waits until that set is
readable and hands each ready descriptor to its watcher, which reads without waiting. Adding
and removing a descriptor is a system call, never a wait, so a watcher's ``stop`` returns at
once, and it and the connection still never read at once (they run in one thread, and the
watcher's read is synchronous).

Where ``select.epoll`` does not exist, :meth:`WatchHub.open` returns ``None`` and every watcher
is a task, as for TLS.
"""

from __future__ import annotations

import contextlib
import select
from typing import Protocol

import trio

__all__ = ["WatchHub", "Watched"]


class Watched(Protocol):
    def readable_now(self) -> None:
        """The descriptor is readable (data, EOF or an error): read it without waiting."""


class WatchHub:
    """An epoll set of streaming connections' descriptors, and the task that serves it."""

    __slots__ = ("_closed", "_epoll", "_watched")

    def __init__(self, epoll: select.epoll) -> None:
        self._epoll = epoll
        self._watched: dict[int, Watched] = {}
        self._closed = False

    @classmethod
    def open(cls) -> WatchHub | None:
        """A hub, or ``None`` where epoll is not available (every watcher is then a task)."""
        make = getattr(select, "epoll", None)
        if make is None:
            return None
        return cls(make())

    def add(self, fd: int, watched: Watched) -> bool:
        """Watch ``fd`` for ``watched`` (level-triggered); ``False`` if it cannot be."""
        if self._closed:
            return False
        try:
            self._epoll.register(fd, select.EPOLLIN)
        except OSError:
            return False
        self._watched[fd] = watched
        return True

    def remove(self, fd: int, watched: Watched) -> None:
        """Stop watching ``fd`` for ``watched`` (nothing is delivered to it from now on)."""
        if self._watched.get(fd) is not watched:
            return
        del self._watched[fd]
        if not self._closed:
            # A descriptor closed already was dropped from the set by the kernel.
            with contextlib.suppress(OSError):
                self._epoll.unregister(fd)

    async def run(self) -> None:
        """Hand ready descriptors to their watchers until cancelled."""
        epoll = self._epoll
        watched = self._watched
        while True:
            await trio.lowlevel.wait_readable(epoll.fileno())
            for fd, _ in epoll.poll(0):
                target = watched.get(fd)
                if target is not None:
                    target.readable_now()

    def close(self) -> None:
        """Release the epoll set; once every connection has ended."""
        self._closed = True
        self._watched.clear()
        trio.lowlevel.notify_closing(self._epoll.fileno())
        self._epoll.close()
