"""Import policy: router selection, next hop → port, hijack guard, max-prefix, diff."""

from __future__ import annotations

import ipaddress
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovn_frr.core.importer import DecisionCache, OwnedRows, diff_routes, plan_import
from ovn_frr.core.model import (
    DesiredRoute,
    Hop,
    ImportPolicy,
    OwnedRoute,
    RibRoute,
    RibSnapshot,
)
from ovn_frr.core.ovn import (
    LogicalRouter,
    LogicalSwitch,
    Nat,
    OvnState,
    RouterPort,
    SwitchPort,
    owned_prefixes_by_vrf,
)
from ovn_frr.fpm.netlink import NextHop, RouteMessage
from ovn_frr.fpm.rib import Rib

ip = ipaddress.ip_address
net = ipaddress.ip_network
iface = ipaddress.ip_interface

TOR1 = ip("10.255.0.2")
TOR2 = ip("10.255.1.2")

GR = LogicalRouter.of(
    "GR_node1",
    {"dynamic-routing": "true"},
    (
        RouterPort.of("rtoe-GR_node1", (iface("10.255.0.1/24"), iface("fd00:255::1/64"))),
        RouterPort.of("rtoe2-GR_node1", (iface("10.255.1.1/24"),)),
        RouterPort.of("rtoj-GR_node1", (iface("100.64.0.2/16"),)),
    ),
    pinned_here=True,
)
#: what else OVN owns, each removable (the hijack guard follows)
OTHERS = {
    "10.244.1.0/24": LogicalRouter.of(
        "ovn_cluster_router", {}, (RouterPort.of("rtos-node1", (iface("10.244.1.1/24"),)),)
    ),
    "10.244.1.5/32": LogicalSwitch("ls", "node1", (SwitchPort.of("pod-a", (ip("10.244.1.5"),)),)),
    "172.20.0.10/32": Nat.of("GR_node1", ip("172.20.0.10")),
}
OWNED = frozenset(OTHERS)
#: row UUIDs (the agent keeps them as numbers: they must be UUIDs)
U1, U2, U3 = (f"00000000-0000-4000-8000-00000000000{i}" for i in (1, 2, 3))


def ovn(routers: tuple[LogicalRouter, ...] = (GR,), owned: frozenset[str] = OWNED) -> OvnState:
    """An OVN state with ``routers`` and those of OTHERS named in ``owned``."""
    extra = [r for k, r in OTHERS.items() if k in owned and isinstance(r, LogicalRouter)]
    switches = {r.uuid: r for k, r in OTHERS.items() if k in owned
                and isinstance(r, LogicalSwitch)}  # fmt: skip
    nats = tuple(r for k, r in OTHERS.items() if k in owned and isinstance(r, Nat))
    routers = tuple(replace(r, nats=nats) if r.name == GR.name else r for r in routers)
    return OvnState((*routers, *extra), switches)


def rib(*routes: tuple[str, tuple[Hop, ...]], table: int = 254, protocol: int = 186) -> RibSnapshot:
    entries = {str(net(p)): RibRoute(protocol, "unicast", frozenset(hops)) for p, hops in routes}
    return RibSnapshot({table: entries})


def plan(
    snap: RibSnapshot, routers: tuple[LogicalRouter, ...] = (GR,), **policy: object
) -> tuple[set[tuple[str, str, str]], dict[str, str]]:
    p = plan_import(ovn(routers), snap, ImportPolicy(**policy))  # type: ignore[arg-type]
    return (
        {(r.prefix, r.nexthop, r.output_port) for r in p.routes},
        {r.prefix: r.reason for r in p.rejected},
    )


def test_the_state_owns_what_the_guard_needs() -> None:
    assert {str(n) for n in owned_prefixes_by_vrf(ovn())[""]} >= OWNED | {"10.255.0.0/24"}


def test_ecmp_next_hops_map_to_their_ports() -> None:
    routes, rejected = plan(rib(("198.51.100.0/24", (Hop(TOR1, 2), Hop(TOR2, 3)))))
    assert routes == {
        ("198.51.100.0/24", "10.255.0.2", "rtoe-GR_node1"),
        ("198.51.100.0/24", "10.255.1.2", "rtoe2-GR_node1"),
    }
    assert rejected == {}


@pytest.mark.parametrize(
    ("prefix", "reason"),
    [
        ("10.255.0.0/24", "hijack"),  # the router's own subnet
        ("10.244.1.5/32", "hijack"),  # a pod
        ("10.244.1.128/25", "hijack"),  # inside a port network
        ("172.20.0.10/32", "hijack"),  # a NAT external IP
        ("10.244.0.0/16", "hijack"),  # covers a port network
        ("0.0.0.0/0", "default-route"),
    ],
)
def test_guard_rejects(prefix: str, reason: str) -> None:
    routes, rejected = plan(rib((prefix, (Hop(TOR1, 2),))))
    assert routes == set()
    assert rejected == {prefix: reason}


def test_guard_can_be_relaxed_by_config() -> None:
    routes, _ = plan(
        rib(("0.0.0.0/0", (Hop(TOR1, 2),)), ("10.244.0.0/16", (Hop(TOR1, 2),))),
        allow_default=True,
        allow_overlap=(net("10.244.0.0/16"),),
    )
    assert {r[0] for r in routes} == {"0.0.0.0/0", "10.244.0.0/16"}


def test_unresolvable_next_hop_is_reported_not_guessed() -> None:
    routes, rejected = plan(rib(("198.51.100.0/24", (Hop(ip("192.168.9.9"), 2),))))
    assert routes == set()
    assert rejected == {"198.51.100.0/24": "unresolvable-nexthop"}


def test_only_bgp_by_default_and_others_are_not_reported() -> None:
    assert plan(rib(("198.51.100.0/24", (Hop(TOR1, 2),)), protocol=2)) == (set(), {})
    assert plan(rib(("198.51.100.0/24", (Hop(TOR1, 2),)), protocol=4), protocols=frozenset({4}))[0]


def test_hijack_detail_names_the_most_specific_owner() -> None:
    p = plan_import(ovn(), rib(("10.244.1.5/32", (Hop(TOR1, 2),))), ImportPolicy())
    assert p.rejected[0].detail == "overlaps 10.244.1.5/32 (LSP pod-a) owned by OVN"


def test_ipv4_via_ipv6_next_hop_needs_ovn_24_09() -> None:
    snap = rib(("198.51.100.0/24", (Hop(ip("fd00:255::2"), 2),)))
    routes, rejected = plan(snap)
    assert routes == set()
    assert rejected == {"198.51.100.0/24": "unresolvable-nexthop"}
    routes, _ = plan(snap, mixed_family=True)
    assert routes == {("198.51.100.0/24", "fd00:255::2", "rtoe-GR_node1")}


@pytest.mark.parametrize(
    "router",
    [
        LogicalRouter.of("r", {}, GR.ports, pinned_here=True),  # dynamic-routing unset
        LogicalRouter.of("r", {"dynamic-routing": "true"}, GR.ports, pinned_here=False),
        LogicalRouter.of(
            "r",
            {"dynamic-routing": "true", "dynamic-routing-no-learning": "true"},
            GR.ports,
            pinned_here=True,
        ),
        LogicalRouter.of("r", {"dynamic-routing": "maybe"}, GR.ports, pinned_here=True),
    ],
)
def test_routers_that_do_not_learn_here(router: LogicalRouter) -> None:
    assert plan(rib(("198.51.100.0/24", (Hop(TOR1, 2),))), (router,))[0] == set()


def test_router_with_gateway_port_bound_here_learns() -> None:
    ports = (RouterPort.of("lrp-gw", (iface("10.255.0.1/24"),), bound_here=True),)
    r = LogicalRouter.of("neutron-r1", {"dynamic-routing": "true"}, ports)
    routes, _ = plan(rib(("198.51.100.0/24", (Hop(TOR1, 2),))), (r,))
    assert routes == {("198.51.100.0/24", "10.255.0.2", "lrp-gw")}


def test_port_no_learning_and_port_name() -> None:
    ports = (
        RouterPort.of("p1", (iface("10.255.0.1/24"),), {"dynamic-routing-no-learning": "true"}),
        RouterPort.of("p2", (iface("10.255.1.1/24"), iface("fd00:1::1/64")),
                      {"dynamic-routing-port-name": "to-tor2"}),
    )  # fmt: skip
    r = LogicalRouter.of("r", {"dynamic-routing": "true"}, ports, pinned_here=True)
    ll = ip("fe80::1")
    routes, rejected = plan(
        rib(
            ("198.51.100.0/24", (Hop(TOR1, 2), Hop(TOR2, 3))),
            ("2001:db8::/32", (Hop(ll, 3),)),
        ),
        (r,),
        ifnames={2: "to-tor1", 3: "to-tor2"},
    )
    assert routes == {
        ("198.51.100.0/24", "10.255.1.2", "p2"),
        ("2001:db8::/32", "fe80::1", "p2"),
    }
    assert rejected == {}


def test_an_unknown_port_name_is_named_in_the_rejection() -> None:
    port = RouterPort.of("p2", (iface("10.255.1.1/24"),), {"dynamic-routing-port-name": "eth9"})
    r = LogicalRouter.of("r", {"dynamic-routing": "true"}, (port,), pinned_here=True)
    snap = rib(("198.51.100.0/24", (Hop(TOR2, 3),)))
    p = plan_import(OvnState((r,)), snap, ImportPolicy(ifnames={3: "to-tor2"}))
    (rej,) = p.rejected
    assert rej.detail == ("next hop 10.255.1.2 is via to-tor2, not the dynamic-routing-port-name "
                          "eth9 (p2); no interface eth9 on this chassis")  # fmt: skip


def test_a_port_name_is_mapped_by_the_chassis_port_mapping() -> None:
    """As OVN: -port-name names a network, this chassis' OVS dynamic-routing-port-mapping
    maps it to the interface (a name it does not map is taken as the interface's own)."""
    port = RouterPort.of("p2", (iface("10.255.1.1/24"),), {"dynamic-routing-port-name": "br-bgp"})
    r = LogicalRouter.of("r", {"dynamic-routing": "true"}, (port,), pinned_here=True)
    snap = rib(("198.51.100.0/24", (Hop(TOR2, 3),)))
    routes, rejected = plan(snap, (r,), ifnames={3: "to-tor2"}, port_mapping={"br-bgp": "to-tor2"})
    assert routes == {("198.51.100.0/24", "10.255.1.2", "p2")} and rejected == {}
    assert plan(snap, (r,), ifnames={3: "to-tor2"})[0] == set()


def test_only_the_gateway_ports_of_a_distributed_router_learn() -> None:
    """As OVN's ovn-controller: a router with a gateway port learns through the gateway ports
    active here, never through its ports into OVN's own networks."""
    gw = RouterPort.of("lrp-gw", (iface("10.255.0.1/24"),), bound_here=True, gateway=True)
    tenant = RouterPort.of("lrp-t", (iface("10.255.1.1/24"),))
    r = LogicalRouter.of("r", {"dynamic-routing": "true"}, (gw, tenant))
    routes, _rejected = plan(rib(("198.51.100.0/24", (Hop(TOR1, 2), Hop(TOR2, 3)))), (r,))
    assert routes == {("198.51.100.0/24", "10.255.0.2", "lrp-gw")}


def test_vrf_table_selection() -> None:
    r = LogicalRouter.of("r", {"dynamic-routing": "true", "dynamic-routing-vrf-name": "blue"},
                         GR.ports, pinned_here=True)  # fmt: skip
    snap = rib(("198.51.100.0/24", (Hop(TOR1, 2),)), table=1001)
    assert plan(snap, (r,), vrf_tables={"blue": 1001})[0]
    routes, rejected = plan(snap, (r,))
    assert routes == set()
    assert rejected == {"*": "vrf"}


def test_max_prefix_keeps_existing_and_adds_nothing_new() -> None:
    snap = rib(*((f"198.51.100.{i * 4}/30", (Hop(TOR1, 2),)) for i in range(5)))
    existing = (OwnedRoute.of(U1, "GR_node1", "198.51.100.16/30", "10.255.0.2", "rtoe-GR_node1"),)
    p = plan_import(ovn(), snap, ImportPolicy(max_prefix=3), owned_rows=existing)
    assert p == plan_import(ovn(), snap, ImportPolicy(max_prefix=3), owned_rows=OwnedRows(existing))
    assert {r.prefix for r in p.routes} == {
        "198.51.100.16/30",
        "198.51.100.0/30",
        "198.51.100.4/30",
    }
    assert {r.prefix for r in p.rejected if r.reason == "max-prefix"} == {
        "198.51.100.8/30",
        "198.51.100.12/30",
    }


def test_diff_keeps_valid_rows_and_removes_duplicates() -> None:
    keep = DesiredRoute("GR", "198.51.100.0/24", "10.255.0.2", "p1")
    new = DesiredRoute("GR", "198.51.100.0/24", "10.255.1.2", "p2")
    rows = [
        OwnedRoute.of(U1, "GR", "198.51.100.0/24", "10.255.0.2", "p1"),
        OwnedRoute.of(U2, "GR", "198.51.100.0/24", "10.255.0.2", "p1"),  # duplicate
        OwnedRoute.of(U3, "GR", "203.0.113.0/24", "10.255.0.2", "p1"),  # withdrawn
    ]
    d = diff_routes(frozenset({keep, new}), rows)
    assert d.add == (new,)
    assert sorted(r.uuid for r in d.delete) == [U2, U3]
    assert not diff_routes(frozenset({keep}), rows[:1])


def test_owned_rows_index_follows_adds_and_removes() -> None:
    keep = DesiredRoute("GR", "198.51.100.0/24", "10.255.0.2", "p1")
    owned = OwnedRows([OwnedRoute(U1, keep), OwnedRoute(U2, keep)])  # u2 duplicates u1
    assert (len(owned), dict(owned.routers())) == (2, {"GR": 2})
    assert [r.uuid for r in diff_routes(frozenset({keep}), owned).delete] == [U2]
    owned.remove(OwnedRoute(U1, keep))  # the duplicate now stands for it: nothing to do
    assert not diff_routes(frozenset({keep}), owned)
    owned.add(OwnedRoute(U3, DesiredRoute("LR", "203.0.113.0/24", "10.0.0.1", "")))
    assert dict(owned.routers()) == {"GR": 1, "LR": 1}
    assert owned.of_router("LR")[0].output_port is None
    d = diff_routes(frozenset({keep}), owned)
    assert [r.uuid for r in d.delete] == [U3] and not d.add
    u3 = owned.of_router("LR")[0]
    owned.remove(u3)
    owned.remove(u3)  # unknown: nothing happens
    assert [r.uuid for r in owned] == [U2] and dict(owned.routers()) == {"GR": 1}


def test_decision_cache_gives_the_same_plan_and_follows_changes() -> None:
    cache = DecisionCache()
    snap = rib(("198.51.100.0/24", (Hop(TOR1, 2),)), ("10.244.1.5/32", (Hop(TOR1, 2),)))
    state = ovn()
    first = plan_import(state, snap, ImportPolicy(), cache)
    assert (
        plan_import(state, snap, ImportPolicy(), cache)
        == first
        == plan_import(state, snap, ImportPolicy())
    )
    # the pod and its subnet stop being OVN's: the cached hijack verdict must not survive
    freed = OWNED - {"10.244.1.5/32", "10.244.1.0/24"}
    again = plan_import(ovn(owned=freed), snap, ImportPolicy(), cache)
    assert {r.prefix for r in again.routes} == {"198.51.100.0/24", "10.244.1.5/32"}


def test_decision_cache_follows_route_changes_and_removals() -> None:
    cache = DecisionCache()
    state = ovn()
    both = rib(("198.51.100.0/24", (Hop(TOR1, 2),)), ("203.0.113.0/24", (Hop(TOR1, 2),)))
    assert len(plan_import(state, both, ImportPolicy(), cache).routes) == 2
    # the same prefix with another next hop (a new RibRoute object): decided again
    moved = rib(("198.51.100.0/24", (Hop(TOR2, 3),)), ("203.0.113.0/24", (Hop(TOR1, 2),)))
    plan = plan_import(state, moved, ImportPolicy(), cache)
    assert {(r.prefix, r.nexthop) for r in plan.routes} == {
        ("198.51.100.0/24", "10.255.1.2"), ("203.0.113.0/24", "10.255.0.2")}  # fmt: skip
    # a prefix leaves the table: gone from the plan, and from the memo
    one = rib(("203.0.113.0/24", (Hop(TOR1, 2),)))
    assert {r.prefix for r in plan_import(state, one, ImportPolicy(), cache).routes} == {
        "203.0.113.0/24"}  # fmt: skip
    assert plan_import(state, one, ImportPolicy(), cache) == plan_import(state, one, ImportPolicy())
    # a router that stops learning here leaves no memo behind
    off = ovn((LogicalRouter.of(GR.name, {}, GR.ports, pinned_here=True, uuid=GR.uuid),))
    assert not plan_import(off, one, ImportPolicy(), cache).routes
    assert plan_import(state, one, ImportPolicy(), cache) == plan_import(state, one, ImportPolicy())


POOL = ["198.51.100.0/24", "203.0.113.0/24", "10.244.1.5/32", "192.0.2.0/25", "0.0.0.0/0",
        "198.18.0.0/15", "10.244.0.0/16"]  # fmt: skip
GATEWAYS = [("10.255.0.2",), ("10.255.1.2",), ("10.255.0.2", "10.255.1.2"), ("192.0.2.1",)]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "add", "delete", "connected", "skip", "unown"]),
            st.sampled_from(POOL),
            st.sampled_from(GATEWAYS),
        ),
        max_size=40,
    )
)
@settings(max_examples=200, deadline=None)
def test_a_pass_that_decides_only_what_changed_equals_a_full_pass(
    steps: list[tuple[str, str, tuple[str, ...]]],
) -> None:
    """The incremental path (a snapshot following the last one) against a fresh full plan,
    after every step; a skipped snapshot and a change of what OVN owns force full passes."""
    rib_ = Rib(coalesce=0.0)
    cache = DecisionCache()
    owned = OWNED
    for i, (op, prefix, gws) in enumerate(steps):
        protocol = 2 if op == "connected" else 186
        if op in ("add", "connected"):
            hops = tuple(NextHop(ip(g), 2) for g in gws)
            msg = RouteMessage(True, False, prefix, 254, protocol, "unicast", hops, None, 20)
            rib_.apply([msg], now=float(i))
        elif op == "delete":
            msg = RouteMessage(False, False, prefix, 254, 186, "unspec", (), None, None)
            rib_.apply([msg], now=float(i))
        elif op == "skip":
            rib_.snapshot()  # a snapshot this cache never sees: the next pass is a full one
        else:
            owned = owned - {prefix}
        rib_.tick(float(i) + 1)
        snap = rib_.snapshot()
        state = ovn(owned=owned)
        assert plan_import(state, snap, ImportPolicy(), cache) == plan_import(
            state, snap, ImportPolicy()
        )


def _tenant(vrf: str, uplink: str, tenant: str) -> tuple[LogicalRouter, LogicalSwitch]:
    sw = LogicalSwitch(f"ls-{vrf}", f"net-{vrf}", (SwitchPort.of(f"vm-{vrf}", (ip(tenant),)),))
    r = LogicalRouter.of(
        f"GR_{vrf}",
        {"dynamic-routing": "true", "dynamic-routing-vrf-name": vrf},
        (
            RouterPort.of(f"up-{vrf}", (iface(uplink),)),
            RouterPort.of(f"down-{vrf}", (iface(f"{tenant}/24"),), switch=sw.uuid),
        ),
        pinned_here=True,
    )
    return r, sw


def test_the_hijack_guard_is_per_vrf() -> None:
    """red owns 10.0.0.0/24 and blue 10.1.0.0/24: each may learn the other's prefix from its
    own VRF (separate tables, separate networks), never its own."""
    red, red_sw = _tenant("red", "10.255.0.1/24", "10.0.0.1")
    blue, blue_sw = _tenant("blue", "10.255.1.1/24", "10.1.0.1")
    state = OvnState((red, blue), {red_sw.uuid: red_sw, blue_sw.uuid: blue_sw})
    entries = {
        10: [("10.0.0.0/24", TOR1), ("10.1.0.0/24", TOR1)],
        20: [("10.0.0.0/24", TOR2), ("10.1.0.0/24", TOR2)],
    }
    snap = RibSnapshot({
        t: {p: RibRoute(186, "unicast", frozenset({Hop(gw, 2)})) for p, gw in routes}
        for t, routes in entries.items()
    })  # fmt: skip
    p = plan_import(state, snap, ImportPolicy(vrf_tables={"red": 10, "blue": 20}))
    assert p.routers == {"GR_red": 10, "GR_blue": 20}
    assert {(r.router, r.prefix) for r in p.routes} == {
        ("GR_red", "10.1.0.0/24"), ("GR_blue", "10.0.0.0/24")
    }  # fmt: skip
    assert {(r.router, r.prefix, r.reason) for r in p.rejected} == {
        ("GR_red", "10.0.0.0/24", "hijack"), ("GR_blue", "10.1.0.0/24", "hijack")
    }  # fmt: skip


def test_a_router_in_a_vrf_the_kernel_lacks_is_reported() -> None:
    red, red_sw = _tenant("red", "10.255.0.1/24", "10.0.0.1")
    p = plan_import(OvnState((red,), {red_sw.uuid: red_sw}), RibSnapshot({}), ImportPolicy())
    assert p.routers == {}
    assert [(r.router, r.reason) for r in p.rejected] == [("GR_red", "vrf")]


def test_one_network_in_two_vrfs_guards_both() -> None:
    """Routers joined by a switch are one OVN network: what it owns guards each VRF it is
    routed in. And gateway routers whose external switches sit on the same provider network
    (localnet ports with one network_name) are one network too."""
    red, red_sw = _tenant("red", "10.255.0.1/24", "10.0.0.1")
    blue = LogicalRouter.of(
        "GR_blue", {"dynamic-routing": "true", "dynamic-routing-vrf-name": "blue"},
        (RouterPort.of("up-blue", (iface("10.255.1.1/24"),)),
         RouterPort.of("down-blue", (iface("10.0.0.2/24"),), switch=red_sw.uuid)),
        pinned_here=True,
    )  # fmt: skip
    snap = RibSnapshot({
        t: {"10.0.0.0/24": RibRoute(186, "unicast", frozenset({Hop(gw, 2)}))}
        for t, gw in ((10, TOR1), (20, TOR2))
    })  # fmt: skip
    p = plan_import(OvnState((red, blue), {red_sw.uuid: red_sw}), snap,
                    ImportPolicy(vrf_tables={"red": 10, "blue": 20}))  # fmt: skip
    assert p.routes == frozenset()
    assert {(r.router, r.reason) for r in p.rejected} == {("GR_red", "hijack"),
                                                          ("GR_blue", "hijack")}  # fmt: skip
    # the provider network: GR_red's NAT IP, GR_def (default VRF) on the same physnet
    nat_ip = "172.20.0.10"
    ext = {}
    routers = []
    for name, vrf, uplink in (("GR_red", "red", "10.255.0.1/24"), ("GR_def", "", "10.255.1.1/24")):
        sw = LogicalSwitch(f"ext-{name}", f"ext-{name}",
                           (SwitchPort.of(f"ln-{name}", (), {"network_name": "physnet0"},
                                          type="localnet"),))  # fmt: skip
        ext[sw.uuid] = sw
        opts = {"dynamic-routing": "true"} | ({"dynamic-routing-vrf-name": vrf} if vrf else {})
        port = RouterPort.of(f"up-{name}", (iface(uplink),), switch=sw.uuid)
        r = LogicalRouter.of(name, opts, (port,), pinned_here=True)
        routers.append(replace(r, nats=(Nat.of(name, ip(nat_ip)),)) if vrf else r)
    snap = RibSnapshot({254: {f"{nat_ip}/32": RibRoute(186, "unicast",
                                                        frozenset({Hop(TOR2, 2)}))}})  # fmt: skip
    p = plan_import(OvnState(tuple(routers), ext), snap, ImportPolicy(vrf_tables={"red": 10}))
    assert [(r.router, r.reason) for r in p.rejected] == [("GR_def", "hijack")]


def test_type5_next_hops_go_through_the_host_address_on_the_named_interface() -> None:
    """A route whose next hops are remote VTEPs on an L3VNI's SVI (EVPN type-5): one row via
    the host's address on the router's dynamic-routing-port-name interface (the host's VRF
    carries it over the L3VNI); without such an address, a rejection that says so."""
    port = RouterPort.of("rtoe", (iface("169.254.100.3/24"),),
                         {"dynamic-routing-port-name": "br-red"})  # fmt: skip
    r = LogicalRouter.of("GR_red", {"dynamic-routing": "true"}, (port,), pinned_here=True)
    snap = rib(("198.51.100.0/24", (Hop(ip("192.0.2.102"), 7), Hop(ip("192.0.2.103"), 7))),
               ("203.0.113.0/24", (Hop(TOR2, 3),)))  # fmt: skip
    policy = ImportPolicy(ifnames={7: "br-l3-1000", 3: "br-red"},
                          l3vni_svis=frozenset({"br-l3-1000"}),
                          host_addrs={"br-red": (iface("169.254.100.1/24"),
                                                 iface("fd00:64::1/64"))})  # fmt: skip
    p = plan_import(OvnState((r,)), snap, policy)
    assert {(x.prefix, x.nexthop, x.output_port) for x in p.routes} == {
        ("198.51.100.0/24", "169.254.100.1", "rtoe")
    }
    assert [x.prefix for x in p.rejected] == ["203.0.113.0/24"]  # not in rtoe's networks
    bare = plan_import(OvnState((r,)), snap, replace(policy, host_addrs={}))
    assert {x.prefix: x.detail for x in bare.rejected}["198.51.100.0/24"] == (
        "type-5 next hop 192.0.2.102 via br-l3-1000: no IPv4 address of the host on the "
        "dynamic-routing-port-name br-red (rtoe) in that port's networks; type-5 next hop "
        "192.0.2.103 via br-l3-1000: no IPv4 address of the host on the "
        "dynamic-routing-port-name br-red (rtoe) in that port's networks"
    )
