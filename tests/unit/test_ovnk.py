"""ovn-kubernetes' intent (core.ovnk) and its node-config section: which routers learn, what
is announced and guarded, and what is refused, from an NB shaped as ovn-kubernetes writes it."""

from __future__ import annotations

import ipaddress

import pytest

from ovn_frr import config
from ovn_frr.config.convert import frr_settings, ovnk_intent
from ovn_frr.core.advertise import announcements
from ovn_frr.core.frr_model import desired_frr
from ovn_frr.core.importer import learning_routers
from ovn_frr.core.model import ImportPolicy
from ovn_frr.core.ovn import (
    LogicalRouter,
    LogicalSwitch,
    Nat,
    OvnState,
    RouterPort,
    StaticRoute,
    owned_prefixes_by_vrf,
)
from ovn_frr.core.ovnk import NetworkIntent, OvnkIntent, apply, network_name, object_prefix
from ovn_frr.frr.render import render_bgp

ip = ipaddress.ip_address
net = ipaddress.ip_network
itf = ipaddress.ip_interface


def gr(name: str, here: bool = True, nats: tuple[Nat, ...] = (), join: str = "100.64.0.2/16",
       port: str = "rtoj-") -> LogicalRouter:  # fmt: skip
    ports = (RouterPort.of(f"{port}{name}", (itf(join),), switch="join"),
             RouterPort.of(f"rtoe-{name}", (itf("10.255.0.1/24"),), switch="ext"))  # fmt: skip
    return LogicalRouter.of(name, {"chassis": "node1" if here else "node2"}, ports, nats,
                            pinned_here=here)  # fmt: skip


def switch(uuid: str, name: str, **other: str) -> LogicalSwitch:
    return LogicalSwitch(uuid, name, other_config=other)


EIP = Nat.of("GR_node1", ip("172.20.0.10"), owner_type="EgressIP")
SNAT = Nat.of("GR_node1", ip("10.255.0.1"))
CLUSTER_ROUTER = LogicalRouter.of("ovn_cluster_router", {}, (
    RouterPort.of("rtos-node1", (itf("10.244.1.1/24"), itf("fd00:10:244:1::1/64")), switch="s1"),
))  # fmt: skip
BLUE_ROUTER = LogicalRouter.of("cluster_udn_blue_ovn_cluster_router", {}, (
    RouterPort.of("rtos-cluster_udn_blue_node1", (itf("10.100.1.1/24"),), switch="s2"),
))  # fmt: skip
STATE = OvnState(
    routers=(
        BLUE_ROUTER,
        gr("GR_node1", nats=(EIP, SNAT)),
        gr("GR_cluster_udn_blue_node1", join="100.65.0.2/16"),
        gr("GR_ns1_green_node1", join="100.65.0.2/16", port="rtotr-"),
        CLUSTER_ROUTER,
    ),
    switches={
        "s1": switch("s1", "node1", subnet="10.244.1.0/24", ipv6_prefix="fd00:10:244:1::"),
        "s2": switch("s2", "cluster_udn_blue_node1", subnet="10.100.1.0/24"),
        "s3": switch("s3", "ns1_green_ovn_layer2_switch", subnet="10.200.0.0/16"),
    },
    statics=(
        StaticRoute.of("a", "GR_node1", net("10.244.0.0/16"), nexthop="100.64.0.1"),
        StaticRoute.of(
            "b", "GR_node1", net("0.0.0.0/0"), nexthop="10.255.0.2", output_port="rtoe-GR_node1"
        ),
        StaticRoute.of(
            "c",
            "GR_ns1_green_node1",
            net("10.200.0.0/16"),
            nexthop="100.88.0.4",
            output_port="rtotr-GR_ns1_green_node1",
        ),
    ),
)


def intent(*nets: NetworkIntent, mode: str = "shared", learn: bool = True) -> OvnkIntent:
    return OvnkIntent("node1", nets, mode, learn)


def announced(state: OvnState) -> set[tuple[str, str]]:
    return {(a.vrf, str(a.prefix)) for a in announcements(state)}


def test_names_as_ovn_kubernetes_makes_them() -> None:
    assert network_name("default") == "default"
    assert network_name("blue") == "cluster_udn_blue"
    assert network_name("ns1/green") == "ns1_green"
    assert object_prefix("cluster_udn_blue-net") == "cluster_udn_blue.net_"
    assert object_prefix("default") == ""


def test_pod_networks_and_egress_ips_are_announced_nothing_else() -> None:
    out = apply(STATE, intent(NetworkIntent("default", "", pod_network=True, egress_ip=True),
                              NetworkIntent("blue", "", pod_network=True),
                              NetworkIntent("ns1/green", "", pod_network=True)))  # fmt: skip
    assert announced(out) == {("", "10.244.1.0/24"), ("", "fd00:10:244:1::/64"),
                              ("", "10.100.1.0/24"), ("", "10.200.0.0/16"),
                              ("", "172.20.0.10/32")}  # fmt: skip
    assert out.problems() == ()
    # no router announces through OVN's classes: the node IP's SNAT is not announced
    assert all(not r.routing.redistribute for r in out.routers)


def test_the_selected_gateway_routers_learn_in_the_target_vrf() -> None:
    out = apply(STATE, intent(NetworkIntent("default", ""), NetworkIntent("blue", "blue")))
    learning, problems = learning_routers(out, ImportPolicy(vrf_tables={"blue": 1001}))
    assert {n: t for n, (_r, t) in learning.items()} == {
        "GR_node1": 254,
        "GR_cluster_udn_blue_node1": 1001,
    }
    assert problems == []
    assert announced(out) == set()  # no advertisement selected


def test_a_layer2_network_learns_in_shared_gateway_mode_only() -> None:
    green = NetworkIntent("ns1/green", "")
    for mode, learns in (("shared", True), ("local", False)):
        out = apply(STATE, intent(green, mode=mode))
        learning, _ = learning_routers(out, ImportPolicy())
        assert ("GR_ns1_green_node1" in learning) is learns, mode
    out = apply(STATE, intent(NetworkIntent("default", ""), learn=False))
    assert learning_routers(out, ImportPolicy())[0] == {}


def test_the_guard_has_the_cluster_subnets_and_the_pod_networks() -> None:
    out = apply(STATE, intent(NetworkIntent("default", "", pod_network=True),
                              NetworkIntent("ns1/green", "")))  # fmt: skip
    owned = owned_prefixes_by_vrf(out)[""]
    assert owned[net("10.244.0.0/16")] == "ovn-kubernetes network default (route on GR_node1)"
    assert net("10.200.0.0/16") in owned  # via the transit router port
    assert net("0.0.0.0/0") not in owned  # the default route leaves through rtoe-


def test_what_cannot_be_done_is_a_problem() -> None:
    out = apply(STATE, intent(NetworkIntent("ns1/green", "", egress_ip=True),
                              NetworkIntent("blue", "", egress_ip=True),
                              NetworkIntent("red", "", pod_network=True)))  # fmt: skip
    problems = "\n".join(out.problems())
    assert "ns1/green: EgressIP is not advertised for a Layer2 network" in problems
    assert "blue: a user-defined network's EgressIPs have no NB row" in problems
    assert "red: gateway router GR_cluster_udn_red_node1 is not in NB" in problems
    assert "red: no switch cluster_udn_red_node1 or cluster_udn_red_ovn_layer2_switch" in problems
    other = OvnState(routers=(gr("GR_node1", here=False),))
    out = apply(other, intent(NetworkIntent("default", "")))
    assert "GR_node1 is not pinned to this chassis" in "\n".join(out.problems())
    assert learning_routers(out, ImportPolicy())[0] == {}


def test_reader_names() -> None:
    i = intent(NetworkIntent("default", ""), NetworkIntent("ns1/green", ""))
    assert i.switch_names() == {"node1", "ovn_layer2_switch", "ns1_green_node1",
                                "ns1_green_ovn_layer2_switch"}  # fmt: skip
    assert i.gateway_routers() == {"GR_node1", "GR_ns1_green_node1"}


BASE = """
[bgp]
asn = 64512
router_id = "10.0.0.1"
"""


def test_config_section_becomes_the_intent() -> None:
    cfg = config.parse(
        BASE
        + """
[ovn_kubernetes]
gateway_mode = "local"
[[ovn_kubernetes.route_advertisements]]
networks = ["default", "blue", "ns1/green"]
advertisements = ["PodNetwork"]
target_vrf = "auto"
[[ovn_kubernetes.route_advertisements]]
networks = ["default"]
advertisements = ["EgressIP"]
target_vrf = "default"
[ovn_kubernetes.vrfs]
"ns1/green" = "mp3-udn-vrf"
"""
    )
    got = ovnk_intent(cfg, "host-a")
    assert got == OvnkIntent("host-a", (
        NetworkIntent("default", "", pod_network=True, egress_ip=True),
        NetworkIntent("blue", "blue", pod_network=True),
        NetworkIntent("ns1/green", "mp3-udn-vrf", pod_network=True),
    ), "local", True)  # fmt: skip
    assert ovnk_intent(config.parse(BASE), "host-a") is None


@pytest.mark.parametrize(("section", "problem"), [
    ('networks = ["default"]\nadvertisements = ["EgressIP"]\ntarget_vrf = "auto"',
     "ovn_kubernetes.route_advertisements[0].advertisements: EgressIP cannot be advertised "
     "with target_vrf 'auto'"),
    ('networks = ["ns1/green"]\nadvertisements = ["PodNetwork"]\ntarget_vrf = "auto"',
     "ovn_kubernetes.route_advertisements[0].networks: ns1/green: target_vrf 'auto' needs its "
     "VRF in ovn_kubernetes.vrfs"),
    ('networks = ["Blue"]\nadvertisements = ["PodNetwork"]',
     "ovn_kubernetes.route_advertisements[0].networks"),
    ('networks = ["blue"]\nadvertisements = ["Pods"]',
     "ovn_kubernetes.route_advertisements[0].advertisements"),
    ('networks = []\nadvertisements = ["PodNetwork"]',
     "ovn_kubernetes.route_advertisements[0].networks"),
])  # fmt: skip
def test_config_refuses(section: str, problem: str) -> None:
    with pytest.raises(config.ConfigError) as err:
        config.parse(BASE + "[[ovn_kubernetes.route_advertisements]]\n" + section + "\n")
    assert any(line.startswith(problem) for line in err.value.problems), err.value.problems


def test_config_refuses_one_network_in_two_vrfs() -> None:
    with pytest.raises(config.ConfigError) as err:
        config.parse(
            BASE
            + """
[[ovn_kubernetes.route_advertisements]]
networks = ["blue"]
advertisements = ["PodNetwork"]
[[ovn_kubernetes.route_advertisements]]
networks = ["blue"]
advertisements = ["PodNetwork"]
target_vrf = "auto"
"""
        )
    assert err.value.problems == [
        "ovn_kubernetes.route_advertisements[1].networks: blue is also selected for VRF 'default'"
    ]


def test_a_network_in_its_own_vrf_is_guarded_there_only() -> None:
    """targetVRF auto: blue's addresses (behind its cluster router) guard blue's VRF, so the
    default network may import an overlapping route (the networks are isolated)."""
    out = apply(STATE, intent(NetworkIntent("default", ""), NetworkIntent("blue", "blue")))
    owned = owned_prefixes_by_vrf(out)
    assert net("10.100.1.0/24") in owned["blue"]
    assert net("10.100.1.0/24") not in owned[""]
    assert net("10.244.1.0/24") in owned[""]
    # the cluster router announces nothing and learns nothing
    assert announced(out) == set()
    assert "cluster_udn_blue_ovn_cluster_router" not in learning_routers(out, ImportPolicy(
        vrf_tables={"blue": 1001}))[0]  # fmt: skip


def test_an_ipv6_prefix_without_its_length_is_a_problem() -> None:
    sw = switch("s9", "node1", subnet="10.244.1.0/24", ipv6_prefix="fd00:99::")
    state = OvnState(routers=(gr("GR_node1"),), switches={"s9": sw})
    out = apply(state, intent(NetworkIntent("default", "", pod_network=True)))
    assert announced(out) == {("", "10.244.1.0/24")}
    assert "no router port on it has ipv6_prefix fd00:99::'s length" in "\n".join(out.problems())


def test_a_user_defined_network_with_another_target_vrf_imports_it() -> None:
    """As ovn-kubernetes' FRRConfiguration: the network's own VRF imports the target VRF (its
    host VRF, local gateway mode's way out, has the routes); not for auto, not for the default
    network, not for a network whose VRF name is unknown."""
    cfg = config.parse(
        BASE
        + """
[[ovn_kubernetes.route_advertisements]]
networks = ["default", "blue", "ns1/green", "red"]
advertisements = ["PodNetwork"]
[[ovn_kubernetes.route_advertisements]]
networks = ["gold"]
advertisements = ["PodNetwork"]
target_vrf = "auto"
[ovn_kubernetes.vrfs]
"ns1/green" = "mp7-udn-vrf"
"""
    )
    settings = frr_settings(cfg)
    assert settings.leaks == {"blue": ("default",), "mp7-udn-vrf": ("default",),
                              "red": ("default",)}  # fmt: skip
    blue = next(b for b in desired_frr(settings).bgp if b.vrf == "blue")
    text = render_bgp(blue)
    assert "router bgp 64512 vrf blue\n" in text
    assert " address-family ipv4 unicast\n  import vrf default\n exit-address-family" in text
    assert " address-family ipv6 unicast\n  import vrf default\n exit-address-family" in text
