"""ovn-kubernetes' ``targetVRF: auto`` on a kernel with VRFs (issue 29): the
ClusterUserDefinedNetwork ``blue`` is routed in its own VRF ``blue`` (ovn-kubernetes' name for
it), on an uplink of its own in that VRF (VRF-Lite), the default network in the default VRF, on
ovn-kubernetes' own NB.

The ToR's routes of each VRF land on that network's gateway router only (GR_node1 from the
default VRF's table, GR_cluster_udn_blue_node1 from blue's), and each network's node subnet
reaches the ToR in its own VRF only."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.ovnk import ovnk_cluster
from ovn_frr.lab.proc import LabTimeout, run
from tests.e2e.conftest import FAST_SYNC

SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1"), LinkSpec("node1", "tor1", vrf="blue")),
)


def ovnk_config(target_vrf: str) -> str:
    """node1's RouteAdvertisements: both networks' pods, in ``target_vrf``."""
    return (
        '[ovn_kubernetes]\nnode = "node1"\ngateway_mode = "local"\n'
        "[[ovn_kubernetes.route_advertisements]]\n"
        'networks = ["default", "blue"]\nadvertisements = ["PodNetwork"]\n'
        f'target_vrf = "{target_vrf}"\n'
    )


DEFAULT_ROUTES, BLUE_ROUTES = ["203.0.113.0/24"], ["198.51.100.0/24"]


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[Lab, AgentProcess]]:
    with Lab(SPEC) as lab:
        ovnk_cluster(lab, "local", uplinks={"cluster_udn_blue": "blue"})
        config = neighbors_config(lab, "node1") + FAST_SYNC + ovnk_config("auto")
        agent = AgentProcess.start(lab, "node1", config)
        try:
            lab.frr["tor1"].wait_established([str(lab.link("tor1", "node1", "blue").peer_v4)],
                                             timeout=180, vrf="blue")  # fmt: skip
            yield lab, agent
        finally:
            agent.stop()


def owned(lab: Lab, router: str) -> dict[str, set[str]]:
    assert lab.ovn is not None
    return lab.ovn.owned_routes(router, "node1")


def test_each_networks_routes_come_from_its_own_vrf(lab: tuple[Lab, AgentProcess]) -> None:
    lab_, agent = lab
    lab_.announcer("tor1").announce(DEFAULT_ROUTES)
    lab_.announcer("tor1", "blue").announce(BLUE_ROUTES)
    default_hop = str(lab_.link("node1", "tor1").peer_v4)
    blue_hop = str(lab_.link("node1", "tor1", "blue").peer_v4)
    want = {"GR_node1": {p: {default_hop} for p in DEFAULT_ROUTES},
            "GR_cluster_udn_blue_node1": {p: {blue_hop} for p in BLUE_ROUTES}}  # fmt: skip
    try:
        for router, rows in want.items():
            wait_for(lambda r=router, w=rows: owned(lab_, r) == w, timeout=120,  # type: ignore[misc]
                     what=f"{router}'s routes")  # fmt: skip
    except LabTimeout as exc:
        status = agent.status()
        raise AssertionError(f"{exc}\n{ {r: owned(lab_, r) for r in want} }\n"
                             f"imported: {status['imported']}\nrejected: {status['rejected']}\n"
                             f"problems: {status['intent_problems']}") from None  # fmt: skip
    tables = {x["router"]: x["table"] for x in agent.status()["imported"]["routers"]}
    assert tables == {"GR_node1": 254, "GR_cluster_udn_blue_node1": SPEC.vrf_table("blue")}


def test_each_networks_pods_are_announced_in_its_own_vrf(lab: tuple[Lab, AgentProcess]) -> None:
    lab_, _agent = lab

    def at_tor(vrf: str) -> set[str]:
        where = f"vrf {vrf} " if vrf else ""
        data = lab_.frr["tor1"].show(f"show bgp {where}ipv4 unicast json")
        return set(data.get("routes", {}))

    wait_for(lambda: "10.244.1.0/24" in at_tor("") and "10.100.1.0/24" in at_tor("blue"),
             timeout=120, what="each node subnet in its VRF at tor1")  # fmt: skip
    assert "10.100.1.0/24" not in at_tor("")
    assert "10.244.1.0/24" not in at_tor("blue")


#: node1 on one uplink (the default VRF)
LEAK_SPEC = replace(SPEC, links=SPEC.links[:1])


def test_a_target_vrf_fills_the_networks_own_vrf_too() -> None:
    """``target_vrf = "default"`` with blue's VRF in the kernel (ovn-kubernetes makes it for
    the network's management port): blue's gateway router imports from the default VRF's
    table, and blue's VRF imports the default VRF (the host's way out for blue's pods in local
    gateway mode), as ovn-kubernetes' FRRConfiguration has it."""
    with Lab(LEAK_SPEC) as lab:
        ovnk_cluster(lab, "local")
        run(["ip", "link", "add", "blue", "type", "vrf", "table", "1010"], netns=lab.netns("node1"))
        run(["ip", "link", "set", "blue", "up"], netns=lab.netns("node1"))
        agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1") + FAST_SYNC
                                   + ovnk_config("default"))  # fmt: skip
        try:
            lab.announcer("tor1").announce(DEFAULT_ROUTES)
            hop = str(lab.link("node1", "tor1").peer_v4)
            want = {p: {hop} for p in DEFAULT_ROUTES}
            for router in ("GR_node1", "GR_cluster_udn_blue_node1"):
                wait_for(lambda r=router: owned(lab, r) == want, timeout=120,  # type: ignore[misc]
                         what=f"{router}'s routes")  # fmt: skip

            def in_blue() -> str:
                return run(["ip", "route", "show", "vrf", "blue"], netns=lab.netns("node1"))

            wait_for(lambda: all(p in in_blue() for p in DEFAULT_ROUTES), timeout=120,
                     what="the default VRF's routes in blue's kernel VRF")  # fmt: skip
            assert "import vrf default" in lab.frr["node1"].vtysh.running_config()
            # nothing is imported twice: blue's table is no router's
            tables = {x["router"]: x["table"] for x in agent.status()["imported"]["routers"]}
            assert tables == {"GR_node1": 254, "GR_cluster_udn_blue_node1": 254}
        finally:
            agent.stop()
