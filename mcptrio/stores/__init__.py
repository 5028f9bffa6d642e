"""Stores: where state that outlives one connection, or is shared by workers, is kept.

In memory by default; in Redis or Valkey (through coredis, the ``redis`` extra) for a server
run as several workers: :func:`open_stores` opens them all from one URL.
"""

from .event_store import EventStore as EventStore
from .event_store import InMemoryEventStore as InMemoryEventStore
from .event_store import Replay as Replay
from .event_store import UnknownEventId as UnknownEventId
