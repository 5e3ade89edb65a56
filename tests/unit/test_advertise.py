"""Redistribute classes from OVN's intent options (pure)."""

from __future__ import annotations

import ipaddress

from ovn_frr.core.advertise import (
    IntentNat,
    IntentPort,
    IntentRouter,
    IntentStatic,
    SwitchPort,
    Vip,
    announcements,
    prefixes_by_vrf,
)
from ovn_frr.ovn.intent import StaticRow, with_statics

ip = ipaddress.ip_address
iface = ipaddress.ip_interface
net = ipaddress.ip_network

PODS = (
    SwitchPort("pod-a", (ip("10.244.1.5"),), bound_here=True),
    SwitchPort("pod-b", (ip("10.244.1.6"),), bound_here=False),
    SwitchPort("pod-quiet", (ip("10.244.1.7"),), {"dynamic-routing-advertise": "false"}, True),
    SwitchPort("elsewhere", (ip("192.168.9.9"),), bound_here=True),  # not in the port's network
)
NODE_PORT = IntentPort(
    "rtos-node1",
    (iface("10.244.1.1/24"),),
    switch_ports=PODS,
    switch_vips=(Vip("svc", ip("10.96.0.10")),),
)


def router(redistribute: str, **options: str) -> IntentRouter:
    return IntentRouter(
        "GR_node1",
        {"dynamic-routing": "true", "dynamic-routing-redistribute": redistribute, **options},
        ports=(NODE_PORT, IntentPort("rtoe-GR_node1", (iface("10.255.0.1/24"),), bound_here=True)),
        nats=(
            IntentNat(ip("172.20.0.10"), bound_here=True),
            IntentNat(ip("172.20.0.11"), bound_here=False),
            IntentNat(ip("172.20.0.12"), {"dynamic-routing-advertise": "false"}, True),
        ),
        vips=(
            Vip("octavia-lb", ip("203.0.113.50")),
            Vip("quiet-lb", ip("203.0.113.51"), {"dynamic-routing-advertise": "false"}),
        ),
        statics=(IntentStatic(net("10.50.0.0/16")),),
    )


def prefixes(*routers: IntentRouter) -> set[str]:
    items, problems = announcements(routers)
    assert problems == []
    return {str(a.prefix) for a in items}


def test_each_class() -> None:
    assert prefixes(router("connected")) == {"10.244.1.0/24", "10.255.0.0/24"}
    assert prefixes(router("connected-as-host")) == {"10.244.1.5/32", "10.244.1.6/32"}
    assert prefixes(router("nat")) == {"172.20.0.10/32", "172.20.0.11/32"}
    assert prefixes(router("lb")) == {"203.0.113.50/32", "10.96.0.10/32"}
    assert prefixes(router("static")) == {"10.50.0.0/16"}
    assert prefixes(router("")) == set()
    assert prefixes(IntentRouter("off", {"dynamic-routing-redistribute": "connected"})) == set()


def test_local_only_keeps_what_is_bound_here() -> None:
    got = prefixes(
        router("connected-as-host,nat", **{"dynamic-routing-redistribute-local-only": "true"})
    )
    assert got == {"10.244.1.5/32", "172.20.0.10/32"}


def test_local_only_connected_networks_follow_the_gateway() -> None:
    """A distributed gateway router: its networks are reached through the gateway chassis."""
    options = {"dynamic-routing": "true", "dynamic-routing-redistribute": "connected",
               "dynamic-routing-redistribute-local-only": "true"}  # fmt: skip
    tenant = IntentPort("lrp-t", (iface("10.100.0.1/24"),))

    def dgp(bound: bool) -> IntentRouter:
        gateway = IntentPort("lrp-gw", (iface("172.24.4.10/24"),), bound_here=bound)
        return IntentRouter("neutron-r", options, ports=(gateway, tenant))

    assert prefixes(dgp(bound=True)) == {"10.100.0.0/24", "172.24.4.0/24"}
    assert prefixes(dgp(bound=False)) == set()


def test_a_pinned_router_is_local_for_everything() -> None:
    r = router("nat", **{"dynamic-routing-redistribute-local-only": "true"})
    pinned = IntentRouter(r.name, r.options, r.ports, r.nats, r.vips, r.statics, pinned_here=True)
    assert prefixes(pinned) == {"172.20.0.10/32", "172.20.0.11/32"}


def test_port_overrides_the_router_classes() -> None:
    r = router("connected")
    override = {"dynamic-routing-redistribute": "connected-as-host"}
    port = IntentPort("rtos-node1", NODE_PORT.networks, override, switch_ports=PODS)
    r2 = IntentRouter(r.name, r.options, (port, r.ports[1]))
    assert prefixes(r2) == {"10.244.1.5/32", "10.244.1.6/32", "10.255.0.0/24"}


def test_bad_intent_is_reported_and_the_rest_still_announced() -> None:
    options = {"dynamic-routing": "true", "dynamic-routing-redistribute": "connected,bogus"}
    bad = IntentRouter("bad", options, ports=(IntentPort("p", (iface("10.1.0.1/24"),)),))
    items, problems = announcements((bad, router("nat")))
    assert problems == ["router bad: unknown dynamic-routing-redistribute token(s) ['bogus']"]
    assert {str(a.prefix) for a in items} == {"172.20.0.10/32", "172.20.0.11/32"}


def test_vrf_and_sources() -> None:
    items, _ = announcements((router("nat", **{"dynamic-routing-vrf-name": "blue"}),))
    assert prefixes_by_vrf(items).keys() == {"blue"}
    assert {a.source for a in items} == {
        "NAT 172.20.0.10 on GR_node1",
        "NAT 172.20.0.11 on GR_node1",
    }


def test_malformed_vrf_name_ignores_that_router() -> None:
    bad = router("nat", **{"dynamic-routing-vrf-name": "blue vrf; exit"})
    items, problems = announcements((bad,))
    assert items == set()
    assert problems == [
        "router GR_node1: dynamic-routing-vrf-name 'blue vrf; exit' is not a VRF name"
    ]


def test_static_routes_attach_to_their_router_and_only_destination_routes_count() -> None:
    rows = (
        StaticRow("u1", "10.60.0.0/16", "dst-ip", {}, {}),
        StaticRow("u2", "10.244.1.0/24", "src-ip", {}, {}),  # matches sources: not announced
        StaticRow("u3", "10.61.0.0/16", "dst-ip", {}, {"ovn-frr:chassis": "node2"}),  # imported
        StaticRow("u4", "0.0.0.0/0", "dst-ip", {}, {}),  # default: never announced
        StaticRow("u5", "10.62.0.1", "dst-ip", {"dynamic-routing-advertise": "false"}, {}),
        StaticRow("u6", "10.63.0.0/16", "dst-ip", {}, {}),  # on another router
        StaticRow("u7", "not-a-prefix", "dst-ip", {}, {}),
        StaticRow("u8", "fd00:60::/64", "dst-ip", {}, {}),
    )
    router_of = {u: "GR_node1" for u in ("u1", "u2", "u3", "u4", "u5", "u7", "u8")}
    router_of["u6"] = "other"
    bare = IntentRouter("GR_node1", router("static").options)
    (attached,) = with_statics((bare,), rows, router_of)
    assert prefixes(attached) == {"10.60.0.0/16", "fd00:60::/64"}
    # the opted-out row is attached (it is the core that honours the option) as a /32
    assert net("10.62.0.1/32") in {s.prefix for s in attached.statics}
