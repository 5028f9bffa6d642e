"""``mcptrio list``, ``call``, ``read`` and ``prompt``: connect, ask once, print the answer.

``call``, ``read`` and ``prompt`` print the result for people (:mod:`.output`); with ``--json``
(or ``--pretty``), and always for ``list``, the result as it came on the wire (camelCase,
absent fields left out), one object on stdout. A failure is one line on stderr and an exit code
from :mod:`.errors`: anything that goes wrong before the connection is up (an unreachable URL, a
command that does not start or ends before the handshake) is a connection failure, whatever
form it took.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import trio

from ..client import Client, Timeouts, http, open_client, stdio, websocket
from ..client.targets import StdioTarget, Target
from ..protocol.errors import (
    ConnectionClosed,
    McpError,
    ProtocolError,
    RequestTimeout,
    TransportError,
)
from ..protocol.types import CallToolResult
from .arguments import (
    Assignment,
    is_assignment,
    read_assignments,
    string_arguments,
    typed_arguments,
)
from .errors import EXIT_CONNECTION, EXIT_OK, EXIT_SERVER_ERROR, CliError, usage_error
from .loading import bare_address_error, load_server, parse_server_spec
from .login import Login, login_for
from .output import ProgressLine, render_call, render_prompt, render_read

__all__ = ["run_client_command"]

_URL_SCHEMES = ("http://", "https://", "ws://", "wss://")
# RFC 9110's token: what a header's name is made of.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


@dataclass(frozen=True)
class _Line:
    """A client command's positional words, sorted out."""

    target: Target
    label: str
    words: list[str]
    arguments: dict[str, Any] | None
    assignments: list[Assignment]


# Per command: the words it takes after TARGET, and whether arguments may follow (a JSON
# object, NAME=VALUE words, or both).
_WORDS: dict[str, tuple[list[str], bool]] = {
    "list": ([], False),
    "call": (["TOOL"], True),
    "read": (["URI"], False),
    "prompt": (["NAME"], True),
}


def run_client_command(args: argparse.Namespace, command: list[str] | None) -> int:
    """Run ``args.command`` (a client command) and return its exit code."""
    headers = _headers(args.header or [])
    line = _sort_out(args.command, list(args.words), command, headers)
    ask = _ASK[args.command]
    login = login_for(line.target, line.label, args)
    return trio.run(_connect_and_ask, line, args, ask, login)


def _sort_out(
    name: str, words: list[str], command: list[str] | None, headers: dict[str, str] | None
) -> _Line:
    """The positional words of client command ``name`` sorted out: the target (sending
    ``headers``), the command's own words and its arguments."""
    wanted, takes_arguments = _WORDS[name]
    usage = f"mcptrio {name} {'TARGET ' if command is None else ''}{' '.join(wanted)}".rstrip()
    if takes_arguments:
        usage += " [ARGS] [NAME=VALUE...]"
    if command is not None and not words:
        # The command's own words are its last ones: NAME=VALUE words, before them ARGS (if it
        # looks like JSON), then the rest, taken from the end.
        tail = command
        count = len(wanted) + (_trailing_arguments(tail) if takes_arguments else 0)
        if len(tail) <= count:
            raise _no_command(wanted, usage)
        command, words = tail[: len(tail) - count], tail[len(tail) - count :]
    elif command is None:
        if not words:
            raise usage_error(f"give a TARGET: usage: {usage}")
        label = words.pop(0)
    extra = words[len(wanted) :]
    if len(words) < len(wanted) or (extra and not takes_arguments):
        raise usage_error(f"usage: {usage}")
    arguments = None
    if extra and not is_assignment(extra[0]):
        arguments = _json_object(extra.pop(0))
    assignments = read_assignments(extra)
    if name == "prompt" and arguments and not all(isinstance(v, str) for v in arguments.values()):
        raise usage_error("prompt arguments are strings: ARGS must map names to strings")
    if command is None:
        target = _target(label)
    else:
        if not command:
            raise _no_command(wanted, usage)
        target, label = stdio(command), " ".join(command)
    if headers is not None:
        target = _with_headers(target, label, headers)
    return _Line(target, label, words[: len(wanted)], arguments, assignments)


def _trailing_arguments(tail: list[str]) -> int:
    """How many of ``tail``'s last words are arguments: the NAME=VALUE words at its end, and
    the JSON object (a word starting with ``{``) just before them."""
    count = 0
    while count < len(tail) and is_assignment(tail[-1 - count]):
        count += 1
    if count < len(tail) and tail[-1 - count].startswith("{"):
        count += 1
    return count


def _no_command(wanted: list[str], usage: str) -> Exception:
    then = f", then {usage.removeprefix('mcptrio ').split(' ', 1)[1]}" if wanted else ""
    return usage_error(f"after -- give the server's command{then}")


def _target(text: str) -> Target:
    if text.startswith(_URL_SCHEMES):
        return text
    if "://" in text:
        raise usage_error(f"{text!r}: the client speaks http(s):// and ws(s):// URLs only")
    if (bare := bare_address_error(text)) is not None:
        raise bare
    return load_server(parse_server_spec(text))


def _with_headers(target: Target, label: str, headers: dict[str, str]) -> Target:
    """``target``, a URL, as the HTTP or WebSocket target that sends ``headers``; any other
    target, which no header reaches, is a usage error."""
    if isinstance(target, str):
        return (http if target.startswith("http") else websocket)(target, headers=headers)
    if isinstance(target, StdioTarget):
        reached = "a server started after -- is spoken to over stdio"
    else:
        reached = f"{label} is run in memory"
    raise usage_error(f"--header is for http(s):// and ws(s):// servers: {reached}")


def _headers(given: list[str]) -> dict[str, str] | None:
    """The ``--header NAME:VALUE`` options as a mapping (``None`` when there are none)."""
    headers: dict[str, str] = {}
    named: set[str] = set()
    for option in given:
        name, colon, value = option.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _HEADER_NAME.fullmatch(name) or "\r" in value or "\n" in value:
            raise usage_error(
                f"--header {option!r}: give NAME:VALUE, like --header 'Authorization: Bearer TOKEN'"
            )
        if name.lower() in named:
            raise usage_error(f"--header {name} is given twice")
        named.add(name.lower())
        headers[name] = value
    return headers or None


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise usage_error(f"ARGS is not valid JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise usage_error(f"ARGS must be a JSON object, like '{{\"a\": 1}}', not {text!r}")
    return value


async def _connect_and_ask(
    line: _Line, args: argparse.Namespace, ask: _Ask, login: Login | None
) -> int:
    timeouts = Timeouts(initialize=args.timeout, request=args.timeout, probe=min(5.0, args.timeout))
    connected = False
    target = line.target if login is None else await login.target(line.target)
    try:
        async with open_client(target, timeouts=timeouts) as client:
            connected = True
            answer, code = await ask(client, line, args)
    except (McpError, OSError) as exc:
        if login is not None and (refused := login.refusal(exc)) is not None:
            raise refused from None
        if not connected:
            stdio_target = isinstance(line.target, StdioTarget)
            hint = " (-v shows the server's stderr)" if stdio_target and not args.verbose else ""
            message = f"cannot connect to {line.label}: {_message(exc)}{hint}"
            raise CliError(EXIT_CONNECTION, message) from None
        raise _answer_error(line, exc) from None
    _show(line, args, answer)
    return code


def _answer_error(line: _Line, exc: BaseException) -> CliError:
    if isinstance(exc, ProtocolError):
        return CliError(EXIT_SERVER_ERROR, f"{line.label} answered {exc.code}: {exc.message}")
    if isinstance(exc, RequestTimeout):
        return CliError(EXIT_CONNECTION, f"{line.label} did not answer in time: {exc.message}")
    if isinstance(exc, ConnectionClosed | TransportError | OSError):
        return CliError(EXIT_CONNECTION, f"lost {line.label}: {_message(exc)}")
    # The client's own checks: an output schema mismatch, a capability the server lacks.
    return CliError(EXIT_SERVER_ERROR, _message(exc))


def _message(exc: BaseException) -> str:
    if isinstance(exc, McpError):
        return exc.message
    return str(exc) or type(exc).__name__


def _show(line: _Line, args: argparse.Namespace, answer: Any) -> None:
    """Print ``answer``: as JSON (``list``, ``--json``, ``--pretty``), or for people; a tool's
    error result goes to stderr, after a line saying so."""
    failed = isinstance(answer, CallToolResult) and bool(answer.is_error)
    said = f"mcptrio: tool {line.words[0]} reported an error" if failed else ""
    if args.command == "list" or args.json or args.pretty:
        if said:
            sys.stderr.write(f"{said}\n")
        _print(answer, args.pretty)
        return
    text = _RENDER[args.command](answer)
    if not failed:
        sys.stdout.write(text)
        sys.stdout.flush()
    elif text.count("\n") <= 1:
        sys.stderr.write(f"{said}: {text or '(no content)'}".rstrip("\n") + "\n")
    else:
        sys.stderr.write(f"{said}:\n{text}")


def _print(answer: Any, pretty: bool) -> None:
    encoded = msgspec.json.encode(answer)
    if pretty:
        encoded = msgspec.json.format(encoded, indent=2)
    sys.stdout.write(encoded.decode() + "\n")
    sys.stdout.flush()


async def _list(client: Client, line: _Line, args: argparse.Namespace) -> tuple[Any, int]:
    if args.all:
        declared = client.server_capabilities
        kinds = [
            kind
            for kind, present in (
                ("tools", declared.tools),
                ("resources", declared.resources),
                ("templates", declared.resources),
                ("prompts", declared.prompts),
            )
            if present
        ]
    else:
        kinds = [kind for kind in _LISTS if getattr(args, kind)] or ["tools"]
    declared = client.server_capabilities
    listed: dict[str, list[Any]] = {}
    for kind in kinds:
        key, items = _LISTS[kind]
        # A kind the server does not declare cannot be asked for: it has none of them.
        has = declared.resources if kind == "templates" else getattr(declared, kind)
        listed[key] = [item async for item in items(client)] if has else []
    return listed, EXIT_OK


_LISTS: dict[str, tuple[str, Callable[[Client], AsyncIterator[Any]]]] = {
    "tools": ("tools", lambda client: client.iter_tools()),
    "resources": ("resources", lambda client: client.iter_resources()),
    "templates": ("resourceTemplates", lambda client: client.iter_resource_templates()),
    "prompts": ("prompts", lambda client: client.iter_prompts()),
}


async def _call(client: Client, line: _Line, args: argparse.Namespace) -> tuple[Any, int]:
    name = line.words[0]
    arguments = line.arguments
    if line.assignments:
        schema = None
        if not all(assignment.is_json for assignment in line.assignments):
            async for tool in client.iter_tools():
                if tool.name == name:
                    schema = tool.input_schema
        arguments = typed_arguments(name, arguments, line.assignments, schema)
    # Progress is asked for on every call, so that it pushes --timeout back the same way
    # whether or not anyone watches; it is shown only to a person at a terminal.
    progress = ProgressLine(sys.stderr, name) if sys.stderr.isatty() else None
    try:
        result = await client.call_tool(name, arguments, on_progress=progress or _unseen)
    finally:
        if progress is not None:
            progress.clear()
    return result, EXIT_SERVER_ERROR if result.is_error else EXIT_OK


def _unseen(progress: float, total: float | None, message: str | None) -> None:
    """Progress no one watches (stderr is not a terminal)."""


async def _read(client: Client, line: _Line, args: argparse.Namespace) -> tuple[Any, int]:
    return await client.read_resource(line.words[0]), EXIT_OK


async def _prompt(client: Client, line: _Line, args: argparse.Namespace) -> tuple[Any, int]:
    arguments = string_arguments(line.arguments, line.assignments)
    return await client.get_prompt(line.words[0], arguments), EXIT_OK


_RENDER: dict[str, Callable[[Any], str]] = {
    "call": render_call,
    "read": render_read,
    "prompt": render_prompt,
}

_Ask = Callable[[Client, _Line, argparse.Namespace], Awaitable[tuple[Any, int]]]
_ASK: dict[str, _Ask] = {
    "list": _list,
    "call": _call,
    "read": _read,
    "prompt": _prompt,
}
