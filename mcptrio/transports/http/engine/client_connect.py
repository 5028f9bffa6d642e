"""The TCP connection of an HTTP client, to the addresses a caller's filter chose.

Checking a URL's host before a request does not keep a client off an address: the name is
resolved again when the connection is made, and a hostile DNS server can answer a public
address to the check and a private one to the connection (DNS rebinding). A pool given an
address filter (:class:`~.client_pool.HttpClientPool`'s ``address_filter``) resolves the name
once, here, lets the filter choose among the addresses (or refuse them all by raising), and
connects only to the ones chosen, in order: the addresses checked are the addresses used.
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Callable

import trio

__all__ = ["Address", "connect_failure", "open_tcp_to_chosen"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# What OpenSSL reports when the bytes that came back are not TLS at all: most often a plain
# HTTP server answering an https:// URL.
_NOT_TLS = frozenset(
    {"WRONG_VERSION_NUMBER", "PACKET_LENGTH_TOO_LONG", "UNKNOWN_PROTOCOL", "RECORD_LAYER_FAILURE"}
)


async def open_tcp_to_chosen(
    host: str, port: int, choose: Callable[[list[Address]], list[Address]] | None
) -> trio.SocketStream:
    """A TCP stream to ``host``: to any of its addresses when ``choose`` is ``None`` (Trio's
    own resolution and happy eyeballs), else to the first of the addresses ``choose`` keeps
    that accepts. ``OSError`` when none does; whatever ``choose`` raises, as it is."""
    if choose is None:
        return await trio.open_tcp_stream(host, port)
    entries = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    resolved: list[Address] = []
    for entry in entries:
        # An IPv6 scope ("fe80::1%eth0") is not part of the address the filter judges.
        address = ipaddress.ip_address(str(entry[4][0]).partition("%")[0])
        if address not in resolved:
            resolved.append(address)
    failures: list[str] = []
    for address in choose(resolved):
        try:
            return await trio.open_tcp_stream(str(address), port)
        except OSError as exc:
            failures.append(f"{address}: {exc}")
    raise OSError(f"no chosen address of {host} accepted ({'; '.join(failures) or 'none chosen'})")


def connect_failure(exc: BaseException) -> str:
    """Why connecting failed, in a few words: the ``OSError``'s own text, or for a failed TLS
    handshake (a ``trio.BrokenResourceError`` whose cause is the ``ssl.SSLError``, whose text
    Trio does not repeat) ``TLS handshake failed: `` and OpenSSL's reason in plain words."""
    cause = exc if isinstance(exc, ssl.SSLError) else exc.__cause__
    if isinstance(cause, ssl.SSLCertVerificationError):
        return f"TLS handshake failed: certificate verify failed ({cause.verify_message})"
    if isinstance(cause, ssl.SSLError):
        reason = str(cause.reason or "")
        words = reason.lower().replace("_", " ")
        if reason in _NOT_TLS:
            return f"TLS handshake failed: the server does not speak TLS ({words})"
        return f"TLS handshake failed: {words or cause}"
    if isinstance(exc, trio.BrokenResourceError):
        return "TLS handshake failed: the server closed the connection"
    return str(exc) or type(exc).__name__
