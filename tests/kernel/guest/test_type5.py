"""EVPN type-5 on a kernel with VRFs: node1's agent makes VRF red and its L3VNI devices (the
bridge as SVI in the VRF, the VXLAN device on it), maps the VRF to the VNI in FRR and
announces the VRF's prefixes as type-5. A remote VTEP (vtep1, plain FRR) announces a host
subnet as type-5: zebra installs it in node1's VRF through the L3VNI; OVN's tenant subnet
reaches vtep1 with node1's VTEP and router MAC."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ovn_frr.lab import Lab, wait_for
from ovn_frr.lab.agent import AgentProcess
from ovn_frr.lab.evpn import counters, ping
from ovn_frr.lab.proc import LabTimeout, run
from ovn_frr.lab.type5 import (
    GATEWAY,
    HOST5,
    HOST_NET,
    L3VNI,
    TENANT,
    TRANSIT,
    VM5,
    VRF,
    build,
    node_config,
    type5_routes,
    type5_spec,
    vrf_routes,
    vxlan_on_the_wire,
)
from tests.e2e.conftest import FAST_SYNC


@pytest.fixture(scope="module")
def t5() -> Iterator[tuple[Lab, AgentProcess]]:
    with Lab(type5_spec()) as lab:
        build(lab)
        agent = AgentProcess.start(lab, "node1", node_config(lab) + FAST_SYNC)
        try:
            yield lab, agent
        finally:
            agent.stop()


def links(lab: Lab, member: str) -> dict[str, dict[str, object]]:
    out = run(["ip", "-json", "-details", "link", "show"], netns=lab.netns(member))
    return {x["ifname"]: x for x in json.loads(out)}


def l3vni_status(agent: AgentProcess) -> dict[str, object]:
    return next((x for x in agent.status().get("l3vnis", []) if x["vrf"] == VRF), {})


def test_the_vrf_and_its_l3vni_devices_are_made(t5: tuple[Lab, AgentProcess]) -> None:
    lab, agent = t5
    try:
        wait_for(lambda: l3vni_status(agent).get("ready"), timeout=120, what="L3VNI ready")
    except LabTimeout:
        raise AssertionError(f"{agent.status().get('vrf_problems')}\n"
                             f"{agent.output()[-3000:]}") from None  # fmt: skip
    have = links(lab, "node1")
    assert have[VRF]["ifalias"] == "ovn-frr:vrf"
    br, vx = have[f"br-l3-{L3VNI}"], have[f"vx-l3-{L3VNI}"]
    assert br["master"] == VRF and vx["master"] == f"br-l3-{L3VNI}"
    assert br["ifalias"] == vx["ifalias"] == f"ovn-frr:l3vni:{L3VNI}"
    assert have[f"br-{VRF}"]["master"] == VRF  # the transit into OVN, put there by the agent
    assert l3vni_status(agent)["router_mac"] == br["address"]
    red = next(v for v in agent.status()["vrfs"] if v["vrf"] == VRF)
    assert red["l3vni"] == L3VNI
    # the FRR pipeline applies the type-5 lines on its own schedule (its batch may also have
    # to wait for FRR 10's mgmtd to release the datastore): not the kernel side's
    wanted = (f"vrf {VRF}\n vni {L3VNI}\n", "  advertise ipv4 unicast route-map ovnfrr-type5\n")
    wait_for(lambda: all(w in lab.frr["node1"].vtysh.running_config() for w in wanted),
             timeout=60, what="the L3VNI and type-5 lines in FRR")  # fmt: skip


def test_type5_both_ways(t5: tuple[Lab, AgentProcess]) -> None:
    """vtep1's host subnet: a type-5 route, installed by zebra in node1's VRF red through the
    L3VNI (next hop vtep1's VTEP, on the SVI). GR_red's tenant subnet: at vtep1 as type-5 with
    node1's VTEP and router MAC, and in vtep1's VRF red."""
    lab, agent = t5
    wait_for(lambda: l3vni_status(agent).get("ready"), timeout=120, what="L3VNI ready")
    node_vtep, far_vtep = str(lab.spec.router_id("node1")), str(lab.spec.router_id("vtep1"))
    mac = str(l3vni_status(agent)["router_mac"])
    try:
        wait_for(lambda: vrf_routes(lab, "node1").get(HOST_NET, {}).get("gateway") == far_vtep,
                 timeout=120, what=f"{HOST_NET} via {far_vtep} in node1's VRF")  # fmt: skip
        route = vrf_routes(lab, "node1")[HOST_NET]
        assert route["dev"] == f"br-l3-{L3VNI}" and "onlink" in route.get("flags", []), route
        wait_for(lambda: node_vtep in json.dumps(type5_routes(lab, "vtep1").get(TENANT)),
                 timeout=120, what=f"{TENANT} type-5 at vtep1 via {node_vtep}")  # fmt: skip
        assert mac in json.dumps(type5_routes(lab, "vtep1")[TENANT]), type5_routes(lab, "vtep1")
        wait_for(lambda: vrf_routes(lab, "vtep1").get(TENANT, {}).get("gateway") == node_vtep,
                 timeout=60, what=f"{TENANT} in vtep1's VRF")  # fmt: skip
    except LabTimeout as exc:
        raise AssertionError(
            f"{exc}\nnode1 VRF: {vrf_routes(lab, 'node1')}\nvtep1 VRF: {vrf_routes(lab, 'vtep1')}"
            f"\nnode1 type-5: {type5_routes(lab, 'node1')}\nvtep1 type-5: "
            f"{type5_routes(lab, 'vtep1')}\nnode1 FRR:\n"
            f"{lab.frr['node1'].vtysh.running_config()}\nagent: {agent.output()[-3000:]}"
        ) from None


def test_type5_routes_reach_ovn_and_packets_cross_the_l3vni(t5: tuple[Lab, AgentProcess]) -> None:
    """vtep1's host subnet is imported into GR_red with the host's address on the transit as
    next hop (the host's VRF carries it over the L3VNI); GR_red's tenant subnet has a route
    back into OVN in node1's VRF (its dynamic-routing-v4-prefix-nexthop). vm-red and host5
    ping each other, and the packets cross the fabric on the L3VNI's VXLAN devices."""
    lab, agent = t5
    assert lab.ovn is not None
    gw = str(TRANSIT.network_address + 1)
    try:
        wait_for(lambda: lab.ovn is not None and (HOST_NET, gw) in [
            (p, h) for p, h, _port in lab.ovn.owned_rows(f"GR_{VRF}", "node1")],
            timeout=120, what=f"{HOST_NET} via {gw} on GR_{VRF}")  # fmt: skip
        wait_for(lambda: vrf_routes(lab, "node1").get(TENANT, {}).get("gateway") == GATEWAY,
                 timeout=60, what=f"{TENANT} via {GATEWAY} in node1's VRF")  # fmt: skip
        before = counters(lab, "node1", f"vx-l3-{L3VNI}")
        far = counters(lab, "vtep1", f"vxlan{L3VNI}")
        wait_for(lambda: ping(lab, VM5.name, HOST5.ip), timeout=60, what="vm-red -> host5")
    except LabTimeout as exc:
        status = agent.status()
        raise AssertionError(
            f"{exc}\nrejected: {status['rejected']}\nnode1 VRF: {vrf_routes(lab, 'node1')}\n"
            f"GR: {lab.ovn.nbctl('lr-route-list', f'GR_{VRF}')}\n"
            f"agent: {agent.output()[-3000:]}"
        ) from None
    # on the underlay (tor1's link to vtep1): the pings travel as VXLAN with VNI 1000
    pinged: list[bool] = []
    underlay = lab.link("tor1", "vtep1").ifname
    wire = vxlan_on_the_wire(
        lab, "tor1", underlay, 4, lambda: pinged.append(ping(lab, HOST5.name, VM5.ip, count=3))
    )
    assert pinged == [True]
    assert wire.get(L3VNI, 0) >= 6 and set(wire) == {L3VNI}, wire
    after, far_after = counters(lab, "node1", f"vx-l3-{L3VNI}"), counters(lab, "vtep1",
                                                                       f"vxlan{L3VNI}")  # fmt: skip
    assert after[1] - before[1] >= 4 and after[0] - before[0] >= 4, (before, after)
    assert far_after[0] - far[0] >= 4 and far_after[1] - far[1] >= 4, (far, far_after)
    routes = run(["ip", "route", "show", "vrf", VRF, "proto", "210"], netns=lab.netns("node1"))
    assert f"{TENANT} via {GATEWAY}" in routes, routes


def test_without_the_l3vni_everything_of_it_goes(t5: tuple[Lab, AgentProcess]) -> None:
    """The agent restarted with `[vrfs.red]` but no `l3vni`: the L3VNI's devices, FRR's
    `vni` and type-5 lines and the route back go; vtep1 loses the tenant's type-5 route. The
    VRF, the router's routes in red's instance and the transit stay (the router still names
    red)."""
    lab, agent = t5
    agent.stop()
    config = node_config(lab).replace(f"l3vni = {L3VNI}\n", "")
    again = AgentProcess.start(lab, "node1", config + FAST_SYNC)
    ns = lab.netns("node1")

    def running() -> str:
        return lab.frr["node1"].vtysh.running_config()

    checks = [
        (lambda: f"br-l3-{L3VNI}" not in links(lab, "node1")
         and f"vx-l3-{L3VNI}" not in links(lab, "node1"), "the L3VNI's devices removed"),
        (lambda: f"vni {L3VNI}" not in running(), "FRR's vni line removed"),
        (lambda: "ovnfrr-type5" not in running(), "the type-5 lines removed"),
        (lambda: "proto 210" not in run(["ip", "route", "show", "vrf", VRF], netns=ns)
         and TENANT not in vrf_routes(lab, "node1"), "the route back removed"),
        (lambda: TENANT not in type5_routes(lab, "vtep1"), "the type-5 route gone at vtep1"),
    ]  # fmt: skip
    try:
        for check, what in checks:
            try:
                wait_for(check, timeout=120, what=what)
            except LabTimeout as exc:
                raise AssertionError(
                    f"{exc}\nlinks: {sorted(links(lab, 'node1'))}\nFRR:\n{running()}\n"
                    f"VRF: {run(['ip', 'route', 'show', 'vrf', VRF], netns=ns)}\n"
                    f"vtep1 type-5: {sorted(type5_routes(lab, 'vtep1'))}\n"
                    f"agent: {again.output()[-3000:]}"
                ) from None
        text = running()
        assert f"router bgp 64512 vrf {VRF}" in text and f"network {TENANT}" in text
        assert VRF in links(lab, "node1")
    finally:
        again.stop()
