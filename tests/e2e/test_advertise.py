"""Advertise: OVN intent -> FRR config rendered and applied by the agent -> tor1's RIB."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.kernelwatch import KernelRoutes
from ovn_frr.lab.nbtopo import OpenShiftNode, openshift_node
from ovn_frr.lab.proc import run
from tests.e2e.conftest import FAST_SYNC

# node1's BGP comes from the agent alone (bgp=False: the lab renders nothing for it)
SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1"),),
)
METRICS_PORT = 9476


@pytest.fixture(scope="module")
def adv() -> Iterator[tuple[Lab, OpenShiftNode, AgentProcess]]:
    with Lab(SPEC) as lab:
        topo = openshift_node(lab)
        agent = AgentProcess.start(
            lab,
            "node1",
            neighbors_config(lab, "node1", keepalive=1, hold=3, graceful_restart=True) + FAST_SYNC,
            agent=f'metrics_listen = "127.0.0.1:{METRICS_PORT}"\n',
        )
        try:
            lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
            yield lab, topo, agent
        finally:
            agent.stop()


def tor1(lab: Lab) -> set[str]:
    return set(lab.frr["tor1"].bgp_prefixes())


@contextlib.contextmanager
def redistribute(lab: Lab, router: str, classes: str) -> Iterator[None]:
    """``options:dynamic-routing-redistribute=classes`` on ``router`` for the block."""
    assert lab.ovn is not None
    lab.ovn.nbctl("set", "Logical_Router", router,
                  f"options:dynamic-routing-redistribute={classes}")  # fmt: skip
    try:
        yield
    finally:
        lab.ovn.nbctl("remove", "Logical_Router", router, "options",
                      "dynamic-routing-redistribute")  # fmt: skip


def test_operator_lines_survive_the_agents_applies(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    lab, topo, _agent = adv
    assert lab.ovn is not None
    operator = "ip prefix-list operator-own seq 5 permit 192.0.2.0/24"
    lab.frr["node1"].apply(
        f"{operator}\nrouter bgp 64512\n neighbor 10.99.0.2 remote-as 65099\nexit\n"
    )
    egress = f"{topo.egress_ip}/32"
    with redistribute(lab, topo.gr, "nat"):
        wait_for(lambda: egress in tor1(lab), timeout=30, what="the agent applied a change")
    # the removal applied, and gone from tor1 (the next test starts from nothing announced)
    wait_for(lambda: egress not in tor1(lab), timeout=30, what="the agent applied the removal")
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


def test_the_pod_network_is_announced_by_the_gateway_router_not_the_cluster_router(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    """As OVN 26.03: the cluster router (distributed, no gateway port) is announced by no
    chassis, whatever its options; the gateway router pinned here announces its route to the
    pods (``static``: through its join port)."""
    lab, topo, _agent = adv
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    nb("set", "Logical_Router", "ovn_cluster_router", "options:dynamic-routing=true",
       "options:dynamic-routing-redistribute=connected-as-host")  # fmt: skip
    pods = {f"{ip}/32" for ip in topo.pods.values()}
    try:
        with redistribute(lab, topo.gr, "static"):
            # one apply carries both routers' announcements: once the GR's is there, the
            # cluster router's would be too
            wait_for(lambda: "10.244.0.0/16" in tor1(lab), timeout=30, what="pod network")
            assert not pods & tor1(lab)
    finally:
        nb("remove", "Logical_Router", "ovn_cluster_router", "options", "dynamic-routing")
    wait_for(lambda: "10.244.0.0/16" not in tor1(lab), timeout=30, what="pod network withdrawn")


def test_frr_restart_loses_the_config_and_the_agent_reapplies_it(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    """node1's FRR restarts and forgets ovn-frr's config; the agent applies it again. With
    graceful_restart (and the F bit) tor1 keeps the EgressIP through the restart and takes it
    back on the new session: its kernel route is never deleted."""
    lab, topo, agent = adv
    assert lab.ovn is not None
    egress = f"{topo.egress_ip}/32"
    tor = lab.frr["tor1"]
    with redistribute(lab, topo.gr, "nat"), KernelRoutes(lab.netns("tor1")) as kernel:
        wait_for(lambda: egress in tor1(lab), timeout=30, what="EgressIP at tor1")
        wait_for(lambda: topo.egress_ip in run(["ip", "route", "show"], netns=lab.netns("tor1")),
                 timeout=30, what="EgressIP in tor1's kernel")  # fmt: skip
        # the monitor is listening once it has seen a route of its own come and go
        probe = ["ip", "route", "add", "blackhole", "203.0.113.250/32"]
        run(probe, netns=lab.netns("tor1"))
        kernel.wait("203.0.113.250")
        run(["ip", "route", "del", "blackhole", "203.0.113.250/32"], netns=lab.netns("tor1"))
        before = tor.graceful_restart("10.255.0.1")
        assert (before["mode"], before["f_bit"]) == ("Restart", True), before
        lab.frr["node1"].restart()  # node1's bgpd.conf is empty: ovn-frr's config is gone
        wait_for(lambda: "frr_drift" in agent.output(), timeout=10, what="loss detected")

        def back() -> bool:
            now = tor.graceful_restart("10.255.0.1")
            eor = bool(now["eor"].get("ipv4Unicast"))
            return eor and now["connections"] > before["connections"]

        wait_for(back, timeout=60, what="node1's session back at tor1, with its End-of-RIB")
        assert egress in tor1(lab)
        deleted = [line for _, line in kernel.lines
                   if line.startswith("Deleted") and line.split()[1] == topo.egress_ip]  # fmt: skip
        assert not deleted, f"tor1 lost the EgressIP while node1's FRR restarted: {deleted}"


def test_static_routes_announced_but_never_imported_ones(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    lab, topo, agent = adv
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    cluster = "10.244.0.0/16"  # GR_node1's route to the cluster network (ovn-kubernetes')
    imported = "10.81.0.0/16"
    lab.announcer("tor1").announce([imported])
    wait_for(lambda: "ovn-frr:chassis=node1" in nb("--bare", "--columns=external_ids", "find",
                                                   "Logical_Router_Static_Route",
                                                   f"ip_prefix={imported}"),
             timeout=30, what="tor1's prefix imported into GR_node1")  # fmt: skip
    nb("lr-route-add", topo.gr, "10.70.0.0/16", "10.255.0.2")
    nb("lr-route-add", topo.gr, "0.0.0.0/0", "10.255.0.2")
    nb("set", "Logical_Router", topo.gr, "options:dynamic-routing-redistribute=static")
    try:
        wait_for(lambda: {cluster, "10.70.0.0/16"} <= tor1(lab), timeout=30,
                 what="static routes at tor1")  # fmt: skip
        rendered = lab.frr["node1"].vtysh.running_config()
        assert f"network {imported}" not in rendered  # imported: never announced back
        assert "network 0.0.0.0/0" not in rendered  # a default route: never announced
        # ovn_cluster_router's src-ip policy route is not reachability (and not on GR_node1)
        assert f"network {topo.node_subnet}" not in rendered

        route = nb("--bare", "--columns=_uuid", "find", "Logical_Router_Static_Route",
                   "ip_prefix=10.70.0.0/16")  # fmt: skip
        nb("set", "Logical_Router_Static_Route", route, "options:dynamic-routing-advertise=false")
        wait_for(lambda: "10.70.0.0/16" not in tor1(lab), timeout=30, what="opt-out withdrawn")
        nb("remove", "Logical_Router_Static_Route", route, "options", "dynamic-routing-advertise")
        wait_for(lambda: "10.70.0.0/16" in tor1(lab), timeout=30, what="announced again")
        nb("lr-route-del", topo.gr, "10.70.0.0/16")
        wait_for(lambda: "10.70.0.0/16" not in tor1(lab), timeout=30, what="deleted: withdrawn")
        assert cluster in tor1(lab)
    finally:
        nb("--if-exists", "lr-route-del", topo.gr, "0.0.0.0/0")
        nb("remove", "Logical_Router", topo.gr, "options", "dynamic-routing-redistribute")
        lab.announcer("tor1").withdraw([imported])
    wait_for(lambda: cluster not in tor1(lab), timeout=30, what="static routes withdrawn")
    assert "Traceback" not in agent.output()


def test_local_only_follows_the_binding(adv: tuple[Lab, OpenShiftNode, AgentProcess]) -> None:
    """A router served on every chassis through a gateway port of each (as OpenStack
    Neutron's bgp-lr-main): with local-only, pods bound on node2 are announced by node2's
    agent, not here; a pod that moves to node1 is announced from node1 from then on, and
    withdrawn when it moves away again."""
    lab, topo, _agent = adv
    assert lab.ovn is not None
    nb, sb = lab.ovn.nbctl, lab.ovn.sbctl
    pod0, pod1 = topo.pods
    host0, host1 = (f"{topo.pods[p]}/32" for p in (pod0, pod1))
    sb("--may-exist", "chassis-add", "node1", "geneve", "127.0.0.1")
    sb("--may-exist", "chassis-add", "node2", "geneve", "127.0.0.2")
    # ovn_cluster_router's gateway port toward node1, active there
    gw = "rtogw-node1"
    nb("ls-add", "gw-node1", "--", "lrp-add", "ovn_cluster_router", gw, "0a:58:64:41:00:01",
       "100.65.0.1/24", "--", "lrp-set-gateway-chassis", gw, "node1", "10",
       "--", "lsp-add", "gw-node1", f"{gw}-lsp", "--", "lsp-set-type", f"{gw}-lsp", "router",
       "--", "lsp-set-addresses", f"{gw}-lsp", "router",
       "--", "lsp-set-options", f"{gw}-lsp", f"router-port={gw}")  # fmt: skip
    wait_for(lambda: {pod1, f"cr-{gw}"} <= set(sb("--bare", "--columns=logical_port", "list",
                                                  "Port_Binding").split()),
             timeout=30, what="northd created the bindings")  # fmt: skip
    sb("lsp-bind", f"cr-{gw}", "node1")
    sb("lsp-bind", pod0, "node1")
    sb("lsp-bind", pod1, "node2")
    nb("set", "Logical_Router", "ovn_cluster_router", "options:dynamic-routing=true",
       "options:dynamic-routing-redistribute=connected-as-host",
       "options:dynamic-routing-redistribute-local-only=true")  # fmt: skip
    try:
        wait_for(lambda: host0 in tor1(lab), timeout=30, what="node1's pod at tor1")
        assert host1 not in tor1(lab)
        sb("lsp-unbind", pod1)
        sb("lsp-bind", pod1, "node1")  # pod1 moves here
        wait_for(lambda: host1 in tor1(lab), timeout=30, what="the moved pod announced here")
        sb("lsp-unbind", pod0)
        sb("lsp-bind", pod0, "node2")  # pod0 moves away
        wait_for(lambda: host0 not in tor1(lab), timeout=30, what="the departed pod withdrawn")
        assert host1 in tor1(lab)
    finally:
        nb("remove", "Logical_Router", "ovn_cluster_router", "options",
           "dynamic-routing", "dynamic-routing-redistribute",
           "dynamic-routing-redistribute-local-only")  # fmt: skip
        nb("lrp-del", gw, "--", "ls-del", "gw-node1")
        for pod in (pod0, pod1):
            sb("lsp-unbind", pod)
    wait_for(lambda: not {host0, host1} & tor1(lab), timeout=30, what="pods withdrawn")


def test_a_failing_apply_keeps_the_last_good_config_and_is_retried(
    adv: tuple[Lab, OpenShiftNode, AgentProcess],
) -> None:
    """An operator's BGP instance in VRF blue with another AS makes FRR reject the agent's
    `router bgp 64512 vrf blue`: that instance is held (reported, retried with back-off), the
    rest stays applied and announced, and once the obstacle is gone the retry applies it."""
    lab, topo, agent = adv
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    egress = f"{topo.egress_ip}/32"
    node1 = lab.frr["node1"]
    nb("set", "Logical_Router", topo.gr, "options:dynamic-routing-redistribute=nat")
    wait_for(lambda: egress in tor1(lab), timeout=30, what="EgressIP at tor1")
    node1.apply("router bgp 65099 vrf blue\nexit\n")
    nb("lr-add", "tenant-blue", "--", "set", "Logical_Router", "tenant-blue",
       "options:chassis=node1",  # a router on this chassis (OVN has it nowhere else)
       "options:dynamic-routing=true", "options:dynamic-routing-vrf-name=blue",
       "options:dynamic-routing-redistribute=connected")  # fmt: skip
    nb("lrp-add", "tenant-blue", "lrp-blue", "02:00:00:00:0b:01", "10.77.0.1/24", "--",
       "ls-add", "net-blue", "--", "lsp-add", "net-blue", "blue-lsp", "--",
       "lsp-set-type", "blue-lsp", "router", "--", "lsp-set-addresses", "blue-lsp", "router",
       "--", "lsp-set-options", "blue-lsp", "router-port=lrp-blue")  # fmt: skip
    try:
        wait_for(lambda: "frr_line_rejected" in agent.output(), timeout=30, what="rejected")
        failed = next(x for x in agent.output().splitlines() if "frr_line_rejected" in x)
        assert "line='router bgp 64512 vrf blue'" in failed  # the line FRR rejected
        problems = agent.status()["agent"]["problems"]
        assert any(p.startswith("FRR rejected `router bgp 64512 vrf blue`") for p in problems)
        running = node1.vtysh.running_config()
        assert "router bgp 65099 vrf blue" in running  # the operator's instance untouched
        assert "router bgp 64512 vrf blue" not in running
        assert egress in tor1(lab)  # the rest of the config still announces
        node1.apply("no router bgp 65099 vrf blue\n")
        wait_for(lambda: "router bgp 64512 vrf blue" in node1.vtysh.running_config(),
                 timeout=30, what="the retry applied the VRF")  # fmt: skip
        assert egress in tor1(lab)
    finally:
        nb("--if-exists", "lr-del", "tenant-blue", "--", "--if-exists", "ls-del", "net-blue")
        nb("remove", "Logical_Router", topo.gr, "options", "dynamic-routing-redistribute")
        if "router bgp 65099 vrf blue" in node1.vtysh.running_config():
            node1.apply("no router bgp 65099 vrf blue\n")
    wait_for(lambda: "router bgp 64512 vrf blue" not in node1.vtysh.running_config(),
             timeout=30, what="VRF instance removed with its router")  # fmt: skip


def test_10k_prefixes_in_one_nb_change(adv: tuple[Lab, OpenShiftNode, AgentProcess]) -> None:
    """One NB transaction adds a load balancer with 10k VIPs to the GR; one removes it."""
    lab, topo, _agent = adv
    assert lab.ovn is not None
    vips = [f"10.{100 + i // 65536}.{i // 256 % 256}.{i % 256}" for i in range(10_000)]
    gr = lab.ovn.nbctl("--bare", "--columns=_uuid", "find", "Logical_Router", f"name={topo.gr}")
    lab.ovn.transact([
        {"op": "insert", "table": "Load_Balancer", "uuid-name": "lb",
         "row": {"name": "big", "protocol": "tcp",
                 "vips": ["map", [[f"{v}:80", "10.244.1.5:8080"] for v in vips]]}},
        {"op": "mutate", "table": "Logical_Router", "where": [["_uuid", "==", ["uuid", gr]]],
         "mutations": [["load_balancer", "insert", ["set", [["named-uuid", "lb"]]]],
                       ["options", "insert", ["map", [["dynamic-routing-redistribute", "lb"]]]]]},
    ])  # fmt: skip
    want = {f"{v}/32" for v in vips}
    try:
        wait_for(lambda: want <= tor1(lab), timeout=120, what="10k VIPs at tor1")
    finally:
        lb = lab.ovn.nbctl("--bare", "--columns=_uuid", "find", "Load_Balancer", "name=big")
        lab.ovn.transact([
            {"op": "mutate", "table": "Logical_Router", "where": [["_uuid", "==", ["uuid", gr]]],
             "mutations": [["load_balancer", "delete", ["set", [["uuid", lb]]]],
                           ["options", "delete", ["set", ["dynamic-routing-redistribute"]]]]},
            {"op": "delete", "table": "Load_Balancer", "where": [["_uuid", "==", ["uuid", lb]]]},
        ])  # fmt: skip
    wait_for(lambda: not want & tor1(lab), timeout=120, what="10k VIPs withdrawn")


def metrics(lab: Lab) -> str:
    """GET /metrics inside node1's namespace (where the agent listens)."""
    code = (
        f"import urllib.request; print(urllib.request.urlopen("
        f"'http://127.0.0.1:{METRICS_PORT}/metrics', timeout=10).read().decode())"
    )
    return subprocess.run(["ip", "netns", "exec", lab.netns("node1"), sys.executable, "-c", code],
                          check=True, capture_output=True, text=True).stdout  # fmt: skip


def test_status_trace_and_metrics(adv: tuple[Lab, OpenShiftNode, AgentProcess]) -> None:
    lab, topo, agent = adv
    assert lab.ovn is not None
    egress = f"{topo.egress_ip}/32"
    with redistribute(lab, topo.gr, "nat"):
        wait_for(lambda: egress in tor1(lab), timeout=30, what="EgressIP at tor1")

        def healthy() -> dict[str, Any] | None:
            doc = agent.status()
            return doc if not doc["agent"]["problems"] and doc["bgp"] else None

        status = wait_for(healthy, timeout=10, what="a healthy status")
        assert status["agent"]["chassis"] == "node1"
        assert status["frr"]["last_apply"]["ok"]
        assert [r["name"] for r in status["reconcilers"]] == [
            "ovn",
            "import",
            "advertise",
            "frr",
            "evpn",
            "evpn-answers",
            "vrf",
        ]
        assert all(r["healthy"] for r in status["reconcilers"])
        session = next(x for x in status["bgp"] if x["neighbor"] == "10.255.0.2")
        assert session["state"] == "Established" and session["vrf"] == "default"
        assert {
            "vrf": "default",
            "prefix": egress,
            "source": f"NAT {topo.egress_ip} on {topo.gr}",
        } in status["advertised"]
        story = agent.trace(egress)["story"]
        assert f"OVN NAT {topo.egress_ip} on {topo.gr} -> announce {egress} in VRF default" in (
            story), story  # fmt: skip
        assert f"FRR: `network {egress}` applied" in story
        assert "BGP: sent to 10.255.0.2" in story

        text = metrics(lab)
        assert 'ovnfrr_bgp_sessions_up{vrf="default"} 1.0' in text
        assert "ovnfrr_routes_advertised 2.0" in text  # the EgressIP and the node's SNAT IP
        assert "ovnfrr_frr_apply_seconds_count" in text
        assert "ovnfrr_fpm_messages_total" in text
        assert 'ovnfrr_reconciler_healthy{reconciler="frr"} 1.0' in text
        assert "ovnfrr_frr_drift_lines_total" in text

        # the command line renders the same
        cli = [sys.executable, "-m", "ovn_frr"]
        wide = {**os.environ, "COLUMNS": "200"}
        shown = subprocess.run([*cli, "status", "--socket", agent.socket], check=True,
                               capture_output=True, text=True, env=wide).stdout  # fmt: skip
        assert "healthy" in shown and egress in shown and "10.255.0.2" in shown
        shown = subprocess.run([*cli, "trace", egress, "--socket", agent.socket], check=True,
                               capture_output=True, text=True).stdout  # fmt: skip
        assert "BGP: sent to 10.255.0.2" in shown
        bad = subprocess.run([*cli, "trace", "not-a-prefix", "--socket", agent.socket],
                             capture_output=True, text=True, check=False)  # fmt: skip
        assert bad.returncode == 1 and "is not a prefix" in bad.stdout


def test_connected_and_lb_exactly(adv: tuple[Lab, OpenShiftNode, AgentProcess]) -> None:
    """GR_node1 with connected,lb and a service load balancer: tor1 holds exactly the GR's
    IPv4 port networks and the VIP; deleting the balancer withdraws the VIP."""
    lab, topo, _agent = adv
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    nb("lb-add", "svc-dns", "10.96.0.10:53", "10.244.1.5:5353", "udp")
    nb("lr-lb-add", topo.gr, "svc-dns")
    nb("set", "Logical_Router", topo.gr, "options:dynamic-routing-redistribute=connected,lb")
    want = {"100.64.0.0/16", "10.255.0.0/24", "10.96.0.10/32"}
    try:
        wait_for(lambda: tor1(lab) == want, timeout=30, what="exactly the GR's networks + VIP")
        # (the uplink's IPv6 network goes to IPv6 sessions; this neighbor is IPv4 unicast only)
        assert not lab.frr["tor1"].bgp_prefixes("ipv6")
        nb("lb-del", "svc-dns")
        wait_for(lambda: tor1(lab) == want - {"10.96.0.10/32"}, timeout=30, what="VIP withdrawn")
    finally:
        nb("--if-exists", "lb-del", "svc-dns")
        nb("remove", "Logical_Router", topo.gr, "options", "dynamic-routing-redistribute")
    wait_for(lambda: not tor1(lab), timeout=30, what="all withdrawn")
