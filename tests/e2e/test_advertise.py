"""Advertise: OVN intent -> FRR config rendered and applied by the agent -> tor1's RIB."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess
from ovn_frr.lab.nbtopo import OpenShiftNode, openshift_node
from tests.e2e.conftest import FAST_SYNC

# node1's BGP comes from the agent alone (bgp=False: the lab renders nothing for it)
SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1"),),
)
NEIGHBOR = '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\nkeepalive = 1\nhold = 3\n'


@pytest.fixture(scope="module")
def adv() -> Iterator[tuple[Lab, OpenShiftNode, AgentProcess]]:
    with Lab(SPEC) as lab:
        topo = openshift_node(lab)
        agent = AgentProcess.start(lab, "node1", NEIGHBOR + FAST_SYNC)
        try:
            lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
            yield lab, topo, agent
        finally:
            agent.stop()


def tor1(lab: Lab) -> set[str]:
    return set(lab.frr["tor1"].bgp_prefixes())


def test_operator_lines_survive_the_agents_applies(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    lab, topo, agent = adv
    assert lab.ovn is not None
    operator = "ip prefix-list operator-own seq 5 permit 192.0.2.0/24"
    lab.frr["node1"].apply(
        f"{operator}\nrouter bgp 64512\n neighbor 10.99.0.2 remote-as 65099\nexit\n"
    )
    applied = agent.output().count("frr_config_applied")
    lab.ovn.nbctl("set", "Logical_Router", topo.gr, "options:dynamic-routing-redistribute=nat")
    try:
        wait_for(lambda: agent.output().count("frr_config_applied") > applied, timeout=30,
                 what="the agent applied a change")  # fmt: skip
    finally:
        lab.ovn.nbctl(
            "remove", "Logical_Router", topo.gr, "options", "dynamic-routing-redistribute"
        )
    wait_for(lambda: agent.output().count("frr_config_applied") > applied + 1, timeout=30,
             what="the agent applied the removal")  # fmt: skip
    running = lab.frr["node1"].vtysh.running_config()
    assert operator in running
    assert "neighbor 10.99.0.2 remote-as 65099" in running


def test_nat_external_ips_announced_and_opt_out_withdraws(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    lab, topo, agent = adv
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    egress = f"{topo.egress_ip}/32"
    node_ip = f"{lab.link('node1', 'tor1').v4.ip}/32"  # the SNAT of the node's pods
    assert egress not in tor1(lab)  # nothing is announced before the intent says so
    nb("set", "Logical_Router", topo.gr, "options:dynamic-routing-redistribute=nat")
    wait_for(lambda: {egress, node_ip} <= tor1(lab), timeout=30, what="NAT IPs at tor1")

    nat = nb("--bare", "--columns=_uuid", "find", "NAT", f"external_ip={topo.egress_ip}")
    nb("set", "NAT", nat, "options:dynamic-routing-advertise=false")
    try:
        wait_for(lambda: egress not in tor1(lab), timeout=30, what="opted-out EgressIP withdrawn")
        assert node_ip in tor1(lab)
    finally:
        nb("remove", "NAT", nat, "options", "dynamic-routing-advertise")

    nb("remove", "Logical_Router", topo.gr, "options", "dynamic-routing-redistribute")
    wait_for(lambda: not tor1(lab) & {egress, node_ip}, timeout=30, what="all withdrawn")
    assert "frr_config_applied" in agent.output()


def test_connected_as_host_announces_the_pods(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    lab, topo, _agent = adv
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    # the pods sit behind ovn_cluster_router's port to the node switch
    nb("set", "Logical_Router", "ovn_cluster_router", "options:dynamic-routing=true",
       "options:dynamic-routing-redistribute=connected-as-host")  # fmt: skip
    pods = {f"{ip}/32" for ip in topo.pods.values()}
    try:
        wait_for(lambda: pods <= tor1(lab), timeout=30, what="pod /32s at tor1")
    finally:
        nb("remove", "Logical_Router", "ovn_cluster_router", "options", "dynamic-routing")
    wait_for(lambda: not pods & tor1(lab), timeout=30, what="pod /32s withdrawn")


def test_frr_restart_loses_the_config_and_the_agent_reapplies_it(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    lab, topo, agent = adv
    assert lab.ovn is not None
    egress = f"{topo.egress_ip}/32"
    lab.ovn.nbctl("set", "Logical_Router", topo.gr, "options:dynamic-routing-redistribute=nat")
    try:
        wait_for(lambda: egress in tor1(lab), timeout=30, what="EgressIP at tor1")
        lab.frr["node1"].restart()  # node1's bgpd.conf is empty: ovn-frr's config is gone
        wait_for(lambda: "frr_config_lost" in agent.output(), timeout=10, what="loss detected")
        lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
        wait_for(lambda: egress in tor1(lab), timeout=30, what="EgressIP back at tor1")
    finally:
        lab.ovn.nbctl(
            "remove", "Logical_Router", topo.gr, "options", "dynamic-routing-redistribute"
        )
