"""The demo: routes flowing both ways between OVN and two ToRs, through FRR and ovn-frr.

A lab with OVN central, node1 (FRR + OVS + ovn-controller, and the ovn-frr agent as a real
process) and tor1/tor2 with BFD; an OpenShift-shaped NB whose intent announces the node's
EgressIP/SNAT IPs and the cluster's pod network (``nat,static`` on GR_node1: its NATs and its
route to the pods through the join switch); the ToRs announce prefixes (one of them from
both: ECMP) that the agent imports into GR_node1. ``snapshot()`` reads both directions;
``converged()`` says whether everything expected arrived.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ovn_frr.lab import evpn
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.lab import DEFAULT_BASE, Lab
from ovn_frr.lab.nbtopo import OpenShiftNode, openshift_node
from ovn_frr.lab.ovnk import OvnkNode, ovnk_cluster
from ovn_frr.lab.spec import LinkSpec, PeerSpec, demo_spec, ovnk_spec

TORS = ("tor1", "tor2")
#: what each ToR announces; 203.0.113.0/24 from both (two rows in OVN: ECMP)
TOR_PREFIXES = {"tor1": ("198.51.100.0/24", "203.0.113.0/24"),
                "tor2": ("203.0.113.0/24", "198.18.10.0/24")}  # fmt: skip
#: the cluster's pod network: GR_node1's static route to it (through the join switch)
POD_NETWORK = "10.244.0.0/16"
#: a fresh lab has nothing to adopt: no need to hold deletes for an FRR restart's replay
FAST_SYNC = "[import]\nreplay_hold_ms = 2000\n"


@dataclass(frozen=True, slots=True)
class Snapshot:
    #: prefix -> the ToRs whose BGP table has it from node1
    at_tors: dict[str, list[str]]
    #: prefix -> next hops of the rows ovn-frr wrote on GR_node1
    imported: dict[str, list[str]]
    status: dict[str, Any]
    #: the EVPN switch: vm1's VTEP at vtep1, host1's VTEP at node1, vm1 pings host1
    evpn: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"at_tors": self.at_tors, "imported": self.imported,
                "status": self.status, "evpn": self.evpn}  # fmt: skip


#: the EVPN part: switch ls-evpn (VNI 100) with vm1 on node1, extended to host1 behind vtep1
EVPN_SWITCH = "ls-evpn"


class Demo:
    def __init__(self, name: str | None = None, base: Path = DEFAULT_BASE) -> None:
        spec = demo_spec()
        spec = replace(spec, bfd=(100, 3), peers=(*spec.peers, PeerSpec("vtep1", 64512, bgp=False)),
                       links=(*spec.links, LinkSpec("node1", "vtep1")))  # fmt: skip
        self.lab = Lab(spec, name=name, base=base)
        self.topo: OpenShiftNode | None = None
        self.agent: AgentProcess | None = None

    def up(self) -> None:
        """Build everything (on failure, the caller's down() removes what was made)."""
        lab = self.lab
        lab.up()
        assert lab.ovn is not None
        self.topo = topo = openshift_node(lab)
        nb = lab.ovn.nbctl
        nb("set", "Logical_Router", topo.gr, 'options:dynamic-routing-redistribute="nat,static"')
        config = neighbors_config(lab, "node1", bfd_ms=100, skip=("vtep1",)) + FAST_SYNC
        config += self._evpn()
        self.agent = AgentProcess.start(lab, "node1", config)
        for tor, prefixes in TOR_PREFIXES.items():
            lab.announcer(tor).announce(prefixes)

    def _evpn(self) -> str:
        """vtep1 (a plain FRR VTEP, iBGP l2vpn evpn straight over the link) with host1 behind
        it; the EVPN switch with vm1 bound on node1; node1's EVPN config."""
        lab = self.lab
        assert lab.ovn is not None
        link = lab.link("vtep1", "node1")  # VTEPs on the link's addresses: no underlay routing
        evpn.vtep_device(lab, "vtep1", str(link.v4.ip))
        evpn.vtep_bgp(lab, "vtep1", str(link.peer_v4), None)
        evpn.host(lab, evpn.HOST1, "vtep1")
        lab.ovn.nbctl("ls-add", EVPN_SWITCH, "--", "set", "Logical_Switch", EVPN_SWITCH,
                      *evpn.switch_options(evpn.VNI, "fdb,ip"))  # fmt: skip
        if lab.versions.ovn_native_evpn:  # OVS carries it: its userspace datapath tunnels
            evpn.underlay_on_ovs(lab, "node1", "vtep1", loopback=False)  # from its own bridge
        evpn.vm(lab, EVPN_SWITCH, evpn.VM1, "node1")
        ovs = lab.rundir / "node1" / "ovs"
        return (f'[[bgp.neighbors]]\naddress = "{link.v4.ip}"\nremote_as = "internal"\n'
                'address_families = ["l2vpn-evpn"]\nkeepalive = 3\nhold = 9\n'
                f'[evpn]\nlocal_ip = "{link.peer_v4}"\nadvertise_local_ip = false\n'
                f'[ovs]\ndb = "unix:{ovs}/conf.sock"\nrundir = "{ovs}"\n'
                f'ovn_rundir = "{ovs}"\n')  # fmt: skip

    def evpn_state(self) -> dict[str, Any]:
        lab = self.lab
        return {
            "switch": EVPN_SWITCH,
            "vni": evpn.VNI,
            "vm1_at_vtep1": evpn.remote_vtep_of(lab, "vtep1", evpn.VM1.mac),
            "host1_at_node1": evpn.remote_vtep_of(lab, "node1", evpn.HOST1.mac),
            "ping_vm1_host1": evpn.ping(lab, "vm1", evpn.HOST1.ip, timeout=1),
        }

    def evpn_expected(self) -> dict[str, Any]:
        link = self.lab.link("vtep1", "node1")
        return {"switch": EVPN_SWITCH, "vni": evpn.VNI, "vm1_at_vtep1": str(link.peer_v4),
                "host1_at_node1": str(link.v4.ip), "ping_vm1_host1": True}  # fmt: skip

    def expected(self) -> tuple[set[str], dict[str, set[str]]]:
        """(prefixes the ToRs should get from node1, prefix -> next hops expected in OVN)."""
        assert self.topo is not None
        announced = {f"{self.topo.egress_ip}/32", f"{self.lab.link('node1', 'tor1').v4.ip}/32"}
        announced.add(POD_NETWORK)
        imported: dict[str, set[str]] = {}
        for tor, prefixes in TOR_PREFIXES.items():
            for p in prefixes:
                imported.setdefault(p, set()).add(str(self.lab.link("node1", tor).peer_v4))
        return announced, imported

    def snapshot(self) -> Snapshot:
        assert self.lab.ovn is not None and self.agent is not None
        at_tors: dict[str, list[str]] = {}
        for tor in TORS:
            for prefix in self.lab.frr[tor].bgp_prefixes():
                at_tors.setdefault(prefix, []).append(tor)
        routes = self.lab.ovn.owned_routes("GR_node1", "node1")
        try:
            status = self.agent.status(timeout=5)
        except (OSError, ValueError) as exc:
            status = {"error": str(exc)}
        return Snapshot(at_tors, {p: sorted(nh) for p, nh in routes.items()}, status,
                        self.evpn_state())  # fmt: skip

    def converged(self, snap: Snapshot) -> bool:
        announced, imported = self.expected()
        both = all(set(snap.at_tors.get(p, ())) >= set(TORS) for p in announced)
        routes = both and {p: set(v) for p, v in snap.imported.items()} == imported
        return routes and snap.evpn == self.evpn_expected()

    def down(self) -> None:
        if self.agent is not None:
            self.agent.stop()
        self.lab.down()


#: what node1's ``[ovn_kubernetes]`` says in the ovn-kubernetes demo: every network's pods and
#: the default network's EgressIPs, in the default VRF
OVNK_INTENT = """
[ovn_kubernetes]
node = "{node}"
gateway_mode = "{mode}"
[[ovn_kubernetes.route_advertisements]]
networks = ["default", "blue", "ns1/green"]
advertisements = ["PodNetwork"]
[[ovn_kubernetes.route_advertisements]]
networks = ["default"]
advertisements = ["EgressIP"]
"""


class OvnkDemo(Demo):
    """The demo on ovn-kubernetes' own NB (``--topology ovn-kubernetes``): node1 and node2 each
    run the agent with an ``[ovn_kubernetes]`` section; both ToRs on each node's one uplink.
    No EVPN part."""

    def __init__(self, name: str | None = None, base: Path = DEFAULT_BASE,
                 gateway_mode: str = "shared") -> None:  # fmt: skip
        spec = replace(ovnk_spec(), bfd=(100, 3))
        self.lab = Lab(spec, name=name, base=base)
        self.mode = gateway_mode
        self.topo = None
        self.agent = None
        self.nodes: list[OvnkNode] = []
        self.others: list[AgentProcess] = []

    def up(self) -> None:
        lab = self.lab
        lab.up()
        self.nodes = ovnk_cluster(lab, self.mode)
        for node in self.nodes:
            config = neighbors_config(lab, node.name, bfd_ms=100) + FAST_SYNC
            config += OVNK_INTENT.format(node=node.name, mode=self.mode)
            agent = AgentProcess.start(lab, node.name, config)
            if node.name == "node1":
                self.agent = agent
            else:
                self.others.append(agent)
        for tor, prefixes in TOR_PREFIXES.items():
            lab.announcer(tor).announce(prefixes)

    def evpn_state(self) -> dict[str, Any]:
        return {}

    def evpn_expected(self) -> dict[str, Any]:
        return {}

    def expected(self) -> tuple[set[str], dict[str, set[str]]]:
        node1 = self.nodes[0]
        announced = {*node1.subnets.values(), *(f"{ip}/32" for ip in node1.egress_ips)}
        imported: dict[str, set[str]] = {}
        for tor, prefixes in TOR_PREFIXES.items():
            for p in prefixes:
                imported.setdefault(p, set()).add(str(self.lab.link("node1", tor).peer_v4))
        return announced, imported

    def down(self) -> None:
        for agent in self.others:
            agent.stop()
        super().down()


def summary(demo: Demo, snap: Snapshot) -> str:
    announced, imported = demo.expected()
    return json.dumps({
        "converged": demo.converged(snap),
        "ovn_to_tors": {p: snap.at_tors.get(p, []) for p in sorted(announced)},
        "tors_to_ovn": {p: snap.imported.get(p, []) for p in sorted(imported)},
        "evpn": snap.evpn,
    })  # fmt: skip
