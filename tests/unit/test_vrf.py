"""Which VRF devices a chassis needs and what to do with the kernel's (core/vrf.py)."""

from __future__ import annotations

import ipaddress
from typing import Any

from ovn_frr.core.model import Address, Network
from ovn_frr.core.ovn import LogicalRouter, OvnState, RouterPort
from ovn_frr.core.vrf import (
    TABLE_BASE,
    KernelLink,
    KernelVrf,
    L3vni,
    L3vniPlan,
    VrfConfig,
    needed_vrfs,
    plan_l3vnis,
    plan_vrfs,
    return_routes,
    type5_port_names,
)
from ovn_frr.kernel.vrf import ALIAS, parse_addresses, parse_l3vnis, parse_link, parse_vrfs


def links(*names: str, master: str = "") -> list[KernelLink]:
    return [KernelLink(n, master) for n in names]


def router(name: str, vrf: str, here: bool = True, vrf_id: int | None = None) -> LogicalRouter:
    opts = {"dynamic-routing": "true", "dynamic-routing-vrf-name": vrf}
    if vrf_id is not None:
        opts["dynamic-routing-vrf-id"] = str(vrf_id)
    port = RouterPort.of(f"up-{name}", (ipaddress.ip_interface("10.255.0.1/24"),))
    return LogicalRouter.of(name, opts, (port,), pinned_here=here)


def test_routers_served_here_and_the_config_need_vrfs() -> None:
    far = LogicalRouter.of("GR_far", {"dynamic-routing": "true", "chassis": "node2",
                                      "dynamic-routing-vrf-name": "far"})  # fmt: skip
    state = OvnState((router("GR_red", "red"), far, router("GR_blue", "blue", vrf_id=1234),
                      router("dist", "dist", here=False)))  # fmt: skip
    config = VrfConfig(tables={"green": 77}, interfaces={"green": ("eth2",)},
                       neighbors={"red": ("10.255.0.2",)})  # fmt: skip
    need = needed_vrfs(state, config)
    # a gateway router pinned elsewhere needs nothing here; a distributed one does
    assert set(need) == {"red", "blue", "green", "dist"}
    assert need["red"].users == ("neighbor 10.255.0.2", "router GR_red")
    assert need["blue"].table == 1234
    assert need["green"].table == 77 and need["green"].interfaces == ("eth2",)
    assert set(needed_vrfs(None, config)) == {"red", "green"}


def test_missing_vrfs_are_made_operators_kept_ours_removed() -> None:
    state = OvnState((router("GR_red", "red"), router("GR_blue", "blue")))
    kernel = [
        KernelVrf("red", 10, ours=False),  # the operator's: used as is
        KernelVrf("old", TABLE_BASE, ours=True),  # ours, unneeded: removed
        KernelVrf("ops", TABLE_BASE + 1, ours=False),  # the operator's, unneeded: kept
    ]
    plan = plan_vrfs(needed_vrfs(state, VrfConfig()), kernel, links("red", "old", "ops"))
    # TABLE_BASE and +1 are in use: blue gets the next free one
    assert plan.create == (("blue", TABLE_BASE + 2),)
    assert plan.remove == ("old",)
    assert {(n, t, o) for n, t, o, _u in plan.view} == {
        ("blue", TABLE_BASE + 2, "ovn-frr"), ("red", 10, "operator")
    }  # fmt: skip
    assert plan.problems == ()


def test_interfaces_go_into_a_vrf_of_ours_only() -> None:
    config = VrfConfig(tables={"red": None, "blue": None},
                       interfaces={"red": ("eth1", "eth9"), "blue": ("eth2",)})  # fmt: skip
    kernel = [KernelVrf("red", 10, ours=True, members=frozenset({"eth1"})),
              KernelVrf("blue", 11, ours=False)]  # fmt: skip
    plan = plan_vrfs(needed_vrfs(None, config), kernel, links("eth1", "eth2", "red", "blue"))
    assert plan.enslave == ()  # eth1 is in already; eth2: blue is the operator's
    assert plan.problems == (
        "VRF blue is the operator's (left as it is): eth2 not in it",
        "VRF red: no interface eth9 to put in it",
    )
    # an interface in a bridge (or bond, or another VRF) is never taken out of it
    config = VrfConfig(tables={"green": None}, interfaces={"green": ("eth3", "eth4")})
    plan = plan_vrfs(needed_vrfs(None, config), [],
                     [*links("eth3", master="br0"), *links("eth4")])  # fmt: skip
    assert plan.create == (("green", TABLE_BASE),)
    assert plan.enslave == (("eth4", "green"),)
    assert plan.problems == ("VRF green: interface eth3 is in br0",)


def test_problems_are_named() -> None:
    state = OvnState((router("GR_red", "red", vrf_id=20), router("GR_x", "x", vrf_id=10)))
    config = VrfConfig(tables={"eth0": None})
    plan = plan_vrfs(needed_vrfs(state, config), [KernelVrf("red", 10, ours=False)],
                     links("eth0", "red"))  # fmt: skip
    assert plan.create == ()
    assert plan.problems == (
        "VRF eth0: an interface of that name exists and is no VRF",
        "VRF red: table 20 asked (router GR_red), the kernel's has table 10",
        "VRF x: table 10 is reserved or another VRF's",
    )


def test_tables_asked_for_are_kept_from_the_choice_and_disagreement_is_named() -> None:
    state = OvnState((router("GR_a", "a"), router("GR_b1", "b", vrf_id=5),
                      router("GR_b2", "b", vrf_id=6)))  # fmt: skip
    plan = plan_vrfs(needed_vrfs(state, VrfConfig(tables={"z": TABLE_BASE})), [], [])
    # "a" sorts first but may not take TABLE_BASE, which z asked for
    assert plan.create == (("a", TABLE_BASE + 1), ("b", TABLE_BASE + 2), ("z", TABLE_BASE))
    assert plan.problems == ("VRF b: routers ask different tables 5, 6 (dynamic-routing-vrf-id)",)


def test_vrfs_and_links_are_read_with_alias_and_members() -> None:
    data: list[dict[str, Any]] = [
        {"ifname": "red", "ifalias": ALIAS,
         "linkinfo": {"info_kind": "vrf", "info_data": {"table": 10000}}},
        {"ifname": "blue", "linkinfo": {"info_kind": "vrf", "info_data": {"table": 10}}},
    ]  # fmt: skip
    vrfs = parse_vrfs(data, {"red": ["eth1"]})
    assert vrfs == [KernelVrf("blue", 10, False), KernelVrf("red", 10000, True,
                                                           frozenset({"eth1"}))]  # fmt: skip
    assert parse_link([{"ifname": "eth2", "master": "br0"}]) == KernelLink("eth2", "br0")
    assert parse_link([{"ifname": "eth3"}]) == KernelLink("eth3", "")
    assert parse_link([]) is None


def _dev(name: str, kind: str, alias: str = "", master: str = "", **data: Any) -> dict[str, Any]:
    info = {"info_kind": kind, "info_data": data}
    return {"ifname": name, "ifalias": alias, "master": master, "flags": ["UP"], "mtu": 1450,
            "address": "aa:bb:cc:00:00:01", "linkinfo": info}  # fmt: skip


def test_l3vni_devices_are_made_in_their_vrf_remade_when_wrong_and_removed_when_unneeded() -> None:
    cfg = VrfConfig(l3vnis={"red": 1000, "blue": 2000}, vtep=("192.0.2.1", 4789, 1450))
    vrfs = [KernelVrf("red", 1001, ours=False)]  # blue is not in the kernel yet
    mark = "ovn-frr:l3vni:"
    kernel = parse_l3vnis(
        [
            _dev("br-l3-1000", "bridge", f"{mark}1000", master="red"),
            _dev("vx-l3-1000", "vxlan", f"{mark}1000", master="br-l3-1000", id=1000,
                 local="192.0.2.9", port=4789),  # another VTEP: made again
            _dev("br-l3-3000", "bridge", f"{mark}3000"),  # no longer configured: removed
            _dev("br-l3-2000", "bridge", "operator's"),  # never touched
        ],
        cfg.l3vnis.values(),
    )  # fmt: skip
    plan = plan_l3vnis(cfg, vrfs, kernel)
    assert plan.make == (L3vni(1000, "red", "192.0.2.1", 4789, 1450),)
    assert set(plan.delete) == {"br-l3-1000", "vx-l3-1000", "br-l3-3000"}
    assert plan.remove == (3000,)
    assert plan.problems == (
        "VRF blue: L3VNI 2000: br-l3-2000 exist and are not ovn-frr's (left as they are)",
    )
    good = parse_l3vnis(
        [_dev("br-l3-1000", "bridge", f"{mark}1000", master="red"),
         _dev("vx-l3-1000", "vxlan", f"{mark}1000", master="br-l3-1000", id=1000,
              local="192.0.2.1", port=4789)],
        [1000],
    )  # fmt: skip
    assert good[0].ready and good[0].router_mac == "aa:bb:cc:00:00:01"
    assert plan_l3vnis(VrfConfig(l3vnis={"red": 1000}, vtep=cfg.vtep), vrfs, good) == L3vniPlan()
    waiting = plan_l3vnis(VrfConfig(l3vnis={"green": 1000}, vtep=cfg.vtep), vrfs, [])
    assert waiting.problems == ("VRF green: L3VNI 1000 waits for the VRF device",)


def test_type5_port_names_and_the_routes_back_into_ovn() -> None:
    cfg = VrfConfig(l3vnis={"red": 1000})
    port = RouterPort.of("rtoe", (ipaddress.ip_interface("169.254.100.3/24"),),
                         {"dynamic-routing-port-name": "br-red"})  # fmt: skip
    red = LogicalRouter.of("GR_red", {"dynamic-routing": "true",
                                      "dynamic-routing-vrf-name": "red"}, (port,),
                           pinned_here=True)  # fmt: skip
    blue = router("GR_blue", "blue")
    assert type5_port_names(OvnState((red, blue)), cfg) == ("br-red",)
    net = ipaddress.ip_network
    hop = ipaddress.ip_address("169.254.100.3")
    nets: dict[str, dict[Network, Address | None]] = {
        "red": {net("10.0.0.0/24"): hop, net("10.9.0.0/24"): None},
        "blue": {net("10.0.0.0/24"): hop},
    }
    assert return_routes(nets, cfg) == {"red": frozenset({(net("10.0.0.0/24"), hop)})}
    assert return_routes({"red": (net("10.0.0.0/24"),)}, cfg) == {"red": frozenset()}
    data = [{"addr_info": [{"local": "169.254.100.1", "prefixlen": 24, "scope": "global"},
                           {"local": "fe80::1", "prefixlen": 64, "scope": "link"}]}]  # fmt: skip
    assert parse_addresses(data) == (ipaddress.ip_interface("169.254.100.1/24"),)


def test_an_l3vni_that_a_switch_uses_is_not_made() -> None:
    cfg = VrfConfig(l3vnis={"red": 100}, vtep=("192.0.2.1", 4789, 1450))
    plan = plan_l3vnis(cfg, [KernelVrf("red", 1001, ours=False)], [], {100: "ls-evpn"})
    assert plan.make == ()
    assert plan.problems == (
        "VRF red: L3VNI 100 is also the dynamic-routing-vni of logical switch ls-evpn (not made)",
    )
