"""Forward stdlib ``logging`` records to clients as ``notifications/message``.

``server.bridge_logging("myapp")`` attaches a :class:`ClientLogHandler` to a logger. A record
emitted while a request is being handled goes to that request's session; any other record goes
to every session of the server. Each session still applies its own ``logging/setLevel``.
``emit`` never blocks: messages go through each session's bounded log queue (see
:mod:`.session_state`), whose notifier actor sends them. Records of mcptrio's own loggers are
never forwarded, so sending a message cannot log about sending it in a loop.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING

from ..protocol.types import LoggingMessageNotification
from ..protocol.types.logging import LoggingLevel

if TYPE_CHECKING:
    from .context import Context
    from .server import Server

__all__ = ["ClientLogHandler", "current_context", "level_for"]

#: The context of the request the current task is handling (set by the server).
current_context: ContextVar[Context | None] = ContextVar("mcptrio_current_context", default=None)


def level_for(levelno: int) -> LoggingLevel:
    """The MCP level of a stdlib level number."""
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


class ClientLogHandler(logging.Handler):
    """A ``logging.Handler`` that sends records to the server's clients."""

    def __init__(self, server: Server, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "mcptrio" or record.name.startswith("mcptrio."):
            return
        try:
            level = level_for(record.levelno)
            message = LoggingMessageNotification(
                level=level, data=self.format(record), logger=record.name or None
            )
            ctx = current_context.get()
            if ctx is not None and ctx.server is self.server:
                states = [self.server.session_state(ctx.session)]
            else:
                states = self.server.session_states()
            for state in states:
                if state.log_enabled(level):
                    state.enqueue_log(message)
        except Exception:
            self.handleError(record)
