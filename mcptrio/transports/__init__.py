"""Transports: one module per transport, each implementing the interface the session drives
(``mcptrio.runtime.transport``, re-exported here)."""

from ..runtime.transport import DEFAULT_MAX_FRAME_SIZE as DEFAULT_MAX_FRAME_SIZE
from ..runtime.transport import Outgoing as Outgoing
from ..runtime.transport import OversizedFrame as OversizedFrame
from ..runtime.transport import Transport as Transport
from ..runtime.transport import TransportAbilities as TransportAbilities
from .memory import MemoryTransport as MemoryTransport
from .memory import memory_transport_pair as memory_transport_pair
