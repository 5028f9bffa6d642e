"""Where an MCP server may send the OAuth client: :class:`DiscoveredUrls`.

Discovery follows URLs the network names: the challenge's ``resource_metadata``, the
authorization servers a Protected Resource Metadata document lists, the endpoints an
authorization server's metadata gives. A hostile server on the internet could name
``http://127.0.0.1:8080/...`` or ``https://169.254.169.254/...``, and the client would send
requests (a registration, a token request) to the user's own machine or network for it
(server-side request forgery, with the user's client as the forger).

So when the MCP server is **not on loopback**, a discovered URL must be ``https`` and its host
public: neither an address nor a name that resolves to one that is loopback, private,
link-local, shared (carrier-grade NAT), multicast, reserved or unspecified (IPv4 inside IPv6,
NAT64 and 6to4 addresses are judged by the IPv4 address they carry). A name that does not
resolve is refused too. Exempt are:

- URLs on the MCP server's own origin: the user chose to talk to that server;
- everything, when the MCP server itself is on loopback (development: a server and its
  authorization server on this machine);
- everything, with ``OAuthClient(allow_private_network_urls=True)``: an MCP server whose
  authorization server is on the user's own network (a company's, say).

The check resolves the name before the request; the HTTP client resolves it again to connect,
and a DNS server may answer a public address first and a private one a moment later (DNS
rebinding). So the OAuth client's HTTP pool also checks the addresses it connects to
(:meth:`DiscoveredUrls.connectable`, the pool's ``address_filter``): the same rule, applied to
the very addresses used.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import trio

from ...transports.http.engine.client_pool import Origin
from .errors import DiscoveryError
from .fetch import check_endpoint, is_loopback, origin_of

__all__ = ["DiscoveredUrls", "is_public_address"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_SHARED = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SETTING = "OAuthClient(allow_private_network_urls=True)"


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, NAT64, 6to4), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def is_public_address(address: Address) -> bool:
    """Whether ``address`` is a global unicast address (not this machine, not a private or
    link-local network, not multicast, reserved or unspecified)."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = _carried_ipv4(address)
        if carried is not None:
            return is_public_address(carried)
        if address.is_site_local:
            return False
    elif address in _SHARED:
        return False
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified
    )


async def _resolve(host: str, port: int) -> list[Address]:
    try:
        entries = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    except OSError:
        return []
    return [ipaddress.ip_address(str(entry[4][0]).partition("%")[0]) for entry in entries]


@dataclass(slots=True)
class DiscoveredUrls:
    """The URLs discovery may follow for the MCP server at ``server_url``; see the module's
    docstring. ``timeout`` bounds resolving a name."""

    server_url: str
    allow_private_network_urls: bool = False
    timeout: float = 30.0
    _origin: str = field(init=False)
    _server: tuple[str, str, int] = field(init=False)
    _open: bool = field(init=False)

    def __post_init__(self) -> None:
        self._origin = origin_of(self.server_url)
        parts = urlsplit(self.server_url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
        self._server = (scheme, host, parts.port or (443 if scheme == "https" else 80))
        self._open = self.allow_private_network_urls or is_loopback(host)

    def connectable(self, origin: Origin, addresses: list[Address]) -> list[Address]:
        """The addresses a connection to ``origin`` may use: all of them on the MCP server's
        own origin or when discovery is open, else all when every one is public; otherwise
        :class:`DiscoveryError` (a name that passed :meth:`check` and resolves elsewhere when
        connected to: DNS rebinding)."""
        if self._open or (origin.scheme, origin.host, origin.port) == self._server:
            return addresses
        private = [str(address) for address in addresses if not is_public_address(address)]
        if private:
            url = f"{origin.scheme}://{origin.host}:{origin.port}"
            raise self._refused(url, "connection", f"resolves to {', '.join(private)} to connect")
        return addresses

    async def check(self, url: str, what: str) -> str:
        """``url`` when the client may follow it; :class:`DiscoveryError` naming ``what`` and
        the setting otherwise."""
        check_endpoint(url, what)
        if self._open or origin_of(url) == self._origin:
            return url
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme.lower() != "https" or is_loopback(host):
            raise self._refused(url, what, "is on this machine")
        addresses: list[Address] = []
        try:
            addresses.append(ipaddress.ip_address(host))
        except ValueError:
            with trio.move_on_after(self.timeout):
                addresses = await _resolve(host, parts.port or 443)
            if not addresses:
                raise DiscoveryError(
                    f"The {what} {url!r}, named by the MCP server at {self.server_url!r},"
                    " cannot be resolved; refused"
                ) from None
        private = [str(address) for address in addresses if not is_public_address(address)]
        if private:
            raise self._refused(url, what, f"points to {', '.join(private)}")
        return url

    def _refused(self, url: str, what: str, why: str) -> DiscoveryError:
        return DiscoveryError(
            f"The {what} {url!r}, named by the MCP server at {self.server_url!r}, {why}, not"
            f" on the public internet; refused ({_SETTING} follows it)"
        )
