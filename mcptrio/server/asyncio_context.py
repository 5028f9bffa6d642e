"""The request's context as an asyncio handler sees it (see :mod:`.asyncio_bridge`).

A handler marked :func:`~mcptrio.asyncio_handler` that asks for the ``Context`` receives an
:class:`AsyncioContext`: the same attributes and methods, read from the request's context, but
every coroutine method (``report_progress``, ``log`` and its levels, ``notify``, ``send_request``,
``elicit``, ``elicit_url``, ``sample``, ``list_roots``, ``ask``...) returns a coroutine to await
in asyncio, which runs the method in Trio and hands back its value or its exception. Plain
attributes (``request_id``, ``arguments``, ``lifespan``, ``client_capabilities``...) and plain
methods are the context's own. The Trio objects it hands out (``cancel_scope``, ``session``)
belong to the Trio thread: asyncio code reads them but does not use them.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from .handler_context import HandlerContext

__all__ = ["AsyncioContext"]

#: Runs a Trio coroutine method with its arguments, awaited from asyncio.
TrioCall = Callable[
    [Callable[..., Awaitable[Any]], tuple[Any, ...], Mapping[str, Any]], Coroutine[Any, Any, Any]
]


class AsyncioContext:
    """A view of ``context`` whose coroutine methods are awaited from asyncio through
    ``call`` (see the module docstring)."""

    __slots__ = ("_call", "_context")

    def __init__(self, context: HandlerContext, call: TrioCall) -> None:
        self._context = context
        self._call = call

    def __repr__(self) -> str:
        return f"<AsyncioContext of {self._context!r}>"

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._context, name)
        if not inspect.iscoroutinefunction(value):
            return value
        call = self._call

        def handed_over(*args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
            # A coroutine, as the method's own call is: nothing is sent until it is awaited.
            return call(value, args, kwargs)

        handed_over.__name__ = name
        handed_over.__doc__ = value.__doc__
        return handed_over
