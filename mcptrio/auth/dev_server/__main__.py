"""Run the development authorization server: ``python -m mcptrio.auth.dev_server``.

It prints its issuer URL on the first line of stdout once it listens, then serves until
interrupted. ``--client-id`` (with ``--redirect-uri``, ``--client-secret``) pre-registers a
client; ``--user NAME:PASSWORD`` turns on the login form instead of approving at once.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import trio

from .server import DevAuthorizationServer


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mcptrio.auth.dev_server",
        description="A development OAuth 2.1 authorization server (in memory; not for production).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: any free one)")
    parser.add_argument("--issuer", help="the issuer URL (default: the bound address)")
    parser.add_argument(
        "--scope", action="append", dest="scopes", help="a scope it grants (repeatable)"
    )
    parser.add_argument("--client-id", help="pre-register a client with this id")
    parser.add_argument("--client-secret", help="the pre-registered client's secret")
    parser.add_argument(
        "--redirect-uri", action="append", default=[], help="its redirect URI (repeatable)"
    )
    parser.add_argument(
        "--user", action="append", default=[], help="NAME:PASSWORD; shows a login form"
    )
    return parser.parse_args(argv)


async def _main(args: argparse.Namespace) -> None:
    users = dict(user.split(":", 1) for user in args.user)
    server = DevAuthorizationServer(
        args.issuer,
        scopes=args.scopes or ("mcp", "offline_access"),
        auto_approve=not users,
        users=users,
    )
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(server.serve, args.host, args.port)
        if args.client_id:
            grants = ["authorization_code", "refresh_token"]
            if args.client_secret:
                grants.append("client_credentials")
            server.register_client(
                client_id=args.client_id,
                secret=args.client_secret,
                redirect_uris=args.redirect_uri,
                grant_types=grants,
            )
        print(issuer, flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse(argv)
    try:
        trio.run(_main, args)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
