"""A set of prefixes answering "does this prefix overlap any member?" in O(log n)."""

from __future__ import annotations

import bisect
import ipaddress
import socket
from collections.abc import Iterable, Mapping

from ovn_frr.core.model import Network


class PrefixIndex:
    """Immutable after construction. Overlap = one prefix contains the other (or equal)."""

    def __init__(self, prefixes: Mapping[Network, str] | Iterable[Network]) -> None:
        items = prefixes.items() if isinstance(prefixes, Mapping) else ((p, "") for p in prefixes)
        self._label: dict[tuple[int, int, int], str] = {}
        self._lengths: dict[int, list[int]] = {4: [], 6: []}
        starts: dict[int, list[tuple[int, int, int]]] = {4: [], 6: []}
        for net, label in items:
            key = (net.version, int(net.network_address), net.prefixlen)
            self._label.setdefault(key, label)
            starts[net.version].append((int(net.network_address), int(net.broadcast_address),
                                        net.prefixlen))  # fmt: skip
        for v in (4, 6):
            self._lengths[v] = sorted({k[2] for k in self._label if k[0] == v})
        self._sorted = {v: sorted(starts[v]) for v in (4, 6)}
        self._first = {v: [s[0] for s in self._sorted[v]] for v in (4, 6)}

    def __len__(self) -> int:
        return len(self._label)

    def overlapping(self, net: Network) -> tuple[Network, str] | None:
        """A member that contains ``net`` (the longest such) or lies inside it, with its label."""
        return self.overlapping_key(net.version, int(net.network_address), net.prefixlen)

    def overlapping_key(self, v: int, addr: int, prefixlen: int) -> tuple[Network, str] | None:
        """:meth:`overlapping` for a prefix given as (version, network address, length)."""
        bits = 32 if v == 4 else 128
        # a member that contains net (or equals it), the most specific first
        for length in reversed(self._lengths[v]):
            if length > prefixlen:
                continue
            mask = ((1 << length) - 1) << (bits - length) if length else 0
            key = (v, addr & mask, length)
            if key in self._label:
                return _net(v, addr & mask, length), self._label[key]
        # a member inside net: its first address falls in [net.first, net.last]
        first = self._first[v]
        i = bisect.bisect_left(first, addr)
        if i < len(first) and first[i] <= addr | ((1 << (bits - prefixlen)) - 1):
            start, _end, length = self._sorted[v][i]
            return _net(v, start, length), self._label[(v, start, length)]
        return None


def prefix_key(prefix: str) -> tuple[int, int, int]:
    """(version, network address as an integer, length) of prefix text ("192.0.2.0/24");
    a fraction of the cost of an ipaddress network (a route's first decision needs it)."""
    addr, _, length = prefix.partition("/")
    if ":" in addr:
        return 6, int.from_bytes(socket.inet_pton(socket.AF_INET6, addr), "big"), int(length)
    return 4, int.from_bytes(socket.inet_aton(addr), "big"), int(length)


def _net(version: int, addr: int, length: int) -> Network:
    if version == 4:
        return ipaddress.IPv4Network((addr, length))
    return ipaddress.IPv6Network((addr, length))
