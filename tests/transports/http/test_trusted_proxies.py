"""The client's address behind reverse proxies the operator trusts, and only those (issue 39,
item 1): ``X-Forwarded-For`` read right to left, skipping trusted proxies; ``Forwarded``, which
such proxies pass through from the client, never believed."""

from __future__ import annotations

import pytest

from mcptrio.transports.http.endpoints.forwarded import TrustedProxies

PROXIES = TrustedProxies(["10.0.0.0/8", "192.0.2.7", "2001:db8::/32"])


@pytest.mark.parametrize(
    ("peer", "headers", "client"),
    [
        # Not from a trusted proxy: the peer, whatever it claims.
        ("203.0.113.9", [(b"x-forwarded-for", b"198.51.100.1")], "203.0.113.9"),
        # From a trusted proxy: the address it took the request from.
        ("10.1.2.3", [(b"x-forwarded-for", b"198.51.100.1")], "198.51.100.1"),
        # A client's own forged entry is left of the real one, which is taken.
        ("10.1.2.3", [(b"x-forwarded-for", b"1.1.1.1, 198.51.100.1")], "198.51.100.1"),
        # Two trusted hops: the first untrusted address from the right.
        ("10.1.2.3", [(b"x-forwarded-for", b"198.51.100.1, 192.0.2.7")], "198.51.100.1"),
        # Several header lines are one list, in order.
        (
            "10.1.2.3",
            [(b"x-forwarded-for", b"198.51.100.1"), (b"x-forwarded-for", b"10.9.9.9")],
            "198.51.100.1",
        ),
        # A port, and IPv6 brackets, are taken off.
        ("10.1.2.3", [(b"x-forwarded-for", b"198.51.100.1:5555")], "198.51.100.1"),
        ("10.1.2.3", [(b"x-forwarded-for", b"[2001:db8:cafe::17]:4711")], "2001:db8:cafe::17"),
        # Forwarded is passed through by proxies that append to X-Forwarded-For: never read.
        (
            "10.1.2.3",
            [(b"forwarded", b"for=127.0.0.1"), (b"x-forwarded-for", b"203.0.113.9")],
            "203.0.113.9",
        ),
        ("10.1.2.3", [(b"forwarded", b"for=198.51.100.2")], "10.1.2.3"),
        # A value that is no address stops the walk at the last trusted hop.
        ("10.1.2.3", [(b"x-forwarded-for", b"198.51.100.1, unknown")], "10.1.2.3"),
        # No header: the proxy itself.
        ("10.1.2.3", [], "10.1.2.3"),
        # Every hop trusted: the leftmost.
        ("10.1.2.3", [(b"x-forwarded-for", b"10.4.4.4, 192.0.2.7")], "10.4.4.4"),
    ],
)
def test_the_client_is_the_first_untrusted_hop_from_the_right(
    peer: str, headers: list[tuple[bytes, bytes]], client: str
) -> None:
    assert PROXIES.client_of(peer, headers) == client


def test_without_trusted_proxies_the_headers_are_never_read() -> None:
    assert TrustedProxies().client_of("10.1.2.3", [(b"x-forwarded-for", b"1.2.3.4")]) == "10.1.2.3"


def test_an_entry_that_is_no_address_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^trusted proxy 'proxy\.local': give an IP address"):
        TrustedProxies(["proxy.local"])
