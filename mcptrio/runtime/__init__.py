"""The actors: sessions, request actors, outgoing-request tracking, the handler context."""

from .context import RequestContext as RequestContext
from .outgoing import ProgressCallback as ProgressCallback
from .session import Session as Session
from .session import SessionStatistics as SessionStatistics
