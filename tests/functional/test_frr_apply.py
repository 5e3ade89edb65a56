"""Applying ovn-frr's config to a real FRR: exact diffs, operator config kept, failed applies
rolled back, thousands of networks in one batch."""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Callable

from ovn_frr import config
from ovn_frr.core.frr_model import desired_frr
from ovn_frr.frr.apply import FrrApplier
from ovn_frr.frr.render import render
from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for

CFG = config.parse(
    '[bgp]\nasn = 64512\nrouter_id = "192.0.2.10"\n'
    '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\nbfd_profile = "fast"\n'
    "[bfd.profiles.fast]\nreceive_interval_ms = 100\ntransmit_interval_ms = 100\n"
)
OPERATOR = (
    "router bgp 64512\n neighbor 10.99.0.2 remote-as 65099\nexit\n"
    "ip prefix-list operator-list seq 5 permit 10.0.0.0/8\n"
    "route-map operator-map permit 10\nexit\n"
)


def conf(*prefixes: str) -> str:
    return render(desired_frr(CFG, {"": [ipaddress.ip_network(p) for p in prefixes]}))


def networks(lab: Lab) -> int:
    return sum(line.strip().startswith("network ") for line in running(lab).splitlines())


def running(lab: Lab) -> str:
    return lab.frr["node1"].vtysh.running_config()


def test_apply_diff_keeps_operator_config_and_rolls_back(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    lab = make_lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
    vtysh = lab.frr["node1"].vtysh
    vtysh.apply(OPERATOR)
    applier = FrrApplier(vtysh)

    assert applier.apply(conf("10.128.0.0/23", "10.128.2.5/32")).ok
    assert applier.missing() == []
    text = running(lab)
    assert "network 10.128.0.0/23" in text
    assert "neighbor 10.255.0.2 bfd profile fast" in text

    result = applier.apply(conf("10.128.2.5/32", "172.20.0.10/32"))
    assert result.ok
    assert result.lines < 20  # only the change is sent (with its context lines)
    text = running(lab)
    assert "network 10.128.0.0/23" not in text
    assert "network 172.20.0.10/32" in text
    assert applier.missing() == []

    # FRR rejects a line: the batch is undone, the last good config stays
    good = applier.applied
    bad = (
        conf("10.128.2.5/32", "198.51.100.0/24")
        + "router bgp 64512\n neighbor 10.255.0.9 remote-as 0\nexit\n"
    )
    result = applier.apply(bad)
    assert not result.ok
    assert "remote-as" in result.error or "%" in result.error
    assert applier.applied == good
    assert "network 198.51.100.0/24" not in running(lab)
    assert applier.missing() == []

    # ovn-frr lets go of everything: the operator's lines survive
    assert applier.apply("").ok
    text = running(lab)
    for line in ("neighbor 10.99.0.2 remote-as 65099", "ip prefix-list operator-list seq 5",
                 "route-map operator-map permit 10"):  # fmt: skip
        assert line in text
    assert "ovnfrr-" not in text
    assert "10.255.0.2" not in text


def test_ten_thousand_networks_in_one_batch(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
    applier = FrrApplier(lab.frr["node1"].vtysh)
    nets = [str(n) for n in itertools.islice(
        ipaddress.ip_network("10.128.0.0/10").subnets(new_prefix=28), 10_000)]  # fmt: skip
    assert applier.apply(conf(*nets)).ok
    assert networks(lab) == 10_000
    assert applier.apply(conf()).ok
    assert networks(lab) == 0
    assert applier.missing() == []


def test_restart_is_detected_by_missing(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
    applier = FrrApplier(lab.frr["node1"].vtysh)
    assert applier.apply(conf("10.128.0.0/23")).ok
    lab.frr["node1"].restart()
    lost = "router bgp 64512 > address-family ipv4 unicast > network 10.128.0.0/23 route-map"
    assert any(line.startswith(lost) for line in applier.missing())
    applier.forget()
    assert applier.apply(conf("10.128.0.0/23")).ok
    assert applier.missing() == []


def test_tor_receives_exactly_what_ovn_frr_originated(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(
        LabSpec(
            nodes=(NodeSpec("node1", bgp=False),),
            peers=(PeerSpec("tor1", 65001), PeerSpec("tor2", 65002)),
            links=(LinkSpec("node1", "tor1"), LinkSpec("node1", "tor2")),
            ovn=False,
        )
    )
    cfg = config.parse(
        '[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n'
        '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\n'
        '[[bgp.neighbors]]\naddress = "10.255.1.2"\nremote_as = 65002\n'
    )
    node = lab.frr["node1"]
    node.vtysh.apply("router bgp 64512\n address-family ipv4 unicast\n  network 192.0.2.128/25\n"
                     " exit-address-family\nexit\n")  # the operator's own network  # fmt: skip
    ours = ["10.128.0.0/23", "172.20.0.10/32"]
    text = render(desired_frr(cfg, {"": [ipaddress.ip_network(p) for p in ours]}))
    assert FrrApplier(node.vtysh).apply(text).ok
    lab.announcer("tor2").announce(["198.51.100.0/24"])  # learned from tor2: no transit
    node.wait_established(["10.255.0.2", "10.255.1.2"])
    wait_for(lambda: "198.51.100.0/24" in node.bgp_prefixes(), timeout=20, what="tor2 route")

    def received() -> set[str]:
        return set(lab.frr["tor1"].bgp_prefixes())

    wait_for(lambda: set(ours) <= received(), timeout=20, what="ovn-frr's prefixes at tor1")
    assert received() == set(ours)
    path = lab.frr["tor1"].show("show bgp ipv4 unicast 10.128.0.0/23 json")["paths"][0]
    assert "largeCommunity" not in path  # the origin mark is stripped on the way out


def test_a_vrf_instance_no_longer_needed_is_removed_unless_someone_else_uses_it(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    lab = make_lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
    vtysh = lab.frr["node1"].vtysh
    applier = FrrApplier(vtysh)

    def vrfs(*names: str) -> str:
        return render(desired_frr(CFG, {n: [ipaddress.ip_network("10.77.0.0/24")] for n in names}))

    assert applier.apply(vrfs("", "blue", "red")).ok
    assert "router bgp 64512 vrf blue" in running(lab)
    # the operator adds a line of their own to red
    vtysh.apply("router bgp 64512 vrf red\n neighbor 10.98.0.2 remote-as 65098\nexit\n")
    assert applier.apply(vrfs("")).ok
    text = running(lab)
    assert "router bgp 64512 vrf blue" not in text  # ours alone: removed
    assert "router bgp 64512 vrf red" in text  # the operator's neighbor keeps it
    assert "neighbor 10.98.0.2 remote-as 65098" in text
    assert "network 10.77.0.0/24" in text  # the default VRF's is still there
    assert text.count("network 10.77.0.0/24") == 1
