"""docs/openshift.md's migration, step by step: a node served by frr-k8s' FRR config and
ovn-kubernetes' route import moves to ovn-frr, with no moment where the ToR lacks the node's
announcements or the gateway router lacks a route to the ToR's prefixes (sampled every ~20 ms
throughout).

Before: FRR has the lines frr-k8s would render for the RouteAdvertisements (a neighbor, the pod
subnet and the EgressIP as ``network`` lines), and GR_node1 has ovn-kubernetes' route-import
rows (``k8s.ovn.org/owner-controller=RouteImport``). Steps: start ovn-frr with the node config;
once its status shows its own rows and announcements, ovn-kubernetes' rows are deleted (what
its route import does when it stops).
"""

from __future__ import annotations

import threading
import time

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.ovnk import ovnk_cluster
from tests.e2e.conftest import FAST_SYNC

SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001, daemon="bird"),),
    links=(LinkSpec("node1", "tor1"),),
)
TOR_PREFIXES = ["203.0.113.0/24", "198.51.100.0/24"]
NODE_PREFIXES = {"10.244.1.0/24", "172.20.0.10/32"}
CONFIG = """
[ovn_kubernetes]
node = "node1"
[[ovn_kubernetes.route_advertisements]]
networks = ["default"]
advertisements = ["PodNetwork", "EgressIP"]
"""
ROUTE_IMPORT = '"k8s.ovn.org/owner-controller"=RouteImport'


class Sampler(threading.Thread):
    """Counts the samples where the ToR lacks one of the node's prefixes or GR_node1 lacks a
    route (any row) to one of the ToR's."""

    def __init__(self, lab: Lab) -> None:
        super().__init__(daemon=True)
        self.lab = lab
        self.samples = 0
        self.gaps: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        assert self.lab.ovn is not None
        while not self.stop.is_set():
            routes = self.lab.ovn.nbctl("lr-route-list", "GR_node1")
            missing = [p for p in TOR_PREFIXES if p not in routes]
            missing += sorted(NODE_PREFIXES - self.lab.received("tor1", "node1"))
            self.samples += 1
            if missing:
                self.gaps.append(f"{time.monotonic():.3f} {missing}")
            time.sleep(0.02)


def test_from_frr_k8s_and_route_import_to_ovn_frr_without_a_gap() -> None:
    with Lab(SPEC) as lab:
        assert lab.ovn is not None
        nb = lab.ovn.nbctl
        ovnk_cluster(lab, "shared")
        lab.announcer("tor1").announce(TOR_PREFIXES)
        tor = str(lab.link("node1", "tor1").peer_v4)
        # before: frr-k8s' lines and ovn-kubernetes' route-import rows
        lab.frr["node1"].apply(
            "router bgp 64512\n no bgp ebgp-requires-policy\n no bgp default ipv4-unicast\n"
            " no bgp network import-check\n"
            f" neighbor {tor} remote-as 65001\n address-family ipv4 unicast\n"
            + "".join(f"  network {p}\n" for p in sorted(NODE_PREFIXES))
            + f"  neighbor {tor} activate\n exit-address-family\nexit\n"
        )
        for p in TOR_PREFIXES:
            nb("--", "--id=@r", "create", "Logical_Router_Static_Route", f"ip_prefix={p}",
               f"nexthop={tor}", f"external_ids:{ROUTE_IMPORT}", "--", "add",
               "Logical_Router", "GR_node1", "static_routes", "@r")  # fmt: skip
        wait_for(lambda: lab.received("tor1", "node1") == NODE_PREFIXES, timeout=60,
                 what="frr-k8s' announcements at the ToR")  # fmt: skip
        sampler = Sampler(lab)
        sampler.start()
        agent = None
        try:
            # step 1: ovn-frr with the node config; its status shows its rows and announcements
            config = neighbors_config(lab, "node1", 1, 3) + FAST_SYNC + CONFIG
            agent = AgentProcess.start(lab, "node1", config)

            def took_over() -> bool:
                assert agent is not None
                status = agent.status()
                rows = {r["router"]: r["rows"] for r in status["imported"]["routers"]}
                announced = {a["prefix"] for a in status["advertised"]}
                return rows.get("GR_node1") == len(TOR_PREFIXES) and announced == NODE_PREFIXES

            wait_for(took_over, timeout=60, what="ovn-frr's rows and announcements")
            # FRR has ovn-frr's network lines (frr-k8s' lines, taken over with its route map)
            wait_for(lambda: all(f"network {p} route-map ovnfrr-origin" in
                                 lab.frr["node1"].vtysh.running_config()
                                 for p in NODE_PREFIXES),
                     timeout=30, what="ovn-frr's network lines in FRR")  # fmt: skip
            # step 2: ovn-kubernetes' route import off: its rows go
            for uuid in nb("--bare", "--columns=_uuid", "find", "Logical_Router_Static_Route",
                           f"external_ids:{ROUTE_IMPORT}").split():  # fmt: skip
                nb("remove", "Logical_Router", "GR_node1", "static_routes", uuid)
            # sampled for a while after they went
            after = sampler.samples + 100
            wait_for(lambda: sampler.samples >= after, timeout=60, what="100 samples after")
        finally:
            sampler.stop.set()
            sampler.join()
            if agent is not None:
                agent.stop()
        assert sampler.samples > 50
        assert sampler.gaps == []
        owned = {p for p, _hop, _port in lab.ovn.owned_rows("GR_node1", "node1")}
        assert owned == set(TOR_PREFIXES)
        assert "RouteImport" not in nb("list", "Logical_Router_Static_Route")
