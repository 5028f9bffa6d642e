"""The :class:`Context`: the one type a server's handlers ask for by annotating a parameter.

Any tool, resource, resource template, prompt, completer or completion handler may declare a
parameter annotated ``Context`` (see :mod:`.handler`); the server passes the context of the
request being answered. What a context does is :class:`~.handler_context.HandlerContext`'s
(the request, progress, logging, sampling, elicitation, roots, cancellation); ``Context`` adds
that its ``server`` is the :class:`~mcptrio.Server` answering the request (for a mounted
server's handlers, the mounted server). See ``docs/explanation/handlers.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..runtime.context import RequestContext
from .elicitation_schema import Elicited as Elicited
from .handler_context import HandlerContext
from .handler_context import RequestHook as RequestHook

if TYPE_CHECKING:
    from .server import Server

__all__ = ["Context", "Elicited", "RequestHook"]


class Context(HandlerContext):
    """The request being answered, and what its handler can do for it.

    Made by the server for each request; a handler receives it by annotating a parameter
    ``Context``. It is valid while the request is being handled.
    """

    __slots__ = ()

    #: The :class:`~mcptrio.Server` answering the request.
    server: Server

    if TYPE_CHECKING:
        # Declared for type checkers only (``server`` is a Server here): at run time the
        # server makes each request's context with HandlerContext's own __init__, with no
        # call in between that only forwards.
        def __init__(self, request_context: RequestContext, server: Server) -> None: ...
