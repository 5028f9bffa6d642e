"""Capacity figures: memory per idle session and per session with an open GET stream, the
latency of opening a session over Streamable HTTP, the time to import each library and to start
its stdio server; on request (``held=``, ``--held``), how many idle sessions one server process
holds within 1 GiB (:mod:`.held`).

``measure(lib, sessions=1000, quick=False, held=None)`` returns one :class:`CapacityRecord`;
``python -m benchmarks.capacity`` prints a table of them.
"""

from __future__ import annotations

from .measure import LIBS as LIBS
from .measure import CapacityRecord as CapacityRecord
from .measure import measure as measure

__all__ = ["LIBS", "CapacityRecord", "measure"]
