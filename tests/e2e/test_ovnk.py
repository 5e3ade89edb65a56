"""OpenShift as it is (issue 29): the NB ovn-kubernetes writes (no ``dynamic-routing*`` option
anywhere), two nodes each running the agent with an ``[ovn_kubernetes]`` section that says what
a RouteAdvertisements would, two BIRD ToRs on each node's one uplink, both gateway modes.

The pods' subnets of every selected network (a Layer3 network's node subnet, a Layer2 one's whole
subnet) and the EgressIPs a node serves reach both ToRs, nothing else; the ToRs' routes land on
each selected network's gateway router with both ToRs as next hops (a Layer2 network's only in
shared gateway mode, as ovn-kubernetes' route import), one when a ToR withdraws; the cluster's
own prefixes coming back from a ToR are not imported; an EgressIP that moves to another node,
or whose last pod goes, is withdrawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ovn_frr.lab import Lab, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.ovnk import OvnkNode, move_egress_ip, ovnk_cluster
from ovn_frr.lab.spec import ovnk_spec
from tests.e2e.conftest import FAST_SYNC

#: each node's one uplink (breth0) on a LAN with two BIRD ToRs: ECMP over them
SPEC = ovnk_spec("bird")
TORS = ("tor1", "tor2")
TOR_PREFIXES = ["203.0.113.0/24", "198.51.100.0/24"]
EIP = "172.20.0.10"


def ovnk_config(node: str, mode: str) -> str:
    """What a RouteAdvertisements selecting every network for PodNetwork, and the default
    network for EgressIP, says for ``node`` (target VRF: the default one)."""
    return (
        f'[ovn_kubernetes]\nnode = "{node}"\ngateway_mode = "{mode}"\n'
        "[[ovn_kubernetes.route_advertisements]]\n"
        'networks = ["default", "blue", "ns1/green"]\nadvertisements = ["PodNetwork"]\n'
        "[[ovn_kubernetes.route_advertisements]]\n"
        'networks = ["default"]\nadvertisements = ["EgressIP"]\n'
    )


@dataclass
class OvnkLab:
    lab: Lab
    mode: str
    nodes: dict[str, OvnkNode]
    agents: dict[str, AgentProcess]

    def rows(self, router: str, node: str) -> dict[str, set[str]]:
        assert self.lab.ovn is not None
        return self.lab.ovn.owned_routes(router, node)

    def expected(self, node: str, eips: set[str]) -> set[str]:
        return {*self.nodes[node].subnets.values(), *(f"{ip}/32" for ip in eips)}

    def at_tors(self, node: str, want: set[str]) -> bool:
        """Both ToRs took exactly ``want`` from ``node``."""
        return all(self.lab.received(tor, node) == want for tor in TORS)

    def hops(self, node: str, tors: tuple[str, ...] = TORS) -> set[str]:
        return {str(self.lab.link(node, tor).peer_v4) for tor in tors}


@pytest.fixture(scope="module", params=["shared", "local"])
def ovnk(request: pytest.FixtureRequest) -> Iterator[OvnkLab]:
    mode: str = request.param
    with Lab(SPEC) as lab:
        nodes = {n.name: n for n in ovnk_cluster(lab, mode)}
        for tor in TORS:
            lab.announcer(tor).announce(TOR_PREFIXES)
        agents: dict[str, AgentProcess] = {}
        try:
            for node in nodes:
                config = neighbors_config(lab, node, 1, 3) + FAST_SYNC + ovnk_config(node, mode)
                agents[node] = AgentProcess.start(lab, node, config)
            yield OvnkLab(lab, mode, nodes, agents)
        finally:
            for agent in agents.values():
                agent.stop()


def test_no_dynamic_routing_option_anywhere(ovnk: OvnkLab) -> None:
    assert ovnk.lab.ovn is not None
    nb = ovnk.lab.ovn.nbctl
    for table in ("Logical_Router", "Logical_Router_Port", "Logical_Switch_Port", "NAT"):
        assert "dynamic-routing" not in nb("list", table), table
    assert "dynamic-routing" not in nb("list", "Logical_Switch")


def test_pod_networks_and_egress_ips_reach_the_tor(ovnk: OvnkLab) -> None:
    want = {"node1": ovnk.expected("node1", {EIP}), "node2": ovnk.expected("node2", set())}
    assert want["node1"] == {"10.244.1.0/24", "10.100.1.0/24", "10.200.0.0/16", f"{EIP}/32"}
    for node, prefixes in want.items():
        wait_for(lambda n=node, p=prefixes: ovnk.at_tors(n, p), timeout=90,  # type: ignore[misc]
                 what=f"{node}'s announcements at both ToRs")  # fmt: skip
    status = ovnk.agents["node1"].status()
    sources = {a["prefix"]: a["source"] for a in status["advertised"]}
    assert sources["10.244.1.0/24"] == "ovn-kubernetes PodNetwork default (switch node1)"
    assert sources[f"{EIP}/32"] == f"ovn-kubernetes EgressIP {EIP} (NAT on GR_node1)"
    assert status["intent_problems"] == []


def test_the_tors_routes_land_on_the_gateway_routers(ovnk: OvnkLab) -> None:
    lab = ovnk.lab
    routers = ["GR_node1", "GR_cluster_udn_blue_node1", "GR_ns1_green_node1"]
    importing = routers if ovnk.mode == "shared" else routers[:2]
    want = {p: ovnk.hops("node1") for p in TOR_PREFIXES}  # ECMP over both ToRs
    assert len(ovnk.hops("node1")) == 2
    for router in importing:
        wait_for(lambda r=router: ovnk.rows(r, "node1") == want, timeout=60,  # type: ignore[misc]
                 what=f"the ToR's routes on {router}")  # fmt: skip
    for router in set(routers) - set(importing):  # a Layer2 network in local gateway mode
        assert ovnk.rows(router, "node1") == {}
    # the cluster's own prefixes from the ToR (another node's pod subnet, as a node whose
    # BGP takes back its AS, like frr-k8s' allowas-in, would have them; a subnet of no node
    # yet): never imported, as ovn-kubernetes' route import skips them
    own = ["10.244.2.0/24", "10.244.9.0/24", "10.100.9.0/24"]
    lab.announcer("tor2").announce([*TOR_PREFIXES, *own])
    try:

        def rejected() -> dict[str, str]:
            doc = ovnk.agents["node1"].status()["rejected"]
            return {r["prefix"]: r["detail"] for r in doc if r["router"] == "GR_node1"}

        wait_for(lambda: set(own) <= set(rejected()), timeout=60, what="the cluster's own "
                 "prefixes rejected")  # fmt: skip
        why = rejected()
        assert "ovn-kubernetes network default (route on GR_node1)" in why["10.244.9.0/24"]
        for router in importing:
            assert ovnk.rows(router, "node1") == want, router
    finally:
        lab.announcer("tor2").announce(TOR_PREFIXES)
    # ECMP shrinks to one next hop when a ToR withdraws, and grows back
    lab.announcer("tor2").withdraw(TOR_PREFIXES)
    try:
        one = {p: ovnk.hops("node1", ("tor1",)) for p in TOR_PREFIXES}
        for router in importing:
            wait_for(lambda r=router: ovnk.rows(r, "node1") == one, timeout=60,  # type: ignore[misc]
                     what=f"one next hop on {router}")  # fmt: skip
    finally:
        lab.announcer("tor2").announce(TOR_PREFIXES)
    for router in importing:
        wait_for(lambda r=router: ovnk.rows(r, "node1") == want, timeout=60,  # type: ignore[misc]
                 what=f"both next hops on {router} again")  # fmt: skip


def test_an_egress_ip_that_moves_or_loses_its_pod_is_withdrawn(ovnk: OvnkLab) -> None:
    lab = ovnk.lab
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    nat = nb("--bare", "--columns=_uuid", "find", "NAT", f"external_ip={EIP}").split()[0]
    ids = nb("--bare", "--columns=external_ids", "list", "NAT", nat)
    assert "k8s.ovn.org/owner-type=EgressIP" in ids
    # moved to node2: ovn-kubernetes deletes the SNAT on GR_node1 and writes one on GR_node2
    move_egress_ip(lab, EIP, ovnk.nodes["node2"])
    wait_for(lambda: ovnk.at_tors("node1", ovnk.expected("node1", set()))
             and ovnk.at_tors("node2", ovnk.expected("node2", {EIP})),
             timeout=60, what="the EgressIP from node2 only")  # fmt: skip
    # its last pod goes: no NB row says it is served anywhere, it leaves the ToR
    move_egress_ip(lab, EIP, None)
    wait_for(lambda: ovnk.at_tors("node2", ovnk.expected("node2", set())),
             timeout=60, what="the EgressIP withdrawn")  # fmt: skip
    # and comes back on node1
    move_egress_ip(lab, EIP, ovnk.nodes["node1"])
    wait_for(lambda: ovnk.at_tors("node1", ovnk.expected("node1", {EIP})),
             timeout=60, what="the EgressIP back on node1")  # fmt: skip
