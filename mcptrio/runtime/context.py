"""The context a request handler runs in: :class:`RequestContext`.

A :class:`RequestContext` is made for each incoming request by its lifecycle
(:mod:`mcptrio.runtime.lifecycle`, where it is defined). It names the request and the session,
and lets the handler talk back to the peer *about this request*: progress for the caller's
token, notifications and requests that the HTTP transports route to this request's stream.
``cancel_scope`` is the scope ``notifications/cancelled`` cancels.
"""

from .lifecycle import RequestContext as RequestContext

__all__ = ["RequestContext"]
