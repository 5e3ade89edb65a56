"""Import: routes learned by FRR reach the mapped OVN router (real FRR, OVN, agent process)."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from typing import Any

from ovn_frr.fpm import encode_frame
from ovn_frr.lab import wait_for
from ovn_frr.lab.nbwatch import RouteMonitor
from tests.e2e.conftest import ImportLab
from tests.unit.nlbuild import route

TOR1 = ("10.255.0.2", "rtoe-GR_node1")
TOR2 = ("10.255.1.2", "rtoe2-GR_node1")


def test_announce_and_withdraw(imp: ImportLab) -> None:
    p = "198.51.100.0/24"
    imp.lab.announcer("tor1").announce([p])
    wait_for(lambda: imp.routes().get(p) == {TOR1}, timeout=20, what=f"{p} in NB")
    imp.lab.announcer("tor1").withdraw([p])
    wait_for(lambda: p not in imp.routes(), timeout=20, what=f"{p} gone from NB")


def test_ecmp_shrinks_without_a_gap_and_grows_back(imp: ImportLab) -> None:
    p = "203.0.113.0/24"
    assert imp.lab.ovn is not None
    with RouteMonitor(imp.lab.ovn.nb) as mon:
        for tor in ("tor1", "tor2"):
            imp.lab.announcer(tor).announce([p])
        wait_for(lambda: imp.routes().get(p) == {TOR1, TOR2}, timeout=20, what="ECMP rows")
        mon.arm(p, 2)
        imp.lab.cut("node1", "tor2")
        try:
            # hold time 3 s: the tor2 session drops, its path leaves zebra and OVN
            wait_for(lambda: imp.routes().get(p) == {TOR1}, timeout=20, what="one row left")
        finally:
            imp.lab.restore("node1", "tor2")
        wait_for(lambda: imp.routes().get(p) == {TOR1, TOR2}, timeout=30, what="ECMP restored")
        assert mon.min_after_armed[p] >= 1, "the prefix had no row at some point"
        for tor in ("tor1", "tor2"):
            imp.lab.announcer(tor).withdraw([p])
    wait_for(lambda: p not in imp.routes(), timeout=20, what="withdrawn")


def test_ovn_trace_leaves_toward_the_learned_next_hop(imp: ImportLab) -> None:
    p = "198.51.100.128/25"
    imp.lab.announcer("tor1").announce([p])
    wait_for(lambda: imp.routes().get(p) == {TOR1}, timeout=20, what=f"{p} in NB")
    assert imp.lab.ovn is not None
    pod, pod_ip = next(iter(imp.topo.pods.items()))

    def trace() -> str:
        assert imp.lab.ovn is not None
        flow = (
            f'inport == "{pod}" && eth.src == 0a:58:0a:f4:01:05 && eth.dst == 0a:58:0a:f4:01:01'
            f" && ip4.src == {pod_ip} && ip4.dst == 198.51.100.200 && ip.ttl == 64"
        )
        return subprocess.run(
            ["ovn-trace", f"--db={imp.lab.ovn.sb}", "--summary", "node1", flow],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip

    def routed() -> str | None:
        out = trace()
        return out if "reg0 = 10.255.0.2" in out else None

    # northd turns the NB row into logical flows asynchronously
    out = wait_for(routed, timeout=20, what="trace through the imported route")
    assert 'outport = "rtoe-GR_node1"' in out
    assert '/* output to "rtoe-GR_node1", type "l3gateway" */' in out
    imp.lab.announcer("tor1").withdraw([p])
    wait_for(lambda: p not in imp.routes(), timeout=20, what=f"{p} gone from NB")


def test_hijack_guard(imp: ImportLab) -> None:
    own_subnet = imp.topo.node_subnet  # a port network of ovn_cluster_router
    pod = next(iter(imp.topo.pods.values())) + "/32"
    nat = imp.topo.egress_ip + "/32"
    control = "198.18.255.0/24"
    imp.lab.announcer("tor1").announce([own_subnet, pod, nat, control])
    wait_for(lambda: control in imp.routes(), timeout=20, what="control prefix imported")

    def rejections() -> dict[str, tuple[str, str]] | None:
        got = {r["prefix"]: (r["reason"], r["detail"]) for r in imp.agent.status()["rejected"]}
        return got if {own_subnet, pod, nat} <= set(got) else None

    got = wait_for(rejections, timeout=10, what="rejections reported")
    routes = imp.routes()
    assert not {own_subnet, pod, nat} & set(routes)
    # the pod is bound on no chassis here: its switch is not monitored on node1, the node
    # subnet of the cluster router (reached from GR_node1 through the join switch) is
    assert got[pod] == ("hijack", f"overlaps {own_subnet} (port rtos-node1) owned by OVN")
    assert got[nat][1].startswith(f"overlaps {nat} (NAT {imp.topo.egress_ip}")
    # logged per router and reason with a count, not one line per prefix
    logged = [x for x in imp.agent.output().splitlines() if "routes_rejected" in x]
    counts = [int(x.split("count=")[1].split()[0]) for x in logged
              if "router=GR_node1 reason=hijack " in x]  # fmt: skip
    assert counts and max(counts) >= 3 and len(logged) < 10, logged

    # the same, as `ovn-frr status` and `ovn-frr trace` see it
    status = imp.agent.status()
    rejected = {(r["prefix"], r["reason"]) for r in status["rejected"]}
    assert {(own_subnet, "hijack"), (pod, "hijack"), (nat, "hijack")} <= rejected
    assert status["rejected_by_reason"]["hijack"] >= 3
    assert {"router": "GR_node1", "vrf": "default", "table": 254, "rows": 1} in status["imported"][
        "routers"
    ]
    default = next(v for v in status["vrfs"] if v["vrf"] == "default")
    assert (default["tables"], default["routers"], default["imported"]) == ([254], ["GR_node1"], 1)
    assert default["sessions"] >= 2 and default["l3vni"] is None
    story = imp.agent.trace(pod)["story"]
    assert any("policy: not imported into GR_node1: hijack" in line for line in story), story
    story = imp.agent.trace(control)["story"]
    assert any(line.startswith("BGP: paths from 10.255.0.2") for line in story), story
    assert any("zebra -> FPM: table 254 bgp unicast via 10.255.0.2" in x for x in story), story
    assert any("policy: import into GR_node1 via 10.255.0.2 port rtoe-GR_node1" in x
               for x in story), story  # fmt: skip
    assert any(x.startswith("OVN: row ") and "on GR_node1" in x for x in story), story
    imp.lab.announcer("tor1").withdraw([own_subnet, pod, nat, control])
    wait_for(lambda: control not in imp.routes(), timeout=20, what=f"{control} gone from NB")


def test_ipv6_and_dual_stack(imp: ImportLab) -> None:
    v4, v6 = "198.51.100.64/26", "2001:db8:77::/48"
    imp.lab.announcer("tor1").announce([v4, v6])
    wait_for(lambda: v4 in imp.routes() and v6 in imp.routes(), timeout=20, what="both")
    ((nexthop, port),) = imp.routes()[v6]
    # BGP over IPv6 gives zebra the peer's link-local address; the GR port carries
    # dynamic-routing-port-name=to-tor1, which is how it is mapped to the port
    assert ipaddress.ip_address(nexthop).is_link_local
    assert port == "rtoe-GR_node1"
    imp.lab.announcer("tor1").withdraw([v4, v6])
    wait_for(lambda: v4 not in imp.routes() and v6 not in imp.routes(), timeout=20, what="gone")


def test_fpm_is_taken_from_zebra_only(imp: ImportLab) -> None:
    """Any local process may connect to the FPM port (here one of uid 65534 in node1's
    namespace, like a host-network pod): it is refused, zebra's session and rows stay."""
    p = "198.51.100.0/24"
    imp.lab.announcer("tor1").announce([p])
    wait_for(lambda: imp.routes().get(p) == {TOR1}, timeout=20, what=f"{p} in NB")
    before = imp.agent.status()["fpm"]
    forged = encode_frame(route("203.0.113.0/24", gateways=("10.255.0.2",))).hex()
    code = ("import os, socket, sys; os.setgid(65534); os.setuid(65534); "
            "s = socket.create_connection(('127.0.0.1', 2620)); "
            f"s.sendall(bytes.fromhex('{forged}')); s.settimeout(10); "
            "sys.exit(0 if s.recv(1) == b'' else 1)")  # fmt: skip
    intruder = subprocess.run(["ip", "netns", "exec", imp.lab.netns("node1"), sys.executable,
                               "-c", code], check=False, capture_output=True,
                              timeout=30)  # fmt: skip
    assert intruder.returncode == 0, intruder.stderr  # the agent closed on it at once

    def refused() -> dict[str, Any] | None:
        doc = imp.agent.status()
        return doc if doc["fpm"]["refused"] else None

    status = wait_for(refused, timeout=10, what="the refusal counted")
    fpm = status["fpm"]
    assert fpm["connected"] and fpm["connections"] == before["connections"]
    assert "its socket is not zebra's" in fpm["last_refused"]
    # the lab's zebra sweeps what it re-read from the kernel (docs/frr.md): read from zebra
    assert fpm["zebra_sweep"] == "--graceful_restart=20" and fpm["zebra_pid"]
    assert "zebra_without_graceful_restart" not in imp.agent.output()
    assert any("refused, not from zebra" in x for x in status["agent"]["problems"])
    assert "fpm_refused" in imp.agent.output()
    imp.lab.announcer("tor1").withdraw([p])  # zebra's stream goes on as before
    wait_for(lambda: p not in imp.routes(), timeout=20, what=f"{p} gone from NB")
    assert "203.0.113.0/24" not in imp.routes()
