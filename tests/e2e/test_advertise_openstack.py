"""Advertise with an OpenStack-shaped NB (Neutron router with a distributed gateway port)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.nbtopo import OpenStackRouter, openstack_router
from tests.e2e.conftest import FAST_SYNC

SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1"),),
)


@pytest.fixture(scope="module")
def osp() -> Iterator[tuple[Lab, OpenStackRouter]]:
    with Lab(SPEC) as lab:
        assert lab.ovn is not None
        topo = openstack_router(lab)
        sb = lab.ovn.sbctl
        for i, chassis in enumerate(("node1", "node2"), start=1):
            sb("--may-exist", "chassis-add", chassis, "geneve", f"127.0.0.{i}")
        cr = f"cr-{topo.gateway_port}"
        wait_for(lambda: cr in sb("--bare", "--columns=logical_port", "list", "Port_Binding"),
                 timeout=30, what="northd created the chassisredirect binding")  # fmt: skip
        # what ovn-controllers would claim: the gateway and vm0 on node1, vm1 and vm2 on node2
        for port, chassis in ((cr, "node1"), ("vm0-port", "node1"), ("vm1-port", "node2"),
                              ("vm2-port", "node2")):  # fmt: skip
            sb("lsp-bind", port, chassis)
        agent = AgentProcess.start(
            lab, "node1", neighbors_config(lab, "node1", keepalive=1, hold=3) + FAST_SYNC
        )
        try:
            lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
            yield lab, topo
        finally:
            agent.stop()


def tor1(lab: Lab) -> set[str]:
    return set(lab.frr["tor1"].bgp_prefixes())


def test_each_class_from_the_right_chassis(osp: tuple[Lab, OpenStackRouter]) -> None:
    lab, topo = osp
    assert lab.ovn is not None
    nb, sb = lab.ovn.nbctl, lab.ovn.sbctl
    fip = {port: f"{ip}/32" for ip, (port, _d) in topo.fips.items()}
    # as OVN 26.03: the router is announced where its gateway is (node1); connected-as-host
    # gives the addresses behind its ports (no subnets), local-only those local here
    here = {
        f"{topo.snat_ip}/32",  # the gateway port's own address (and the SNAT to it)
        f"{topo.tenant_subnet.rsplit('.', 1)[0]}.1/32",  # the tenant port's own address
        f"{topo.vms['vm0-port']}/32",  # vm0, bound here
        fip["vm0-port"],  # distributed FIP of a VM bound here
        fip["vm2-port"],  # centralized FIP: stands for the gateway, here
        f"{topo.lb_fip}/32",  # centralized FIP on the LB VIP
        f"{topo.lb_vip}/32",  # lb: Octavia VIP on the router (its switch's: never)
    }
    elsewhere = {fip["vm1-port"], f"{topo.vms['vm1-port']}/32", f"{topo.vms['vm2-port']}/32"}
    nb("set", "Logical_Router", topo.router, "options:dynamic-routing=true",
       "options:dynamic-routing-redistribute=connected-as-host,nat,lb",
       "options:dynamic-routing-redistribute-local-only=true")  # fmt: skip
    wait_for(lambda: here <= tor1(lab), timeout=30, what="node1's share at tor1")
    assert tor1(lab) == here  # exactly: nothing of the VMs on node2
    assert not elsewhere & tor1(lab)

    # the gateway fails over to node2: node1 serves the router no more, announces none of it
    sb("lsp-unbind", f"cr-{topo.gateway_port}")
    sb("lsp-bind", f"cr-{topo.gateway_port}", "node2")
    wait_for(lambda: not tor1(lab) & here, timeout=30, what="the router's share withdrawn")

    sb("lsp-unbind", f"cr-{topo.gateway_port}")
    sb("lsp-bind", f"cr-{topo.gateway_port}", "node1")
    wait_for(lambda: here <= tor1(lab), timeout=30, what="gateway's share back")

    # plain connected: the networks of the ports, from the gateway's chassis
    nb("set", "Logical_Router", topo.router, "options:dynamic-routing-redistribute=connected,nat")
    nets = {topo.tenant_subnet, "172.24.4.0/24"}
    wait_for(lambda: nets <= tor1(lab), timeout=30, what="the networks at tor1")
    nb("set", "Logical_Router", topo.router,
       "options:dynamic-routing-redistribute=connected-as-host,nat,lb")  # fmt: skip
    wait_for(lambda: tor1(lab) == here, timeout=30, what="host routes again")

    # deleting objects withdraws them
    nb("lr-nat-del", topo.router, "dnat_and_snat", topo.lb_fip)
    nb("lb-del", "lb-0d5e7a2b")
    wait_for(lambda: not {f"{topo.lb_fip}/32", f"{topo.lb_vip}/32"} & tor1(lab), timeout=30,
             what="LB and its FIP withdrawn")  # fmt: skip
    nb("remove", "Logical_Router", topo.router, "options", "dynamic-routing")
    wait_for(lambda: not here & tor1(lab), timeout=30, what="all withdrawn")
