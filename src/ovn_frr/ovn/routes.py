"""OVN NB/SB as ovn-frr sees them, as frozen snapshots.

The IDL monitors only the Logical_Router_Static_Route rows ovn-frr did not write (a conditional
monitor on the constant owner pair, for ``static`` redistribution): the rows ovn-frr owns can be
100k+ and are tracked by :mod:`ovn_frr.ovn.bulk` (see there for the measurements behind this).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from typing import Any

from ovn_frr.core.model import Interface, Network, OvnSnapshot, Router, RouterPort
from ovn_frr.ovn.bulk import LRSR, OWNER
from ovn_frr.ovn.db import OvsdbConnection

log = logging.getLogger(__name__)

NB_TABLES = {
    "Logical_Router": ["name", "options", "ports", "nat", "load_balancer"],
    "Logical_Router_Port": ["name", "networks", "options"],
    "Logical_Switch": ["name", "ports", "load_balancer"],
    "Logical_Switch_Port": ["name", "addresses", "dynamic_addresses", "type", "options"],
    "NAT": ["external_ip", "type", "logical_port", "external_mac", "options"],
    "Load_Balancer": ["name", "vips", "options"],
    LRSR: ["ip_prefix", "policy", "options", "external_ids"],
}
#: the static routes ovn-frr did not write (any chassis)
NOT_OURS = [["external_ids", "excludes", ["map", [list(OWNER)]]]]
SB_TABLES = {
    "Port_Binding": ["logical_port", "chassis", "type"],
    "Chassis": ["name"],
}


def nb_connection(remote: str) -> OvsdbConnection:
    return OvsdbConnection(remote, "OVN_Northbound", NB_TABLES, conditions={LRSR: NOT_OURS})


def sb_connection(remote: str, chassis: str) -> OvsdbConnection:
    """Only what locality needs: port bindings (three columns) and this chassis' own row, so
    that a binding's chassis resolves only when it is this one."""
    return OvsdbConnection(
        remote, "OVN_Southbound", SB_TABLES, conditions={"Chassis": [["name", "==", chassis]]}
    )


def bound_ports(sb_idl: Any) -> frozenset[str]:
    """Logical ports bound on this chassis (the only chassis row the SB IDL monitors)."""
    return frozenset(
        pb.logical_port for pb in sb_idl.tables["Port_Binding"].rows.values() if pb.chassis
    )


def gateway_ports(bound: frozenset[str]) -> frozenset[str]:
    """Router ports whose chassisredirect binding (cr-<port>) is among ``bound``."""
    return frozenset(p[3:] for p in bound if p.startswith("cr-"))


def ifaces(networks: Iterable[str]) -> tuple[Interface, ...]:
    out = []
    for n in networks:
        try:
            out.append(ipaddress.ip_interface(n))
        except ValueError:
            log.warning("bad_port_network network=%r", n)
    return tuple(out)


def _host(addr: str) -> Network | None:
    try:
        return ipaddress.ip_network(addr.strip("[]"))
    except ValueError:
        return None


def vip_host(vip: str) -> Network | None:
    """An LB VIP key: ``IP``, ``IP:PORT`` or ``[IPv6]:PORT``."""
    if vip.startswith("["):
        return _host(vip[1 : vip.index("]")])
    if vip.count(":") == 1:
        return _host(vip.split(":", maxsplit=1)[0])
    return _host(vip)


def nb_snapshot(nb_idl: Any, chassis: str, bound_ports: frozenset[str]) -> OvnSnapshot:
    """Build the frozen view of NB (call with the IDL quiescent). Its ``routes`` are empty:
    this chassis' route rows are tracked by the bulk writer (see ovn_frr.ovn.bulk)."""
    t = nb_idl.tables
    owned_prefixes: dict[Network, str] = {}
    routers = []
    for lr in t["Logical_Router"].rows.values():
        ports = []
        for lrp in lr.ports:
            nets = ifaces(lrp.networks)
            for n in nets:
                owned_prefixes.setdefault(n.network, f"port {lrp.name}")
            ports.append(RouterPort(lrp.name, nets, dict(lrp.options), lrp.name in bound_ports))
        options = dict(lr.options)
        pinned = options.get("chassis") == chassis
        routers.append(Router(lr.name, options, tuple(ports), pinned, str(lr.uuid)))
        for nat in lr.nat:
            if (h := _host(nat.external_ip)) is not None:
                owned_prefixes.setdefault(h, f"NAT {nat.external_ip} on {lr.name}")
        for lb in lr.load_balancer:
            _add_vips(owned_prefixes, lb)
    for ls in t["Logical_Switch"].rows.values():
        for lb in ls.load_balancer:
            _add_vips(owned_prefixes, lb)
        for lsp in ls.ports:
            if lsp.type == "router":
                continue
            entries = list(lsp.addresses) + list(lsp.dynamic_addresses)
            for entry in entries:
                for word in entry.split()[1:]:  # "MAC IP IP ..." (router/unknown/dynamic: no IP)
                    if (h := _host(word.split("/")[0])) is not None:
                        owned_prefixes.setdefault(h, f"LSP {lsp.name}")
    return OvnSnapshot(tuple(sorted(routers, key=lambda r: r.name)), owned_prefixes)


def _add_vips(owned: dict[Network, str], lb: Any) -> None:
    for vip in lb.vips:
        if (h := vip_host(vip)) is not None:
            owned.setdefault(h, f"LB {lb.name} VIP {vip}")
