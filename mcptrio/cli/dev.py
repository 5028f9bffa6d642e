"""``mcptrio dev TARGET [options of run]`` and ``mcptrio run --reload``: a server served over
HTTP (or WebSocket, for ``--reload``) and started again when its code changes
(:mod:`.reloading`).

``dev`` takes every option of ``run`` (read by ``run``'s own parser, so that an option added to
``run`` is one of ``dev``'s too), serves over HTTP, and prints the command that opens the MCP
Inspector on the server once it is served.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from .errors import EXIT_OK, usage_error
from .parser import DEV_DESCRIPTION, DEV_USAGE, build_parser
from .reloading import serve_reloading
from .server_commands import check_run_options
from .watching import watched_folder

__all__ = ["dev", "run_reloading"]

#: The Inspector's own command (``npx`` fetches it); it is printed, never started.
INSPECTOR = "npx @modelcontextprotocol/inspector --transport http --server-url"


def dev(arguments: list[str]) -> int:
    """Serve TARGET over HTTP, reloaded on change, until Ctrl-C or SIGTERM."""
    if "-h" in arguments or "--help" in arguments:
        sys.stdout.write(f"usage: {DEV_USAGE}\n\n{DEV_DESCRIPTION}")
        return EXIT_OK
    run = ["run", "--transport", "http", *_without_reload(arguments)]
    args = build_parser().parse_args(run)
    if args.transport != "http":
        raise usage_error(f"mcptrio dev serves over HTTP: leave out --transport {args.transport}")
    announced: list[str] = []

    def show_inspector(url: str) -> None:
        # Once, and again only when the URL changes (--port 0 picks a new port each start).
        if announced[-1:] != [url]:
            announced.append(url)
            print(f"mcptrio: open the MCP Inspector on it: {INSPECTOR} {url}", file=sys.stderr)

    return _serve(args, run, show_inspector)


def run_reloading(args: argparse.Namespace) -> int:
    """``mcptrio run --reload``: this same command, without ``--reload``, run and reloaded."""
    if args.transport == "stdio":
        raise usage_error(
            "--reload restarts a server over HTTP or WebSocket (an MCP client starts a stdio"
            " server itself): add --transport http"
        )
    return _serve(args, _without_reload(args.argv), None)


def _serve(
    args: argparse.Namespace, run: list[str], on_serving: Callable[[str], None] | None
) -> int:
    check_run_options(args)
    if args.target is None:
        raise usage_error("dev and --reload restart a TARGET when its code changes: give one")
    # The child must not reload in turn: each child would start another.
    assert not build_parser().parse_args(run).reload
    folder = watched_folder(args.target)
    print(f"mcptrio: watching the .py files under {folder}", file=sys.stderr, flush=True)
    serve_reloading(
        [sys.executable, "-m", "mcptrio", *run],
        [folder],
        grace=args.grace,
        on_serving=on_serving,
    )
    return EXIT_OK


def _without_reload(arguments: Sequence[str]) -> list[str]:
    """``arguments`` without ``--reload``, or the start of it that argparse takes for it."""
    return [word for word in arguments if not (word[:5] == "--rel" and "--reload".startswith(word))]
