"""Logging: ``logging/setLevel`` and ``notifications/message`` (both 2024-11-05).

Levels follow RFC 5424 (:data:`LoggingLevel`, least to most severe in :data:`LOGGING_LEVELS`).
Nothing changed in these types across the four revisions, apart from ``_meta`` on the params.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ..base import EmptyResult, Notification, Request

__all__ = ["LOGGING_LEVELS", "LoggingLevel", "LoggingMessageNotification", "SetLevelRequest"]

#: The severity of a log message (RFC 5424).
LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]

#: Every :data:`LoggingLevel`, from least to most severe.
LOGGING_LEVELS: tuple[LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


class SetLevelRequest(Request[EmptyResult], kw_only=True):
    """``logging/setLevel``: the client asks for log messages at ``level`` and above."""

    METHOD = "logging/setLevel"

    level: LoggingLevel


class LoggingMessageNotification(Notification, kw_only=True):
    """``notifications/message``: a log message; ``data`` is any JSON value."""

    METHOD = "notifications/message"

    level: LoggingLevel
    data: Any
    logger: str | None = None
