"""Capacity figures: memory per idle session and per session with an open GET stream, the
latency of opening a session over Streamable HTTP, the time to import each library and to start
its stdio server.

``measure(lib, sessions=1000, quick=False)`` returns one :class:`CapacityRecord`;
``python -m benchmarks.capacity`` prints a table of them.
"""

from __future__ import annotations

from .measure import LIBS as LIBS
from .measure import CapacityRecord as CapacityRecord
from .measure import measure as measure

__all__ = ["LIBS", "CapacityRecord", "measure"]
