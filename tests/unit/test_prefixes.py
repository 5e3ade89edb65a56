from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from ovn_frr.core.prefixes import PrefixIndex

net = ipaddress.ip_network


def test_overlap_both_directions_and_families() -> None:
    idx = PrefixIndex({net("10.244.1.0/24"): "subnet", net("10.244.1.5/32"): "pod",
                       net("fd00::/64"): "v6"})  # fmt: skip
    assert idx.overlapping(net("10.244.1.5/32")) == (net("10.244.1.5/32"), "pod")
    assert idx.overlapping(net("10.244.1.128/25")) == (net("10.244.1.0/24"), "subnet")
    assert idx.overlapping(net("10.0.0.0/8")) is not None  # covers
    assert idx.overlapping(net("10.245.0.0/16")) is None
    assert idx.overlapping(net("fd00::1/128")) == (net("fd00::/64"), "v6")
    assert idx.overlapping(net("fd01::/64")) is None
    assert PrefixIndex([]).overlapping(net("0.0.0.0/0")) is None


nets = st.builds(
    lambda a, n: ipaddress.IPv4Network((a, n), strict=False),
    st.integers(0, 2**32 - 1),
    st.integers(0, 32),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(nets, max_size=20), nets)
def test_matches_brute_force(
    members: list[ipaddress.IPv4Network], probe: ipaddress.IPv4Network
) -> None:
    expected = any(m.overlaps(probe) for m in members)
    assert (PrefixIndex(members).overlapping(probe) is not None) == expected
