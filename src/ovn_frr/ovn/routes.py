"""OVN NB/SB as ovn-frr sees them: frozen snapshots out, owned static routes written back.

Everything ovn-frr writes carries ``external_ids:ovn-frr:chassis=<chassis>``; rows without the
marker of this chassis are never modified or deleted (checked again inside the transaction).
"""

from __future__ import annotations

import ipaddress
import logging
import uuid
from collections.abc import Iterable
from typing import Any

from ovn_frr.core.importer import RouteDiff
from ovn_frr.core.model import Interface, Network, OvnSnapshot, OwnedRoute, Router, RouterPort
from ovn_frr.ovn.db import OvsdbConnection

log = logging.getLogger(__name__)

MARK = "ovn-frr:chassis"
LRSR = "Logical_Router_Static_Route"

NB_TABLES = {
    "Logical_Router": ["name", "options", "ports", "static_routes", "nat", "load_balancer"],
    "Logical_Router_Port": ["name", "networks", "options"],
    LRSR: ["ip_prefix", "nexthop", "output_port", "external_ids", "policy", "route_table"],
    "Logical_Switch": ["name", "ports", "load_balancer"],
    "Logical_Switch_Port": ["name", "addresses", "dynamic_addresses", "type"],
    "NAT": ["external_ip", "type", "logical_port"],
    "Load_Balancer": ["name", "vips"],
}
SB_TABLES = {
    "Port_Binding": ["logical_port", "chassis", "type"],
    "Chassis": ["name"],
}


def nb_connection(remote: str) -> OvsdbConnection:
    return OvsdbConnection(remote, "OVN_Northbound", NB_TABLES)


def sb_connection(remote: str, chassis: str) -> OvsdbConnection:
    """Only what locality needs: chassisredirect bindings and this chassis' own row."""
    return OvsdbConnection(
        remote,
        "OVN_Southbound",
        SB_TABLES,
        conditions={
            "Port_Binding": [["type", "==", "chassisredirect"]],
            "Chassis": [["name", "==", chassis]],
        },
    )


def bound_gateway_ports(sb_idl: Any, chassis: str) -> frozenset[str]:
    """Names of router ports whose chassisredirect binding (cr-<port>) is on ``chassis``."""
    out = set()
    for pb in sb_idl.tables["Port_Binding"].rows.values():
        if pb.type != "chassisredirect" or not pb.chassis:
            continue
        if pb.chassis[0].name == chassis and pb.logical_port.startswith("cr-"):
            out.add(pb.logical_port[3:])
    return frozenset(out)


def _ifaces(networks: Iterable[str]) -> tuple[Interface, ...]:
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


def _vip_host(vip: str) -> Network | None:
    """An LB VIP key: ``IP``, ``IP:PORT`` or ``[IPv6]:PORT``."""
    if vip.startswith("["):
        return _host(vip[1 : vip.index("]")])
    if vip.count(":") == 1:
        return _host(vip.split(":", maxsplit=1)[0])
    return _host(vip)


def nb_snapshot(nb_idl: Any, chassis: str, bound_ports: frozenset[str]) -> OvnSnapshot:
    """Build the frozen view of NB (call with the IDL quiescent)."""
    t = nb_idl.tables
    owned: dict[Network, str] = {}
    routers = []
    routes = []
    for lr in t["Logical_Router"].rows.values():
        ports = []
        for lrp in lr.ports:
            nets = _ifaces(lrp.networks)
            for n in nets:
                owned.setdefault(n.network, f"port {lrp.name}")
            ports.append(RouterPort(lrp.name, nets, dict(lrp.options), lrp.name in bound_ports))
        options = dict(lr.options)
        routers.append(Router(lr.name, options, tuple(ports), options.get("chassis") == chassis))
        for nat in lr.nat:
            if (h := _host(nat.external_ip)) is not None:
                owned.setdefault(h, f"NAT {nat.external_ip} on {lr.name}")
        for lb in lr.load_balancer:
            _add_vips(owned, lb)
        for sr in lr.static_routes:
            if sr.external_ids.get(MARK) == chassis:
                port = sr.output_port[0] if sr.output_port else None
                routes.append(OwnedRoute(str(sr.uuid), lr.name, sr.ip_prefix, sr.nexthop, port))
    for ls in t["Logical_Switch"].rows.values():
        for lb in ls.load_balancer:
            _add_vips(owned, lb)
        for lsp in ls.ports:
            if lsp.type == "router":
                continue
            entries = list(lsp.addresses) + list(lsp.dynamic_addresses)
            for entry in entries:
                for word in entry.split()[1:]:  # "MAC IP IP ..." (router/unknown/dynamic: no IP)
                    if (h := _host(word.split("/")[0])) is not None:
                        owned.setdefault(h, f"LSP {lsp.name}")
    return OvnSnapshot(tuple(sorted(routers, key=lambda r: r.name)), owned, tuple(routes))


def _add_vips(owned: dict[Network, str], lb: Any) -> None:
    for vip in lb.vips:
        if (h := _vip_host(vip)) is not None:
            owned.setdefault(h, f"LB {lb.name} VIP {vip}")


def apply_routes(nb: OvsdbConnection, chassis: str, diff: RouteDiff) -> tuple[int, int]:
    """Write ``diff`` in one transaction; returns (added, deleted)."""

    def txn_fn(idl: Any, txn: Any) -> tuple[int, int]:
        routers = {r.name: r for r in idl.tables["Logical_Router"].rows.values()}
        rows = idl.tables[LRSR].rows
        added = deleted = 0
        for d in diff.delete:
            u = uuid.UUID(d.uuid)
            row = rows.get(u)
            lr = routers.get(d.router)
            if row is None or lr is None or row.external_ids.get(MARK) != chassis:
                continue  # gone meanwhile, or not ours: never touch
            lr.delvalue("static_routes", u)
            row.delete()
            deleted += 1
        for a in diff.add:
            lr = routers.get(a.router)
            if lr is None:
                continue
            row = txn.insert(idl.tables[LRSR])
            row.ip_prefix = a.prefix
            row.nexthop = a.nexthop
            row.output_port = [a.output_port]
            row.external_ids = {MARK: chassis}
            lr.addvalue("static_routes", row.uuid)
            added += 1
        return added, deleted

    result: tuple[int, int] = nb.transact(txn_fn)
    return result
