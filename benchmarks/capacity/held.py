"""The held-sessions cell: how many idle Streamable HTTP sessions one server process holds
within a memory budget (by default 100,000 sessions in 1 GiB).

A fresh server process (as :mod:`benchmarks.capacity.server` serves it, allowed as many
sessions as asked for) gets ``count`` sessions (``initialize`` + ``notifications/initialized``),
opened one after the other over one keep-alive connection and then left idle. Its resident set
is read after every batch of sessions; the run stops early if it passes the budget. Once all are
open the resident set is read again when it settles, and a few sessions spread over the run are
pinged to check that the server still holds them.

The record says how many sessions were held, the settled resident set of the whole process
(its start-up included: what a deployment pays), and whether that is within the budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .http_client import Connection, OpenedSession
from .server_process import rss_kib, running_server, settled_rss_kib
from .sessions import session_alive

__all__ = ["HELD_BUDGET_MIB", "HELD_SESSIONS", "QUICK_HELD_SESSIONS", "Held", "held_idle"]

#: Sessions the full cell opens.
HELD_SESSIONS = 100_000
#: Sessions a quick run opens.
QUICK_HELD_SESSIONS = 1_000
#: The budget of the whole server process's resident set, in MiB.
HELD_BUDGET_MIB = 1024
#: Sessions opened between two readings of the resident set.
_BATCH = 1000
#: Sessions pinged once all are open.
_PROBES = 20


@dataclass(frozen=True, slots=True)
class Held:
    #: Sessions asked for.
    asked: int
    #: Idle sessions the server held at the end (fewer than asked when the budget was passed).
    sessions: int
    #: The server process's settled resident set with them, in MiB.
    rss_mib: float
    #: Whether every session asked for was held within the budget.
    within_budget: bool
    #: Seconds taken to open them.
    open_s: float


def held_idle(lib: str, count: int, budget_mib: int = HELD_BUDGET_MIB) -> Held:
    """Open ``count`` idle sessions on a fresh ``lib`` server; see the module docstring.

    Raises ``RuntimeError`` if the server does not start, dies, or lost probed sessions.
    """
    budget_kib = budget_mib * 1024
    opened: list[OpenedSession] = []
    with running_server(lib, count + 16) as server:
        conn = Connection(server.port)
        try:
            began = time.perf_counter()
            while len(opened) < count:
                for _ in range(min(_BATCH, count - len(opened))):
                    opened.append(conn.open_session())
                if rss_kib(server.pid) > budget_kib:
                    break
            open_s = time.perf_counter() - began
            rss = settled_rss_kib(server.pid, pause_s=0.3, max_wait_s=3.0)
            step = max(1, len(opened) // _PROBES)
            probed = opened[::step]
            dead = sum(not session_alive(conn, session) for session in probed)
            if dead:
                raise RuntimeError(f"{dead} of {len(probed)} probed sessions gone")
        finally:
            conn.close()
    return Held(
        asked=count,
        sessions=len(opened),
        rss_mib=round(rss / 1024, 1),
        within_budget=len(opened) == count and rss <= budget_kib,
        open_s=round(open_s, 1),
    )
