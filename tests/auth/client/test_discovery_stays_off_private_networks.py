"""A remote MCP server cannot send the OAuth client to the user's own machine or network.

The MCP server here is ``https://mcp.example.test:<port>/mcp``: a name a test resolver maps to
127.0.0.1, with a certificate from a test CA, so that to the client it is a remote https host.
What it names (a resource metadata URL, an authorization server, an authorization server's
endpoints) points at a "local service" on loopback, at a private or link-local address, or at
a name resolving to one; the client must refuse each before sending it anything, unless told
to with ``allow_private_network_urls=True``. A loopback MCP server (development) may name
loopback authorization servers: the other client tests all run that way.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
import trio
import trustme

from mcptrio.auth.client import ClientCredentials, DiscoveryError, OAuthClient, RegistrationError
from mcptrio.auth.client.url_policy import is_public_address
from mcptrio.transports.http.engine.builtin_server import serve_builtin
from mcptrio.transports.http.engine.exchange import HttpRequest, HttpResponder, WebSocketPeer

TIMEOUT = 20.0
JSON = [(b"content-type", b"application/json")]
MCP_HOST = "mcp.example.test"
#: A name the test resolver maps to a private address (nothing listens there).
INTRANET_HOST = "intranet.example.test"
#: A name the test resolver maps to a public address once, then to loopback (DNS rebinding).
REBINDING_HOST = "rebinding.example.test"


class NamesResolver(trio.abc.HostnameResolver):
    """Resolves the names of ``names`` to the addresses given, and nothing else; a name given
    several addresses resolves to the next one at each lookup, then stays on the last."""

    def __init__(self, names: Mapping[str, str | list[str]]) -> None:
        self.names = dict(names)
        self.asked: list[str] = []

    async def getaddrinfo(
        self,
        host: bytes | None,
        port: bytes | str | int | None,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> list[Any]:
        name = (host or b"").decode()
        self.asked.append(name)
        given = self.names.get(name)
        if given is None:
            raise socket.gaierror(socket.EAI_NONAME, "unknown name")
        address = given if isinstance(given, str) else given.pop(0) if len(given) > 1 else given[0]
        number = int(port or 0)
        if ipaddress.ip_address(address).version == 6:
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, number, 0, 0))]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, number))]

    async def getnameinfo(
        self, sockaddr: tuple[str, int] | tuple[str, int, int, int], flags: int
    ) -> tuple[str, str]:
        raise OSError("not used")


@dataclass
class LocalService:
    """A service on the user's loopback that answers like an authorization server and records
    every request it gets."""

    url: str = ""
    seen: list[tuple[str, str]] = field(default_factory=list)

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        self.seen.append((request.method, request.path))
        document = {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "registration_endpoint": f"{self.url}/register",
            "code_challenge_methods_supported": ["S256"],
        }
        await responder.send_response(200, JSON, json.dumps(document).encode())

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        await peer.reject(404)


@dataclass
class RemoteMcpServer:
    """The remote MCP server: its PRM names ``authorization_servers``; without them it has no
    PRM and is its own authorization server, whose metadata names ``endpoints_at``."""

    url: str = ""
    authorization_servers: list[str] | None = None
    endpoints_at: str = ""

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        if request.path == "/.well-known/oauth-protected-resource/mcp" and (
            self.authorization_servers is not None
        ):
            document: dict[str, Any] = {
                "resource": f"{self.url}/mcp",
                "authorization_servers": self.authorization_servers,
            }
        elif request.path == "/.well-known/oauth-authorization-server" and self.endpoints_at:
            document = {
                "issuer": self.url,
                "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.endpoints_at}/token",
                "registration_endpoint": f"{self.endpoints_at}/register",
                "code_challenge_methods_supported": ["S256"],
            }
        else:
            await responder.send_response(404, JSON, b"{}")
            return
        await responder.send_response(200, JSON, json.dumps(document).encode())

    async def handle_websocket(self, request: HttpRequest, peer: WebSocketPeer) -> None:
        await peer.reject(404)


@dataclass
class Scene:
    mcp: RemoteMcpServer
    local: LocalService
    #: The same kind of local service over https, with a certificate for REBINDING_HOST.
    local_tls: LocalService
    client_tls: ssl.SSLContext
    resolver: NamesResolver

    def oauth(self, **options: Any) -> OAuthClient:
        return OAuthClient(ClientCredentials(), ssl_context=self.client_tls, timeout=2.0, **options)

    async def refused(self, oauth: OAuthClient, challenge: bytes = b"Bearer") -> None:
        """Drive the client as the MCP server's 401 would."""
        await oauth.on_response(
            "POST", f"{self.mcp.url}/mcp", 401, [(b"www-authenticate", challenge)], [], 1
        )


@asynccontextmanager
async def scene() -> AsyncIterator[Scene]:
    ca = trustme.CA()
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(MCP_HOST, REBINDING_HOST).configure_cert(server_tls)
    client_tls = ssl.create_default_context()
    ca.configure_trust(client_tls)
    resolver = NamesResolver({MCP_HOST: "127.0.0.1", INTRANET_HOST: "10.20.30.40"})
    trio.socket.set_custom_hostname_resolver(resolver)
    mcp, local, local_tls = RemoteMcpServer(), LocalService(), LocalService()
    try:
        async with trio.open_nursery() as nursery:
            served = await nursery.start(partial(serve_builtin, mcp, ssl_context=server_tls))
            mcp.url = served.replace("127.0.0.1", MCP_HOST)
            local.url = await nursery.start(partial(serve_builtin, local))
            served = await nursery.start(partial(serve_builtin, local_tls, ssl_context=server_tls))
            local_tls.url = served.replace("127.0.0.1", REBINDING_HOST)
            yield Scene(mcp, local, local_tls, client_tls, resolver)
            nursery.cancel_scope.cancel()
    finally:
        trio.socket.set_custom_hostname_resolver(None)


async def test_a_resource_metadata_url_on_loopback_is_not_fetched() -> None:
    with trio.fail_after(TIMEOUT):
        async with scene() as s:
            challenge = f'Bearer resource_metadata="{s.local.url}/prm"'.encode()
            with pytest.raises(DiscoveryError, match="allow_private_network_urls"):
                await s.refused(s.oauth(), challenge)
            assert s.local.seen == []


async def test_an_authorization_server_on_loopback_is_not_asked() -> None:
    with trio.fail_after(TIMEOUT):
        async with scene() as s:
            s.mcp.authorization_servers = [s.local.url]
            with pytest.raises(DiscoveryError, match="allow_private_network_urls"):
                await s.refused(s.oauth())
            assert s.local.seen == []


async def test_registration_and_token_endpoints_on_loopback_are_not_posted_to() -> None:
    with trio.fail_after(TIMEOUT):
        async with scene() as s:
            s.mcp.endpoints_at = s.local.url
            with pytest.raises(DiscoveryError, match="allow_private_network_urls"):
                await s.refused(s.oauth())
            assert s.local.seen == []


@pytest.mark.parametrize(
    "issuer",
    [
        f"https://{INTRANET_HOST}",
        "https://169.254.169.254",
        "https://10.0.0.7",
        "https://[::1]",
        "https://[::ffff:127.0.0.1]",
        "https://localhost",
    ],
)
async def test_an_authorization_server_at_a_private_address_is_refused(issuer: str) -> None:
    with trio.fail_after(TIMEOUT):
        async with scene() as s:
            s.mcp.authorization_servers = [issuer]
            with pytest.raises(DiscoveryError, match="allow_private_network_urls"):
                await s.refused(s.oauth())


async def test_a_name_resolving_to_loopback_by_the_time_it_is_connected_to_is_refused() -> None:
    # The check before the request sees a public address; the connection would go to the
    # user's own machine. The addresses checked must be the addresses connected to.
    with trio.fail_after(TIMEOUT):
        async with scene() as s:
            s.resolver.names[REBINDING_HOST] = ["8.8.8.8", "127.0.0.1"]
            s.mcp.authorization_servers = [s.local_tls.url]
            with pytest.raises(DiscoveryError, match="allow_private_network_urls"):
                await s.refused(s.oauth())
            assert s.local_tls.seen == []


async def test_a_name_that_cannot_be_resolved_is_refused() -> None:
    with trio.fail_after(TIMEOUT):
        async with scene() as s:
            s.mcp.authorization_servers = ["https://nowhere.example.test"]
            with pytest.raises(DiscoveryError, match="cannot be resolved"):
                await s.refused(s.oauth())


async def test_the_user_may_allow_private_network_urls() -> None:
    with trio.fail_after(TIMEOUT):
        async with scene() as s:
            s.mcp.authorization_servers = [s.local.url]
            # The local service answers registration with metadata: the client got that far.
            with pytest.raises(RegistrationError):
                await s.refused(s.oauth(allow_private_network_urls=True))
            assert s.local.seen == [
                ("GET", "/.well-known/oauth-authorization-server"),
                ("POST", "/register"),
            ]


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("100.64.0.1", False),
        ("169.254.169.254", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("fec0::1", False),
        ("ff02::1", False),
        ("::ffff:10.0.0.1", False),
        ("64:ff9b::7f00:1", False),
        ("2002:7f00:1::", False),
    ],
)
def test_only_global_unicast_addresses_are_public(address: str, public: bool) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is public
