"""Lab topology descriptions (pure: no namespaces are created here)."""

from __future__ import annotations

import ipaddress

import pytest

from ovn_frr.lab import LabSpec, LinkSpec, NodeSpec, PeerSpec, SpecError, demo_spec
from ovn_frr.lab.spec import link_addrs


def test_demo_spec_addresses() -> None:
    spec = demo_spec()
    spec.validate()
    node_links = link_addrs(spec, "node1")
    assert [(la.remote, la.ifname, str(la.v4), str(la.peer_v4)) for la in node_links] == [
        ("tor1", "to-tor1", "10.255.0.1/24", "10.255.0.2"),
        ("tor2", "to-tor2", "10.255.1.1/24", "10.255.1.2"),
    ]
    (tor2,) = link_addrs(spec, "tor2")
    assert tor2.v6 == ipaddress.IPv6Interface("fd00:255:1::2/64")
    assert tor2.peer_v6 == ipaddress.IPv6Address("fd00:255:1::1")
    assert spec.router_id("node1") == ipaddress.IPv4Address("192.0.2.1")
    assert spec.router_id("tor2") == ipaddress.IPv4Address("192.0.2.102")


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (LabSpec(nodes=(NodeSpec("Node1"),)), "names are"),
        (LabSpec(nodes=(NodeSpec("averyveryverylongname"),)), "names are"),
        (LabSpec(nodes=(NodeSpec("n1"),), peers=(PeerSpec("n1", 1),)), "unique"),
        (LabSpec(nodes=(NodeSpec("n1"),), links=(LinkSpec("n1", "tor9"),)), "no node or peer"),
        (
            LabSpec(
                nodes=(NodeSpec("n1"),),
                peers=(PeerSpec("t1", 1),),
                links=(LinkSpec("n1", "t1"), LinkSpec("t1", "n1")),
            ),
            "duplicate",
        ),
        (LabSpec(nodes=(NodeSpec("ovn"),)), "reserved"),
        (LabSpec(ovn_members=2), "1, 3 or 5"),
    ],
)
def test_invalid_specs(spec: LabSpec, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        spec.validate()
