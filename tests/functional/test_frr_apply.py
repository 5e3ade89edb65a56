"""Keeping a real FRR at ovn-frr's config: exact diffs against the running config, operator
config kept, a rejected line isolated, an FRR restart repaired, thousands of networks in one
batch, and a bad neighbor that never disturbs an Established one."""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Callable

from ovn_frr import config
from ovn_frr.config.convert import frr_settings
from ovn_frr.core.frr_model import desired_frr
from ovn_frr.frr.apply import FrrApplier
from ovn_frr.frr.render import render
from ovn_frr.frr.vtysh import LineError
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


#: node1 (FRR only, configured by the test) and tor1 on one link
WITH_TOR = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1"),),
    ovn=False,
)
TOR1 = '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\n'


def conf(*prefixes: str) -> str:
    nets = {"": [ipaddress.ip_network(p) for p in prefixes]}
    return render(desired_frr(frr_settings(CFG), nets))


def networks(lab: Lab) -> int:
    return sum(line.strip().startswith("network ") for line in running(lab).splitlines())


def running(lab: Lab) -> str:
    return lab.frr["node1"].vtysh.running_config()


def test_only_changes_are_sent_operator_config_stays_and_a_rejected_line_is_isolated(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    lab = make_lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
    vtysh = lab.frr["node1"].vtysh
    lab.frr["node1"].apply(OPERATOR)  # tried again while FRR 10's mgmtd holds the datastore
    applier = FrrApplier(vtysh)

    assert applier.check(conf("10.128.0.0/23", "10.128.2.5/32")).sent > 20
    assert applier.check(conf("10.128.0.0/23", "10.128.2.5/32")).sent == 0  # FRR matches
    text = running(lab)
    assert "network 10.128.0.0/23" in text
    assert "neighbor 10.255.0.2 bfd profile fast" in text

    result = applier.check(conf("10.128.2.5/32", "172.20.0.10/32"))
    assert result.sent == 2 and not result.rejected  # one network out, one in
    text = running(lab)
    assert "network 10.128.0.0/23" not in text
    assert "network 172.20.0.10/32" in text

    # FRR rejects one line: the rest of the batch stays applied, the line is held
    bad = (
        conf("10.128.2.5/32", "198.51.100.0/24")
        + "router bgp 64512\n neighbor 10.255.0.9 remote-as 0\nexit\n"
    )
    result = applier.check(bad)
    assert result.rejected and result.again
    assert result.rejected[0][0][-1] == "neighbor 10.255.0.9 remote-as 0"
    assert applier.check(bad).sent == 0  # held: not sent again before its retry
    assert "network 198.51.100.0/24" in running(lab)
    assert list(applier.held) == [("router bgp 64512", "neighbor 10.255.0.9")]

    # ovn-frr lets go of everything: the operator's lines survive
    assert not applier.check("").rejected
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
    assert not applier.check(conf(*nets)).rejected
    assert networks(lab) == 10_000
    assert not applier.check(conf()).rejected
    assert networks(lab) == 0
    assert applier.check(conf()).sent == 0


def test_an_frr_restart_is_repaired_as_drift(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
    applier = FrrApplier(lab.frr["node1"].vtysh)
    first = applier.check(conf("10.128.0.0/23"))
    assert first.sent and not first.drift
    lab.frr["node1"].restart()
    again = applier.check(conf("10.128.0.0/23"))
    assert again.drift == again.sent == first.sent
    assert applier.check(conf("10.128.0.0/23")).sent == 0


def test_bgpd_restarted_alone_gets_its_route_maps_and_prefix_lists_again(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    """zebra keeps the route-maps and prefix-lists it shares with bgpd, and vtysh's merged
    config shows them: bgpd's own config decides what is sent again."""
    lab = make_lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
    node = lab.frr["node1"]
    applier = FrrApplier(node.vtysh)
    first = applier.check(conf("10.128.0.0/23"))
    assert first.sent and not first.rejected

    before = node.bgpd_policy()
    assert before
    node.restart_daemon("bgpd")
    assert not node.bgpd_policy()
    again = applier.check(conf("10.128.0.0/23"))  # bfdd kept its profile: not sent
    assert again.drift == again.sent and not again.rejected
    assert node.bgpd_policy() == before
    assert applier.check(conf("10.128.0.0/23")).sent == 0


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
    node.apply("router bgp 64512\n address-family ipv4 unicast\n  network 192.0.2.128/25\n"
               " exit-address-family\nexit\n")  # the operator's own network  # fmt: skip
    ours = ["10.128.0.0/23", "172.20.0.10/32"]
    text = render(desired_frr(frr_settings(cfg), {"": [ipaddress.ip_network(p) for p in ours]}))
    assert not FrrApplier(node.vtysh).check(text).rejected
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
        nets = {n: [ipaddress.ip_network("10.77.0.0/24")] for n in names}
        return render(desired_frr(frr_settings(CFG), nets))

    assert not applier.check(vrfs("", "blue", "red")).rejected
    assert "router bgp 64512 vrf blue" in running(lab)
    # the operator adds a line of their own to red
    # (FrrInstance.apply: FRR 10.3's mgmtd may still hold the datastore of the batch before)
    lab.frr["node1"].apply("router bgp 64512 vrf red\n neighbor 10.98.0.2 remote-as 65098\nexit\n")
    assert not applier.check(vrfs("")).rejected
    text = running(lab)
    assert "router bgp 64512 vrf blue" not in text  # ours alone: removed
    assert "router bgp 64512 vrf red" in text  # the operator's neighbor keeps it
    assert "neighbor 10.98.0.2 remote-as 65098" in text
    assert "network 10.77.0.0/24" in text  # the default VRF's is still there
    assert text.count("network 10.77.0.0/24") == 1


def test_a_rejected_neighbor_never_resets_an_established_session(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    lab = make_lab(WITH_TOR)
    tor1 = TOR1
    base = '[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n'
    good = frr_settings(config.parse(base + tor1))
    bad = frr_settings(config.parse(
        base + tor1 + '[[bgp.neighbors]]\naddress = "10.255.0.1"\nremote_as = 65003\n'
    ))  # fmt: skip  # node1's own address: FRR refuses it, check-config cannot know
    node = lab.frr["node1"]
    assert not FrrApplier(node.vtysh).check(render(desired_frr(good, {}))).rejected
    node.wait_established(["10.255.0.2"])

    def established() -> int:
        peer = node.show("show bgp neighbors 10.255.0.2 json")["10.255.0.2"]
        assert peer["bgpState"] == "Established"
        return int(peer["connectionsEstablished"])

    before = established()
    applier = FrrApplier(node.vtysh)  # a restarted agent, now with a bad neighbor too
    for _ in range(4):
        result = applier.check(render(desired_frr(bad, {})))
        assert established() == before
        if not result.again:
            break
    (held,) = applier.held.values()
    assert held.line[-1] == "neighbor 10.255.0.1 remote-as 65003"
    assert "local system" in held.reason
    assert "ovnfrr-in-10_255_0_1" in running(lab)  # the rest of the batch was applied


def test_a_prefix_next_hop_reaches_the_peer_and_changes_without_a_withdrawal(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    """dynamic-routing-v4-prefix-nexthop: the router's own address on the shared link is the
    next hop tor1 gets (eBGP keeps a next hop on the peer's subnet); a new one swaps the
    route-map on the same network line: no ``no network``, and FRR then matches exactly."""
    lab = make_lab(WITH_TOR)
    tor1 = TOR1
    cfg = frr_settings(config.parse('[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n' + tor1))
    p = ipaddress.ip_network("10.0.0.0/24")

    def text(hop: str) -> str:
        nets = {p: ipaddress.ip_address(hop), ipaddress.ip_network("fd00:10::/64"):
                ipaddress.ip_address("fd00:255::3")}  # fmt: skip
        return render(desired_frr(cfg, {"": nets}))

    node = lab.frr["node1"]
    batches: list[str] = []

    class Recorder:  # the real vtysh, each batch kept
        def running_config(self) -> str:
            return node.vtysh.running_config()

        def apply_batch(self, config: str) -> tuple[LineError, ...]:
            batches.append(config)
            return node.vtysh.apply_batch(config)

    applier = FrrApplier(Recorder())
    assert not applier.check(text("10.255.0.3")).rejected
    assert applier.check(text("10.255.0.3")).sent == 0  # FRR shows what was rendered

    def hop_at_tor() -> str | None:
        data = lab.frr["tor1"].show(f"show bgp ipv4 unicast {p} json")
        hops = [h.get("ip") for x in data.get("paths", []) for h in x.get("nexthops", [])]
        return hops[0] if hops else None

    wait_for(lambda: hop_at_tor() == "10.255.0.3", timeout=60, what="next hop .3 at tor1")
    batches.clear()
    assert not applier.check(text("10.255.0.4")).rejected
    assert applier.check(text("10.255.0.4")).sent == 0
    assert len(batches) == 1 and "no network" not in batches[0], batches
    assert "ovnfrr-origin-nh-10.255.0.3" not in running(lab)
    wait_for(lambda: hop_at_tor() == "10.255.0.4", timeout=60, what="next hop .4 at tor1")
