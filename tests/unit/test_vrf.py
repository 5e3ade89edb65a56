"""Which VRF devices a chassis needs and what to do with the kernel's (core/vrf.py)."""

from __future__ import annotations

import ipaddress
from typing import Any

from ovn_frr.core.ovn import LogicalRouter, OvnState, RouterPort
from ovn_frr.core.vrf import TABLE_BASE, KernelVrf, VrfConfig, needed_vrfs, plan_vrfs
from ovn_frr.kernel.vrf import ALIAS, parse_links


def router(name: str, vrf: str, here: bool = True, vrf_id: int | None = None) -> LogicalRouter:
    opts = {"dynamic-routing": "true", "dynamic-routing-vrf-name": vrf}
    if vrf_id is not None:
        opts["dynamic-routing-vrf-id"] = str(vrf_id)
    port = RouterPort.of(f"up-{name}", (ipaddress.ip_interface("10.255.0.1/24"),))
    return LogicalRouter.of(name, opts, (port,), pinned_here=here)


def test_routers_served_here_and_the_config_need_vrfs() -> None:
    state = OvnState((router("GR_red", "red"), router("GR_far", "far", here=False),
                      router("GR_blue", "blue", vrf_id=1234)))  # fmt: skip
    config = VrfConfig(tables={"green": 77}, interfaces={"green": ("eth2",)},
                       neighbors={"red": ("10.255.0.2",)})  # fmt: skip
    need = needed_vrfs(state, config)
    assert set(need) == {"red", "blue", "green"}
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
    plan = plan_vrfs(needed_vrfs(state, VrfConfig()), kernel, ["lo", "red", "old", "ops"])
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
    plan = plan_vrfs(needed_vrfs(None, config), kernel, ["eth1", "eth2", "red", "blue"])
    assert plan.enslave == ()  # eth1 is in already; eth2: blue is the operator's
    assert plan.problems == ("VRF red: no interface eth9 to put in it",)


def test_problems_are_named() -> None:
    state = OvnState((router("GR_red", "red", vrf_id=20), router("GR_x", "x", vrf_id=10)))
    config = VrfConfig(tables={"eth0": None})
    plan = plan_vrfs(needed_vrfs(state, config), [KernelVrf("red", 10, ours=False)],
                     ["eth0", "red"])  # fmt: skip
    assert plan.create == ()
    assert plan.problems == (
        "VRF eth0: an interface of that name exists and is no VRF",
        "VRF red: table 20 asked (router GR_red), the kernel's has table 10",
        "VRF x: table 10 is reserved or another VRF's",
    )


def test_links_are_read_with_alias_and_members() -> None:
    data: list[dict[str, Any]] = [
        {"ifname": "lo"},
        {"ifname": "red", "ifalias": ALIAS,
         "linkinfo": {"info_kind": "vrf", "info_data": {"table": 10000}}},
        {"ifname": "blue", "linkinfo": {"info_kind": "vrf", "info_data": {"table": 10}}},
        {"ifname": "eth1", "master": "red"},
        {"ifname": "eth2", "master": "br0"},
    ]  # fmt: skip
    vrfs, names = parse_links(data)
    assert vrfs == [KernelVrf("blue", 10, False), KernelVrf("red", 10000, True,
                                                           frozenset({"eth1"}))]  # fmt: skip
    assert names == ["lo", "red", "blue", "eth1", "eth2"]
