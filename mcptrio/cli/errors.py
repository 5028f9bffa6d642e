"""The command's exit codes, and the one error type that carries one to ``main``.

Scripts may rely on these (``docs/reference/cli.md`` lists them):

- ``0``: done;
- ``1``: the server answered with an error (an unknown tool, a tool result with ``isError``,
  any JSON-RPC error answer), or its answer failed the client's checks;
- ``2``: the command line is wrong: an unknown option, arguments that are not a JSON object, a
  target that names no file or module, or a file with no ``Server`` (or several);
- ``3``: the server could not be reached or was lost: an unreachable URL, a command that does
  not start or ends before answering, a port already in use, a timeout;
- ``130``: interrupted (Ctrl-C).
"""

from __future__ import annotations

from typing import Final

__all__ = ["EXIT_CONNECTION", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_SERVER_ERROR", "EXIT_USAGE"]

EXIT_OK: Final = 0
EXIT_SERVER_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_CONNECTION: Final = 3
EXIT_INTERRUPTED: Final = 130


class CliError(Exception):
    """A failure the command reports as one line on stderr, exiting with ``code``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def usage_error(message: str) -> CliError:
    return CliError(EXIT_USAGE, message)
