"""The server API: the decorator-level :class:`Server`."""

from .server import Server as Server
from .tools import RegisteredTool as RegisteredTool
