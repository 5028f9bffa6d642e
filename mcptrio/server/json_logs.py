"""Log records as one JSON object a line, for log collectors: :class:`JsonLogFormatter`.

``mcptrio run --log-format json`` installs it on stderr; install it on a handler of your own to
get the same lines. Each object has ``time`` (UTC, ISO 8601, milliseconds), ``level``,
``logger`` and ``message``; a record logged while a request is answered (in its handler, the
middleware, or the server's own code on its behalf) also has that request's ``request_id`` and
``method``, and ``session_id`` when its transport has one (Streamable HTTP). They come from the
request's context (:data:`~.logging_bridge.current_context`), which the dispatch sets for every
request, so nothing is added to a request's path. An exception is under ``exception``, as the
text of its traceback.
"""

from __future__ import annotations

import datetime
import json
import logging
from typing import Any

from .logging_bridge import current_context

__all__ = ["JsonLogFormatter"]


class JsonLogFormatter(logging.Formatter):
    """Formats a record as one line of JSON (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
        entry: dict[str, Any] = {
            "time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ctx = current_context.get()
        if ctx is not None:
            entry["request_id"] = ctx.request_id
            entry["method"] = ctx.method
            session_id = getattr(ctx.session.transport, "session_id", None)
            if isinstance(session_id, str) and session_id:
                entry["session_id"] = session_id
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)
