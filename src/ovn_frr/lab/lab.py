"""The lab: builds a topology of FRR and OVN in network namespaces and tears it down.

Everything a lab creates is named after it: namespaces ``<lab>-<node>`` (``<lab>-ovn`` for OVN
central) and the run directory ``<base>/<lab>/``, which also holds ``lab.json``, written before
anything is created, so that ``down`` (from any process) finds what to remove even after a crash.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from ovn_frr.frr.render import router_bgp
from ovn_frr.lab.bird import BirdInstance
from ovn_frr.lab.frr import Announcer, FrrInstance, daemons_for
from ovn_frr.lab.ovn import Chassis, OvnCentral
from ovn_frr.lab.proc import (
    LabError,
    netns_add,
    netns_destroy,
    netns_list,
    read_pid,
    remove_frr_tmp,
    run,
    wait_for,
)
from ovn_frr.lab.spec import LAB_NAME_RE, LabSpec, LinkAddrs, LinkSpec, NodeSpec, PeerSpec
from ovn_frr.lab.spec import link_addrs as spec_link_addrs
from ovn_frr.versions import Versions, detect

log = logging.getLogger(__name__)

DEFAULT_BASE = Path("/run/ovn-frr-lab")
#: A MAC nobody has: permanent neighbor entries pointing at it blackhole a link while the
#: carrier stays up (no netem on these kernels), so only BFD/hold timers can notice.
BLACKHOLE_MAC = "02:00:00:00:de:ad"


class Origin(Protocol):
    """What originates prefixes at a lab member (an FRR :class:`Announcer`, a BIRD peer)."""

    def announce(self, prefixes: Iterable[str]) -> None: ...

    def withdraw(self, prefixes: Iterable[str]) -> None: ...


class Lab:
    def __init__(
        self,
        spec: LabSpec,
        name: str | None = None,
        base: Path = DEFAULT_BASE,
        versions: Versions | None = None,
    ) -> None:
        spec.validate()
        self.name = name or "ofl" + secrets.token_hex(3)[:5]
        if not LAB_NAME_RE.match(self.name):
            raise LabError(f"lab name {self.name!r}: [a-z][a-z0-9]*, at most 10 characters")
        self.spec = spec
        self.rundir = base / self.name
        self.versions = versions or detect()
        self.ovn: OvnCentral | None = None
        self.frr: dict[str, FrrInstance] = {}
        #: the peers that run BIRD (PeerSpec.daemon)
        self.bird: dict[str, BirdInstance] = {}
        self.chassis: dict[str, Chassis] = {}
        #: (namespace, VRF) made so far
        self._vrfs: set[tuple[str, str]] = set()
        #: (namespace, name) of the LAN bridges made
        self._bridges: set[tuple[str, str]] = set()

    # --- names -------------------------------------------------------------------------------

    def netns(self, member: str) -> str:
        return f"{self.name}-{member}"

    def members(self) -> list[str]:
        return [n.name for n in self.spec.nodes] + [p.name for p in self.spec.peers]

    def links(self, member: str) -> list[LinkAddrs]:
        return spec_link_addrs(self.spec, member)

    def links_by_vrf(self, member: str) -> dict[str, list[LinkAddrs]]:
        """``member``'s links per VRF ("": the default VRF, always there), VRFs in name order."""
        out: dict[str, list[LinkAddrs]] = {"": []}
        for vrf in self.spec.vrfs():
            out[vrf] = []
        for la in self.links(member):
            out[la.vrf].append(la)
        return out

    def link(self, local: str, remote: str, vrf: str = "") -> LinkAddrs:
        for la in self.links(local):
            if la.remote == remote and la.vrf == vrf:
                return la
        raise KeyError(f"no link {local}-{remote}" + (f" in VRF {vrf}" if vrf else ""))

    # --- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Lab:
        self.up()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.down()

    def up(self) -> None:
        """Create everything; on any failure (or Ctrl-C) remove what was made, then raise."""
        if self.rundir.exists():
            raise LabError(f"lab {self.name!r} exists ({self.rundir}); `ovn-frr lab down` it")
        try:
            self._up()
        except BaseException:
            self.down()
            raise

    def _up(self) -> None:
        self.rundir.mkdir(parents=True, mode=0o755)
        self._write_state()
        log.info("lab_up lab=%s frr=%s ovn=%s", self.name, self.versions.frr, self.versions.ovn)
        if self.spec.ovn:
            netns_add(self.netns("ovn"))
            self.ovn = OvnCentral(self.netns("ovn"), self.rundir / "ovn", self.spec.ovn_members,
                                  self.spec.ovn_ssl, self.spec.nb_bgp_columns)  # fmt: skip
            self.ovn.start()
        for member in self.members():
            netns_add(self.netns(member))
            rid = self.spec.router_id(member)
            run(["ip", "addr", "add", f"{rid}/32", "dev", "lo"], netns=self.netns(member))
        for link in self.spec.links:
            self._add_link(link)
        for node in self.spec.nodes:
            self._start_node(node)
        for peer in self.spec.peers:
            self._start_peer(peer)
        for name in self.chassis:
            wait_for(
                lambda n=name: n in self.sb_chassis(),  # type: ignore[misc]
                timeout=30,
                what=f"chassis {name} in SB",
            )

    def sb_chassis(self) -> list[str]:
        """Names of the chassis registered in OVN SB."""
        if self.ovn is None:
            return []
        return self.ovn.sbctl("--bare", "--columns=name", "list", "Chassis").split()

    def _add_link(self, link: LinkSpec) -> None:
        a = self.link(link.a, link.b, link.vrf)
        b = self.link(link.b, link.a, link.vrf)
        veth = f"to-{link.b}" if link.lan else a.ifname
        run(["ip", "link", "add", veth, "netns", self.netns(link.a), "type", "veth",
             "peer", "name", b.ifname, "netns", self.netns(link.b)])  # fmt: skip
        ends = [a, b]
        if link.lan:  # a's end is a port of the LAN's bridge, which has a's addresses
            ns = self.netns(link.a)
            if (ns, link.lan) not in self._bridges:
                run(["ip", "link", "add", link.lan, "type", "bridge"], netns=ns)
                self._bridges.add((ns, link.lan))
            else:
                ends = [b]
            run(["ip", "link", "set", veth, "master", link.lan], netns=ns)
            run(["ip", "link", "set", veth, "up"], netns=ns)
        for end in ends:
            ns = self.netns(end.local)
            if link.vrf:  # before the addresses: enslaving to a VRF drops IPv6 addresses
                if (ns, link.vrf) not in self._vrfs:
                    table = str(self.spec.vrf_table(link.vrf))
                    run(["ip", "link", "add", link.vrf, "type", "vrf", "table", table], netns=ns)
                    run(["ip", "link", "set", link.vrf, "up"], netns=ns)
                    self._vrfs.add((ns, link.vrf))
                run(["ip", "link", "set", end.ifname, "master", link.vrf], netns=ns)
            # no DAD (addresses usable at once), no SLAAC: FRR sends RAs on links with
            # extended-nexthop peers, and an autoconfigured address would become the source
            # of BGP sessions that the peer does not expect
            for knob in ("accept_dad=0", "accept_ra=0", "autoconf=0"):
                run(["sysctl", "-qw", f"net.ipv6.conf.{end.ifname}.{knob}"], netns=ns)
            run(["ip", "addr", "add", str(end.v4), "dev", end.ifname], netns=ns)
            run(["ip", "addr", "add", str(end.v6), "dev", end.ifname, "nodad"], netns=ns)
            run(["ip", "link", "set", end.ifname, "up"], netns=ns)

    def _start_node(self, node: NodeSpec) -> None:
        frr = FrrInstance(
            node.name,
            self.netns(node.name),
            self.rundir / node.name / "frr",
            tuple(daemons_for(self.versions.frr, node=True)),
            fpm_port=node.fpm_port,
            bgpd_config="\n".join(self._bgp_config(node.name, node.asn)) if node.bgp else "",
            zebra_sweep_s=node.zebra_sweep_s,
        )
        frr.start()
        self.frr[node.name] = frr
        if node.bgp:
            self._start_bfd(node.name)
        if node.chassis:
            assert self.ovn is not None
            ch = Chassis(
                node.name,
                self.netns(node.name),
                self.rundir / node.name / "ovs",
                self.ovn.sb,
                str(self.spec.router_id(node.name)),
            )
            ch.start()
            self.chassis[node.name] = ch

    def _start_peer(self, peer: PeerSpec) -> None:
        if peer.daemon == "bird":
            keepalive, hold = self.spec.bgp_timers
            bird = BirdInstance(peer.name, self.netns(peer.name), self.rundir / peer.name / "bird",
                                peer.asn, str(self.spec.router_id(peer.name)),
                                self.links(peer.name),
                                (keepalive, hold, self.spec.bgp_connect_retry),
                                self.spec.ipv4_over_ipv6)  # fmt: skip
            bird.start()
            self.bird[peer.name] = bird
            return
        root = Path(peer.frr_root) if peer.frr_root else None
        if root is not None and not (root / "usr/lib/frr/bgpd").exists():
            raise LabError(f"{peer.name}: frr_root {peer.frr_root!r} holds no FRR "
                           "(usr/lib/frr/bgpd); scripts/frr-root.sh builds one")  # fmt: skip
        frr = FrrInstance(
            peer.name,
            self.netns(peer.name),
            self.rundir / peer.name / "frr",
            tuple(daemons_for(self.versions.frr, node=False, root=root)),
            bgpd_config="\n".join(self._bgp_config(peer.name, peer.asn)) if peer.bgp else "",
            root=root,
        )
        frr.start()
        self.frr[peer.name] = frr
        if peer.bgp:
            self._start_bfd(peer.name)

    def _start_bfd(self, member: str) -> None:
        """BFD profile ``lab`` on every lab-rendered session of ``member`` (bfdd's config goes
        through vtysh: the lab's config files are bgpd's and zebra's)."""
        if self.spec.bfd is None:
            return
        interval, mult = self.spec.bfd
        v6only = self.spec.ipv4_over_ipv6
        lines = [
            "bfd",
            " profile lab",
            f"  transmit-interval {interval}",
            f"  receive-interval {interval}",
            f"  detect-multiplier {mult}",
            " exit",
            "exit",
        ]
        for vrf, links in self.links_by_vrf(member).items():
            if not links:
                continue
            lines.append(router_bgp(self._asn(member), vrf))
            for la in links:
                for addr in (la.peer_v6,) if v6only else (la.peer_v4, la.peer_v6):
                    lines.append(f" neighbor {addr} bfd profile lab")
            lines.append("exit")
        self.frr[member].apply("\n".join(lines) + "\n")

    def _asn(self, member: str) -> int:
        for p in self.spec.peers:
            if p.name == member:
                return p.asn
        return self.spec.node(member).asn

    def _bgp_config(self, member: str, asn: int) -> list[str]:
        """eBGP to every linked member: one IPv4 session (ipv4 unicast) and one IPv6 session
        (ipv6 unicast) per link, fast timers, no policy requirement; the links in a VRF in
        ``router bgp ASN vrf NAME``, one per VRF."""
        lines: list[str] = []
        for vrf, links in self.links_by_vrf(member).items():
            if links or not vrf:
                lines += self._bgp_block(member, asn, vrf, links)
        return lines

    def _bgp_block(self, member: str, asn: int, vrf: str, links: list[LinkAddrs]) -> list[str]:
        keepalive, hold = self.spec.bgp_timers
        lines = [
            router_bgp(asn, vrf),
            f" bgp router-id {self.spec.router_id(member)}",
            " no bgp ebgp-requires-policy",
            " no bgp network import-check",
            " no bgp default ipv4-unicast",
            " bgp bestpath as-path multipath-relax",
            " coalesce-time 100",
            f" timers bgp {keepalive} {hold}",
        ]
        v6only = self.spec.ipv4_over_ipv6
        for la in links:
            for addr in (la.peer_v6,) if v6only else (la.peer_v4, la.peer_v6):
                lines += [
                    f" neighbor {addr} remote-as external",
                    f" neighbor {addr} timers connect {self.spec.bgp_connect_retry}",
                    f" neighbor {addr} advertisement-interval 0",
                ]
            if v6only:
                lines.append(f" neighbor {la.peer_v6} capability extended-nexthop")
        for afi in ("ipv4", "ipv6"):
            lines.append(f" address-family {afi} unicast")
            for la in links:
                peer = la.peer_v4 if afi == "ipv4" and not v6only else la.peer_v6
                lines.append(f"  neighbor {peer} activate")
            lines.append(" exit-address-family")
        lines.append("exit")
        return lines

    def down(self) -> None:
        """Remove every namespace, process, socket and directory of this lab. Idempotent."""
        destroy(self.name, self.rundir.parent)

    # --- helpers for tests, benchmarks and the demo -----------------------------------------

    def announcer(self, member: str, vrf: str = "") -> Origin:
        """What originates and withdraws prefixes at ``member`` (``announce``, ``withdraw``)."""
        if member in self.bird:
            return self.bird[member]
        members: list[NodeSpec | PeerSpec] = [*self.spec.nodes, *self.spec.peers]
        for m in members:
            if m.name == member:
                return Announcer(self.frr[member], m.asn, vrf)
        raise KeyError(member)

    def received(self, peer: str, node: str) -> set[str]:
        """The IPv4 and IPv6 prefixes ``peer`` took from ``node`` (over their first link)."""
        la = self.link(peer, node)
        if peer in self.bird:
            bird = self.bird[peer]
            v6 = bird.routes_from(str(la.peer_v6))
            return v6 if self.spec.ipv4_over_ipv6 else bird.routes_from(str(la.peer_v4)) | v6
        out: set[str] = set()
        for afi, addr in (("ipv4", la.peer_v4), ("ipv6", la.peer_v6)):
            doc = self.frr[peer].show(f"show bgp {afi} unicast neighbors {addr} routes json")
            out.update(doc.get("routes", {}))
        return out

    def wait_bgp_up(self, timeout: float = 30.0) -> None:
        """Every lab-rendered session Established (both ends of nodes with bgp=True)."""
        for node in self.spec.nodes:
            if not node.bgp:
                continue
            for la in self.links(node.name):
                peers = (
                    [str(la.peer_v6)]
                    if self.spec.ipv4_over_ipv6
                    else [str(la.peer_v4), str(la.peer_v6)]
                )
                self.frr[node.name].wait_established(peers, timeout, la.vrf)

    def cut(self, local: str, remote: str, vrf: str = "") -> None:
        """Blackhole the link both ways without carrier loss (permanent bogus neighbors)."""
        for a, b in ((local, remote), (remote, local)):
            la = self.link(a, b, vrf)
            dev = self.address_device(la)
            for addr in (la.peer_v4, la.peer_v6):
                run(["ip", "neigh", "replace", str(addr), "lladdr", BLACKHOLE_MAC,
                     "dev", dev, "nud", "permanent"], netns=self.netns(a))  # fmt: skip

    def restore(self, local: str, remote: str, vrf: str = "") -> None:
        for a, b in ((local, remote), (remote, local)):
            la = self.link(a, b, vrf)
            dev = self.address_device(la)
            for addr in (la.peer_v4, la.peer_v6):
                run(["ip", "neigh", "del", str(addr), "dev", dev],
                    netns=self.netns(a), check=False)  # fmt: skip

    def address_device(self, la: LinkAddrs) -> str:
        """The device that holds ``la``'s local address: the link's interface, unless a wiring
        moved the address (:func:`ovn_frr.lab.vrflite.shared_gateway`)."""
        out = run(["ip", "-json", "-4", "addr", "show", "to", f"{la.v4.ip}/32"],
                  netns=self.netns(la.local))  # fmt: skip
        found = [x["ifname"] for x in json.loads(out or "[]") if x.get("addr_info")]
        return found[0] if found else la.ifname

    def _write_state(self) -> None:
        state = {
            "name": self.name,
            "pid": os.getpid(),
            "netns": [self.netns(m) for m in (["ovn"] if self.spec.ovn else []) + self.members()],
            "spec": asdict(self.spec),
            "versions": {k: str(v) if v else None for k, v in asdict(self.versions).items()},
        }
        (self.rundir / "lab.json").write_text(json.dumps(state, indent=2, default=str))


# --- labs found on this machine ---------------------------------------------------------------


def list_labs(base: Path = DEFAULT_BASE) -> list[dict[str, Any]]:
    """State of every lab under ``base`` (also half-built ones)."""
    out = []
    if base.is_dir():
        for d in sorted(base.iterdir()):
            state: dict[str, Any] = {"name": d.name, "netns": []}
            with contextlib.suppress(OSError, ValueError):
                state = json.loads((d / "lab.json").read_text())
            live = [ns for ns in netns_list() if ns.startswith(f"{d.name}-")]
            state["live_netns"] = live
            out.append(state)
    return out


def destroy(name: str, base: Path = DEFAULT_BASE) -> None:
    """Tear down lab ``name``: its namespaces (with every process in them), the FRR temp dirs
    of those processes, and its run directory."""
    for ns in netns_list():
        if ns.startswith(f"{name}-"):
            netns_destroy(ns)
    rundir = base / name
    # FRR daemons that had to be SIGKILLed leave /var/tmp/frr/<daemon>.<launcher pid>
    remove_frr_tmp([p for f in rundir.glob("*/frr/*.launch") if (p := read_pid(f))])
    if rundir.exists():
        shutil.rmtree(rundir, ignore_errors=True)
    log.info("lab_down lab=%s", name)
