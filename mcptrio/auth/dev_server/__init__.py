"""A development OAuth 2.1 authorization server on trio, for examples and tests.

Not for production: it keeps everything in memory and its keys last as long as the process.
See :mod:`.server` for what it serves, and ``docs/how-to/protect-your-server.md``.
"""

from .login_throttle import LoginThrottle as LoginThrottle
from .server import DevAuthorizationServer as DevAuthorizationServer

__all__ = ["DevAuthorizationServer", "LoginThrottle"]
