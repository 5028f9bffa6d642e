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
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from ..protocol.types import LoggingMessageNotification
from ..protocol.types.logging import LoggingLevel
from .handler_context import ContextServer, HandlerContext
from .session_state import ServerSessionState

__all__ = ["ClientLogHandler", "LoggingServer", "current_context", "handling", "level_for"]

#: The context of the request the current task is handling (set by the server).
current_context: ContextVar[HandlerContext | None] = ContextVar(
    "mcptrio_current_context", default=None
)


@contextmanager
def handling(ctx: HandlerContext) -> Iterator[None]:
    """Make ``ctx`` the :data:`current_context` for the block (a task's run of its handler)."""
    token = current_context.set(ctx)
    try:
        yield
    finally:
        current_context.reset(token)


class LoggingServer(ContextServer, Protocol):
    """What the handler reads of the server whose clients it logs to: the state of the
    session a request came in on, and of every session."""

    def session_states(self) -> list[ServerSessionState]: ...


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

    def __init__(self, server: LoggingServer, level: int = logging.NOTSET) -> None:
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
