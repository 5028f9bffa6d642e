"""``mcptrio run``, ``gateway``, ``config`` and ``bench``: the commands that start something."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..server import Server
from ..server.running import DEFAULT_GRACE, run_server, serve_until_signalled
from ..server.scale_out import check_redis_url
from ..server.serving_options import SETTINGS, ServingOptions, ServingOptionsError
from ..server.workers import WorkersFailed
from ..stores.errors import StoreUnavailable
from .errors import EXIT_CONNECTION, EXIT_OK, EXIT_USAGE, CliError
from .loading import ServerSpec, load_server, parse_server_spec
from .server_entry import stdio_entry

__all__ = ["bench", "check_run_options", "config", "gateway", "run"]

#: The extra that installs each optional package a `run` option needs.
_EXTRAS = {"httptools": "httptools", "hypercorn": "asgi", "coredis": "redis"}

#: The folder the mcptrio package was imported from: a checkout, when run from one.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def run(args: argparse.Namespace) -> int:
    """Serve the target until stdin ends (stdio) or Ctrl-C."""
    if args.reload:
        from .dev import run_reloading

        return run_reloading(args)
    # Over stdio, stdout is the MCP channel: whatever the target prints while it loads goes to
    # stderr instead.
    with contextlib.redirect_stdout(sys.stderr if args.transport == "stdio" else sys.stdout):
        server = _openapi_server(args) if args.openapi else load_server(_target(args))
    serving = check_run_options(args)
    if args.openapi:
        from ..openapi.command_line import serving_with_pass_through

        serving = serving_with_pass_through(serving, args)
    try:
        run_server(
            server,
            args.transport,
            host=args.host,
            port=args.port,
            serving=serving,
            parser=args.parser,
            front_end=args.front_end,
            workers=args.workers,
            redis_url=args.redis,
            grace=args.grace,
            # Each worker is this command again (python -m mcptrio, whatever started us).
            worker_command=[sys.executable, "-m", "mcptrio", *args.argv],
            # --metrics-allow alone asks for the metrics too.
            metrics=args.metrics or args.metrics_allow is not None,
            metrics_allow=args.metrics_allow,
        )
    except WorkersFailed as exc:
        raise CliError(EXIT_CONNECTION, str(exc)) from None
    except StoreUnavailable as exc:
        raise CliError(EXIT_CONNECTION, f"--redis: {exc}") from None
    except OSError as exc:
        # Nothing is served yet when binding fails; say which address and why, in one line.
        in_use = exc.errno == errno.EADDRINUSE
        reason = "the port is in use" if in_use else exc.strerror or str(exc)
        message = f"cannot serve on {args.host}:{args.port}: {reason}"
        raise CliError(EXIT_CONNECTION, message) from None
    except ImportError as exc:
        extra = _EXTRAS.get((exc.name or "").partition(".")[0])
        hint = f": pip install 'mcptrio[{extra}]'" if extra else ""
        raise CliError(EXIT_USAGE, f"{exc}{hint}") from None
    return EXIT_OK


def _target(args: argparse.Namespace) -> ServerSpec:
    if args.target is None:
        raise CliError(EXIT_USAGE, "give a TARGET (file.py[:name] or module[:name]) or --openapi")
    return parse_server_spec(args.target)


def _openapi_server(args: argparse.Namespace) -> Server:
    """The server of ``run --openapi`` (:mod:`mcptrio.openapi.command_line`)."""
    from ..openapi import OpenApiError
    from ..openapi.command_line import server_from_arguments

    if args.target is not None:
        raise CliError(EXIT_USAGE, f"give a TARGET ({args.target}) or --openapi, not both")
    try:
        return server_from_arguments(args)
    except OpenApiError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None


def check_run_options(args: argparse.Namespace) -> ServingOptions:
    """The options of ``run`` that can be wrong whatever the target, checked before anything
    starts (``dev`` and ``--reload`` check them before their first child starts); the serving
    options they make."""
    if not 0 <= args.port <= 65535:
        raise CliError(EXIT_USAGE, f"--port {args.port} is not a TCP port (0 to 65535)")
    _check_scale_out(args)
    return _serving_options(args)


def _serving_options(args: argparse.Namespace) -> ServingOptions:
    """The serving options of ``run`` or ``gateway``, from their flags, the environment and
    ``--config`` (one line for any that cannot be used)."""
    try:
        given = {setting.name: getattr(args, setting.name, None) for setting in SETTINGS}
        if args.transport == "stdio" and (args.serving_config or any(given.values())):
            raise ServingOptionsError("serving options are for HTTP and WebSocket: stdio has none")
        if args.transport == "stdio":
            return ServingOptions()
        serving = ServingOptions.gather(given, config_file=args.serving_config)
        serving.check_served(args.transport, args.host, args.port)
        # A certificate that cannot be loaded is one line now, not a failure of every worker.
        serving.ssl_context()
    except ServingOptionsError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None
    return serving


def _check_scale_out(args: argparse.Namespace) -> None:
    """The --workers, --redis and --grace options, checked before anything starts."""
    if args.workers < 1:
        raise CliError(EXIT_USAGE, f"--workers {args.workers}: give 1 or more")
    if args.grace < 0:
        raise CliError(EXIT_USAGE, f"--grace {args.grace:g}: give 0 or more seconds")
    if args.redis is not None:
        try:
            check_redis_url(args.redis)
        except ValueError as exc:
            raise CliError(EXIT_USAGE, f"--redis: {exc}") from None
    if (args.metrics or args.metrics_allow) and args.transport != "http":
        raise CliError(EXIT_USAGE, "--metrics is served over HTTP only: add --transport http")
    if args.workers > 1 and args.transport != "http":
        raise CliError(EXIT_USAGE, "--workers serves HTTP only: add --transport http")
    if args.workers > 1 and args.front_end != "builtin":
        raise CliError(
            EXIT_USAGE, "--workers needs the built-in front end (Hypercorn runs its own workers)"
        )


def gateway(args: argparse.Namespace) -> int:
    """Serve a gateway over the servers of the ``mcpServers`` file ``args.config``."""
    from functools import partial

    import trio

    from ..gateway import ConfigError, Gateway, load_config, serve_gateway
    from ..runtime.nurseries import open_unwrapping_nursery
    from ..server.development_authorization import open_development_authorization

    if not 0 <= args.port <= 65535:
        raise CliError(EXIT_USAGE, f"--port {args.port} is not a TCP port (0 to 65535)")
    serving = _serving_options(args)
    try:
        served = Gateway(args.name, upstreams=load_config(args.config))
    except ConfigError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None

    async def serve(stop: trio.Event) -> None:
        # A lone error (a port in use, say) leaves as itself, not in a group.
        async with (
            open_development_authorization(serving, args.host, args.port, sys.stderr) as options,
            open_unwrapping_nursery() as nursery,
        ):
            http_options: dict[str, Any] = {}
            if args.transport == "http":
                http_options = {
                    "security": options.security(),
                    "ssl_context": options.ssl_context(),
                    "shutdown": stop,
                }
            where = await nursery.start(
                partial(
                    serve_gateway,
                    served,
                    transport=args.transport,
                    host=args.host,
                    port=args.port,
                    path=serving.path,
                    **http_options,
                )
            )
            if args.transport == "http":
                # Under --auth dev the URL is the one its tokens name.
                url = options.resource if serving.auth == "dev" else where
                line = f"Serving {args.name} over http at {url}"
                print(line, file=sys.stderr, flush=True)

    # Over HTTP a stop drains, as `run` does; over stdio the session ends at once.
    grace = DEFAULT_GRACE if args.transport == "http" else 0.0
    try:
        trio.run(serve_until_signalled, serve, grace)
    except OSError as exc:
        in_use = exc.errno == errno.EADDRINUSE
        reason = "the port is in use" if in_use else exc.strerror or str(exc)
        message = f"cannot serve on {args.host}:{args.port}: {reason}"
        raise CliError(EXIT_CONNECTION, message) from None
    return EXIT_OK


def config(args: argparse.Namespace) -> int:
    """Print the ``mcpServers`` entry that starts the target over stdio."""
    name, entry = stdio_entry(args.target, args.name)
    sys.stdout.write(json.dumps({"mcpServers": {name: entry}}, indent=2) + "\n")
    return EXIT_OK


def bench(arguments: list[str]) -> int:
    """``python -m benchmarks ARGUMENTS`` in the checkout that has them."""
    root = _checkout_with_benchmarks()
    if root is None:
        raise CliError(
            EXIT_USAGE,
            "mcptrio bench needs a checkout of the mcptrio repository (benchmarks/ is not part"
            " of the installed package): run it from the checkout's root",
        )
    environment = dict(os.environ)
    paths = [str(root), *filter(None, environment.get("PYTHONPATH", "").split(os.pathsep))]
    environment["PYTHONPATH"] = os.pathsep.join(paths)
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", *arguments], cwd=root, env=environment
    )
    return completed.returncode


def _checkout_with_benchmarks() -> Path | None:
    """The checkout holding ``benchmarks/__main__.py`` (beside ``mcptrio/``, so that another
    project's benchmarks are never run): this folder, or the one this mcptrio came from (an
    editable install, or ``PYTHONPATH`` pointing into a checkout)."""
    for folder in (Path.cwd(), PACKAGE_ROOT):
        if (folder / "benchmarks" / "__main__.py").is_file() and (folder / "mcptrio").is_dir():
            return folder
    return None
