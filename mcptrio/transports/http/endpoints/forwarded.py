"""The client's address behind reverse proxies the operator trusts: :class:`TrustedProxies`.

Behind a reverse proxy every request comes from the proxy's address, so whatever is counted per
client address (anonymous task owners, listen quotas, sessions per client) would count every
client as one. A proxy says whom it forwards for in ``X-Forwarded-For`` (a list, each hop
appending the address it took the request from) or RFC 7239's ``Forwarded: for=``; only a proxy
the operator names may be believed, since any client can send those headers.

So: a request whose peer is not a trusted proxy is its peer, headers or not. From a trusted
proxy, the forwarded addresses are read from the right (the hop nearest to us first), skipping
trusted proxies; the first address that is not one is the client. A value that is no IP
address (``unknown``, an obfuscated identifier, garbage) stops the walk there: the client is
the last trusted hop that named it, never a value a client could have forged.

Only ``X-Forwarded-For`` is read. The proxies in use (nginx, HAProxy, Envoy, cloud load
balancers, Kubernetes ingress controllers) append to it and pass a ``Forwarded`` header from the
client through untouched: believing ``Forwarded`` when both came would let a client name any
address it likes. A proxy that speaks only RFC 7239 can be told to set ``X-Forwarded-For`` too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from ..engine.exchange import Headers
from .address_networks import AddressNetworks

__all__ = ["TrustedProxies"]


class TrustedProxies:
    """The proxies whose forwarding headers are believed (addresses or CIDR networks)."""

    __slots__ = ("_networks",)

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self._networks = AddressNetworks(entries, "trusted proxy")

    def __bool__(self) -> bool:
        return bool(self._networks)

    def trusts(self, address: str) -> bool:
        return self._networks.holds(address)

    def client_of(self, peer: str | None, headers: Headers) -> str | None:
        """The client's address for a request from ``peer`` with these ``headers``."""
        if peer is None or not self._networks or not self.trusts(peer):
            return peer
        client = peer
        for hop in reversed(_forwarded_for(headers)):
            if not _is_address(hop):
                break
            client = hop
            if not self.trusts(hop):
                break
        return client


def is_forwarded(headers: Headers) -> bool:
    """Whether a proxy says it forwarded the request (``X-Forwarded-For`` or ``Forwarded``)."""
    return any(name in (b"x-forwarded-for", b"forwarded") for name, _ in headers)


def _forwarded_for(headers: Headers) -> list[str]:
    """The addresses ``X-Forwarded-For`` says the request was forwarded for, oldest first (every
    header line of it, in order), each without a port or IPv6 brackets."""
    hops: list[str] = []
    for name, value in headers:
        if name == b"x-forwarded-for":
            hops += [_address(part) for part in value.decode("latin-1").split(",")]
    return hops


def _address(value: str) -> str:
    """A hop as an address: quotes, IPv6 brackets and a port taken off."""
    value = value.strip().strip('"')
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    host, _, port = value.rpartition(":")
    return host if host and port.isdigit() and value.count(":") == 1 else value


def _is_address(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
