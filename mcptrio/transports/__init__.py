"""Transports: one module per transport, each behind the small interface in ``base``."""

from .base import DEFAULT_MAX_FRAME_SIZE as DEFAULT_MAX_FRAME_SIZE
from .base import Outgoing as Outgoing
from .base import OversizedFrame as OversizedFrame
from .base import Transport as Transport
from .memory import MemoryTransport as MemoryTransport
from .memory import memory_transport_pair as memory_transport_pair
