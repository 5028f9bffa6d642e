"""``mcptrio list``, ``call``, ``read`` and ``prompt``: connect, ask once, print JSON.

The JSON printed is the result as it came on the wire (camelCase, absent fields left out),
one object on stdout. A failure is one line on stderr and an exit code from :mod:`.errors`:
anything that goes wrong before the connection is up (an unreachable URL, a command that does
not start or ends before the handshake) is a connection failure, whatever form it took.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import trio

from ..client import Client, Timeouts, open_client, stdio
from ..client.targets import StdioTarget, Target
from ..protocol.errors import (
    ConnectionClosed,
    McpError,
    ProtocolError,
    RequestTimeout,
    TransportError,
)
from ..protocol.types import CallToolResult
from .errors import EXIT_CONNECTION, EXIT_OK, EXIT_SERVER_ERROR, CliError, usage_error
from .loading import bare_address_error, load_server, parse_server_spec

__all__ = ["run_client_command"]

_URL_SCHEMES = ("http://", "https://", "ws://", "wss://")


@dataclass(frozen=True)
class _Line:
    """A client command's positional words, sorted out."""

    target: Target
    label: str
    words: list[str]
    arguments: dict[str, Any] | None


# Per command: the words it takes after TARGET, and whether JSON arguments may follow.
_WORDS: dict[str, tuple[list[str], bool]] = {
    "list": ([], False),
    "call": (["TOOL"], True),
    "read": (["URI"], False),
    "prompt": (["NAME"], True),
}


def run_client_command(args: argparse.Namespace, command: list[str] | None) -> int:
    """Run ``args.command`` (a client command) and return its exit code."""
    line = _sort_out(args.command, list(args.words), command)
    ask = _ASK[args.command]
    return trio.run(_connect_and_ask, line, args, ask)


def _sort_out(name: str, words: list[str], command: list[str] | None) -> _Line:
    wanted, takes_json = _WORDS[name]
    usage = f"mcptrio {name} {'TARGET ' if command is None else ''}{' '.join(wanted)}".rstrip()
    if takes_json:
        usage += " [ARGS]"
    if command is not None and not words:
        # The command's own words are its last ones: ARGS (if it looks like JSON), then the
        # rest, taken from the end.
        tail = command
        count = len(wanted) + (1 if takes_json and tail and tail[-1].startswith("{") else 0)
        if len(tail) <= count:
            raise _no_command(wanted, usage)
        command, words = tail[: len(tail) - count], tail[len(tail) - count :]
    elif command is None:
        if not words:
            raise usage_error(f"give a TARGET: usage: {usage}")
        label = words.pop(0)
    if len(words) < len(wanted) or len(words) > len(wanted) + takes_json:
        raise usage_error(f"usage: {usage}")
    arguments = _json_object(words[len(wanted)]) if len(words) > len(wanted) else None
    if name == "prompt" and arguments and not all(isinstance(v, str) for v in arguments.values()):
        raise usage_error("prompt arguments are strings: ARGS must map names to strings")
    if command is None:
        target = _target(label)
    else:
        if not command:
            raise _no_command(wanted, usage)
        target, label = stdio(command), " ".join(command)
    return _Line(target, label, words[: len(wanted)], arguments)


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


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise usage_error(f"ARGS is not valid JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise usage_error(f"ARGS must be a JSON object, like '{{\"a\": 1}}', not {text!r}")
    return value


async def _connect_and_ask(line: _Line, args: argparse.Namespace, ask: _Ask) -> int:
    timeouts = Timeouts(initialize=args.timeout, request=args.timeout, probe=min(5.0, args.timeout))
    connected = False
    try:
        async with open_client(line.target, timeouts=timeouts) as client:
            connected = True
            answer, code = await ask(client, line, args)
    except (McpError, OSError) as exc:
        if not connected:
            stdio_target = isinstance(line.target, StdioTarget)
            hint = " (-v shows the server's stderr)" if stdio_target and not args.verbose else ""
            message = f"cannot connect to {line.label}: {_message(exc)}{hint}"
            raise CliError(EXIT_CONNECTION, message) from None
        raise _answer_error(line, exc) from None
    _print(answer, args.pretty)
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
    result: CallToolResult = await client.call_tool(line.words[0], line.arguments)
    if result.is_error:
        sys.stderr.write(f"mcptrio: tool {line.words[0]} reported an error\n")
        return result, EXIT_SERVER_ERROR
    return result, EXIT_OK


async def _read(client: Client, line: _Line, args: argparse.Namespace) -> tuple[Any, int]:
    return await client.read_resource(line.words[0]), EXIT_OK


async def _prompt(client: Client, line: _Line, args: argparse.Namespace) -> tuple[Any, int]:
    return await client.get_prompt(line.words[0], line.arguments), EXIT_OK


_Ask = Callable[[Client, _Line, argparse.Namespace], Awaitable[tuple[Any, int]]]
_ASK: dict[str, _Ask] = {
    "list": _list,
    "call": _call,
    "read": _read,
    "prompt": _prompt,
}
