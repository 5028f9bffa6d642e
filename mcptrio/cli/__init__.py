"""The ``mcptrio`` command (also ``python -m mcptrio``): run, list, call, read, prompt, logout,
config, gateway, bench, install, dev.

``main(argv)`` returns the exit code instead of exiting, so that it can be called from Python
(the console script and ``python -m mcptrio`` pass it to ``sys.exit``). Every failure is one
line on stderr, ``mcptrio: error: ...``, and an exit code from :mod:`.errors`; the reference is
``docs/reference/cli.md``.
"""

from __future__ import annotations

import logging
import sys

from .. import __version__
from .errors import EXIT_INTERRUPTED, EXIT_OK, CliError
from .parser import build_parser, split_command

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except CliError as exc:
        if exc.message:
            sys.stderr.write(f"mcptrio: error: {exc.message}\n")
        return exc.code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _main(argv: list[str]) -> int:
    # bench forwards every argument as it is, options included.
    if argv[:1] == ["bench"]:
        from .server_commands import bench

        return bench(argv[1:])
    # dev takes the options of run, whichever they are: run's parser reads them.
    if argv[:1] == ["dev"]:
        from .dev import dev

        return dev(argv[1:])
    before, command = split_command(argv)
    args = build_parser().parse_args(before)
    if args.version:
        sys.stdout.write(f"mcptrio {__version__}\n")
        return EXIT_OK
    if args.command is None:
        build_parser().print_help(sys.stderr)
        return 2
    if command is not None and args.command not in ("list", "call", "read", "prompt"):
        raise CliError(2, f"mcptrio {args.command} takes no command after --")
    if args.command == "logout":
        from .login import logout

        return logout(args)
    if args.command == "install":
        from .install import install

        return install(args)
    if args.command in ("run", "config", "gateway"):
        from . import server_commands

        # What `run --workers N` starts each worker with.
        args.argv = argv
        level = getattr(args, "log_level", "warning")
        _log_to_stderr(getattr(logging, level.upper()), getattr(args, "log_format", "text"))
        command_of = {
            "run": server_commands.run,
            "config": server_commands.config,
            "gateway": server_commands.gateway,
        }
        return command_of[args.command](args)
    from .client_commands import run_client_command

    _log_to_stderr(logging.INFO if args.verbose else logging.WARNING)
    return run_client_command(args, command)


def _log_to_stderr(level: int, log_format: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        from ..server.json_logs import JsonLogFormatter

        handler.setFormatter(JsonLogFormatter())
    logging.basicConfig(level=level, handlers=[handler], format="%(name)s: %(message)s")
