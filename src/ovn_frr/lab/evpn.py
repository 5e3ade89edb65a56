"""The EVPN L2 lab: two OVN chassis and a remote VTEP on an underlay through a route
reflector, one OVN switch extended over VXLAN EVPN.

::

    vm1 ─ node1 (OVN, FRR, ovn-frr) ─┐                 ┌─ vtep1 (FRR EVPN, br-100/vxlan-100) ─ host1
                                     ├─ tor1 (iBGP RR) ─┤
    vm2 ─ node2 (OVN, FRR, ovn-frr) ─┘                 (AS 64512 throughout)

tor1 reflects ipv4 unicast (next hop itself: the VTEP loopbacks) and l2vpn evpn (next hop
unchanged: the VTEPs). The agents configure node1's and node2's FRR; the lab configures
tor1 and vtep1, whose host1 sits behind a plain Linux bridge and VXLAN device.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ovn_frr.lab.agent import AgentProcess
from ovn_frr.lab.lab import DEFAULT_BASE, Lab
from ovn_frr.lab.proc import netns_add, run, wait_for
from ovn_frr.lab.spec import LabSpec, LinkSpec, NodeSpec, PeerSpec

ASN = 64512
VNI = 100
SWITCH = "ls-evpn"
#: MTU inside the overlay (the underlay's 1500 minus VXLAN's 50)
MTU = 1450
#: VXLAN-side device names on vtep1 (OVN 25.09's defaults, also ovn-frr's)
BRIDGE, VXLAN = f"br-{VNI}", f"vxlan-{VNI}"
#: turns a device's transmit checksum offload off, in the namespace it runs in (with
#: ovn-frr's own ioctl: OVS's userspace datapath does not complete offloaded checksums)
TX_OFF = ("import sys; from ovn_frr.kernel.ethtool import set_tx_checksum; "
          "set_tx_checksum(sys.argv[1], False)")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Host:
    """A host with one interface (``eth0``) in its own namespace ``<lab>-<name>``."""

    name: str
    mac: str
    ip: str
    ip6: str


VM1 = Host("vm1", "0a:00:00:00:01:01", "10.100.0.11", "fd00:100::11")
VM2 = Host("vm2", "0a:00:00:00:01:02", "10.100.0.12", "fd00:100::12")
HOST1 = Host("host1", "0a:00:00:00:02:20", "10.100.0.20", "fd00:100::20")


def evpn_spec(tor_root: str = "") -> LabSpec:
    """``tor_root``: tor1 runs the FRR of that root file system (``PeerSpec.frr_root``)."""
    return LabSpec(
        nodes=(NodeSpec("node1", bgp=False, chassis=True),
               NodeSpec("node2", bgp=False, chassis=True)),
        peers=(PeerSpec("tor1", ASN, bgp=False, frr_root=tor_root),
               PeerSpec("vtep1", ASN, bgp=False)),
        links=(LinkSpec("node1", "tor1"), LinkSpec("node2", "tor1"), LinkSpec("vtep1", "tor1")),
    )  # fmt: skip


def _bgp_common(lab: Lab, member: str) -> list[str]:
    return [f"router bgp {ASN}", f" bgp router-id {lab.spec.router_id(member)}",
            " no bgp default ipv4-unicast", " coalesce-time 100", " timers bgp 1 3"]  # fmt: skip


def vtep_device(lab: Lab, member: str, local: str) -> None:
    """A plain Linux VTEP for VNI ``VNI`` in ``member``: bridge + VXLAN device from ``local``."""
    ns = lab.netns(member)
    for argv in (
        ["ip", "link", "add", BRIDGE, "type", "bridge"],
        ["ip", "link", "set", BRIDGE, "addrgenmode", "none"],
        ["ip", "link", "add", VXLAN, "type", "vxlan", "id", str(VNI), "local", local,
         "dstport", "4789", "nolearning"],
        ["ip", "link", "set", VXLAN, "addrgenmode", "none"],
        ["ip", "link", "set", VXLAN, "master", BRIDGE],
        ["bridge", "link", "set", "dev", VXLAN, "learning", "off", "neigh_suppress", "on"],
        ["ip", "link", "set", VXLAN, "up"],
        ["ip", "link", "set", BRIDGE, "up"],
    ):  # fmt: skip
        run(argv, netns=ns)


def vtep_bgp(lab: Lab, member: str, neighbor: str, network: str | None) -> None:
    """``member``'s FRR: iBGP to ``neighbor`` with l2vpn evpn (``advertise-all-vni``) and,
    when given, ``network`` in ipv4 unicast (its VTEP address, for the underlay)."""
    lines = _bgp_common(lab, member)
    lines += [f" neighbor {neighbor} remote-as internal",
              f" neighbor {neighbor} timers connect 1",
              f" neighbor {neighbor} advertisement-interval 0"]  # fmt: skip
    if network:
        lines += [" address-family ipv4 unicast", f"  network {network}",
                  f"  neighbor {neighbor} activate", " exit-address-family"]  # fmt: skip
    lines += [" address-family l2vpn evpn", f"  neighbor {neighbor} activate",
              "  advertise-all-vni", " exit-address-family", "exit"]  # fmt: skip
    lab.frr[member].apply("\n".join(lines) + "\n")


def _host_ns(lab: Lab, h: Host, ipv6: bool) -> str:
    ns = lab.netns(h.name)
    if ns not in run(["ip", "netns", "list"]):
        netns_add(ns)
    if not ipv6:
        run(["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"], netns=ns)
    return ns


def _host_addrs(h: Host, ns: str, ipv6: bool) -> None:
    run(["ip", "link", "set", "eth0", "address", h.mac, "mtu", str(MTU)], netns=ns)
    run(["ip", "addr", "add", f"{h.ip}/24", "dev", "eth0"], netns=ns)
    if ipv6:
        run(["ip", "addr", "add", f"{h.ip6}/64", "dev", "eth0", "nodad"], netns=ns)
    run(["ip", "link", "set", "eth0", "up"], netns=ns)
    run(["ip", "link", "set", "lo", "up"], netns=ns)
    # OVS's userspace datapath does not complete offloaded checksums (FIELD-NOTES)
    run([sys.executable, "-c", TX_OFF, "eth0"], netns=ns)


def veth_host(lab: Lab, h: Host, member: str, prefix: str, ipv6: bool) -> str:
    """``h``'s namespace with ``eth0`` addressed, a veth whose other end, ``<prefix><name>``,
    is in ``member``'s namespace (returned)."""
    ns = _host_ns(lab, h, ipv6)
    port = f"{prefix}{h.name}"[:15]
    run(["ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port,
         "netns", lab.netns(member)])  # fmt: skip
    _host_addrs(h, ns, ipv6)
    return port


def host(lab: Lab, h: Host, vtep: str, ipv6: bool = True) -> None:
    """A host behind ``vtep``'s bridge, its MAC and IPs written for zebra to announce."""
    vns = lab.netns(vtep)
    port = veth_host(lab, h, vtep, "h-", ipv6)
    run(["ip", "link", "set", port, "master", BRIDGE, "mtu", str(MTU)], netns=vns)
    run(["bridge", "link", "set", "dev", port, "learning", "off"], netns=vns)
    run(["ip", "link", "set", port, "up"], netns=vns)
    run(["bridge", "fdb", "add", h.mac, "dev", port, "master", "static"], netns=vns)
    for addr in (h.ip, h.ip6) if ipv6 else (h.ip,):
        run(["ip", "neigh", "replace", addr, "lladdr", h.mac, "dev", BRIDGE, "nud",
             "permanent"], netns=vns)  # fmt: skip


def vm(lab: Lab, switch: str, h: Host, node: str, ipv6: bool = True) -> None:
    """An OVN port of ``switch``, bound on ``node``."""
    assert lab.ovn is not None
    addrs = f"{h.mac} {h.ip} {h.ip6}" if ipv6 else f"{h.mac} {h.ip}"
    lab.ovn.nbctl("lsp-add", switch, h.name, "--", "lsp-set-addresses", h.name, addrs)
    plug(lab, h, node, ipv6)


def plug(lab: Lab, h: Host, node: str, ipv6: bool = True) -> None:
    """``h`` as a VIF on ``node``: a veth into br-int with ``iface-id`` (as OVN's own system
    tests with the userspace datapath do)."""
    nns = lab.netns(node)
    port = veth_host(lab, h, node, "vif-", ipv6)
    run(["ip", "link", "set", port, "up", "mtu", str(MTU)], netns=nns)
    run([sys.executable, "-c", TX_OFF, port], netns=nns)
    lab.chassis[node].vsctl("add-port", "br-int", port, "--", "set", "Interface", port,
                            f"external_ids:iface-id={h.name}")  # fmt: skip


def unplug(lab: Lab, h: Host, node: str) -> None:
    port = f"vif-{h.name}"[:15]
    lab.chassis[node].vsctl("--if-exists", "del-port", "br-int", port)
    run(["ip", "link", "del", port], netns=lab.netns(node), check=False)


def ping(lab: Lab, src: str, dst: str, count: int = 1, timeout: float = 2.0) -> bool:
    out = run(["ping", "-c", str(count), "-W", str(timeout), "-q", dst], netns=lab.netns(src),
              check=False)  # fmt: skip
    return f"{count} received" in out


def fdb(lab: Lab, member: str, dev: str = VXLAN) -> list[dict[str, Any]]:
    """``dev``'s FDB entries (none while the device does not exist)."""
    out = run(["bridge", "-j", "fdb", "show", "dev", dev], netns=lab.netns(member), check=False)
    try:
        return list(json.loads(out or "[]"))
    except ValueError:
        return []


def remote_vtep_of(lab: Lab, member: str, mac: str) -> str | None:
    """The VTEP ``member``'s VXLAN device sends ``mac`` to (None: not known there)."""
    for e in fdb(lab, member):
        if e.get("mac") == mac and e.get("dst"):
            return str(e["dst"])
    return None


def counters(lab: Lab, member: str, dev: str) -> tuple[int, int]:
    """(rx, tx) packets of ``dev`` in ``member``'s namespace."""
    out = json.loads(run(["ip", "-s", "-j", "link", "show", dev], netns=lab.netns(member)))
    stats = out[0]["stats64"]
    return int(stats["rx"]["packets"]), int(stats["tx"]["packets"])


def echo_requests(lab: Lab, member: str) -> int:
    """ICMP echo requests ``member``'s namespace has received (IcmpInEchos of its IPv4 stack):
    unlike a device's packet count, neither ARP nor IPv6 neighbour discovery moves it."""
    lines = [
        ln.split() for ln in run(["cat", "/proc/net/snmp"], netns=lab.netns(member)).splitlines()
    ]
    head, values = (ln for ln in lines if ln and ln[0] == "Icmp:")
    return int(values[head.index("InEchos")])


def underlay_on_ovs(lab: Lab, node: str, peer: str = "tor1", loopback: bool = True,
                    bridge: str = "br-phy") -> None:  # fmt: skip
    """``node``'s underlay behind the OVS bridge ``bridge`` (userspace datapath): its link to
    ``peer`` becomes a port of it, and the link's address (and with ``loopback`` the VTEP
    address of ``lo``) moves onto it. OVS's userspace datapath tunnels only from addresses on
    its own bridges (FIELD-NOTES), as OVN 25.09+'s own EVPN does; the kernel datapath needs
    none of this."""
    ns, chassis = lab.netns(node), lab.chassis[node]
    la = lab.link(node, peer)
    addrs = [str(la.v4)]
    chassis.vsctl("--may-exist", "add-br", bridge, "--", "set", "Bridge", bridge,
                  "datapath_type=netdev")  # fmt: skip
    run(["ip", "addr", "flush", "dev", la.ifname], netns=ns)
    if loopback:
        addrs.append(vtep := f"{lab.spec.router_id(node)}/32")
        run(["ip", "addr", "del", vtep, "dev", "lo"], netns=ns, check=False)
    chassis.vsctl("--may-exist", "add-port", bridge, la.ifname)
    for knob in ("accept_dad=0", "accept_ra=0", "autoconf=0"):
        run(["sysctl", "-qw", f"net.ipv6.conf.{bridge}.{knob}"], netns=ns)
    for addr in addrs:
        run(["ip", "addr", "add", addr, "dev", bridge], netns=ns)
    run(["ip", "addr", "add", str(la.v6), "dev", bridge, "nodad"], netns=ns)
    run(["ip", "link", "set", bridge, "up"], netns=ns)
    # OVS's userspace datapath does not complete offloaded checksums: not from the node's own
    # stack (BGP through the bridge), not from the peer's (its end of the link)
    run([sys.executable, "-c", TX_OFF, bridge], netns=ns)
    run([sys.executable, "-c", TX_OFF, lab.link(peer, node).ifname], netns=lab.netns(peer))


def switch_options(vni: int, redistribute: str) -> list[str]:
    """An EVPN switch's ``other_config`` (``ovn-nbctl set`` arguments), its devices named as
    OVN 26.03 needs (it has no default names; 25.09's and ovn-frr's are these)."""
    return [f"other_config:dynamic-routing-vni={vni}",
            f"other_config:dynamic-routing-redistribute={redistribute}",
            f"other_config:dynamic-routing-bridge-ifname=br-{vni}",
            f"other_config:dynamic-routing-vxlan-ifname=vxlan-{vni}",
            f"other_config:dynamic-routing-advertise-ifname=lo-{vni}"]  # fmt: skip


def ovs_counters(lab: Lab, node: str, iface: str) -> tuple[int, int]:
    """(rx, tx) packets of the OVS interface ``iface`` on ``node``."""
    out = lab.chassis[node].vsctl("--format=json", "--columns=statistics", "list", "Interface",
                                  iface)  # fmt: skip
    stats = dict(json.loads(out)["data"][0][0][1])
    return int(stats.get("rx_packets", 0)), int(stats.get("tx_packets", 0))


def route_reflector(lab: Lab, member: str) -> None:
    """``member`` as the underlay's router and the fabric's iBGP route reflector (ipv4 unicast
    with itself as next hop, l2vpn evpn as it came) for every member linked to it."""
    for knob in ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"):
        run(["sysctl", "-qw", knob], netns=lab.netns(member))
    lines = _bgp_common(lab, member)
    lines += [" neighbor fabric peer-group", " neighbor fabric remote-as internal",
              " neighbor fabric timers connect 1",
              " neighbor fabric advertisement-interval 0"]  # fmt: skip
    lines += [f" neighbor {la.peer_v4} peer-group fabric" for la in lab.links(member)]
    lines += [" address-family ipv4 unicast", "  neighbor fabric activate",
              "  neighbor fabric route-reflector-client",
              "  neighbor fabric next-hop-self force", " exit-address-family",
              " address-family l2vpn evpn", "  neighbor fabric activate",
              "  neighbor fabric route-reflector-client", " exit-address-family",
              "exit"]  # fmt: skip
    lab.frr[member].apply("\n".join(lines) + "\n")


@dataclass
class EvpnLab:
    name: str | None = None
    base: Path = DEFAULT_BASE
    #: what the switch announces (OVN's dynamic-routing-redistribute)
    redistribute: str = "fdb,ip"
    #: tor1 runs the FRR of this root file system ("": this machine's), e.g. one that is an
    #: EVPN graceful-restart helper (scripts/frr-root.sh)
    tor_root: str = ""
    lab: Lab = field(init=False)
    agents: dict[str, AgentProcess] = field(default_factory=dict)
    #: OVN 25.09+ carries EVPN in OVS itself: the chassis' underlay goes behind ``br-phy``
    #: (:func:`underlay_on_ovs`) and the agents are OVN's host side
    native: bool = field(init=False)

    def __post_init__(self) -> None:
        self.lab = Lab(evpn_spec(self.tor_root), name=self.name, base=self.base)
        self.native = self.lab.versions.ovn_native_evpn

    # --- building -------------------------------------------------------------------------

    def up(self, agents: bool = True, vms: bool = True) -> None:
        lab = self.lab
        lab.up()
        if self.native:
            for node in ("node1", "node2"):
                underlay_on_ovs(lab, node)
        self._tor()
        self._vtep()
        self.host(HOST1, "vtep1")
        assert lab.ovn is not None
        lab.ovn.nbctl("ls-add", SWITCH)
        lab.ovn.nbctl("set", "Logical_Switch", SWITCH, *switch_options(VNI, self.redistribute))
        if vms:
            self.vm(VM1, "node1")
            self.vm(VM2, "node2")
        if agents:
            for node in ("node1", "node2"):
                self.start_agent(node)

    def start_agent(self, node: str, verbose: int = 1) -> AgentProcess:
        self.agents[node] = agent = AgentProcess.start(self.lab, node, self.node_config(node),
                                                       verbose=verbose)  # fmt: skip
        return agent

    def node_config(self, node: str) -> str:
        lab = self.lab
        ovs = lab.rundir / node / "ovs"  # the Chassis' run directory
        tor = lab.link(node, "tor1").peer_v4
        return (
            f'[[bgp.neighbors]]\naddress = "{tor}"\nremote_as = "internal"\n'
            'address_families = ["ipv4-unicast", "l2vpn-evpn"]\n'
            "keepalive = 1\nhold = 3\nconnect_retry = 1\ngraceful_restart = true\n\n"
            f'[evpn]\nlocal_ip = "{lab.spec.router_id(node)}"\ncheck_ms = 1000\n\n'
            f'[ovs]\ndb = "unix:{ovs}/conf.sock"\nrundir = "{ovs}"\novn_rundir = "{ovs}"\n'
        )

    def _tor(self) -> None:
        route_reflector(self.lab, "tor1")

    def _vtep(self) -> None:
        lab = self.lab
        local = str(lab.spec.router_id("vtep1"))
        vtep_device(lab, "vtep1", local)
        vtep_bgp(lab, "vtep1", str(lab.link("vtep1", "tor1").peer_v4), f"{local}/32")

    def host(self, h: Host, vtep: str, ipv6: bool = True) -> None:
        host(self.lab, h, vtep, ipv6)

    def vm(self, h: Host, node: str, ipv6: bool = True) -> None:
        vm(self.lab, SWITCH, h, node, ipv6)

    def plug(self, h: Host, node: str, ipv6: bool = True) -> None:
        plug(self.lab, h, node, ipv6)

    def unplug(self, h: Host, node: str) -> None:
        unplug(self.lab, h, node)

    # --- looking ------------------------------------------------------------------------------

    def ping(self, src: str, dst: str, count: int = 1, timeout: float = 2.0) -> bool:
        return ping(self.lab, src, dst, count, timeout)

    def fdb(self, member: str, dev: str = VXLAN) -> list[dict[str, Any]]:
        return fdb(self.lab, member, dev)

    def remote_vtep_of(self, member: str, mac: str) -> str | None:
        return remote_vtep_of(self.lab, member, mac)

    def counters(self, member: str, dev: str) -> tuple[int, int]:
        return counters(self.lab, member, dev)

    def flow_packets(self, node: str, match: str) -> int:
        """n_packets summed over br-ev<VNI>'s flows whose text contains ``match``."""
        ch = self.lab.chassis[node]
        out = run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows",
                   f"unix:{ch.rundir}/br-ev{VNI}.mgmt"])  # fmt: skip
        total = 0
        for line in out.splitlines():
            if match in line and "n_packets=" in line:
                total += int(line.split("n_packets=", 1)[1].split(",", 1)[0])
        return total

    def status(self, node: str) -> dict[str, Any]:
        return self.agents[node].status()

    def vni_status(self, node: str, vni: int = VNI) -> dict[str, Any]:
        """``node``'s agent's status of ``vni`` (empty: not served)."""
        for v in self.status(node).get("evpn", {}).get("vnis", []):
            if v["vni"] == vni:
                return dict(v)
        return {}

    def wait_remote(self, member: str, mac: str, vtep: str | None, timeout: float = 30) -> None:
        wait_for(lambda: self.remote_vtep_of(member, mac) == vtep, timeout=timeout,
                 what=f"{mac} -> {vtep} in {member}'s FDB")  # fmt: skip

    def down(self) -> None:
        for agent in self.agents.values():
            agent.kill()
        self.lab.down()
