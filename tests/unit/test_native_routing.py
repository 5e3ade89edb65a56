"""Routers OVN 25.03+ serves itself through their VRF's table (pure): neither imported into
nor announced with network lines by ovn-frr; their VRF redistributes OVN's kernel routes."""

from __future__ import annotations

from dataclasses import replace

from ovn_frr.core.advertise import announcements
from ovn_frr.core.frr_model import FrrSettings, Neighbor, desired_frr
from ovn_frr.core.importer import learning_routers
from ovn_frr.core.model import ImportPolicy
from ovn_frr.core.native_routing import mark_native, native_vrfs, why_native
from ovn_frr.core.ovn import LogicalRouter, OvnState, map_vrfs
from ovn_frr.core.vrf import KernelLink, KernelVrf, VrfConfig, needed_vrfs, plan_vrfs
from ovn_frr.frr.render import render
from tests.unit.test_advertise import NODE_PORT, PODS, UPLINK, ip

RED = {"dynamic-routing-vrf-name": "red"}


def gr(name: str, **options: str) -> LogicalRouter:
    return LogicalRouter.of(
        name,
        {"dynamic-routing": "true", "dynamic-routing-redistribute": "connected",
         "chassis": "node1", **options},
        ports=(NODE_PORT, UPLINK),
        pinned_here=True,
    )  # fmt: skip


def state(*routers: LogicalRouter) -> OvnState:
    return OvnState(routers, {PODS.uuid: PODS}, ())


def test_a_router_is_native_where_ovn_and_frr_meet_in_its_table() -> None:
    assert "table 10042" in why_native(gr("GR_a", **RED, **{"dynamic-routing-vrf-id": "10042"}),
                                       vrf_id=True)  # fmt: skip
    # an OVN that does not read -vrf-id uses the datapath's tunnel key: not FRR's table
    assert why_native(gr("GR_a", **RED, **{"dynamic-routing-vrf-id": "10042"}), False) == ""
    assert why_native(gr("GR_a", **RED), vrf_id=True) == ""  # the tunnel key again
    # the default VRF never (OVN refuses the main table)
    assert why_native(gr("GR_a"), vrf_id=True) == ""
    maintained = replace(UPLINK, routing=replace(UPLINK.routing, maintain_vrf=True))
    r = replace(gr("GR_a", **RED), ports=(NODE_PORT, maintained))
    assert "dynamic-routing-maintain-vrf" in why_native(r, vrf_id=False)
    # with no -vrf-name OVN names its VRF after a table unknown here (the tunnel key)
    unnamed = replace(gr("GR_a", **{"dynamic-routing-vrf-id": "7"}), ports=(NODE_PORT, maintained))
    assert why_native(unnamed, vrf_id=False) == ""


def test_native_routers_are_not_imported_into_nor_announced() -> None:
    native = gr("GR_red", **RED, **{"dynamic-routing-vrf-id": "10042"})
    plain = gr("GR_blue", **{"dynamic-routing-vrf-name": "blue"})
    s = mark_native(state(native, plain), vrf_id=True)
    assert native_vrfs(s) == {"red"}
    learning, _ = learning_routers(s, ImportPolicy(vrf_tables={"red": 10042, "blue": 10043}))
    assert set(learning) == {"GR_blue"}
    assert {a.vrf for a in announcements(s)} == {"blue"}
    # a VRF the node config maps elsewhere is FRR's other table: not native there
    mapped = map_vrfs(s, {"red": "default"})
    assert native_vrfs(mapped) == frozenset()
    assert mark_native(s, vrf_id=True) is s  # nothing changes twice


def test_the_native_vrf_redistributes_ovns_kernel_routes() -> None:
    cfg = FrrSettings(64512, "192.0.2.1",
                      (Neighbor(ip("10.255.0.2"), "65001", vrf="red"),))  # fmt: skip
    text = render(desired_frr(cfg, {}, frozenset({"red"})))
    red = text[text.index("router bgp 64512 vrf red") :]
    assert "  redistribute kernel route-map ovnfrr-origin" in red
    assert "redistribute kernel" not in render(desired_frr(cfg, {}))


def test_a_vrf_ovn_maintains_is_not_made_by_ovn_frr() -> None:
    maintained = replace(UPLINK, routing=replace(UPLINK.routing, maintain_vrf=True))
    r = replace(gr("GR_red", **RED), ports=(NODE_PORT, maintained))
    config = VrfConfig(interfaces={"red": ("eth1",)})
    needed = needed_vrfs(mark_native(state(r), vrf_id=True), config)
    assert needed["red"].ovn_makes
    plan = plan_vrfs(needed, (), ())
    assert plan.create == () and plan.problems == ()
    # once OVN made it, the node config's interfaces go in (as into a VRF of ovn-frr's)
    plan = plan_vrfs(needed, (KernelVrf("red", 5, ours=False),), (KernelLink("eth1"),))
    assert plan.enslave == (("eth1", "red"),) and plan.remove == ()
    assert plan.view[0][2] == "ovn"


def test_only_vrfs_this_chassis_may_serve_redistribute() -> None:
    elsewhere = replace(gr("GR_red", **RED, **{"dynamic-routing-vrf-id": "10042"}),
                        pinned_here=False)  # fmt: skip
    assert native_vrfs(mark_native(state(elsewhere), vrf_id=True)) == frozenset()
