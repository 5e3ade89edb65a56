"""Beside OVN's own dynamic routing (OVN >= 25.03, docs/native-routing.md): with OVN's side
active for a gateway router and a distributed gateway port, ovn-frr and OVN never fight: no
route imported twice, no prefix originated twice, no VRF device, no protocol-84 route touched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ovn_frr.lab import Lab, demo_spec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.nbtopo import OpenShiftNode, OpenStackRouter, openshift_node, openstack_router
from ovn_frr.lab.proc import run
from ovn_frr.versions import detect

VERSIONS = detect()
pytestmark = pytest.mark.skipif(
    not VERSIONS.ovn_native_dynamic_routing,
    reason=f"OVN {VERSIONS.ovn} does not act on the dynamic-routing options (OVN's own dynamic "
    "routing arrived in 25.03): nothing to live beside",
)
PREFIX = "198.51.100.0/24"


@dataclass
class Env:
    lab: Lab
    gr: OpenShiftNode
    dgp: OpenStackRouter
    agent: AgentProcess

    def proto84(self) -> set[str]:
        """OVN's routes in node1's kernel (every table)."""
        out = run(["ip", "-4", "route", "show", "table", "all", "proto", "84"],
                  netns=self.lab.netns("node1"))  # fmt: skip
        return {line.strip() for line in out.splitlines() if line.strip()}

    def table(self, router: str) -> int:
        """The kernel table OVN exchanges ``router``'s routes in: its datapath's tunnel key."""
        assert self.lab.ovn is not None
        key = self.lab.ovn.sbctl("--bare", "--columns=tunnel_key", "find", "Datapath_Binding",
                                 f"external_ids:name={router}")  # fmt: skip
        return int(key)

    def imported(self) -> dict[str, set[str]]:
        assert self.lab.ovn is not None
        return self.lab.ovn.owned_routes(self.gr.gr, "node1")

    def learned(self) -> str:
        assert self.lab.ovn is not None
        return self.lab.ovn.sbctl("--columns=ip_prefix,nexthop", "list", "Learned_Route")


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    with Lab(demo_spec()) as lab:
        assert lab.ovn is not None
        gr = openshift_node(lab)
        dgp = openstack_router(lab)
        for router in (gr.gr, dgp.router):
            lab.ovn.nbctl("set", "Logical_Router", router, "options:dynamic-routing=true",
                          "options:dynamic-routing-redistribute=connected,nat")  # fmt: skip
        agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1"))
        try:
            lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
            yield Env(lab, gr, dgp, agent)
        finally:
            agent.stop()


def test_ovn_and_ovn_frr_never_fight(env: Env) -> None:
    lab = env.lab
    # OVN's own side is active for both routers: its blackholes are in their tables
    tables = {env.table(env.gr.gr), env.table(env.dgp.router)}

    def active() -> set[str] | None:
        routes = env.proto84()
        seen = {int(r.split(" table ")[1].split()[0]) for r in routes if " table " in r}
        return routes if tables <= seen else None

    before = wait_for(active, timeout=60, what="OVN's protocol-84 routes in both tables")
    assert any(env.dgp.snat_ip in r for r in before)  # the DGP's, on its resident chassis

    # imported once: ovn-frr's row, no Learned_Route
    lab.announcer("tor1").announce([PREFIX])
    wait_for(lambda: PREFIX in env.imported(), timeout=30,
             what="the ToR's prefix imported by ovn-frr")  # fmt: skip
    assert env.learned() == ""

    # originated once: each prefix node1 announces has one path at tor1, and FRR is not
    # linked to OVN's tables
    def announced() -> dict[str, list[object]] | None:
        routes = lab.frr["tor1"].show("show bgp ipv4 unicast json")["routes"]
        mine = {p: paths for p, paths in routes.items()
                if any(x.get("peerId") == "10.255.0.1" for x in paths)}  # fmt: skip
        wanted = {f"{env.dgp.snat_ip}/32", f"{env.gr.egress_ip}/32"}
        return mine if wanted <= mine.keys() else None

    mine = wait_for(announced, timeout=30, what="both routers' prefixes at tor1")
    assert all(len(paths) == 1 for paths in mine.values()), json.dumps(mine)[:2000]
    running = lab.frr["node1"].vtysh.running_config()
    for linked in ("redistribute kernel", "redistribute table", "import-table"):
        assert linked not in running

    # no VRF device: ovn-frr creates none (and OVN was not asked to)
    links = json.loads(run(["ip", "-d", "-j", "link", "show"], netns=lab.netns("node1")))
    assert [x["ifname"] for x in links if x.get("linkinfo", {}).get("info_kind") == "vrf"] == []

    # protocol-84 routes untouched across ovn-frr's import, withdrawal and restart
    lab.announcer("tor1").withdraw([PREFIX])
    wait_for(lambda: PREFIX not in env.imported(), timeout=30,
             what="the withdrawal imported")  # fmt: skip
    env.agent.stop()
    env.agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1"))
    wait_for(lambda: env.agent.status()["fpm"]["synced"], timeout=60, what="agent synced")
    assert env.proto84() == before
    assert env.learned() == ""
