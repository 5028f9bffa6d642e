"""Stores: where state that outlives one connection is kept (SSE event logs, for resumption)."""

from .event_store import EventStore as EventStore
from .event_store import InMemoryEventStore as InMemoryEventStore
from .event_store import Replay as Replay
from .event_store import UnknownEventId as UnknownEventId
