"""Redistribute classes from OVN's intent options (pure), on the one OVN state."""

from __future__ import annotations

import ipaddress
from dataclasses import replace

from ovn_frr.core.advertise import announcements, prefixes_by_vrf, served_here
from ovn_frr.core.ovn import (
    LogicalRouter,
    LogicalSwitch,
    Nat,
    OvnState,
    RouterPort,
    StaticRoute,
    SwitchPort,
    Vip,
)
from ovn_frr.ovn.reader import StaticRow, with_statics

ip = ipaddress.ip_address
iface = ipaddress.ip_interface
net = ipaddress.ip_network

PODS = LogicalSwitch(
    "ls-uuid",
    "node1",
    (
        SwitchPort.of("pod-a", (ip("10.244.1.5"),), bound_here=True),
        SwitchPort.of("pod-b", (ip("10.244.1.6"),), bound_here=False),
        SwitchPort.of("pod-quiet", (ip("10.244.1.7"),), {"dynamic-routing-advertise": "false"},
                      True),
        SwitchPort.of("elsewhere", (ip("192.168.9.9"),), bound_here=True),  # not in the network
    ),
    (Vip.of("svc", ip("10.96.0.10")),),
)  # fmt: skip
NODE_PORT = RouterPort.of("rtos-node1", (iface("10.244.1.1/24"),), switch="ls-uuid")
UPLINK = RouterPort.of("rtoe-GR_node1", (iface("10.255.0.1/24"),), bound_here=True, switch="ext")


def router(redistribute: str, **options: str) -> LogicalRouter:
    return LogicalRouter.of(
        "GR_node1",
        {"dynamic-routing": "true", "dynamic-routing-redistribute": redistribute, **options},
        ports=(NODE_PORT, UPLINK),
        nats=(
            Nat.of("GR_node1", ip("172.20.0.10"), bound_here=True),
            Nat.of("GR_node1", ip("172.20.0.11"), bound_here=False),
            Nat.of("GR_node1", ip("172.20.0.12"), {"dynamic-routing-advertise": "false"}, True),
        ),
        vips=(
            Vip.of("octavia-lb", ip("203.0.113.50")),
            Vip.of("quiet-lb", ip("203.0.113.51"), {"dynamic-routing-advertise": "false"}),
        ),
    )


STATIC = StaticRoute.of("u1", "GR_node1", net("10.50.0.0/16"), nexthop="10.255.0.254")


def state(*routers: LogicalRouter, statics: tuple[StaticRoute, ...] = (STATIC,)) -> OvnState:
    return OvnState(routers, {PODS.uuid: PODS}, statics)


def prefixes(*routers: LogicalRouter, statics: tuple[StaticRoute, ...] = (STATIC,)) -> set[str]:
    s = state(*routers, statics=statics)
    assert s.problems() == ()
    return {str(a.prefix) for a in announcements(s)}


def test_each_class() -> None:
    assert prefixes(router("connected")) == {"10.244.1.0/24", "10.255.0.0/24"}
    # as OVN: every address behind the port, whether in its network or not, the router
    # port's own too; the uplink is on no switch: nothing
    assert prefixes(router("connected-as-host")) == {
        "10.244.1.1/32", "10.244.1.5/32", "10.244.1.6/32", "192.168.9.9/32"
    }  # fmt: skip
    assert prefixes(router("nat")) == {"172.20.0.10/32", "172.20.0.11/32"}
    # the router's own VIPs (once per gateway port); a switch's load balancer never
    assert prefixes(router("lb")) == {"203.0.113.50/32"}
    # through the port whose network holds its next hop
    assert prefixes(router("static")) == {"10.50.0.0/16"}
    assert prefixes(router("")) == set()
    off = LogicalRouter.of("off", {"dynamic-routing-redistribute": "connected"}, (UPLINK,))
    assert prefixes(off) == set()


def test_connected_and_connected_as_host_is_host_routes_only() -> None:
    assert prefixes(router("connected,connected-as-host")) == prefixes(router("connected-as-host"))


def test_local_only_keeps_what_is_bound_here() -> None:
    got = prefixes(
        router("connected-as-host,nat", **{"dynamic-routing-redistribute-local-only": "true"})
    )
    # the router port is local everywhere; NATs of a router served here stand for its
    # gateway port, which is here
    assert got == {"10.244.1.1/32", "10.244.1.5/32", "192.168.9.9/32", "172.20.0.10/32",
                   "172.20.0.11/32"}  # fmt: skip


def test_local_only_connected_networks_follow_the_gateway() -> None:
    """A distributed gateway router: its networks are reached through the gateway chassis."""
    options = {"dynamic-routing": "true", "dynamic-routing-redistribute": "connected",
               "dynamic-routing-redistribute-local-only": "true"}  # fmt: skip
    tenant = RouterPort.of("lrp-t", (iface("10.100.0.1/24"),))

    def dgp(bound: bool) -> LogicalRouter:
        gateway = RouterPort.of("lrp-gw", (iface("172.24.4.10/24"),), bound_here=bound,
                                gateway=True, switch="ext")  # fmt: skip
        return LogicalRouter.of("neutron-r", options, ports=(gateway, tenant))

    assert prefixes(dgp(bound=True)) == {"10.100.0.0/24", "172.24.4.0/24"}
    assert prefixes(dgp(bound=False)) == set()


def test_a_router_is_announced_where_it_is_served_only() -> None:
    """As OVN 26.03: the chassis of a router's gateway (pinned, or a gateway port's
    chassisredirect binding) announces it; no other chassis, whatever its options; a router
    pinned nowhere without gateway ports is announced by none."""
    elsewhere = RouterPort.of("rtoe-GR_node1", (iface("10.255.0.1/24"),), gateway=True)
    r = replace(router("connected,connected-as-host,nat,lb,static"),
                ports=(NODE_PORT, elsewhere))  # fmt: skip
    assert not served_here(r)
    assert prefixes(r) == set()
    local = replace(r, routing=replace(r.routing, local_only=True))
    assert prefixes(local) == set()
    everywhere = replace(r, ports=(NODE_PORT,))
    assert everywhere.distributed and prefixes(everywhere) == set()
    pinned = replace(everywhere, options={**r.options, "chassis": "node2"})
    assert prefixes(pinned) == set()


def test_a_pinned_router_is_local_for_everything() -> None:
    r = router("nat", **{"dynamic-routing-redistribute-local-only": "true", "chassis": "node1"})
    r = replace(r, ports=(NODE_PORT, replace(UPLINK, bound_here=False, gateway=False)))
    assert prefixes(replace(r, pinned_here=True)) == {"172.20.0.10/32", "172.20.0.11/32"}
    assert prefixes(r) == set()


def test_port_replaces_the_router_classes() -> None:
    override = {"dynamic-routing-redistribute": "connected-as-host"}
    port = RouterPort.of("rtos-node1", NODE_PORT.networks, override, switch="ls-uuid")
    r = replace(router("connected"), ports=(port, UPLINK))
    assert prefixes(r) == {"10.244.1.1/32", "10.244.1.5/32", "10.244.1.6/32",
                           "192.168.9.9/32", "10.255.0.0/24"}  # fmt: skip
    none = RouterPort.of("rtos-node1", NODE_PORT.networks,
                         {"dynamic-routing-redistribute": ""}, switch="ls-uuid")  # fmt: skip
    assert prefixes(replace(r, ports=(none, UPLINK))) == {"10.255.0.0/24"}


def test_an_unknown_class_is_ignored_and_noted() -> None:
    options = {"dynamic-routing": "true", "dynamic-routing-redistribute": "connected,bogus"}
    bad = LogicalRouter.of("bad", options, ports=(UPLINK,))
    s = state(bad, router("nat"))
    assert s.problems() == (
        "router bad: dynamic-routing-redistribute='connected,bogus' has unknown class(es) "
        "'bogus', ignored (known: connected, connected-as-host, lb, nat, static)",
    )
    assert {str(a.prefix) for a in announcements(s)} == {
        "10.255.0.0/24", "172.20.0.10/32", "172.20.0.11/32"
    }  # fmt: skip


def test_neighbours_nats_and_vips_are_announced_across_a_shared_switch() -> None:
    """OVN announces the NATs and VIPs of the routers one hop away (whether they take part
    themselves or not), and host routes for their ports on the switch."""
    tenant = LogicalRouter.of(
        "tenant", {}, ports=(RouterPort.of("t-ext", (iface("10.244.1.2/24"),), switch="ls-uuid"),),
        nats=(Nat.of("tenant", ip("172.20.1.5")),),
        vips=(Vip.of("t-lb", ip("203.0.113.77")),),
    )  # fmt: skip
    assert prefixes(router("nat"), tenant) >= {"172.20.1.5/32"}
    assert "203.0.113.77/32" in prefixes(router("lb"), tenant)
    assert "10.244.1.2/32" in prefixes(router("connected-as-host"), tenant)
    # with local-only: the neighbour's VIP stands for its port (local everywhere: a plain
    # router port), its NAT for nothing (no gateway port): both stay
    lo = router("nat,lb", **{"dynamic-routing-redistribute-local-only": "true"})
    assert {"172.20.1.5/32", "203.0.113.77/32"} <= prefixes(lo, tenant)


def test_directly_peered_routers() -> None:
    """A port peered with another router's port: host routes are the peer's addresses."""
    mine = RouterPort.of("gr-to-core", (iface("10.2.0.1/30"),), peer="core-to-gr")
    core = LogicalRouter.of(
        "core", {}, ports=(RouterPort.of("core-to-gr", (iface("10.2.0.2/30"),),
                                         peer="gr-to-core"),),
        nats=(Nat.of("core", ip("172.20.9.9")),),
    )  # fmt: skip
    r = replace(router("connected-as-host,nat"), ports=(mine, UPLINK))
    assert prefixes(r, core) == {"10.2.0.2/32", "172.20.0.10/32", "172.20.0.11/32",
                                 "172.20.9.9/32"}  # fmt: skip


def test_floating_ips_stand_for_their_vm_unless_centralized() -> None:
    """A floating IP (logical port and MAC) with local-only is announced where its VM is;
    with the gateway port's switch without a localnet port, OVN centralizes it: where the
    gateway is."""
    lo = {"dynamic-routing": "true", "dynamic-routing-redistribute": "nat",
          "dynamic-routing-redistribute-local-only": "true"}  # fmt: skip
    ext = LogicalSwitch("ext", "ext", (SwitchPort.of("ln", (), type="localnet"),))
    gw = RouterPort.of("lrp-gw", (iface("172.24.4.10/24"),), bound_here=True, gateway=True,
                       switch="ext")  # fmt: skip
    fips = (Nat.of("r", ip("172.24.4.50"), bound_here=True, type="dnat_and_snat",
                   logical_port="vm-here"),
            Nat.of("r", ip("172.24.4.51"), bound_here=False, type="dnat_and_snat",
                   logical_port="vm-there"))  # fmt: skip
    r = LogicalRouter.of("r", lo, ports=(gw,), nats=fips)
    s = OvnState((r,), {"ext": ext})
    assert {str(a.prefix) for a in announcements(s)} == {"172.24.4.50/32"}
    centralized = OvnState((r,), {"ext": replace(ext, ports=())})
    assert {str(a.prefix) for a in announcements(centralized)} == {
        "172.24.4.50/32", "172.24.4.51/32"
    }  # fmt: skip


def test_a_neighbours_floating_ip_follows_the_switch_behind_its_only_gateway() -> None:
    """A neighbour's floating IP across a local-only ``nat`` port: where its VM is when the
    switch behind the neighbour's only gateway port (not read here: the reader says only
    whether it has a localnet port) has one, else where that gateway is (OVN 26.03)."""
    mine = RouterPort.of("gr-p", (iface("169.254.60.2/30"),), peer="fip-p")
    gw = RouterPort.of("fip-gw", (iface("172.30.0.1/24"),), bound_here=False, gateway=True)
    fip = LogicalRouter.of(
        "fip", {}, ports=(RouterPort.of("fip-p", (iface("169.254.60.1/30"),), peer="gr-p"), gw),
        nats=(Nat.of("fip", ip("172.30.0.10"), bound_here=True, type="dnat_and_snat",
                     logical_port="fvm"),),
    )  # fmt: skip
    lo = {"dynamic-routing-redistribute-local-only": "true"}
    r = replace(router("nat", **lo), ports=(mine, UPLINK))
    assert "172.30.0.10/32" in prefixes(r, fip)  # a switch not read: a provider network
    s = OvnState((r, fip), gateway_localnet={"fip-gw": True})
    assert "172.30.0.10/32" in {str(a.prefix) for a in announcements(s)}
    s = replace(s, gateway_localnet={"fip-gw": False})
    assert "172.30.0.10/32" not in {str(a.prefix) for a in announcements(s)}


def test_static_routes_leave_through_a_port() -> None:
    routes = (
        StaticRoute.of("a", "GR_node1", net("10.51.0.0/16"), nexthop="10.244.1.254"),
        StaticRoute.of("b", "GR_node1", net("10.52.0.0/16"), nexthop="192.0.2.1"),  # no port
        StaticRoute.of("c", "GR_node1", net("10.53.0.0/16"), nexthop="192.0.2.1",
                       output_port="rtoe-GR_node1"),
        StaticRoute.of("d", "GR_node1", net("10.54.0.0/16"), nexthop="discard"),
        StaticRoute.of("e", "GR_node1", net("169.254.9.0/24"), nexthop="10.255.0.254"),
    )  # fmt: skip
    assert prefixes(router("static"), statics=routes) == {"10.51.0.0/16", "10.53.0.0/16"}
    # the port's own classes decide: the node port announces no static route
    only_connected = {"dynamic-routing-redistribute": "connected"}
    quiet = RouterPort.of("rtos-node1", NODE_PORT.networks, only_connected, switch="ls-uuid")
    r = replace(router("static"), ports=(quiet, UPLINK))
    assert prefixes(r, statics=routes) == {"10.244.1.0/24", "10.53.0.0/16"}


def test_vrf_and_sources() -> None:
    items = announcements(state(router("nat", **{"dynamic-routing-vrf-name": "blue"})))
    assert prefixes_by_vrf(items).keys() == {"blue"}
    assert {a.source for a in items} == {
        "NAT 172.20.0.10 on GR_node1",
        "NAT 172.20.0.11 on GR_node1",
    }


def test_malformed_vrf_name_ignores_that_router() -> None:
    s = state(router("nat", **{"dynamic-routing-vrf-name": "blue vrf; exit"}))
    assert announcements(s) == frozenset()
    assert s.problems() == (
        "router GR_node1: dynamic-routing-vrf-name='blue vrf; exit' is not a VRF name "
        "(letters, digits, '_', '.', '-'; at most 15)",
    )


def test_mixed_families_sort_and_group_per_vrf() -> None:
    v6 = RouterPort.of("v6", (iface("fd00:255::1/64"),))
    s = state(replace(router("static"), ports=(NODE_PORT, UPLINK, v6)),
              statics=(STATIC, StaticRoute.of("u2", "GR_node1", net("fd00:60::/64"),
                                              nexthop="fd00:255::9")))  # fmt: skip
    by_vrf = prefixes_by_vrf(announcements(s))
    assert {k: tuple(v) for k, v in by_vrf.items()} == {
        "": (net("10.50.0.0/16"), net("fd00:60::/64"))
    }


def test_static_routes_attach_to_their_router_and_only_destination_routes_count() -> None:
    hop = "10.255.0.254"
    rows = (
        StaticRow("u1", "10.60.0.0/16", "dst-ip", {}, hop),
        StaticRow("u2", "10.244.1.0/24", "src-ip", {}, hop),  # matches sources: not announced
        StaticRow("u4", "0.0.0.0/0", "dst-ip", {}, hop),  # default: never announced
        StaticRow("u5", "10.62.0.1", "dst-ip", {"dynamic-routing-advertise": "false"}, hop),
        StaticRow("u6", "10.63.0.0/16", "dst-ip", {}, hop),  # on another router
        StaticRow("u7", "not-a-prefix", "dst-ip", {}, hop),
        StaticRow("u8", "fd00:60::/64", "dst-ip", {}, "", "rtoe-GR_node1"),
    )
    router_of = {u: "GR_node1" for u in ("u1", "u2", "u4", "u5", "u7", "u8")}
    router_of["u6"] = "other"
    attached = with_statics(state(router("static"), statics=()), rows, router_of)
    assert {str(a.prefix) for a in announcements(attached)} == {"10.60.0.0/16", "fd00:60::/64"}
    # the opted-out row is there (it is the core that honours the option) as a /32
    assert net("10.62.0.1/32") in {s.prefix for s in attached.statics}
    assert attached.problems() == (
        "static route on GR_node1: ip_prefix 'not-a-prefix' is not a prefix",
    )


def test_prefix_next_hops_go_with_their_family() -> None:
    """dynamic-routing-v4/v6-prefix-nexthop (OVN 26.03): each family's prefixes carry their
    next hop; the announcement set says which, and prefixes_by_vrf hands it on."""
    v6_port = RouterPort.of("rtos-v6", (iface("fd00:10::1/64"),), bound_here=True)
    r = router("connected", **{"dynamic-routing-v4-prefix-nexthop": "10.255.0.3",
                               "dynamic-routing-v6-prefix-nexthop": "fd00:255::3"})  # fmt: skip
    s = state(replace(r, ports=(*r.ports, v6_port)))
    hops = {str(a.prefix): str(a.next_hop) for a in announcements(s)}
    assert hops == {"10.244.1.0/24": "10.255.0.3", "10.255.0.0/24": "10.255.0.3",
                    "fd00:10::/64": "fd00:255::3"}  # fmt: skip
    assert prefixes_by_vrf(announcements(s))[""][net("fd00:10::/64")] == ip("fd00:255::3")


def test_a_bad_prefix_next_hop_stops_that_router_with_a_reason() -> None:
    for value, why in (("10.255.0", "is not an IP address"),
                       ("fd00::3", "is not an IPv4 address (an IPv6 next hop for IPv4 is not "
                                   "supported)"),
                       ("127.0.0.1", "is not a usable next hop")):  # fmt: skip
        # (169.254.0.0/16 is fine: a transit into OVN may use it)
        s = state(router("connected", **{"dynamic-routing-v4-prefix-nexthop": value}))
        assert announcements(s) == frozenset()
        assert s.problems() == (
            f"router GR_node1: dynamic-routing-v4-prefix-nexthop={value!r} {why}",
        )


def test_one_prefix_two_next_hops_the_choice_is_stable() -> None:
    a = router("connected", **{"dynamic-routing-v4-prefix-nexthop": "10.255.0.9"})
    b = replace(router("connected", **{"dynamic-routing-v4-prefix-nexthop": "10.255.0.3"}),
                name="GR_other")  # fmt: skip
    c = replace(router("connected"), name="GR_plain")
    got = prefixes_by_vrf(announcements(state(a, b)))[""][net("10.244.1.0/24")]
    assert got == ip("10.255.0.3")
    assert prefixes_by_vrf(announcements(state(a, b, c)))[""][net("10.244.1.0/24")] is None
