"""A set of IP addresses and networks an operator lists: :class:`AddressNetworks`.

The trusted proxies (:mod:`.forwarded`) and the addresses that may read ``/metrics``
(:mod:`.operations`) are both given as addresses or CIDR networks (``10.0.0.0/8``, ``::1``) and
both asked whether a peer's address is among them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

__all__ = ["AddressNetworks"]

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class AddressNetworks:
    """The addresses and networks of ``entries``; ``what`` names the setting in the
    ``ValueError`` raised for an entry that is neither."""

    __slots__ = ("_networks",)

    def __init__(self, entries: Iterable[str], what: str) -> None:
        networks: list[_Network] = []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                raise ValueError(
                    f"{what} {entry!r}: give an IP address or a network (10.0.0.0/8)"
                ) from None
        self._networks = tuple(networks)

    def __bool__(self) -> bool:
        return bool(self._networks)

    def holds(self, address: str) -> bool:
        """Whether ``address`` (``[::1]`` and IPv4-mapped IPv6 addresses too) is in the set;
        ``False`` for anything that is no IP address."""
        try:
            ip = ipaddress.ip_address(address.strip().strip("[]"))
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in self._networks)
