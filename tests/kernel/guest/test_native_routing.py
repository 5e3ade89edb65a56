"""OVN's own route exchange (OVN 25.03.2+: the sid root's 26.03) with ovn-frr as its host
side, on a kernel with VRFs: node1's VRF red and blue each on a link of their own to tor1 (the
VRF-Lite lab of test_vrf_lite.py). GR_red has ``dynamic-routing-vrf-id`` = VRF red's table, so
OVN exchanges its routes through the very table FRR's VRF red uses: OVN learns tor1's routes
there (SB ``Learned_Route``) and writes GR_red's prefixes there (protocol 84), which FRR
announces (``redistribute kernel``). ovn-frr imports nothing for GR_red and originates nothing
for it; GR_blue (no -vrf-id) stays ovn-frr's own import and advertise. Nothing twice."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.evpn import echo_requests, ping
from ovn_frr.lab.nbtopo import VrfTenant
from ovn_frr.lab.proc import LabTimeout, run
from ovn_frr.lab.vrflite import (
    HOST_NET,
    HOST_NUM,
    diagnose,
    shared_gateway_tenants,
    wait_vrf_sessions,
)
from ovn_frr.versions import detect
from tests.e2e.conftest import FAST_SYNC

VERSIONS = detect()
pytestmark = pytest.mark.skipif(
    not (VERSIONS.ovn_native_dynamic_routing and VERSIONS.ovn_vrf_id),
    reason="OVN exchanges a router's routes through a table of its choosing only from 25.03.2 "
    "(dynamic-routing-vrf-id); older OVN has no route exchange of its own",
)
SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False, chassis=True),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1", vrf="red"), LinkSpec("node1", "tor1", vrf="blue")),
    bfd=(100, 3),
)
RED = SPEC.vrf_table("red")
PREFIX = "198.51.100.0/24"
Fixture = tuple[Lab, AgentProcess, dict[str, VrfTenant]]


@pytest.fixture(scope="module")
def native_lab() -> Iterator[Fixture]:
    with Lab(SPEC) as lab:
        assert lab.ovn is not None
        tenants = shared_gateway_tenants(lab)
        lab.ovn.nbctl("set", "Logical_Router", "GR_red",
                      f"options:dynamic-routing-vrf-id={RED}")  # fmt: skip
        # the routers' dynamic-routing-port-name (br-<vrf>) is no logical port: OVN learns
        # through it only with the chassis' mapping of it to an interface
        lab.chassis["node1"].vsctl("set", "Open_vSwitch", ".",
                                   'external_ids:dynamic-routing-port-mapping='
                                   '"br-red=br-red,br-blue=br-blue"')  # fmt: skip
        agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1", bfd_ms=100)
                                   + FAST_SYNC)  # fmt: skip
        try:
            wait_vrf_sessions(lab, ("red", "blue"))
            yield lab, agent, tenants
        finally:
            agent.stop()


def owned(lab: Lab, router: str) -> set[str]:
    assert lab.ovn is not None
    return {prefix for prefix, _hop, _port in lab.ovn.owned_rows(router, "node1")}


def learned_routes(lab: Lab) -> list[tuple[str, str]]:
    """SB Learned_Route rows as (router, prefix)."""
    assert lab.ovn is not None
    names = {}
    dps = json.loads(lab.ovn.sbctl("--format=json", "--columns=_uuid,external_ids", "list",
                                   "Datapath_Binding"))["data"]  # fmt: skip
    for uuid, ext in dps:
        names[uuid[1]] = dict(ext[1]).get("name", "")
    rows = json.loads(lab.ovn.sbctl("--format=json", "--columns=datapath,ip_prefix", "list",
                                    "Learned_Route"))["data"]  # fmt: skip
    return sorted((names.get(dp[1], "?"), str(prefix)) for dp, prefix in rows)


def _ovn_side(lab: Lab) -> str:
    """What OVN's route exchange shows on node1 (a failure's diagnosis)."""
    assert lab.ovn is not None
    ch = lab.chassis["node1"]
    ns = lab.netns("node1")
    log = (ch.rundir / "ovn-controller.log").read_text()[-3000:]
    return "\n".join([
        f"table {RED}: " + run(["ip", "route", "show", "table", str(RED)], netns=ns),
        "vrfs: " + run(["ip", "-d", "link", "show", "type", "vrf"], netns=ns),
        "advertised: " + lab.ovn.sbctl("--columns=ip_prefix,logical_port", "list",
                                       "Advertised_Route"),
        "pb: " + lab.ovn.sbctl("--columns=logical_port,options,chassis", "find",
                               "Port_Binding", "logical_port=rtoe-GR_red"),
        "dp: " + lab.ovn.sbctl("--columns=external_ids", "list", "Datapath_Binding"),
        "ovn-controller: " + log,
    ])  # fmt: skip


def at_tor(lab: Lab, vrf: str) -> dict[str, int]:
    """tor1's BGP prefixes in ``vrf`` -> how many paths it has for each."""
    data = lab.frr["tor1"].show(f"show bgp vrf {vrf} ipv4 unicast json")
    return {p: len(paths) for p, paths in data.get("routes", {}).items()}


def test_ovn_learns_the_native_routers_routes_ovn_frr_the_others(native_lab: Fixture) -> None:
    lab, agent, _tenants = native_lab
    for vrf in ("red", "blue"):
        lab.announcer("tor1", vrf).announce([PREFIX])
    try:
        wait_for(lambda: ("GR_red", PREFIX) in learned_routes(lab), timeout=120,
                 what=f"{PREFIX} in SB Learned_Route of GR_red (OVN's import)")  # fmt: skip
        wait_for(lambda: PREFIX in owned(lab, "GR_blue"), timeout=120,
                 what=f"{PREFIX} on GR_blue (ovn-frr's import)")  # fmt: skip
    except LabTimeout as exc:
        raise AssertionError(f"{exc}\nlearned: {learned_routes(lab)}\n{_ovn_side(lab)}\n"
                             f"agent: {agent.output()[-3000:]}") from None  # fmt: skip
    # once each: OVN's for GR_red, ovn-frr's for GR_blue
    assert owned(lab, "GR_red") == set()
    assert [r for r in learned_routes(lab) if r[0] == "GR_blue"] == []
    routers = {x["router"] for x in agent.status()["imported"]["routers"]}
    assert "GR_red" not in routers and "GR_blue" in routers
    status = agent.status()
    assert [x for x in status["native_routers"] if x.startswith("router GR_red ")]
    assert status["redistribute_kernel"] == ["red"]
    lab.announcer("tor1", "red").withdraw([PREFIX])
    wait_for(lambda: ("GR_red", PREFIX) not in learned_routes(lab), timeout=120,
             what="the withdrawal leaves Learned_Route")  # fmt: skip
    assert owned(lab, "GR_red") == set()


def test_the_native_routers_prefixes_are_ovns_routes_announced_once(native_lab: Fixture) -> None:
    lab, _agent, tenants = native_lab
    ns = lab.netns("node1")
    red = tenants["red"].subnet
    # OVN writes GR_red's prefixes into VRF red's table itself (protocol 84)...
    wait_for(lambda: red in run(["ip", "route", "show", "table", str(RED), "proto", "84"],
                                netns=ns), timeout=120,
             what=f"{red} as OVN's protocol-84 route in table {RED}")  # fmt: skip
    # ...FRR announces them (redistributed), and ovn-frr originates nothing for GR_red
    wait_for(lambda: at_tor(lab, "red").get(red) == 1, timeout=120,
             what=f"{red} at tor1 in VRF red, one path")  # fmt: skip
    config = lab.frr["node1"].vtysh.running_config()
    section = config[config.index("router bgp 64512 vrf red") :].split("\nexit", 1)[0]
    assert "redistribute kernel route-map ovnfrr-origin" in section
    assert f"network {red}" not in section
    # blue is ovn-frr's: its network line, announced once too
    wait_for(lambda: at_tor(lab, "blue").get(tenants["blue"].subnet) == 1, timeout=120,
             what="blue's subnet at tor1 in VRF blue")  # fmt: skip


def test_a_vm_behind_the_native_router_reaches_the_host_of_its_vrf(native_lab: Fixture) -> None:
    """Real packets over OVN's own import and announcement: vm-red -> GR_red (the route OVN
    learned) -> br-red -> tor1 -> hred, and back over the route tor1 learned from OVN's."""
    lab, agent, tenants = native_lab
    target = str(HOST_NET.network_address + HOST_NUM)
    lab.announcer("tor1", "red").announce([str(HOST_NET)])
    wait_for(lambda: ("GR_red", str(HOST_NET)) in learned_routes(lab), timeout=120,
             what=f"{HOST_NET} learned by OVN")  # fmt: skip
    vm = tenants["red"].vm[0]
    before, quiet = echo_requests(lab, "hred"), echo_requests(lab, "hblue")
    try:
        wait_for(lambda: ping(lab, vm, target), timeout=60, what="first ping")
    except LabTimeout:
        assert lab.ovn is not None
        raise AssertionError(
            f"{vm} cannot ping {target}\nlearned: {learned_routes(lab)}\n"
            f"tor1 red: {run(['ip', 'route', 'show', 'vrf', 'red'], netns=lab.netns('tor1'))}"
            f"\nnode1 table {RED}: "
            f"{run(['ip', 'route', 'show', 'table', str(RED)], netns=lab.netns('node1'))}"
            f"\n{diagnose(lab, 'node1', 'tor1', 'red')}\nagent: {agent.output()[-2000:]}"
        ) from None
    assert ping(lab, vm, target, count=3)
    assert echo_requests(lab, "hred") >= before + 3
    assert echo_requests(lab, "hblue") == quiet
