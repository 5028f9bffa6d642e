"""The actors and their seam: sessions, request actors, outgoing-request tracking, the handler
context, and the transport interface a session drives."""

from .context import RequestContext as RequestContext
from .outgoing import ProgressCallback as ProgressCallback
from .session import Session as Session
from .session import SessionBusy as SessionBusy
from .session import SessionStatistics as SessionStatistics
from .transport import Outgoing as Outgoing
from .transport import Transport as Transport
from .transport import TransportAbilities as TransportAbilities
