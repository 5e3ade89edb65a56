"""VRF devices -> tables, from iproute2's JSON (the shape 6.1 and 6.12 print)."""

from __future__ import annotations

from ovn_frr.kernel.vrf import parse_vrf_links


def test_vrf_tables_come_from_the_link_details() -> None:
    data = [
        {"ifindex": 5, "ifname": "red", "flags": ["MASTER", "UP"], "mtu": 65575,
         "linkinfo": {"info_kind": "vrf", "info_data": {"table": 10}}},
        {"ifindex": 6, "ifname": "blue", "linkinfo": {"info_kind": "vrf",
                                                       "info_data": {"table": 1001}}},
        {"ifindex": 7, "ifname": "br0", "linkinfo": {"info_kind": "bridge"}},
        {"ifindex": 8, "ifname": "odd", "linkinfo": {"info_kind": "vrf", "info_data": {}}},
    ]  # fmt: skip
    assert parse_vrf_links(data) == {"red": 10, "blue": 1001}
