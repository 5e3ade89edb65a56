"""VRF-Lite on a kernel with VRFs: node1 has two VRFs, red and blue, each on a link of its own
to tor1 (which has the same two VRFs). Each OVN network's gateway router names its VRF; the
tenants overlap (10.0.0.0/24 in both). What tor1 sends in red reaches red's router only, and
each tenant's subnet is announced in its own VRF only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.nbtopo import VrfTenant, vrf_lite_node
from ovn_frr.lab.proc import LabTimeout, run
from tests.e2e.conftest import FAST_SYNC

SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False, chassis=True),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1", vrf="red"), LinkSpec("node1", "tor1", vrf="blue")),
)


@pytest.fixture(scope="module")
def vrf_lab() -> Iterator[tuple[Lab, AgentProcess, dict[str, VrfTenant]]]:
    with Lab(SPEC) as lab:
        tenants = {t.vrf: t for t in vrf_lite_node(lab)}
        agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1") + FAST_SYNC)
        try:
            for vrf in ("red", "blue"):
                la = lab.link("tor1", "node1", vrf)
                lab.frr["tor1"].wait_established([str(la.peer_v4)], timeout=180, vrf=vrf)
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
        hop = str(lab.link("tor1", "node1", vrf).peer_v4)
        want = tenants[vrf].subnet
        wait_for(lambda v=vrf, h=hop, w=want: w in learned(lab, v, h), timeout=120,  # type: ignore[misc]
                 what=f"{want} in tor1's VRF {vrf} via {hop}")  # fmt: skip


def learned(lab: Lab, vrf: str, hop: str) -> set[str]:
    """The prefixes tor1 has in ``vrf`` with next hop ``hop``."""
    data = lab.frr["tor1"].show(f"show bgp vrf {vrf} ipv4 unicast json")
    return {
        p for p, paths in data.get("routes", {}).items()
        if any(h.get("ip") == hop for x in paths for h in x.get("nexthops", []))
    }  # fmt: skip
