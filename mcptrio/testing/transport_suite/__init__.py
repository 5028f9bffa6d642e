"""The transport conformance suite: one set of behavioural checks, run against every transport.

Ordering and concurrency, cancellation both ways, timeouts, large and oversized messages, the
server's requests to the client, closing and half-closing, the server going away, and a peer
that stops reading: each is a plain async function of a :class:`~.trial.Trial`, observing only
what a user of mcptrio can (answers, errors, notifications, what handlers saw), listed in
:data:`CHECKS`. mcptrio runs them against each of its transports; a transport of your own runs
the same checks with a :class:`TransportUnderTest` record and a few lines of pytest::

    from mcptrio.testing import SuiteCase, TransportUnderTest, transport_suite_params

    MINE = TransportUnderTest(name="mine", serve=serve_mine, connect=connect_mine)

    @pytest.mark.parametrize("case", transport_suite_params(MINE))
    async def test_my_transport(case: SuiteCase) -> None:
        await case.run()

See ``docs/how-to/test-your-transport.md``. The modules, one concept each:

- :mod:`.subject`: the record of a transport under test;
- :mod:`.suite_server`: the server every check serves, and the witness of what it saw;
- :mod:`.trial`: one check's run against one transport in one era;
- :mod:`.checks_calls`, :mod:`.checks_cancellation`, :mod:`.checks_lifetime`: the checks;
- :mod:`.catalogue`: the checks listed, and the cases they make with transports;
- :mod:`.in_memory`: :data:`IN_MEMORY`, the reference record, and a model of one.
"""

from __future__ import annotations

from .catalogue import CHECKS as CHECKS
from .catalogue import Check as Check
from .catalogue import SuiteCase as SuiteCase
from .catalogue import suite_cases as suite_cases
from .catalogue import transport_suite_params as transport_suite_params
from .in_memory import IN_MEMORY as IN_MEMORY
from .in_memory import MemoryListener as MemoryListener
from .in_memory import connect_in_memory as connect_in_memory
from .in_memory import serve_in_memory as serve_in_memory
from .subject import Connect as Connect
from .subject import HalfClose as HalfClose
from .subject import Oversized as Oversized
from .subject import Serve as Serve
from .subject import TransportUnderTest as TransportUnderTest
from .suite_server import SuiteServer as SuiteServer
from .suite_server import Witness as Witness
from .trial import Trial as Trial
from .trial import open_trial as open_trial

__all__ = [
    "CHECKS",
    "IN_MEMORY",
    "Check",
    "Connect",
    "HalfClose",
    "MemoryListener",
    "Oversized",
    "Serve",
    "SuiteCase",
    "SuiteServer",
    "TransportUnderTest",
    "Trial",
    "Witness",
    "connect_in_memory",
    "open_trial",
    "serve_in_memory",
    "suite_cases",
    "transport_suite_params",
]
