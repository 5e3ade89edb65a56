"""EVPN L2 from OVN's intent (pure): which logical switches are in EVPN on this chassis, what
they announce, and what the data path between OVN and the kernel's VXLAN needs.

Intent, in OVN's own vocabulary (Logical_Switch ``other_config``, OVN 25.09/26.03 read the
same keys):

- ``dynamic-routing-vni=N`` (1..16777215) puts the switch in EVPN with VNI N;
- ``dynamic-routing-redistribute=fdb`` announces the MACs of the switch's ports bound on
  this chassis (type-2 MAC), ``fdb,ip`` their IPs too (type-2 MAC+IP); unset: ``fdb``;
- ``dynamic-routing-bridge-ifname`` / ``-vxlan-ifname`` / ``-advertise-ifname`` name the
  kernel bridge, the VXLAN device and the bridge port toward OVN (default ``br-N``,
  ``vxlan-N``, ``lo-N``, OVN 25.09's names).

The data path per VNI (``docs/evpn.md``)::

    OVN port ─ br-int ─(localnet ovnfrr-evpn-N, patch)─ OVS bridge br-evN ─ veth ovs-N/lo-N
       ─ Linux bridge br-N ─ vxlan-N (VNI N, this VTEP) ─ underlay

A localnet port makes OVN send the switch's traffic to other chassis through the "physical"
network (here: the EVPN fabric), each chassis through its own uplink: a broadcast from an OVN
port leaves its own chassis once and no other (OVN never floods what came in from a localnet
back out of one). ``br-evN``'s flow table is ovn-frr's: it wires the patch port and the veth
and answers ARP requests (and IPv6 neighbour solicitations) for the remote hosts EVPN taught
the kernel (type-2 MAC+IP), so those never reach the kernel bridge or the fabric.

A malformed option is a problem line naming the switch; that switch alone is left out.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ovn_frr.core.model import Address
from ovn_frr.core.ovn import IFNAME, OPT_REDISTRIBUTE, LogicalSwitch, OvnState, problem

OPT_VNI = "dynamic-routing-vni"
OPT_BRIDGE = "dynamic-routing-bridge-ifname"
OPT_VXLAN = "dynamic-routing-vxlan-ifname"
OPT_ADVERTISE_IF = "dynamic-routing-advertise-ifname"
VNI_MAX = 16_777_215
DEVICE_OPTIONS = (OPT_BRIDGE, OPT_VXLAN, OPT_ADVERTISE_IF)
SWITCH_CLASSES = frozenset({"fdb", "ip"})
#: the localnet port (and its network name) ovn-frr keeps on an EVPN switch
LOCALNET = "ovnfrr-evpn-"
#: external_ids key marking the localnet port as ovn-frr's (value: the VNI)
LOCALNET_OWNER = "ovn-frr:evpn"
MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def localnet_name(vni: int) -> str:
    return f"{LOCALNET}{vni}"


@dataclass(frozen=True, slots=True)
class Devices:
    """The devices of one VNI on this chassis (all ovn-frr's)."""

    bridge: str
    vxlan: str
    #: the bridge port toward OVN (one end of a veth): where local MACs are written
    advertise: str
    #: the veth's other end, a port of ``ovs_bridge``
    ovs_port: str
    ovs_bridge: str

    def kernel(self) -> tuple[str, ...]:
        return (self.bridge, self.vxlan, self.advertise)


def default_devices(vni: int) -> Devices:
    return Devices(f"br-{vni}", f"vxlan-{vni}", f"lo-{vni}", f"ovs-{vni}", f"br-ev{vni}")


@dataclass(frozen=True, slots=True)
class EvpnSwitch:
    """One EVPN switch as this chassis serves it."""

    vni: int
    switch: str
    switch_uuid: str
    #: announce MACs (always, when in EVPN) and IPs (``ip``)
    ip: bool
    devices: Devices
    #: MAC -> IPs of the switch's ports bound on this chassis (IPs empty without ``ip``)
    local: Mapping[str, tuple[Address, ...]] = field(default_factory=dict)
    #: MAC -> the port it belongs to (status and trace)
    owners: Mapping[str, str] = field(default_factory=dict)
    #: the switch has ovn-frr's localnet port already
    localnet_present: bool = False
    #: the device options the switch does not set (their defaults are OVN 25.09's names, which
    #: OVN 26.03 no longer assumes: there a missing one leaves that device out)
    unnamed: tuple[str, ...] = ()

    @property
    def network(self) -> str:
        return localnet_name(self.vni)


@dataclass(frozen=True, slots=True)
class StaleLocalnet:
    """A localnet port ovn-frr made on a switch that no longer asks for its VNI."""

    switch_uuid: str
    port: str


@dataclass(frozen=True, slots=True)
class EvpnIntent:
    switches: tuple[EvpnSwitch, ...] = ()
    stale: tuple[StaleLocalnet, ...] = ()
    problems: tuple[str, ...] = ()

    def by_vni(self) -> dict[int, EvpnSwitch]:
        return {s.vni: s for s in self.switches}


def _vni(sw: LogicalSwitch, problems: list[str]) -> int | None:
    text = sw.other_config.get(OPT_VNI)
    if text is None:
        return None
    t = text.strip()
    if not t.isdigit() or not 1 <= int(t) <= VNI_MAX:
        problems.append(problem("switch", sw.name, OPT_VNI, text, f"is not a VNI (1..{VNI_MAX})"))
        return None
    return int(t)


def _parse(sw: LogicalSwitch, vni: int, problems: list[str]) -> tuple[bool, Devices] | None:
    """(announce IPs, devices) of an EVPN switch, or None (its problems appended)."""
    bad = len(problems)
    ip = False
    text = sw.other_config.get(OPT_REDISTRIBUTE)
    if text is not None:
        tokens = {t.strip() for t in text.split(",") if t.strip()}
        unknown = sorted(tokens - SWITCH_CLASSES)
        if unknown or "fdb" not in tokens:
            why = (
                f"has unknown class(es) {', '.join(unknown)}" if unknown else "lacks fdb"
            ) + " (a switch announces fdb or fdb,ip)"
            problems.append(problem("switch", sw.name, OPT_REDISTRIBUTE, text, why))
        ip = "ip" in tokens
    dev = default_devices(vni)
    names = {}
    for opt, default in (
        (OPT_BRIDGE, dev.bridge),
        (OPT_VXLAN, dev.vxlan),
        (OPT_ADVERTISE_IF, dev.advertise),
    ):
        name = sw.other_config.get(opt, default).strip()
        if not IFNAME.fullmatch(name):
            problems.append(problem("switch", sw.name, opt, name, "is not an interface name"))
        names[opt] = name
    if len(set(names.values())) != len(names):
        problems.append(
            f"switch {sw.name}: the bridge, vxlan and advertise interfaces "
            f"need three different names, got {sorted(names.values())}"
        )
    if len(problems) > bad:
        return None
    return ip, Devices(
        names[OPT_BRIDGE], names[OPT_VXLAN], names[OPT_ADVERTISE_IF], dev.ovs_port, dev.ovs_bridge
    )


def evpn_intent(state: OvnState) -> EvpnIntent:
    """The EVPN switches this chassis serves (every one in its share of OVN: a switch with a
    port bound here, or behind a router this chassis routes for), their local MACs/IPs, and
    ovn-frr's localnet ports that are no longer wanted."""
    problems: list[str] = []
    wanted: dict[int, list[tuple[LogicalSwitch, bool, Devices]]] = {}
    stale: list[StaleLocalnet] = []
    for sw in sorted(state.switches.values(), key=lambda s: (s.name, s.uuid)):
        vni = _vni(sw, problems)
        parsed = _parse(sw, vni, problems) if vni is not None else None
        for lsp in sw.ports:
            ours = lsp.type == "localnet" and lsp.name.startswith(LOCALNET)
            if ours and (parsed is None or lsp.name != localnet_name(vni or 0)):
                stale.append(StaleLocalnet(sw.uuid, lsp.name))
        if vni is not None and parsed is not None:
            wanted.setdefault(vni, []).append((sw, *parsed))
    out: list[EvpnSwitch] = []
    devices_seen: dict[str, int] = {}
    for vni, candidates in sorted(wanted.items()):
        entries = candidates
        if len(entries) > 1:
            # the switch that has the VNI's localnet port already keeps it (a VNI being moved
            # to another switch does not take the working one down); otherwise none does
            holders = [e for e in entries if _has_localnet(e[0], vni)]
            names = ", ".join(sw.name for sw, _, _ in entries)
            kept = holders[0][0].name if len(holders) == 1 else ""
            how = f"{kept} keeps it, the others are left out" if kept else "each is left out"
            problems.append(f"switches {names}: {OPT_VNI}={vni} on more than one switch ({how})")
            if not kept:
                continue
            entries = holders
        sw, ip, dev = entries[0]
        others = [p.name for p in sw.ports if p.type == "localnet" and p.name != localnet_name(vni)]
        if others:
            problems.append(
                f"switch {sw.name}: has localnet port {others[0]} already (OVN uses one "
                "localnet per switch on a chassis): left out of EVPN"
            )
            continue
        clash = [d for d in dev.kernel() if d in devices_seen]
        if clash:
            problems.append(
                f"switch {sw.name}: interface {clash[0]} is also VNI "
                f"{devices_seen[clash[0]]}'s (left out)"
            )
            continue
        devices_seen.update(dict.fromkeys(dev.kernel(), vni))
        local: dict[str, tuple[Address, ...]] = {}
        owners: dict[str, str] = {}
        for lsp in sw.ports:
            if lsp.type != "" or not lsp.bound_here or not lsp.advertise:
                continue
            for mac, addrs in lsp.entries:  # each MAC with the IPs of its own entry
                ips = tuple(addrs) if ip else ()
                local[mac] = tuple(sorted(set(local.get(mac, ()) + ips), key=_addr_key))
                owners.setdefault(mac, lsp.name)
        unnamed = tuple(o for o in DEVICE_OPTIONS if not sw.other_config.get(o, "").strip())
        out.append(EvpnSwitch(vni, sw.name, sw.uuid, ip, dev, local, owners,
                              _has_localnet(sw, vni), unnamed))  # fmt: skip
    return EvpnIntent(tuple(out), tuple(stale), tuple(problems))


def _has_localnet(sw: LogicalSwitch, vni: int) -> bool:
    return any(p.type == "localnet" and p.name == localnet_name(vni) for p in sw.ports)


def _addr_key(a: Address) -> tuple[int, int]:
    return (a.version, int(a))


# --- what the kernel shows, and the change toward the intent --------------------------------


@dataclass(frozen=True, slots=True)
class KernelVni:
    """One VNI's entries in the kernel, as last read."""

    #: MACs written as static FDB entries on the advertise port (ovn-frr's)
    local_macs: frozenset[str] = frozenset()
    #: IP -> MAC, permanent neighbours on the bridge (ovn-frr's)
    local_ips: Mapping[Address, str] = field(default_factory=dict)
    #: remote MAC -> VTEP (zebra's, from type-2)
    remote_macs: Mapping[str, str] = field(default_factory=dict)
    #: remote VTEPs (zebra's flood entries, from type-3)
    vteps: frozenset[str] = frozenset()
    #: remote IP -> MAC (zebra's, from type-2 MAC+IP)
    remote_ips: Mapping[Address, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EntryChange:
    """What one pass writes into one VNI's bridge."""

    add_macs: tuple[str, ...] = ()
    del_macs: tuple[str, ...] = ()
    add_ips: tuple[tuple[Address, str], ...] = ()
    del_ips: tuple[Address, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.add_macs or self.del_macs or self.add_ips or self.del_ips)


def entry_change(sw: EvpnSwitch, seen: KernelVni) -> EntryChange:
    """The FDB and neighbour writes that make the kernel hold exactly ``sw``'s local entries
    (a MAC that moved to another chassis is deleted here: MAC mobility does the rest)."""
    want_ips = {ip: mac for mac, ips in sw.local.items() for ip in ips}
    add_ips = tuple(
        sorted(
            ((ip, mac) for ip, mac in want_ips.items() if seen.local_ips.get(ip) != mac),
            key=lambda x: _addr_key(x[0]),
        )
    )
    del_ips = tuple(sorted((ip for ip in seen.local_ips if ip not in want_ips), key=_addr_key))
    return EntryChange(
        add_macs=tuple(sorted(set(sw.local) - seen.local_macs)),
        del_macs=tuple(sorted(seen.local_macs - set(sw.local))),
        add_ips=add_ips,
        del_ips=del_ips,
    )


# --- the OVS bridge between OVN and the kernel ------------------------------------------------


#: the cookie of the answer flows: one request removes all of them (``delete
#: cookie=0xe1/-1``: 10k flows in 0.02 s, 10k strict deletions 0.13 s, OVS 3.1)
ANSWER_COOKIE = "0xe1"
_ANSWER = f"cookie={ANSWER_COOKIE},"


def is_answer(flow: str) -> bool:
    """Whether ``flow`` (of :func:`responder_flows`) answers for a remote IP."""
    return flow.startswith(_ANSWER)


#: the second half of every answer, the same for all remote IPs (table 2: ARP, tables 3 and 4:
#: ND); the flow per IP only names the IP and its MAC (10k added in 0.09 s instead of 0.13 s,
#: OVS 3.1)
ANSWER_TAIL = (
    # ARP reply: the requester's addresses become the target's; the IP asked for (kept in
    # reg0) the sender's, with the MAC the first half set as the Ethernet source
    "table=2,priority=100,arp actions=set_field:2->arp_op,move:arp_sha->arp_tha,"
    "move:eth_src->arp_sha,move:arp_tpa->NXM_NX_REG0[],move:arp_spa->arp_tpa,"
    "move:NXM_NX_REG0[]->arp_spa,IN_PORT",
    # neighbour advertisement, in two steps: OVS checks a set_field's prerequisites against
    # the match, so the target link-layer address can be written only once the packet is an
    # NA (measured on OVS 3.1; it fixes the ICMPv6 checksum itself)
    "table=3,priority=100,icmp6,icmpv6_type=135 actions=move:ipv6_src->ipv6_dst,"
    "move:nd_target->ipv6_src,set_field:136->icmpv6_type,set_field:0x60000000->nd_reserved,"
    "set_field:2->nd_options_type,resubmit(,4)",
    "table=4,priority=100,icmp6,icmpv6_type=136 actions=move:eth_src->nd_tll,IN_PORT",
)


def responder_flows(patch: str, port: str, remote_ips: Mapping[Address, str]) -> list[str]:
    """The flow table of a VNI's OVS bridge (``ovs-ofctl`` syntax, port names): the patch
    port toward OVN and the veth toward the kernel bridge wired together, and for each remote
    IP EVPN taught the kernel an ARP reply (IPv4) or neighbour advertisement (IPv6) made here
    and sent back to OVN, so the request never leaves the chassis. The flow per IP (with
    :data:`ANSWER_COOKIE`) sets the Ethernet addresses and goes on in :data:`ANSWER_TAIL`."""
    flows = [
        "priority=0 actions=drop",
        f"priority=10,in_port={patch} actions=output:{port}",
        f"priority=10,in_port={port} actions=output:{patch}",
        *ANSWER_TAIL,
    ]
    for ip, mac in sorted(remote_ips.items(), key=lambda x: _addr_key(x[0])):
        if not MAC.match(mac):
            continue
        if ip.version == 4:
            match, tail = f"arp,arp_op=1,arp_tpa={ip}", 2
        else:
            match = f"icmp6,icmpv6_type=135,icmpv6_code=0,nd_target={ip},nd_options_type=1"
            tail = 3
        actions = f"move:eth_src->eth_dst,set_field:{mac}->eth_src,resubmit(,{tail})"
        flows.append(f"{_ANSWER}priority=100,in_port={patch},{match} actions={actions}")
    return flows


def parse_mac(text: str) -> str | None:
    mac = text.strip().lower()
    return mac if MAC.match(mac) else None


@functools.lru_cache(maxsize=1 << 16)
def parse_addr(text: str) -> Address | None:
    """An IP address as iproute2 prints it (``fe80::1%eth0`` too). Cached: each pass reads
    every neighbour of a VNI again, 10k of them parsed anew took ~0.1 s."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
