"""VRF-Lite on a kernel with VRFs: node1 has two VRFs, red and blue, each on a link of its own
to tor1 (which has the same two VRFs). Each OVN network's gateway router names its VRF; the
tenants overlap (10.0.0.0/24 in both, and a host 198.51.100.10 behind each of tor1's VRFs).
What tor1 sends in red reaches red's router only, each tenant's subnet is announced in its own
VRF only (with its router as next hop), and a VM pings the host of its own VRF, never the
other one (node1 is wired as ovn-kubernetes' shared gateway: :mod:`ovn_frr.lab.vrflite`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

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
from tests.e2e.conftest import FAST_SYNC

METRICS_PORT = 9479
SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False, chassis=True),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1", vrf="red"), LinkSpec("node1", "tor1", vrf="blue")),
    bfd=(100, 3),
)


@pytest.fixture(scope="module")
def vrf_lab() -> Iterator[tuple[Lab, AgentProcess, dict[str, VrfTenant]]]:
    with Lab(SPEC) as lab:
        tenants = shared_gateway_tenants(lab)
        config = neighbors_config(lab, "node1", bfd_ms=100) + FAST_SYNC
        agent = AgentProcess.start(
            lab, "node1", config, agent=f'metrics_listen = "127.0.0.1:{METRICS_PORT}"\n'
        )
        try:
            wait_vrf_sessions(lab, ("red", "blue"))
            yield lab, agent, tenants
        finally:
            agent.stop()


def owned(lab: Lab, router: str) -> dict[str, set[str]]:
    assert lab.ovn is not None
    out: dict[str, set[str]] = {}
    for prefix, nexthop, _port in lab.ovn.owned_rows(router, "node1"):
        out.setdefault(prefix, set()).add(nexthop)
    return out


def test_each_vrf_imports_its_own_routes(
    vrf_lab: tuple[Lab, AgentProcess, dict[str, VrfTenant]],
) -> None:
    lab, agent, _tenants = vrf_lab
    red_hop = str(lab.link("node1", "tor1", "red").peer_v4)
    blue_hop = str(lab.link("node1", "tor1", "blue").peer_v4)
    lab.announcer("tor1", "red").announce(["198.51.100.0/24", "203.0.113.0/24"])
    lab.announcer("tor1", "blue").announce(["198.51.100.0/24"])
    try:
        wait_for(lambda: owned(lab, "GR_red") == {"198.51.100.0/24": {red_hop},
                                                 "203.0.113.0/24": {red_hop}},
                 timeout=120, what="red's routes on GR_red only")  # fmt: skip
        wait_for(lambda: owned(lab, "GR_blue") == {"198.51.100.0/24": {blue_hop}},
                 timeout=120, what="blue's route on GR_blue only")  # fmt: skip
    except LabTimeout as exc:
        status = agent.status()
        raise AssertionError(
            f"{exc}\nred: {owned(lab, 'GR_red')}\nblue: {owned(lab, 'GR_blue')}\n"
            f"imported: {status['imported']}\nrejected: {status['rejected']}\n"
            f"zebra red: {lab.frr['node1'].show('show ip route vrf red json')}\n"
            f"kernel: {run(['ip', '-d', 'link', 'show', 'type', 'vrf'], netns=lab.netns('node1'))}"
            f"\nagent: {agent.output()[-4000:]}"
        ) from None
    routers = agent.status()["imported"]["routers"]
    assert {x["router"]: x["table"] for x in routers} == {
        "GR_red": SPEC.vrf_table("red"), "GR_blue": SPEC.vrf_table("blue")
    }  # fmt: skip
    lab.announcer("tor1", "red").withdraw(["203.0.113.0/24"])
    wait_for(lambda: "203.0.113.0/24" not in owned(lab, "GR_red"), timeout=120,
             what="red's withdrawal")  # fmt: skip
    assert owned(lab, "GR_blue") == {"198.51.100.0/24": {blue_hop}}


def test_each_tenant_is_announced_in_its_own_vrf(
    vrf_lab: tuple[Lab, AgentProcess, dict[str, VrfTenant]],
) -> None:
    lab, _agent, tenants = vrf_lab
    for vrf in ("red", "blue"):
        hop = tenants[vrf].gateway_v4  # dynamic-routing-v4-prefix-nexthop: the router itself
        want = tenants[vrf].subnet
        wait_for(lambda v=vrf, h=hop, w=want: w in learned(lab, v, h), timeout=120,  # type: ignore[misc]
                 what=f"{want} in tor1's VRF {vrf} via {hop}")  # fmt: skip


def test_each_vm_reaches_the_host_of_its_own_vrf_only(
    vrf_lab: tuple[Lab, AgentProcess, dict[str, VrfTenant]],
) -> None:
    """Real packets: vm-red (10.0.0.5 behind GR_red) pings 198.51.100.10, which is hred behind
    tor1's VRF red and also hblue behind VRF blue. The echo goes GR_red -> br-red -> tor1 (the
    imported route); the reply comes back to GR_red (tor1 learned the tenant with GR_red's
    own address as next hop). hblue receives nothing while red pings, and the other way."""
    lab, agent, tenants = vrf_lab
    target = str(HOST_NET.network_address + HOST_NUM)
    for vrf in ("red", "blue"):
        lab.announcer("tor1", vrf).announce([str(HOST_NET)])
    for vrf in ("red", "blue"):
        t = tenants[vrf]
        hop = str(lab.link("node1", "tor1", vrf).peer_v4)
        wait_for(lambda r=t.router, h=hop: owned(lab, r).get(str(HOST_NET)) == {h},  # type: ignore[misc]
                 timeout=120, what=f"{HOST_NET} on {t.router}")  # fmt: skip
        wait_for(lambda v=vrf, t=t: t.subnet in learned(lab, v, t.gateway_v4),  # type: ignore[misc]
                 timeout=120, what=f"{t.subnet} at tor1 in {vrf} via {t.gateway_v4}")  # fmt: skip
    for vrf, other in (("red", "blue"), ("blue", "red")):
        vm = tenants[vrf].vm[0]
        quiet, before = echo_requests(lab, f"h{other}"), echo_requests(lab, f"h{vrf}")
        try:
            wait_for(lambda v=vm: ping(lab, v, target), timeout=60, what="first ping")  # type: ignore[misc]
        except LabTimeout:
            assert lab.ovn is not None
            raise AssertionError(
                f"{vm} cannot ping {target}\n"
                f"GR routes: {lab.ovn.nbctl('lr-route-list', tenants[vrf].router)}\n"
                f"tor1 {vrf}: {run(['ip', 'route', 'show', 'vrf', vrf], netns=lab.netns('tor1'))}"
                f"\n{diagnose(lab, 'node1', 'tor1', vrf)}\n"
                f"agent: {agent.output()[-2000:]}"
            ) from None
        assert ping(lab, vm, target, count=3)
        assert echo_requests(lab, f"h{other}") == quiet, f"{vm}'s pings reached h{other}"
        assert echo_requests(lab, f"h{vrf}") >= before + 3


def learned(lab: Lab, vrf: str, hop: str) -> set[str]:
    """The prefixes tor1 has in ``vrf`` with next hop ``hop``."""
    data = lab.frr["tor1"].show(f"show bgp vrf {vrf} ipv4 unicast json")
    return {
        p for p, paths in data.get("routes", {}).items()
        if any(h.get("ip") == hop for x in paths for h in x.get("nexthops", []))
    }  # fmt: skip


def test_bfd_takes_down_one_vrf_only(
    vrf_lab: tuple[Lab, AgentProcess, dict[str, VrfTenant]],
) -> None:
    """A dead red link: BFD (100 ms x 3) drops red's session, red's route leaves GR_red at
    once (the hold timer is 9 s); blue's session, route and row stay."""
    lab, _agent, _tenants = vrf_lab
    p = "192.0.2.0/25"
    red = str(lab.link("node1", "tor1", "red").peer_v4)
    blue = str(lab.link("node1", "tor1", "blue").peer_v4)
    for vrf in ("red", "blue"):
        lab.announcer("tor1", vrf).announce([p])
    wait_for(lambda: p in owned(lab, "GR_red") and p in owned(lab, "GR_blue"), timeout=120,
             what=f"{p} on both routers")  # fmt: skip
    for vrf, hop in (("red", red), ("blue", blue)):
        wait_for(lambda v=vrf, h=hop: lab.frr["node1"].bfd_protected([h], v), timeout=120,  # type: ignore[misc]
                 what=f"BFD up in {vrf}, as bgpd sees it")  # fmt: skip
    lab.cut("node1", "tor1", "red")
    try:
        wait_for(lambda: p not in owned(lab, "GR_red"), timeout=60, what="red's row gone")
        data = lab.frr["node1"].show(f"show bgp vrf red neighbors {red} json")[red]
        assert "BFD" in str({k: v for k, v in data.items() if k.startswith("last")}), data
        assert owned(lab, "GR_blue").get(p) == {blue}
        assert lab.frr["node1"].bgp_neighbors("blue").get(blue) == "Established"
    finally:
        lab.restore("node1", "tor1", "red")
    wait_for(lambda: owned(lab, "GR_red").get(p) == {red}, timeout=120, what="red's row back")
    for vrf in ("red", "blue"):
        lab.announcer("tor1", vrf).withdraw([p])


def test_status_and_metrics_per_vrf(
    vrf_lab: tuple[Lab, AgentProcess, dict[str, VrfTenant]],
) -> None:
    lab, agent, _tenants = vrf_lab
    p = "198.18.0.0/24"
    lab.announcer("tor1", "red").announce([p])
    wait_for(lambda: p in owned(lab, "GR_red"), timeout=120, what=f"{p} on GR_red")

    def vrfs() -> dict[str, dict[str, object]]:
        return {v["vrf"]: v for v in agent.status()["vrfs"]}

    wait_for(lambda: vrfs().get("red", {}).get("sessions_up") == 1
             and vrfs().get("blue", {}).get("sessions_up") == 1, timeout=60,
             what="both VRFs' sessions up in status")  # fmt: skip
    red, blue = vrfs()["red"], vrfs()["blue"]
    assert red["tables"] == [SPEC.vrf_table("red")] and red["routers"] == ["GR_red"]
    assert blue["tables"] == [SPEC.vrf_table("blue")] and blue["routers"] == ["GR_blue"]
    assert red["imported"] == len(owned(lab, "GR_red")) >= 1
    assert int(str(red["advertised"])) >= 1 and int(str(blue["advertised"])) >= 1
    assert red["l3vni"] is None
    code = (
        "import urllib.request; print(urllib.request.urlopen("
        f"'http://127.0.0.1:{METRICS_PORT}/metrics', timeout=10).read().decode())"
    )
    text = run([sys.executable, "-c", code], netns=lab.netns("node1"))
    for line in ('ovnfrr_bgp_sessions_up{vrf="red"} 1.0', 'ovnfrr_bgp_sessions_up{vrf="blue"} 1.0',
                 f'ovnfrr_vrf_routes_imported{{vrf="red"}} {float(red["imported"])}'):  # fmt: skip
        assert line in text, line
    assert 'ovnfrr_vrf_routes_advertised{vrf="blue"}' in text
    lab.announcer("tor1", "red").withdraw([p])


def test_a_missing_vrf_is_made_and_removed_an_operators_kept(
    vrf_lab: tuple[Lab, AgentProcess, dict[str, VrfTenant]],
) -> None:
    """GR_green names VRF green, which the kernel lacks: ovn-frr makes it (marked, the first
    free table from 10000) and removes it when the router stops naming it. red and blue were
    made by the operator (here: the lab): used as they are, reported so, never removed."""
    lab, agent, _tenants = vrf_lab
    assert lab.ovn is not None
    ns = lab.netns("node1")

    def kernel() -> dict[str, tuple[int, str]]:
        data = json.loads(run(["ip", "-json", "-details", "link", "show", "type", "vrf"],
                              netns=ns))  # fmt: skip
        return {x["ifname"]: (x["linkinfo"]["info_data"]["table"], x.get("ifalias", ""))
                for x in data}  # fmt: skip

    lab.ovn.nbctl("lr-add", "GR_green", "--", "set", "Logical_Router", "GR_green",
                  "options:chassis=node1", "options:dynamic-routing=true",
                  "options:dynamic-routing-vrf-name=green")  # fmt: skip
    wait_for(lambda: kernel().get("green") == (10000, "ovn-frr:vrf"), timeout=60,
             what="VRF green made by ovn-frr")  # fmt: skip

    def devices() -> dict[str, dict[str, Any]]:
        return {d["vrf"]: d for d in agent.status()["vrf_devices"]}

    # status follows once the pass that made it is done (the kernel shows it a little before)
    wait_for(lambda: "green" in devices(), timeout=10, what="VRF green in status")
    assert devices()["green"]["owner"] == "ovn-frr" and devices()["green"]["table"] == 10000
    assert devices()["red"]["owner"] == "operator"
    assert devices()["red"]["table"] == SPEC.vrf_table("red")
    lab.ovn.nbctl("remove", "Logical_Router", "GR_green", "options", "dynamic-routing-vrf-name")
    wait_for(lambda: "green" not in kernel(), timeout=60, what="VRF green removed")
    lab.ovn.nbctl("lr-del", "GR_green")
    assert {"red", "blue"} <= set(kernel())
