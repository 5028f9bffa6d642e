"""The server API: the decorator-level :class:`Server`.

A ``Server`` is a description (its info, instructions, tools, resources, prompts and
completions) plus the request handler every session of it shares. It owns no tasks: each
``serve_*`` method runs inside the caller's nursery, one server object can serve any number of
sessions over any mix of transports at once, and what it does per session (list-changed
notifications, resource subscriptions, queued log messages) runs as actors in that session's own
nursery (see :mod:`~mcptrio.server.session_state`).

::

    server = mcptrio.Server("demo")

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return NOTES[name]

    @server.prompt(title="Code review")
    def review(code: str) -> str:
        return f"Please review:\\n{code}"

Every decorator works bare (``@server.tool``) and with options (``@server.tool(title=...)``);
each kind's options are declared once, in :class:`~mcptrio.server.tools.ToolOptions`,
:class:`~mcptrio.server.resources.ResourceOptions` and
:class:`~mcptrio.server.prompts.PromptOptions`. The functions are read once, at registration,
by one reader (see :mod:`~mcptrio.server.handler`).

    server.run()                                     # a stdio server process
    server.run("http")                               # http://127.0.0.1:8000/mcp
    await nursery.start(server.serve_http)           # in your nursery: reports the URL
    await nursery.start(server.serve_session, t)     # one session over any transport

Everything can also be added and removed while sessions run (``add_tool``, ``remove_tool``,
``add_resource``, ...): every session that negotiated the feature then gets the matching
``notifications/<kind>/list_changed``.
"""

from .server import Server as Server
from .tools import RegisteredTool as RegisteredTool
