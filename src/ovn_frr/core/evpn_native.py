"""The host side of OVN's own EVPN (OVN 25.09+), pure: what the chassis' Open vSwitch settings
must be, and what ovn-controller says it learned.

From 25.09 ovn-controller carries an EVPN switch's traffic in OVS itself (``type=vxlan`` ports
on br-int, ``key``/``remote_ip=flow``) and leaves the host side to the CMS
(``docs/evpn.md``, "OVN 25.09 and later"). ovn-frr does that host side from the same node
config as on older OVN:

- per EVPN switch, the kernel devices the switch's options name (``br-N``, ``vxlan-N``,
  ``lo-N`` by default), which exist only for zebra: the VXLAN device is bound to
  :data:`CONTROL_PORT`, a UDP port no VTEP sends to (OVN's own system tests do the same with
  ``60000 + VNI``; one port serves every VNI, the kernel tells them apart by VNI);
- the chassis' ``external_ids:ovn-evpn-local-ip`` and ``ovn-evpn-vxlan-ports`` from ``[evpn]
  local_ip`` and ``udp_port``, marked as ovn-frr's with :data:`CHASSIS_OWNER`;
- FRR's ``l2vpn evpn`` (``advertise-all-vni``), as on older OVN.

ovn-controller writes the local MACs (and IPs) into those devices and reads the remote ones
zebra installs there: ovn-frr writes no entry of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

#: the kernel VXLAN devices' UDP port when OVS carries the data (nothing is sent to it)
CONTROL_PORT = 60000
#: the UDP port ovn-controller assumes for a remote VTEP whose kernel entry names none, as
#: zebra's never do (``controller/neighbor-exchange.c``, ``DEFAULT_VXLAN_PORT``)
OVN_DEFAULT_PORT = 4789
LOCAL_IP = "ovn-evpn-local-ip"
VXLAN_PORTS = "ovn-evpn-vxlan-ports"
#: names the keys above that ovn-frr wrote (its value: a comma list); a key it does not name is
#: an operator's, never changed or removed
CHASSIS_OWNER = "ovn-frr-evpn-chassis"


@dataclass(frozen=True, slots=True)
class ChassisChange:
    """What one pass changes in the ``Open_vSwitch`` row's ``external_ids``."""

    set: Mapping[str, str] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.set or self.remove)


def chassis_settings(local_ip: str, port: int) -> dict[str, str]:
    return {LOCAL_IP: local_ip, VXLAN_PORTS: str(port)}


def chassis_change(current: Mapping[str, str], want: Mapping[str, str] | None) -> ChassisChange:
    """The change that makes ``current`` (the row's ``external_ids``) hold ``want`` (None: EVPN
    is off, ovn-frr's keys go). Only the keys :data:`CHASSIS_OWNER` names are ovn-frr's: a key
    an operator set to another value is left as it is and reported, one that already holds
    ovn-frr's value is used and not taken over."""
    ours = owned_keys(current)
    if want is None:
        gone = tuple(k for k in sorted(ours) if k in current)
        return ChassisChange(remove=gone + ((CHASSIS_OWNER,) if CHASSIS_OWNER in current
                                            else ()))  # fmt: skip
    put: dict[str, str] = {}
    problems: list[str] = []
    mine = set(ours)
    for key, value in want.items():
        have = current.get(key)
        if have == value:
            continue
        if have is None or key in ours:
            put[key] = value
            mine.add(key)
        else:
            problems.append(f"Open_vSwitch external_ids:{key}={have} is not ovn-frr's (it "
                            f"would be {value}): left as it is")  # fmt: skip
    if mine != ours:
        put[CHASSIS_OWNER] = ",".join(sorted(mine))
    return ChassisChange(put, (), tuple(problems))


def owned_keys(current: Mapping[str, str]) -> frozenset[str]:
    """The chassis keys ovn-frr wrote (its marker's list; nothing else is taken as its)."""
    listed = {k.strip() for k in current.get(CHASSIS_OWNER, "").split(",")}
    return frozenset(listed & {LOCAL_IP, VXLAN_PORTS})


def port_problem(port: int) -> str | None:
    """Why OVN cannot tunnel to zebra's VTEPs with ``[evpn] udp_port`` = ``port`` (None: it
    can): zebra's kernel entries carry no UDP port and ovn-controller takes 4789 for them."""
    if port == OVN_DEFAULT_PORT:
        return None
    return (f"[evpn] udp_port = {port}: OVN's own EVPN takes every remote VTEP zebra installs "
            f"at UDP port {OVN_DEFAULT_PORT} (zebra's entries name no port), so only "
            f"{OVN_DEFAULT_PORT} reaches them")  # fmt: skip


# --- what ovn-controller says (``ovn-appctl -t ovn-controller evpn/...``, OVN 25.09/26.03) ---


@dataclass(frozen=True, slots=True)
class OvnEvpn:
    """ovn-controller's EVPN state as its ``evpn/*`` commands print it."""

    #: (VTEP, UDP port, VNI) from ``evpn/remote-vtep-list``
    remote_vteps: tuple[tuple[str, int, int], ...] = ()
    #: (MAC, VNI) from ``evpn/vtep-fdb-list``: remote MACs with a flow in br-int
    fdb: tuple[tuple[str, int], ...] = ()
    #: (IP, MAC, VNI) from ``evpn/vtep-arp-list`` (26.03): remote IPs ovn-controller answers
    arp: tuple[tuple[str, str, int], ...] = ()
    #: why it could not be asked ("" when it was)
    error: str = ""

    def has_mac(self, mac: str, vni: int) -> bool:
        return (mac, vni) in self.fdb

    def has_ip(self, ip: str, vni: int) -> bool:
        return any(i == ip and v == vni for i, _, v in self.arp)

    def for_vni(self, vni: int) -> dict[str, object]:
        return {
            "remote_vteps": sorted(f"{ip}:{port}" for ip, port, v in self.remote_vteps if v == vni),
            "remote_macs": sum(1 for _, v in self.fdb if v == vni),
            "remote_ips": sum(1 for _, _, v in self.arp if v == vni),
        }


_VTEP = re.compile(r"IP: (?P<ip>[^,]+), port: (?P<port>\d+), vni: (?P<vni>\d+)")
_FDB = re.compile(r"MAC: (?P<mac>[0-9a-fA-F:]{17}), vni: (?P<vni>\d+)")
_ARP = re.compile(r"VNI: (?P<vni>\d+), MAC: (?P<mac>[0-9a-fA-F:]{17}), IP: (?P<ip>[^,]+),")


def parse_remote_vteps(text: str) -> tuple[tuple[str, int, int], ...]:
    """``IP: 169.0.0.10, port: 4789, vni: 10`` lines."""
    return tuple(sorted((m["ip"], int(m["port"]), int(m["vni"]))
                        for m in _VTEP.finditer(text)))  # fmt: skip


def parse_fdb(text: str) -> tuple[tuple[str, int], ...]:
    """``UUID: ..., MAC: f0:00:0f:16:10:50, vni: 10, binding_key: ..., dp_key: ...`` lines."""
    return tuple(sorted((m["mac"].lower(), int(m["vni"])) for m in _FDB.finditer(text)))


def parse_arp(text: str) -> tuple[tuple[str, str, int], ...]:
    """``UUID: ..., VNI: 10, MAC: f0:00:0f:16:10:50, IP: 172.16.1.50, dp_key: ...`` lines."""
    return tuple(sorted((m["ip"], m["mac"].lower(), int(m["vni"]))
                        for m in _ARP.finditer(text)))  # fmt: skip
