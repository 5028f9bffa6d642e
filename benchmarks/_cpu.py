"""CPU time of another process (a stdio server), read from ``/proc`` on Linux.

With it a stdio cell can count the CPU time both of its processes spent per call, which, unlike
calls per wall-clock second, does not depend on how much of the shared cores other programs
took meanwhile. ``/proc`` counts in clock ticks (10 ms here): fine over seconds of calls.
"""

from __future__ import annotations

import os
from collections.abc import Callable

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used so far, or ``None`` if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return None
    # After "pid (comm)": state is field 3, utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / _TICKS


def server_cpu_reader(client: object) -> Callable[[], float] | None:
    """A reader of the CPU time of ``client``'s stdio server process, or ``None``.

    ``client`` is an ``mcptrio.Client``; only one over stdio (whose transport has the server's
    ``process``) on a system with ``/proc`` has a reader.
    """
    process = getattr(getattr(getattr(client, "session", None), "transport", None), "process", None)
    pid = getattr(process, "pid", None)
    if not isinstance(pid, int) or process_cpu_seconds(pid) is None:
        return None

    def read() -> float:
        return process_cpu_seconds(pid) or 0.0

    return read
