"""An MCP server behind OAuth 2.1, with mcptrio's development authorization server beside it.

Run it (``pip install mcptrio[auth]``, or ``PYTHONPATH=.`` in a checkout)::

    python examples/protected_server.py

It starts the development authorization server at http://127.0.0.1:9000 (log in as ``ann``,
password ``secret``) and the protected MCP server at http://127.0.0.1:8000/mcp, and prints both.
Point any MCP client that speaks OAuth at the MCP URL (the MCP Inspector, the official SDKs,
mcptrio's own client): it is answered 401, finds the authorization server through the
server's Protected Resource Metadata, registers itself, sends you to the login page, and calls
the tools with the token it gets. ``whoami`` needs the ``mcp`` scope every request needs;
``rotate_keys`` also needs ``admin``, so calling it makes the client ask for more (step-up).

``--auto-approve`` skips the login page (for headless clients and tests); ``--port`` and
``--auth-port`` choose the ports (0: any free one). Tokens are accepted only for the URL the
example prints (its ``resource``): a client must use that URL, ``127.0.0.1`` and not
``localhost``.
"""

from __future__ import annotations

import argparse
from functools import partial

import trio

import mcptrio
from mcptrio.auth.dev_server import DevAuthorizationServer
from mcptrio.auth.server import BearerAuth
from mcptrio.transports.http.endpoints.security import HttpSecurity

server = mcptrio.Server("protected-example", instructions="Say who you are; rotate keys.")


@server.tool
async def whoami(ctx: mcptrio.Context) -> str:
    """Who the server thinks is calling, and with which scopes."""
    principal = ctx.principal
    if principal is None:
        return "nobody"
    scopes = " ".join(sorted(getattr(principal, "scopes", ())))
    return f"{principal.subject} (scopes: {scopes})"


@server.tool(scopes=["admin"])
async def rotate_keys() -> str:
    """Something only an administrator may do."""
    return "keys rotated"


async def main(port: int, auth_port: int, auto_approve: bool) -> None:
    auth = DevAuthorizationServer(
        scopes=("mcp", "admin", "offline_access"),
        auto_approve=auto_approve,
        users=None if auto_approve else {"ann": "secret"},
    )
    # Bound first, so that the resource (the token audience) names the port even with --port 0.
    listeners = await trio.open_tcp_listeners(port, host="127.0.0.1")
    resource = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/mcp"
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(partial(auth.serve, port=auth_port))
        bearer = BearerAuth(
            auth.verifier(),
            authorization_servers=[issuer],
            resource=resource,
            scopes=["mcp"],
            scopes_supported=["mcp", "admin"],
            resource_name="mcptrio protected example",
        )
        security = HttpSecurity(authenticator=bearer)
        await nursery.start(partial(server.serve_http, listeners=listeners, security=security))
        print(f"authorization server at {issuer}", flush=True)
        print(f"protected MCP server at {resource}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--auth-port", type=int, default=9000)
    parser.add_argument("--auto-approve", action="store_true")
    args = parser.parse_args()
    trio.run(main, args.port, args.auth_port, args.auto_approve)
