"""One check against one transport in one era: :class:`Trial`, what a check is handed.

:func:`open_trial` makes a fresh :class:`~.suite_server.SuiteServer`, serves it with the
transport's ``serve`` in a task of its own (inside a cancel scope, so that
:meth:`Trial.stop_server` can make the server go away while clients are connected), and
yields the trial; :meth:`Trial.client` connects a client with the transport's ``connect``,
speaking the trial's era.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, Unpack

import trio

from ...client import Client, ClientOptions, Revisions
from ...protocol.revisions import HANDSHAKE_SUPPORTED, STATELESS_SUPPORTED, Era
from ...server import Server
from .subject import TransportUnderTest
from .suite_server import SuiteServer, Witness

__all__ = ["ERA_REVISIONS", "PROMPTLY", "SHORT", "Trial", "open_trial"]

#: Seconds: see :attr:`Trial.short`.
SHORT = 0.25
#: Seconds: see :attr:`Trial.promptly`.
PROMPTLY = 2.0

#: What a client of each era offers: only the handshake revisions (no probe of the stateless
#: era), or the newest stateless revision pinned (no fallback to a handshake it could hide).
ERA_REVISIONS: dict[Era, Revisions] = {
    "handshake": Revisions(supported=HANDSHAKE_SUPPORTED),
    "stateless": Revisions(protocol_version=STATELESS_SUPPORTED[0]),
}


class Trial:
    """What a check gets: the transport, the era, the suite server and its witness, clients."""

    def __init__(
        self,
        transport: TransportUnderTest,
        era: Era,
        suite: SuiteServer,
        address: Any,
        serving: trio.CancelScope,
    ) -> None:
        self.transport = transport
        self.era: Era = era
        self.suite = suite
        self.address = address
        self._serving = serving
        #: What the check is doing now (:meth:`step`), named when it runs out of time.
        self.doing = "starting"
        #: The timeouts the checks give their calls, and how long a flood must stay still to
        #: count as held back: long next to a round trip, short enough to keep the suite quick.
        self.short = SHORT
        #: How long something that should follow at once may take (an answer after the last
        #: notification before it, a call while another client stalls): past it, the check
        #: fails at once, naming what did not come, rather than at its deadline.
        self.promptly = PROMPTLY

    @property
    def server(self) -> Server:
        return self.suite.server

    @property
    def witness(self) -> Witness:
        return self.suite.witness

    def client(self, **options: Unpack[ClientOptions]) -> AbstractAsyncContextManager[Client]:
        """A client of the served server over the transport, speaking the trial's era."""
        options.setdefault("revisions", ERA_REVISIONS[self.era])
        return self.transport.connect(self.address, **options)

    def step(self, doing: str) -> None:
        """Say what the check does next: a check that runs out of time names it."""
        self.doing = doing

    @contextmanager
    def within(self, seconds: float, doing: str) -> Iterator[None]:
        """Do ``doing`` (the block) within ``seconds``, or fail saying so."""
        self.step(doing)
        try:
            with trio.fail_after(seconds):
                yield
        except trio.TooSlowError:
            raise AssertionError(f"not done within {seconds} s: {doing}") from None

    def stop_server(self) -> None:
        """Make the server go away: leave the transport's ``serve`` block, cancelled."""
        self._serving.cancel()


@asynccontextmanager
async def open_trial(transport: TransportUnderTest, era: Era) -> AsyncIterator[Trial]:
    """A :class:`Trial` of ``transport`` in ``era``, its server served for the block."""
    suite = SuiteServer()
    serving = trio.CancelScope()
    async with trio.open_nursery() as nursery:
        address = await nursery.start(_serve, transport, suite.server, era, serving)
        yield Trial(transport, era, suite, address, serving)
        nursery.cancel_scope.cancel()


async def _serve(
    transport: TransportUnderTest,
    server: Server,
    era: Era,
    serving: trio.CancelScope,
    *,
    task_status: trio.TaskStatus[Any],
) -> None:
    with serving:
        async with transport.serve(server, era) as address:
            task_status.started(address)
            await trio.sleep_forever()
