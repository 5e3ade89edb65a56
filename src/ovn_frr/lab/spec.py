"""A lab topology described as plain values: nodes (chassis), external peers, links.

Addresses are derived from the position of a link, so a description stays small:
link ``i`` is ``10.255.i.0/24`` and ``fd00:255:i::/64``, side ``a`` ``.1``/``::1``, side ``b``
``.2``/``::2``. Interfaces are named ``to-<other end>`` inside each namespace.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,11}$")
LAB_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,9}$")
VRF_RE = re.compile(r"^[a-z][a-z0-9]{0,5}$")


class SpecError(ValueError):
    """The topology description is inconsistent."""


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A chassis: FRR (zebra with the FPM module, bgpd, bfdd, staticd) in its own namespace."""

    name: str
    asn: int = 64512
    #: The lab renders BGP sessions to every linked peer. False: FRR starts bare (the agent
    #: configures BGP).
    bgp: bool = True
    #: zebra sends FPM to 127.0.0.1:fpm_port in the node's namespace; None: no FPM target.
    fpm_port: int | None = 2620
    #: Also run ovsdb-server + ovs-vswitchd (userspace datapath) + ovn-controller.
    chassis: bool = False
    #: zebra ``--graceful_restart``: after an unclean FRR restart, the routes zebra re-read
    #: from the kernel and bgpd did not re-learn are swept this long after zebra starts.
    #: Without it (FRR < 10.7) zebra sweeps before it has loaded them all and the rest stay
    #: for good (docs/frr.md). Longer than bgpd takes to re-learn the lab's tables.
    zebra_sweep_s: int | None = 20


@dataclass(frozen=True, slots=True)
class PeerSpec:
    """An external BGP router (a ToR) in its own namespace: FRR, or BIRD 2."""

    name: str
    asn: int
    #: The lab renders eBGP sessions to every linked member. False: FRR starts bare (the
    #: scenario configures it, e.g. an iBGP route reflector or a remote VTEP).
    bgp: bool = True
    #: Run the FRR of this root file system instead of this machine's (a peer that needs
    #: another FRR version, e.g. an EVPN graceful-restart helper: ``scripts/frr-root.sh``).
    frr_root: str = ""
    #: "frr", or "bird": BIRD 2 (``ovn_frr.lab.bird``: ``Lab.bird[name]``, not ``Lab.frr``),
    #: sessions rendered by the lab (no VRF links, no BFD)
    daemon: str = "frr"


@dataclass(frozen=True, slots=True)
class LinkSpec:
    a: str
    b: str
    #: VRF-Lite: both ends in the VRF device of this name (made by the lab in each namespace,
    #: table ``LabSpec.vrf_table``); lab-rendered BGP runs the session in ``router bgp ASN vrf
    #: NAME``. Two members may share one link per VRF (interfaces ``to-<other>-<vrf>``).
    vrf: str = ""
    #: A shared segment: ``a``'s end joins the Linux bridge of this name in ``a``'s namespace
    #: (made by the lab), with the links of the same ``a`` and ``lan``. They share the subnet of
    #: the first of them: ``a`` is .1 (::1) on the bridge, each ``b`` .2, .3, ... in link order
    #: (two ToRs on a node's one uplink, say; not with ``vrf``).
    lan: str = ""


@dataclass(frozen=True, slots=True)
class LabSpec:
    nodes: tuple[NodeSpec, ...] = ()
    peers: tuple[PeerSpec, ...] = ()
    links: tuple[LinkSpec, ...] = ()
    #: Start OVN central (NB + SB ovsdb-server, ovn-northd).
    ovn: bool = True
    #: Members of each of NB and SB: 1 (standalone servers) or 3 or 5 (RAFT clusters on unix
    #: sockets in the lab's OVN namespace; clients get the comma list of members).
    ovn_members: int = 1
    #: NB and SB also listen on SSL (``pssl:``, a CA and certificates made with ovs-pki) on
    #: 127.0.0.1 in the OVN namespace: ``OvnCentral.ssl_remote()``
    ovn_ssl: bool = False
    #: NB's schema gets what OVN-native BGP CMSs write and an older OVN lacks (unnumbered
    #: router ports, Logical_Router_Policy.output_port: ``ovn_frr.lab.schema``)
    nb_bgp_columns: bool = False
    #: BGP timers used on lab-rendered sessions (keepalive, hold) and connect retry.
    bgp_timers: tuple[int, int] = (1, 3)
    #: RFC 8950 (5549) style: one IPv6 session per link with the extended-nexthop capability
    #: carries IPv4 and IPv6 unicast (IPv4 prefixes get IPv6 next hops); no IPv4 session.
    ipv4_over_ipv6: bool = False
    bgp_connect_retry: int = 1
    #: BFD on lab-rendered sessions: (interval ms, detect multiplier); None: no BFD.
    bfd: tuple[int, int] | None = None

    def validate(self) -> None:
        names = [n.name for n in self.nodes] + [p.name for p in self.peers]
        for name in names:
            if not NAME_RE.match(name):
                raise SpecError(f"{name!r}: names are [a-z][a-z0-9]*, at most 12 characters")
        if len(set(names)) != len(names):
            raise SpecError("node and peer names must be unique")
        if "ovn" in names:
            raise SpecError("'ovn' is reserved for the OVN central namespace")
        for p in self.peers:
            if p.daemon not in ("frr", "bird"):
                raise SpecError(f"peer {p.name}: daemon {p.daemon!r} (frr or bird)")
            if p.daemon == "bird" and (
                p.frr_root
                or not p.bgp
                or self.bfd
                or any(p.name in (x.a, x.b) and x.vrf for x in self.links)
            ):
                raise SpecError(
                    f"peer {p.name}: a BIRD peer has lab-rendered sessions only "
                    "(no frr_root, bgp=False, BFD or VRF links)"
                )
        if self.ovn_members not in (1, 3, 5):
            raise SpecError(f"ovn_members: {self.ovn_members} (1, 3 or 5)")
        pairs = set()
        for link in self.links:
            for end in (link.a, link.b):
                if end not in names:
                    raise SpecError(f"link {link.a}-{link.b}: no node or peer {end!r}")
            if link.vrf and not VRF_RE.match(link.vrf):
                raise SpecError(f"link {link.a}-{link.b}: VRF {link.vrf!r} is not [a-z][a-z0-9]*"
                                ", at most 6 characters")  # fmt: skip
            if link.vrf and len(f"to-{max(link.a, link.b, key=len)}-{link.vrf}") > 15:
                raise SpecError(f"link {link.a}-{link.b}: interface to-<name>-{link.vrf} would "
                                "be over 15 characters")  # fmt: skip
            if link.lan and (link.vrf or not VRF_RE.match(link.lan)):
                raise SpecError(f"link {link.a}-{link.b}: LAN {link.lan!r} is not "
                                "[a-z][a-z0-9]*, at most 6 characters, without a VRF")  # fmt: skip
            key = (frozenset((link.a, link.b)), link.vrf)
            if link.a == link.b or key in pairs:
                raise SpecError(f"link {link.a}-{link.b}: duplicate or loop")
            pairs.add(key)
        if len(self.links) > 250:
            raise SpecError("at most 250 links")

    def node(self, name: str) -> NodeSpec:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def peer(self, name: str) -> PeerSpec:
        for p in self.peers:
            if p.name == name:
                return p
        raise KeyError(name)

    def vrfs(self) -> tuple[str, ...]:
        return tuple(sorted({link.vrf for link in self.links if link.vrf}))

    def vrf_table(self, vrf: str) -> int:
        """The kernel table of a lab VRF: 1001, 1002, ... in name order (the agent finds it
        from the kernel; nothing in ovn-frr knows these numbers)."""
        return 1001 + self.vrfs().index(vrf)

    def router_id(self, name: str) -> ipaddress.IPv4Address:
        """192.0.2.(1..) for nodes, 192.0.2.(101..) for peers; also on the loopback."""
        for i, n in enumerate(self.nodes):
            if n.name == name:
                return ipaddress.IPv4Address("192.0.2.1") + i
        for i, p in enumerate(self.peers):
            if p.name == name:
                return ipaddress.IPv4Address("192.0.2.101") + i
        raise KeyError(name)


@dataclass(frozen=True, slots=True)
class LinkAddrs:
    """One link's ends as seen from ``local``."""

    index: int
    local: str
    remote: str
    ifname: str
    v4: ipaddress.IPv4Interface
    v6: ipaddress.IPv6Interface
    peer_v4: ipaddress.IPv4Address
    peer_v6: ipaddress.IPv6Address
    vrf: str = ""


def link_addrs(spec: LabSpec, local: str) -> list[LinkAddrs]:
    """Every link of ``local`` with its addresses, in link order."""
    out = []
    lans: dict[tuple[str, str], list[int]] = {}
    for i, link in enumerate(spec.links):
        if link.lan:
            lans.setdefault((link.a, link.lan), []).append(i)
    for i, link in enumerate(spec.links):
        if local not in (link.a, link.b):
            continue
        side = 1 if link.a == local else 2
        other = link.b if side == 1 else link.a
        net, me, peer = i, side, 3 - side
        ifname = f"to-{other}-{link.vrf}" if link.vrf else f"to-{other}"
        if link.lan:  # the subnet of the LAN's first link; a: .1 on the bridge, b: .2, ...
            members = lans[(link.a, link.lan)]
            net, host = members[0], 2 + members.index(i)
            me, peer = (1, host) if side == 1 else (host, 1)
            ifname = link.lan if side == 1 else ifname
        out.append(
            LinkAddrs(
                index=i,
                local=local,
                remote=other,
                ifname=ifname,
                v4=ipaddress.IPv4Interface(f"10.255.{net}.{me}/24"),
                v6=ipaddress.IPv6Interface(f"fd00:255:{net}::{me}/64"),
                peer_v4=ipaddress.IPv4Address(f"10.255.{net}.{peer}"),
                peer_v6=ipaddress.IPv6Address(f"fd00:255:{net}::{peer}"),
                vrf=link.vrf,
            )
        )
    return out


def demo_spec() -> LabSpec:
    """The demo and e2e topology: one chassis with FRR + OVN, two ToRs."""
    return LabSpec(
        nodes=(NodeSpec("node1", bgp=False, chassis=True),),
        peers=(PeerSpec("tor1", 65001), PeerSpec("tor2", 65002)),
        links=(LinkSpec("node1", "tor1"), LinkSpec("node1", "tor2")),
    )


def minimal_spec() -> LabSpec:
    """node1 + tor1 with lab-rendered BGP: the smallest lab that moves a route."""
    return LabSpec(
        nodes=(NodeSpec("node1"),),
        peers=(PeerSpec("tor1", 65001),),
        links=(LinkSpec("node1", "tor1"),),
    )


def ovnk_spec(daemon: str = "frr") -> LabSpec:
    """Two ovn-kubernetes nodes, each with one uplink (the LAN ``breth0``) to two ToRs, tor1
    and tor2 (``daemon``: FRR or BIRD), BGP left to the agent: the lab of ``--topology
    ovn-kubernetes`` (its NB: :func:`ovn_frr.lab.ovnk.ovnk_cluster`)."""
    return LabSpec(
        nodes=(NodeSpec("node1", bgp=False), NodeSpec("node2", bgp=False)),
        peers=(PeerSpec("tor1", 65001, daemon=daemon), PeerSpec("tor2", 65002, daemon=daemon)),
        links=tuple(
            LinkSpec(n, t, lan="breth0") for n in ("node1", "node2") for t in ("tor1", "tor2")
        ),
    )
