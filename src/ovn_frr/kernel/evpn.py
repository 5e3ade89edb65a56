"""The kernel side of EVPN L2: per VNI a bridge, a VXLAN device and a veth toward OVS, their
FDB and neighbour entries (blocking; run in the EVPN pipeline's worker thread).

zebra reads this state: a static FDB entry on a bridge port is a local MAC (type-2), a
permanent neighbour on the bridge a local MAC+IP; it writes the remote side here: MACs as
``extern_learn`` entries with the remote VTEP on the VXLAN device, VTEPs as all-zero MAC
flood entries (type-3), remote MAC+IPs as ``extern_learn`` neighbours on the bridge. FPM
carries none of the VTEPs and neighbours (FIELD-NOTES): all of it is read here.

Every device ovn-frr makes carries the alias ``ovn-frr:evpn:<vni>``; a device without it is
never changed or removed. Entries are written and read with iproute2 (``bridge``/``ip``,
``-batch`` and ``-json``): one process writes thousands of entries, and reading a dump is C
work, not a Python loop over netlink messages.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ovn_frr.command import Runner
from ovn_frr.core.evpn import Devices, EntryChange, KernelVni, parse_addr, parse_mac
from ovn_frr.core.model import Address
from ovn_frr.kernel.ethtool import set_tx_checksum, tx_checksum
from ovn_frr.kernel.iproute import KernelError, run

log = logging.getLogger(__name__)

ALIAS = "ovn-frr:evpn:"
ZERO_MAC = "00:00:00:00:00:00"


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    kind: str
    alias: str
    master: str
    up: bool
    mtu: int
    #: VXLAN devices: (VNI, local address, UDP port, learning)
    vxlan: tuple[int, str, int, bool] | None = None

    @property
    def vni(self) -> int | None:
        """The VNI of ovn-frr's alias (None: not ovn-frr's)."""
        if not self.alias.startswith(ALIAS):
            return None
        tail = self.alias[len(ALIAS) :]
        return int(tail) if tail.isdigit() else None


def _link(d: dict[str, Any]) -> Link:
    info = d.get("linkinfo", {})
    data = info.get("info_data", {})
    vx = None
    if info.get("info_kind") == "vxlan":
        vx = (
            int(data.get("id", 0)),
            str(data.get("local", "")),
            int(data.get("port", 0)),
            bool(data.get("learning", True)),
        )
    return Link(
        name=str(d.get("ifname", "")).split("@", 1)[0],
        kind=str(info.get("info_kind", "")),
        alias=str(d.get("ifalias", "")),
        master=str(d.get("master", "")),
        up="UP" in d.get("flags", ()),
        mtu=int(d.get("mtu", 0)),
        vxlan=vx,
    )


@dataclass(frozen=True, slots=True)
class VniSpec:
    """What one VNI's devices must be."""

    vni: int
    devices: Devices
    local_ip: str
    port: int
    mtu: int


class KernelEvpn:
    def __init__(
        self,
        runner: Runner = run,
        tx_get: Callable[[str], bool] = tx_checksum,
        tx_set: Callable[[str, bool], None] = set_tx_checksum,
    ) -> None:
        self._run = runner
        self._tx_get = tx_get
        self._tx_set = tx_set

    def links(self) -> dict[str, Link]:
        out = self._run(["ip", "-j", "-d", "link", "show"], None)
        return {(link := _link(d)).name: link for d in json.loads(out or "[]")}

    def owned(self, links: dict[str, Link]) -> dict[int, list[Link]]:
        """ovn-frr's devices by VNI."""
        out: dict[int, list[Link]] = {}
        for link in links.values():
            if link.vni is not None:
                out.setdefault(link.vni, []).append(link)
        return out

    def problems(self, spec: VniSpec, links: dict[str, Link]) -> list[str]:
        """Devices of ``spec`` that exist but are not ovn-frr's (never touched)."""
        d = spec.devices
        return [
            f"interface {n} exists and is not ovn-frr's (alias {links[n].alias!r})"
            for n in (*d.kernel(), d.ovs_port)
            if n in links and links[n].vni != spec.vni
        ]

    def ensure(self, spec: VniSpec, links: dict[str, Link], userspace: bool = True) -> list[str]:
        """Create or repair ``spec``'s devices; returns what was done (empty: all in place).
        ``userspace``: OVS runs the userspace datapath (its veth needs checksums done)."""
        d = spec.devices
        alias = f"{ALIAS}{spec.vni}"
        cmds: list[list[str]] = []
        done: list[str] = []
        kinds = {d.bridge: "bridge", d.vxlan: "vxlan", d.advertise: "veth", d.ovs_port: "veth"}
        for n, kind in kinds.items():  # one of ours under a name that is now another kind's
            if n in links and links[n].kind != kind:
                cmds.append(["ip", "link", "del", n])
                done.append(f"recreate {n}")
                links = {k: v for k, v in links.items() if k != n}
        vx = links.get(d.vxlan)
        want_vx = (spec.vni, spec.local_ip, spec.port, False)
        if vx is not None and vx.vxlan != want_vx:
            cmds.append(["ip", "link", "del", d.vxlan])  # its VNI, VTEP or port changed
            done.append(f"recreate {d.vxlan}")
            vx = None
        if d.bridge not in links:
            cmds.append(["ip", "link", "add", d.bridge, "type", "bridge"])
            done.append(f"add {d.bridge}")
        if vx is None:
            cmds.append(
                [
                    "ip",
                    "link",
                    "add",
                    d.vxlan,
                    "type",
                    "vxlan",
                    "id",
                    str(spec.vni),
                    "local",
                    spec.local_ip,
                    "dstport",
                    str(spec.port),
                    "nolearning",
                ]
            )
            done.append(f"add {d.vxlan}")
        if d.advertise not in links or d.ovs_port not in links:
            for n in (d.advertise, d.ovs_port):
                if n in links:
                    cmds.append(["ip", "link", "del", n])
            cmds.append(
                ["ip", "link", "add", d.advertise, "type", "veth", "peer", "name", d.ovs_port]
            )
            done.append(f"add {d.advertise}/{d.ovs_port}")
        for n in (d.bridge, d.vxlan, d.advertise, d.ovs_port):
            if n not in links:
                # no address of any kind on these devices: an address on the bridge would
                # be an SVI whose removal flushes the neighbours zebra announces (FIELD-NOTES)
                cmds.append(["ip", "link", "set", n, "addrgenmode", "none"])
        for n in (d.bridge, d.vxlan, d.advertise, d.ovs_port):
            link = links.get(n)
            if (
                link is None
                or link.alias != alias
                or not link.up
                or (n != d.bridge and link.mtu != spec.mtu)
                or (n in (d.vxlan, d.advertise) and link.master != d.bridge)
                or cmds
            ):
                cmds.append(["ip", "link", "set", n, "alias", alias])
                if n != d.bridge:
                    cmds.append(["ip", "link", "set", n, "mtu", str(spec.mtu)])
                if n in (d.vxlan, d.advertise):
                    cmds.append(["ip", "link", "set", n, "master", d.bridge])
                cmds.append(["ip", "link", "set", n, "up"])
        if cmds:
            # the bridge port toward OVN learns nothing (only the MACs written from OVN's
            # state are announced); the VXLAN port suppresses ARP/ND toward the fabric
            cmds += [
                ["bridge", "link", "set", "dev", d.advertise, "learning", "off"],
                [
                    "bridge",
                    "link",
                    "set",
                    "dev",
                    d.vxlan,
                    "learning",
                    "off",
                    "neigh_suppress",
                    "on",
                ],
            ]
            if not done:
                done.append(f"repair {d.bridge}")
        for argv in cmds:
            self._run(argv, None)
        for n in (d.advertise, d.ovs_port) if userspace else ():
            if self._tx_get(n):
                self._tx_set(n, False)
                done.append(f"tx checksum offload off on {n}")
        if done:
            log.info("evpn_devices vni=%d %s", spec.vni, "; ".join(done))
        return done

    def remove(self, vni: int, links: Sequence[Link]) -> None:
        """Delete ovn-frr's devices of ``vni`` (their entries go with them; a veth's other end
        goes with it)."""
        for link in links:
            if link.vni == vni:
                try:
                    self._run(["ip", "link", "del", link.name], None)
                except KernelError as exc:
                    if "Cannot find device" not in str(exc):
                        raise
        log.info(
            "evpn_devices_removed vni=%d devices=%s", vni, ",".join(sorted(x.name for x in links))
        )

    def read_neighbours(
        self, bridge: str, remote_only: bool = False
    ) -> tuple[dict[Address, str], dict[Address, str]]:
        """A VNI bridge's neighbours: (local: permanent, written by ovn-frr; remote: zebra's
        ``extern_learn``), IP -> MAC. ``remote_only``: ``nud noarp``, which iproute2 (6.1,
        6.15) applies to the entries without ``extern_learn`` only: zebra's are all kept, in
        any state, and 10k local (permanent) IPs never reach Python."""
        local_ips: dict[Address, str] = {}
        remote_ips: dict[Address, str] = {}
        nud = ["nud", "noarp"] if remote_only else []
        argv = ["ip", "-j", "neigh", "show", "dev", bridge, *nud]
        neigh = json.loads(self._run(argv, None) or "[]")
        for n in neigh:
            ip = parse_addr(str(n.get("dst", "")))
            mac = parse_mac(str(n.get("lladdr", "")))
            if ip is None or mac is None:
                continue
            # iproute2 shows the flag as a key of its own ("extern_learn": null)
            if "extern_learn" in n or "extern_learn" in n.get("flags", ()):
                remote_ips[ip] = mac
            elif "PERMANENT" in n.get("state", ()):
                local_ips[ip] = mac
        return local_ips, remote_ips

    def read_fdb(self, d: Devices) -> KernelVni:
        """The VNI's FDB entries: the local MACs ovn-frr wrote, the remote MACs and VTEPs
        zebra did (its IPs are :meth:`read_neighbours`', read beside it)."""
        local_macs: set[str] = set()
        remote_macs: dict[str, str] = {}
        vteps: set[str] = set()
        # the bridge's entries include those of its ports, the VXLAN device's own (``self``,
        # with their VTEP) among them: one dump (10k remote MACs are 20k entries)
        fdb = json.loads(self._run(["bridge", "-j", "fdb", "show", "br", d.bridge], None) or "[]")
        for e in fdb:
            mac = parse_mac(str(e.get("mac", "")))
            if mac is None:
                continue
            dev = e.get("ifname", "")
            flags = e.get("flags", ())
            if dev == d.advertise and e.get("state") == "static" and "master" not in flags:
                local_macs.add(mac)
            elif dev == d.vxlan and (dst := e.get("dst")):
                if mac == ZERO_MAC:
                    vteps.add(str(dst))
                elif "self" in flags:
                    remote_macs[mac] = str(dst)
        return KernelVni(frozenset(local_macs), remote_macs=remote_macs, vteps=frozenset(vteps))

    def write(self, d: Devices, change: EntryChange) -> None:
        """Apply ``change`` in at most three batches (errors in single lines do not stop
        the others: the next pass reads what is there and tries again)."""
        fdb = [f"fdb del {m} dev {d.advertise} master static" for m in change.del_macs]
        fdb += [f"fdb replace {m} dev {d.advertise} master static" for m in change.add_macs]
        # neighbours go before the MACs they name, and come back after them
        dels = [f"neigh del {ip} dev {d.bridge}" for ip in change.del_ips]
        adds = [
            f"neigh replace {ip} lladdr {mac} dev {d.bridge} nud permanent"
            for ip, mac in change.add_ips
        ]
        errors = []
        for argv, lines in (
            (["ip", "-force", "-batch", "-"], dels),
            (["bridge", "-force", "-batch", "-"], fdb),
            (["ip", "-force", "-batch", "-"], adds),
        ):
            if not lines:
                continue
            try:
                self._run(argv, "\n".join(lines) + "\n")
            except KernelError as exc:
                errors.append(str(exc))
        if errors:
            raise KernelError("; ".join(errors))
