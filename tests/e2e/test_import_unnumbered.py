"""IPv4 prefixes learned with IPv6 next hops (RFC 8950/5549, as with unnumbered BGP)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import replace

import pytest

from ovn_frr.lab import wait_for
from tests.e2e.conftest import SPEC, ImportLab, import_lab


@pytest.fixture(scope="module")
def v6lab() -> Iterator[ImportLab]:
    with import_lab(replace(SPEC, ipv4_over_ipv6=True)) as state:
        yield state


def test_ipv4_prefix_with_ipv6_next_hop(v6lab: ImportLab) -> None:
    p = "198.51.100.32/27"
    v6lab.lab.announcer("tor1").announce([p])

    def via_v6() -> bool:
        entries = v6lab.lab.frr["node1"].rib().get(p, [])
        return any(nh.get("afi") == "ipv6" for e in entries for nh in e.get("nexthops", []))

    wait_for(via_v6, timeout=30, what=f"{p} via an IPv6 next hop in zebra")
    if v6lab.lab.versions.ovn_mixed_family_routes:
        wait_for(lambda: p in v6lab.routes(), timeout=20, what=f"{p} imported")
        ((nexthop, port),) = v6lab.routes()[p]
        assert ipaddress.ip_address(nexthop).version == 6
        assert port == "rtoe-GR_node1"
    else:
        # OVN < 25.03 cannot route an IPv4 prefix via an IPv6 next hop: reported, not written
        def rejected() -> dict[str, str] | None:
            got = {r["prefix"]: r for r in v6lab.agent.status()["rejected"]}
            return got.get(p)

        rejection = wait_for(rejected, timeout=20, what="rejection reported")
        assert rejection["reason"] == "unresolvable-nexthop"
        assert rejection["detail"].startswith("IPv4 via IPv6 next hop")
        assert "needs OVN >= 25.03" in rejection["detail"]
        assert "routes_rejected router=GR_node1 reason=unresolvable-nexthop" in (
            v6lab.agent.output()
        )
        assert p not in v6lab.routes()
    v6lab.lab.announcer("tor1").withdraw([p])
