"""Forwarding handshake-era HTTP exchanges to the worker that owns their session.

See :mod:`.session_relay` for the design.
"""

from .session_relay import SessionRelay as SessionRelay
