"""Several MCP servers at once: :func:`open_client_group` and :class:`ClientGroup`.

::

    async with mcptrio.open_client_group() as group:
        await group.connect("weather", "http://127.0.0.1:8000/mcp")
        await group.connect("notes", ["python", "notes.py"])
        for tool in await group.list_tools():           # every server's tools
            print(tool.qualified_name)                   # "weather/forecast", ...
        await group.call_tool("weather", "forecast", {"city": "Oslo"})
        await group.call_tool("notes/add", {"text": "buy milk"})

Theory of operation. The group owns one nursery. Each connection is one task in it, holding an
:func:`~mcptrio.open_client` block open until it is told to leave (``disconnect``, or the group
closing) or until its session ends on its own. So connections come and go while the group
runs, each closes the way ``open_client`` closes (a stdio server gets its graceful shutdown),
and none outlives the group.

Failure policy:

- **Connecting** is the caller's business: an error while connecting (spawning, the handshake)
  is raised to the caller of :meth:`ClientGroup.connect` as :class:`ServerConnectError`, naming
  the server, with the original error as its ``__cause__``; nothing of that connection is left
  open. On entry, :func:`open_client_group` connects its targets concurrently: one failing
  cancels the others still connecting and closes those already connected.
- **Later**, a connection that ends (its server exits, its transport breaks) is removed from the
  group and its error is kept in :attr:`ClientGroup.failures`; the other connections and the
  group's block carry on. A call already waiting on that server fails with
  :class:`~mcptrio.ConnectionClosed`, and a call through the group that fails so has already
  taken the server out of the group when it raises (so its name can be connected again at
  once, without waiting for the dead connection's task to notice).
- An error in the group's own block closes every connection and leaves the block unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Unpack, overload

import trio

from ..protocol.errors import ConnectionClosed
from ..protocol.types import CallToolResult, Tool
from ..runtime.nurseries import open_unwrapping_nursery
from .client import Client
from .connect import open_client
from .errors import ClientError
from .options import CallOptions, ClientOptions, check_options
from .targets import Target

__all__ = [
    "ClientGroup",
    "GroupTool",
    "ServerConnectError",
    "UnknownServer",
    "open_client_group",
]

log = logging.getLogger("mcptrio.client.group")

#: Separates the server from the tool in a qualified name: ``"weather/forecast"``.
SEPARATOR = "/"


class ServerConnectError(ClientError):
    """Connecting to one server of a group failed; ``__cause__`` is the reason."""

    def __init__(self, server: str, cause: BaseException) -> None:
        super().__init__(f"Could not connect to MCP server {server!r}: {cause}")
        self.server = server


class UnknownServer(ClientError, KeyError):
    """No server of that name is connected to the group (a ``KeyError`` too)."""

    def __init__(self, server: str, failure: BaseException | None = None) -> None:
        message = f"No MCP server named {server!r} is connected"
        if failure is not None:
            message += f" (its connection failed: {failure})"
        super().__init__(message)
        self.server = server

    def __str__(self) -> str:
        # KeyError would show the message quoted, as if it were the missing key.
        return str(self.args[0])


@dataclass(frozen=True)
class GroupTool:
    """A tool of one server of a group, with the name the group knows it by."""

    server: str
    tool: Tool
    #: ``"<server>/<tool name>"``: what :meth:`ClientGroup.call_tool` takes as one argument.
    qualified_name: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "qualified_name", f"{self.server}{SEPARATOR}{self.tool.name}")

    @property
    def name(self) -> str:
        """The tool's own name, as its server knows it."""
        return self.tool.name


def _ended(name: str) -> ConnectionClosed:
    return ConnectionClosed(f"The connection to MCP server {name!r} ended")


@dataclass(eq=False)
class _Connection:
    client: Client
    # The connection task waits in this scope; cancelling it makes the task leave its
    # open_client block normally, so the connection closes as open_client closes.
    waiting: trio.CancelScope = field(default_factory=trio.CancelScope)
    leaving: bool = False
    # Set once the connection is known to have ended on its own (see ClientGroup._lost).
    lost: bool = False
    done: trio.Event = field(default_factory=trio.Event)


class ClientGroup:
    """Connections to several MCP servers, by name, in one nursery.

    Made by :func:`open_client_group`. It reads like a mapping of names to
    :class:`~mcptrio.Client`: ``group["notes"]``, ``"notes" in group``, ``list(group)`` (the
    names, in the order they connected), ``len(group)``. A name whose connection has ended is no
    longer there; its error is in :attr:`failures`.
    """

    def __init__(self, nursery: trio.Nursery, **options: Unpack[ClientOptions]) -> None:
        check_options("open_client_group()", options, ClientOptions)
        self._nursery = nursery
        self._options = options
        self._connections: dict[str, _Connection] = {}
        self._connecting: set[str] = set()
        self._closing = False
        #: Why each connection that ended on its own ended, by server name. A later successful
        #: :meth:`connect` under the same name removes the entry.
        self.failures: dict[str, BaseException] = {}

    # ------------------------------------------------------------------ the mapping

    def __getitem__(self, name: str) -> Client:
        return self._connection(name).client

    def _connection(self, name: str) -> _Connection:
        connection = self._connections.get(name)
        if connection is None:
            raise UnknownServer(name, self.failures.get(name))
        return connection

    def __contains__(self, name: object) -> bool:
        return name in self._connections

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._connections))

    def __len__(self) -> int:
        return len(self._connections)

    def items(self) -> list[tuple[str, Client]]:
        """``(name, client)`` for every connected server, in the order they connected."""
        return [(name, connection.client) for name, connection in self._connections.items()]

    def __repr__(self) -> str:
        return f"<ClientGroup {list(self._connections)!r} failures={list(self.failures)!r}>"

    # ------------------------------------------------------------------ connecting

    async def connect(self, name: str, target: Target, **options: Unpack[ClientOptions]) -> Client:
        """Connect to ``target`` as server ``name`` and return its initialized client.

        ``target`` and ``options`` are those of :func:`~mcptrio.open_client`; each option given
        here replaces the group's common one (a whole record: ``timeouts=`` here replaces the
        group's ``timeouts``). The connection lives in the group's nursery, not in the
        caller's: it stays open after this returns, until :meth:`disconnect`, the group's end,
        or its own failure.

        Raises :class:`ServerConnectError` (the reason as its ``__cause__``) if connecting
        fails, and ``ValueError`` for a name that is empty, holds ``"/"`` or is already taken.
        Cancelling the caller while it connects abandons the connection cleanly.
        """
        if not isinstance(name, str) or not name or SEPARATOR in name:
            raise ValueError(f"A server name must be a non-empty string without '/': {name!r}")
        if name in self._connections or name in self._connecting:
            raise ValueError(f"A server named {name!r} is already connected")
        if self._closing:
            raise RuntimeError("The client group is closing")
        check_options("ClientGroup.connect()", options, ClientOptions)
        self._connecting.add(name)
        try:
            client: Client = await self._nursery.start(
                self._run_connection, name, target, {**self._options, **options}
            )
        except Exception as error:
            raise ServerConnectError(name, error) from error
        finally:
            self._connecting.discard(name)
        return client

    async def _run_connection(
        self,
        name: str,
        target: Target,
        options: ClientOptions,
        *,
        task_status: trio.TaskStatus[Client] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        connection: _Connection | None = None
        try:
            async with open_client(target, **options) as client:
                connection = _Connection(client)
                self._connections[name] = connection
                self.failures.pop(name, None)
                task_status.started(client)
                with connection.waiting:
                    await client.session.closed.wait()
                if not connection.leaving:
                    # Out of the group before the (maybe slow) close, so that no new call is
                    # routed to it.
                    self._lost(name, connection, _ended(name))
        except Exception as error:
            if connection is None:
                raise  # not connected yet: nursery.start hands it to the caller of connect()
            if connection.leaving:
                log.warning("Closing the connection to MCP server %r failed: %s", name, error)
            else:
                connection.lost = False  # its own error says more than "it ended": replace that
                self._lost(name, connection, error)
        finally:
            if connection is not None:
                self._forget(name, connection)
                connection.done.set()

    def _lost(self, name: str, connection: _Connection, error: BaseException) -> None:
        """``connection`` ended on its own: out of the group, its error recorded (once)."""
        if connection.lost or connection.leaving:
            return
        connection.lost = True
        self._forget(name, connection)
        if name not in self._connections:  # not connected again meanwhile
            self.failures[name] = error
        log.warning("MCP server %r failed: %s", name, error)

    def _forget(self, name: str, connection: _Connection) -> None:
        if self._connections.get(name) is connection:
            del self._connections[name]

    async def disconnect(self, name: str) -> None:
        """Close the connection to server ``name`` and wait until it is closed.

        The name leaves the group at once (no new call goes to it); calls still waiting on
        that server fail with :class:`~mcptrio.ConnectionClosed`. Raises
        :class:`UnknownServer` when no server of that name is connected.
        """
        connection = self._connection(name)
        self._forget(name, connection)
        self._leave(connection)
        await connection.done.wait()

    @staticmethod
    def _leave(connection: _Connection) -> None:
        connection.leaving = True
        connection.waiting.cancel()

    async def aclose(self) -> None:
        """Close every connection, concurrently, and wait until all are closed."""
        self._closing = True
        connections = list(self._connections.values())
        self._connections.clear()
        for connection in connections:
            self._leave(connection)
        for connection in connections:
            await connection.done.wait()

    def _close_nowait(self) -> None:
        self._closing = True
        for connection in self._connections.values():
            self._leave(connection)
        self._connections.clear()

    # ------------------------------------------------------------------ tools

    async def list_tools(self, **options: Unpack[CallOptions]) -> list[GroupTool]:
        """Every tool of every connected server, asked concurrently, every page.

        Grouped by server in the order the servers connected, each in its server's order.
        Servers that declared no ``tools`` capability are not asked. A server whose connection
        ends meanwhile is left out (its error goes to :attr:`failures`); any other error is
        raised, with a note naming the server.
        """
        found: dict[str, list[GroupTool]] = {}
        connected = list(self._connections.items())

        async def list_one(name: str, connection: _Connection) -> None:
            try:
                found[name] = [
                    GroupTool(name, tool) async for tool in connection.client.iter_tools(**options)
                ]
            except ConnectionClosed:
                self._lost(name, connection, _ended(name))
            except Exception as error:
                error.add_note(f"from MCP server {name!r}")
                raise

        async with open_unwrapping_nursery() as nursery:
            for name, connection in connected:
                if connection.client.server_capabilities.tools is not None:
                    nursery.start_soon(list_one, name, connection)
        return [tool for name, _ in connected for tool in found.get(name, ())]

    @overload
    async def call_tool(
        self,
        server: str,
        name: str,
        /,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        **options: Unpack[CallOptions],
    ) -> CallToolResult: ...

    @overload
    async def call_tool(
        self,
        qualified_name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        validate_output: bool = True,
        **options: Unpack[CallOptions],
    ) -> CallToolResult: ...

    async def call_tool(
        self,
        server: str,
        name: str | Mapping[str, Any] | None = None,
        /,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: bool = True,
        **options: Unpack[CallOptions],
    ) -> CallToolResult:
        """Call a tool of one server: ``call_tool("notes", "add", args)`` or
        ``call_tool("notes/add", args)``.

        Everything else is :meth:`Client.call_tool`'s: the server's errors are raised
        unchanged, ``structuredContent`` is validated unless ``validate_output=False``.
        Raises :class:`UnknownServer` for a server that is not connected.
        """
        if isinstance(name, str):
            tool = name
        else:
            if name is not None and arguments is not None:
                raise TypeError("call_tool(qualified_name, arguments) takes no third argument")
            qualified = server
            server, separator, tool = qualified.partition(SEPARATOR)
            if not separator or not tool:
                raise ValueError(
                    f"{qualified!r} is not a qualified tool name ('server/tool'); "
                    "give the server and the tool name as two arguments"
                )
            if name is not None:
                arguments = name
        connection = self._connection(server)
        try:
            return await connection.client.call_tool(
                tool,
                arguments,
                validate_output=validate_output,
                **options,
            )
        except ConnectionClosed:
            # Only a session that has ended raises this: out of the group now, not once its
            # task gets its turn, so that the caller may connect that name again at once.
            self._lost(server, connection, _ended(server))
            raise


@asynccontextmanager
async def open_client_group(
    targets: Mapping[str, Target] | None = None, **options: Unpack[ClientOptions]
) -> AsyncIterator[ClientGroup]:
    """Open a :class:`ClientGroup`, connected to ``targets`` (name -> target) on entry.

    ``options`` are :func:`~mcptrio.open_client`'s keywords (``identity``, ``revisions``,
    ``timeouts``, ``handlers``, ``notifications``), common to every connection of the group
    (:meth:`ClientGroup.connect` can replace them). The targets are
    connected concurrently; if one fails, the others are closed and its
    :class:`ServerConnectError` is raised. Leaving the block closes every connection,
    concurrently, and waits for them (a stdio server gets its graceful shutdown); an error
    leaving the block is raised as itself, not in an exception group.
    """
    async with open_unwrapping_nursery() as nursery:
        group = ClientGroup(nursery, **options)
        try:
            if targets:
                async with open_unwrapping_nursery() as connecting:
                    for name, target in targets.items():
                        connecting.start_soon(group.connect, name, target)
            yield group
        finally:
            group._close_nowait()
