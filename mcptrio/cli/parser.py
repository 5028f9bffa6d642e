"""The command line: argparse, with help for every command and errors as one line.

A client command (``list``, ``call``, ``read``, ``prompt``) names its server either as a
TARGET before the rest (a URL, a ``.py`` file or a module) or as a command after ``--``. With a
command, the command runs to the end of the line unless the command's own words (the tool,
the URI, the prompt) were given before ``--``; otherwise they are its last words (and its last
``NAME=VALUE`` words, and a word that starts with ``{`` before them, are the arguments).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..server.running import DEFAULT_GRACE, DEFAULT_HOST, DEFAULT_PORT, TRANSPORTS
from ..server.serving_options import SETTINGS
from .client_configs import CLIENTS
from .errors import CliError, usage_error

__all__ = ["COMMANDS", "DEV_DESCRIPTION", "DEV_USAGE", "build_parser", "split_command"]

#: The values a serving option's flag takes, where they are few.
_CHOICES = {
    "auth": ("jwt", "introspection", "dev"),
    "orphaned_sessions": ("adopt", "strict"),
}

DESCRIPTION = """\
Run, inspect and call MCP servers.

TARGET names a server: path/to/file.py[:name] or package.module[:name] (an mcptrio.Server,
or a function returning one; found by type when :name is left out). The client commands also
take an http(s):// or ws(s):// URL, or a command after -- (run over stdio):

  mcptrio run server.py --transport http --port 8000
  mcptrio run server.py --transport http --workers 4 --redis redis://127.0.0.1:6379
  mcptrio run --openapi openapi.json --base-url http://127.0.0.1:8080 --transport http
  mcptrio list http://127.0.0.1:8000/mcp
  mcptrio call http://127.0.0.1:8000/mcp add a=1 b=2
  mcptrio call http://127.0.0.1:8000/mcp add '{"a": 1, "b": 2}' --json
  mcptrio call -- python server.py add a=1 b=2

Exit codes: 0 ok, 1 the server answered with an error, 2 usage error,
3 the server could not be reached (or was lost), 130 interrupted.
"""

COMMANDS = ("run", "list", "call", "read", "prompt", "logout", "config", "bench", "install", "dev")


DEV_USAGE = "mcptrio dev TARGET [options of mcptrio run]"
DEV_DESCRIPTION = """\
Serve TARGET over HTTP (at http://127.0.0.1:8000/mcp unless --host or --port say otherwise)
and start it again whenever a .py file under its folder (a module: its package's folder)
changes; print the command that opens the MCP Inspector on it. A change that breaks the
server prints its error, and the next change serves it again. Ctrl-C stops.

Options: those of mcptrio run (see mcptrio run --help), but --transport, which is http.
"""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and a :class:`CliError`, not an exit."""

    def error(self, message: str) -> NoReturn:
        raise usage_error(f"{message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        # Help and --version end here too: main() returns the code instead of exiting.
        raise CliError(status, "")


def split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``argv`` cut at its first ``--``: what argparse reads, and the server's command (``None``
    without ``--``)."""
    if "--" not in argv:
        return argv, None
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mcptrio",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print mcptrio's version")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = commands.add_parser(
        "run",
        help="serve a server over stdio, HTTP or WebSocket",
        description="Serve TARGET until stdin ends (stdio) or Ctrl-C. Over HTTP and WebSocket "
        "the URL to connect to is printed on stderr; over HTTP, Streamable HTTP and WebSocket "
        "are served at /mcp and the legacy HTTP+SSE endpoints at /sse and /messages.",
    )
    run.add_argument(
        "target",
        metavar="TARGET",
        nargs="?",
        help="file.py[:name] or package.module[:name] (or --openapi SPEC instead)",
    )
    _serving_options(run, TRANSPORTS, "stdio")
    _deployment_options(run)
    run.add_argument(
        "--parser",
        choices=("auto", "h11", "httptools"),
        default="auto",
        help="the built-in HTTP server's parser (auto: httptools when installed)",
    )
    run.add_argument(
        "--front-end",
        choices=("builtin", "hypercorn"),
        default="builtin",
        help="the built-in HTTP/1.1 server, or Hypercorn's trio worker (the asgi extra)",
    )
    run.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve HTTP from N processes on one port, restarted when they crash (default: 1)",
    )
    run.add_argument(
        "--redis",
        metavar="URL",
        help="the Redis (or Valkey) server the workers share state through, redis://host:port",
    )
    run.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE,
        metavar="S",
        help="seconds a stopping HTTP server (or its workers) gives the requests it serves, on"
        " SIGTERM or Ctrl-C; a second signal stops at once (default: %(default)g)",
    )
    run.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="warning",
        help="what mcptrio logs to stderr (default: warning)",
    )
    _operations_options(run)
    _openapi_options(run)

    _client_command(
        commands,
        "list",
        "",
        help="list a server's tools (or resources, templates, prompts) as JSON",
        description="Print what the server offers as one JSON object: its tools by default, "
        'as {"tools": [...]}, every page of them.',
        flags=(
            ("--resources", "list the resources"),
            ("--templates", "list the resource templates"),
            ("--prompts", "list the prompts"),
            ("--tools", "list the tools (the default)"),
            ("--all", "everything the server declares it has"),
        ),
    )
    _client_command(
        commands,
        "call",
        "TOOL [ARGS]",
        help="call a tool and print its result",
        description="Call TOOL and print its result: text as text, structured content as "
        "indented JSON, other content as one line each (--json: the CallToolResult as JSON). "
        "Its arguments are ARGS (a JSON object) and NAME=VALUE words, each VALUE converted to "
        "the type TOOL's inputSchema gives NAME, or NAME:=JSON for a JSON value. A result "
        "with isError set is printed on stderr, and the exit code is 1. On a terminal, the "
        "call's progress is shown on stderr while it runs.",
    )
    _client_command(
        commands,
        "read",
        "URI",
        help="read a resource and print it",
        description="Read the resource at URI and print its contents: text as text, binary "
        "contents as one line each (--json: the ReadResourceResult as JSON).",
    )
    _client_command(
        commands,
        "prompt",
        "NAME [ARGS]",
        help="get a prompt and print it",
        description="Get prompt NAME filled with ARGS (a JSON object of strings) and NAME=VALUE "
        "words, and print its messages, each under its role (--json: the GetPromptResult as "
        "JSON).",
    )

    _logout_command(commands)

    config = commands.add_parser(
        "config",
        help="print the mcpServers entry that starts TARGET (Claude Desktop, VS Code, Cursor)",
        description="Print, as JSON to paste into an MCP client's configuration, the "
        "mcpServers entry that starts TARGET over stdio with this Python and mcptrio.",
    )
    config.add_argument("target", metavar="TARGET", help="file.py[:name] or package.module[:name]")
    config.add_argument("--name", help="the entry's name (default: the server's name)")

    gateway = commands.add_parser(
        "gateway",
        help="serve a gateway over the servers of an mcpServers JSON file",
        description="Serve one MCP server whose tools, resources and prompts are those of the "
        "upstream servers in CONFIG (the mcpServers JSON of Claude Desktop, VS Code and Cursor), "
        "each namespaced by its entry's name. Over HTTP the URL is printed on stderr.",
    )
    gateway.add_argument("config", metavar="CONFIG", help='a JSON file with an "mcpServers" object')
    _serving_options(gateway, ("stdio", "http"), "http")
    _deployment_options(gateway)
    gateway.add_argument(
        "--name", default="mcptrio-gateway", help="the gateway's server name (default: %(default)s)"
    )
    gateway.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="what mcptrio logs to stderr (default: info: upstreams connecting and failing)",
    )

    _install_and_dev_commands(commands, run)

    commands.add_parser(
        "bench",
        help="run the benchmarks (python -m benchmarks, from a checkout)",
        add_help=False,
        description="Every argument is passed to python -m benchmarks.",
    )
    return parser


def _deployment_options(parser: argparse.ArgumentParser) -> None:
    """The serving options of a deployment (``mcptrio.server.serving_options``): hosts and
    origins let in, the path, TLS and authorization, each also an environment variable or a
    ``[serve]`` setting of ``--config``."""
    group = parser.add_argument_group(
        "serving options (each also an environment variable, or a [serve] setting of --config;"
        " see docs/reference/serving-options.md)"
    )
    group.add_argument(
        "--config",
        dest="serving_config",
        metavar="FILE",
        help="a TOML file whose [serve] table sets these options ($MCPTRIO_CONFIG)",
    )
    for setting in SETTINGS:
        if not setting.flag:
            continue
        meaning = setting.meaning.replace("`", "").replace("%", "%%")
        if setting.is_list:
            group.add_argument(
                setting.flag,
                dest=setting.name,
                action="append",
                metavar="VALUE",
                help=f"{meaning} (repeatable; ${setting.variable}, comma-separated)",
            )
        else:
            group.add_argument(
                setting.flag,
                dest=setting.name,
                choices=_CHOICES.get(setting.name),
                help=f"{meaning} (${setting.variable})",
            )


def _install_and_dev_commands(
    commands: argparse._SubParsersAction[_Parser], run: argparse.ArgumentParser
) -> None:
    """``install``, ``dev`` and ``run --reload``: putting a server into an MCP client, and
    serving one that restarts when its code changes."""
    install = commands.add_parser(
        "install",
        help="write the entry that starts TARGET into an MCP client's configuration file",
        description="Write the entry that starts TARGET over stdio (the one mcptrio config "
        "prints) into CLIENT's own configuration file for this user, creating it if needed. "
        "Every other member of the file is kept, and the file is first copied to "
        "FILE.bak-YYYYMMDD-HHMMSS. A file that is not valid JSON is never overwritten. "
        "Files: claude-desktop: claude_desktop_config.json (macOS ~/Library/Application "
        "Support/Claude, Windows %APPDATA%\\Claude, Linux ~/.config/Claude); claude-code: "
        "~/.claude.json (user scope); cursor: ~/.cursor/mcp.json; vscode: the user profile's "
        'mcp.json (under "servers").',
    )
    install.add_argument("client", metavar="CLIENT", choices=CLIENTS, help=" | ".join(CLIENTS))
    install.add_argument("target", metavar="TARGET", help="file.py[:name] or package.module[:name]")
    install.add_argument("--name", help="the entry's name (default: the server's name)")
    install.add_argument(
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="an environment variable the client starts the server with (repeatable)",
    )
    install.add_argument("--force", action="store_true", help="replace a server of the same name")
    install.add_argument(
        "--dry-run",
        action="store_true",
        help="print the file as it would be written (and where, on stderr); write nothing",
    )

    commands.add_parser(
        "dev",
        help="serve TARGET over HTTP, restarted when its code changes, for the MCP Inspector",
        usage=DEV_USAGE,
        add_help=False,
        description=DEV_DESCRIPTION,
    )
    run.add_argument(
        "--reload",
        action="store_true",
        help="start the server again when a .py file under its folder changes (a module: its "
        "package's folder); HTTP and WebSocket only",
    )


def _serving_options(
    parser: argparse.ArgumentParser, transports: Sequence[str], default: str
) -> None:
    """How a server command serves: ``--transport`` (one of ``transports``), and where it
    listens, ``--host`` and ``--port``."""
    parser.add_argument(
        "--transport", choices=transports, default=default, help=f"default: {default}"
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default: {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"0 picks a free one (default: {DEFAULT_PORT})",
    )


def _operations_options(parser: argparse.ArgumentParser) -> None:
    """What operators of a served server ask for: metrics, and logs a machine reads (the HTTP
    endpoint always answers /healthz and /readyz)."""
    group = parser.add_argument_group("operations")
    group.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics at /metrics over HTTP (the metrics extra)",
    )
    group.add_argument(
        "--metrics-allow",
        type=_address_list,
        metavar="ADDR[,ADDR]",
        help="addresses or networks (10.0.0.0/8) that may read /metrics (default: loopback)",
    )
    group.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="json: one JSON object a line (time, level, logger, message, and the request's id,"
        " method and session inside a request)",
    )


def _openapi_options(parser: argparse.ArgumentParser) -> None:
    """``run --openapi``: a server made from an OpenAPI document (:mod:`mcptrio.openapi`)."""
    group = parser.add_argument_group(
        "OpenAPI", "serve the operations of an HTTP API as tools, instead of a TARGET"
    )
    group.add_argument(
        "--openapi", metavar="SPEC", help="the API's OpenAPI 3.0/3.1 document: a file or a URL"
    )
    group.add_argument(
        "--base-url", metavar="URL", help="where the API is (default: the document's servers)"
    )
    group.add_argument(
        "--api-header",
        action="append",
        metavar="'NAME: VALUE'",
        help="a header sent with every call (repeatable); a VALUE of $VAR is read from the"
        " environment variable VAR",
    )
    group.add_argument(
        "--forward-header",
        action="append",
        metavar="NAME",
        help="pass on this header of the MCP client's HTTP request (repeatable; HTTP only)",
    )
    group.add_argument(
        "--gets-as",
        choices=("tools", "resources"),
        default="tools",
        help="resources: GETs that need only path parameters are resources (templates)",
    )
    for flag, meta, meaning in (
        ("--operation", "GLOB", "expose the operations whose operationId matches (repeatable)"),
        ("--exclude-operation", "GLOB", "hide the operations whose operationId matches"),
        ("--tag", "TAG", "expose the operations with this tag (repeatable)"),
        ("--method", "METHOD", "expose the operations of this method (repeatable)"),
        ("--route", "GLOB", "expose the operations whose path matches (repeatable)"),
    ):
        group.add_argument(flag, action="append", metavar=meta, help=meaning)
    group.add_argument(
        "--api-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds to connect to the API and for each read (default: %(default)g)",
    )


def _address_list(value: str) -> list[str]:
    """``--metrics-allow``'s comma-separated addresses and networks, checked."""
    from ..transports.http.endpoints.operations import parse_networks

    addresses = [entry.strip() for entry in value.split(",") if entry.strip()]
    try:
        parse_networks(addresses)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("metrics_allow ")) from None
    return addresses


def _client_command(
    commands: argparse._SubParsersAction[_Parser],
    name: str,
    words: str,
    *,
    help: str,
    description: str,
    flags: tuple[tuple[str, str], ...] = (),
) -> None:
    """A client command: the server (TARGET, or a command after ``--``) with the command's own
    ``words`` (the tool, the URI...), its on/off ``flags`` (name, help), and the options every
    client command has."""
    target = f"TARGET {words}".rstrip()
    command = f"-- COMMAND... {words}".rstrip()
    parser = commands.add_parser(
        name,
        help=help,
        usage=f"mcptrio {name} [options] ({target} | {command})",
        description=description,
    )
    parser.add_argument("words", nargs="*", metavar=target, help=argparse.SUPPRESS)
    for flag, flag_help in flags:
        parser.add_argument(flag, action="store_true", help=flag_help)
    _client_options(parser)
    _login_options(parser)


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON, as it came on the wire (list always does)",
    )
    parser.add_argument(
        "--pretty", action="store_true", help="print the result as indented JSON (implies --json)"
    )
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        metavar="NAME:VALUE",
        help="send this HTTP header to an http(s):// or ws(s):// server (repeatable), "
        "e.g. --header 'Authorization: Bearer TOKEN'",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds to wait for the connection and for each answer (default: 60)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log to stderr (with a server's stderr)"
    )


# ---------------------------------------------------------------- OAuth login (mcptrio.cli.login)


def _login_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--login",
        action="store_true",
        help="log in to an http(s):// server with OAuth, in the browser (BROWSER chooses it; "
        "the URL is printed on stderr too), and keep the login for the next commands to that "
        "server, which refresh it as needed ($XDG_CACHE_HOME/mcptrio/tokens.json, else "
        "~/.cache/mcptrio/tokens.json)",
    )


def _logout_command(commands: argparse._SubParsersAction[_Parser]) -> None:
    logout = commands.add_parser(
        "logout",
        help="forget the login --login kept for a server",
        usage="mcptrio logout (URL... | --all)",
        description="Forget the tokens that --login kept for each URL (its client "
        "registration with the authorization server is kept); --all forgets every login and "
        "registration, deleting the file they are kept in.",
    )
    logout.add_argument("urls", nargs="*", metavar="URL", help=argparse.SUPPRESS)
    logout.add_argument("--all", action="store_true", help="forget every login")
