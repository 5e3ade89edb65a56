"""OVN's advertisement intent as frozen values for :mod:`ovn_frr.core.advertise`.

Reads NB (routers, ports, the switches behind them, NAT, load balancers) with the IDL quiescent,
and takes from SB the logical ports bound on this chassis for locality. Static routes: the IDL
holds only the rows ovn-frr did not write, and that table has no reference to its router, so the
caller asks ovsdb-server which router holds each (:meth:`BulkWriter.routers_of`, only when that
set of rows changed) and :func:`with_statics` attaches them.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ovn_frr.core.advertise import (
    IntentNat,
    IntentPort,
    IntentRouter,
    IntentStatic,
    SwitchPort,
    Vip,
)
from ovn_frr.core.model import Address
from ovn_frr.ovn.bulk import LRSR
from ovn_frr.ovn.routes import ifaces, vip_host

log = logging.getLogger(__name__)


def _addr(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.split("/", maxsplit=1)[0])
    except ValueError:
        return None


def _lsp_addresses(lsp: Any) -> tuple[Address, ...]:
    out = []
    for entry in [*lsp.addresses, *lsp.dynamic_addresses]:
        for word in entry.split()[1:]:  # "MAC IP IP ..."; router/unknown/dynamic carry none
            if (a := _addr(word)) is not None:
                out.append(a)
    return tuple(out)


def _vips(lb: Any) -> tuple[Vip, ...]:
    out = []
    for key in lb.vips:
        net = vip_host(key)
        if net is not None:
            out.append(Vip(lb.name, net.network_address, dict(lb.options)))
    return tuple(out)


def intent_snapshot(nb_idl: Any, chassis: str, bound: frozenset[str]) -> tuple[IntentRouter, ...]:
    """Routers with dynamic routing on, with what each could announce (call with the IDL
    quiescent). ``bound``: logical ports bound on this chassis (SB)."""
    t = nb_idl.tables
    switch_of: dict[str, Any] = {}  # router port name -> the logical switch behind it
    for ls in t["Logical_Switch"].rows.values():
        for lsp in ls.ports:
            if lsp.type == "router" and "router-port" in lsp.options:
                switch_of[lsp.options["router-port"]] = ls
    routers = []
    for lr in t["Logical_Router"].rows.values():
        options = dict(lr.options)
        if options.get("dynamic-routing", "").lower() != "true":
            continue
        pinned = options.get("chassis") == chassis
        ports = []
        for lrp in lr.ports:
            ls = switch_of.get(lrp.name)
            lsps: tuple[SwitchPort, ...] = ()
            vips: tuple[Vip, ...] = ()
            if ls is not None:
                lsps = tuple(
                    SwitchPort(p.name, _lsp_addresses(p), dict(p.options), p.name in bound)
                    for p in ls.ports
                    if p.type != "router"
                )
                vips = tuple(v for lb in ls.load_balancer for v in _vips(lb))
            ports.append(IntentPort(lrp.name, ifaces(lrp.networks), dict(lrp.options),
                                    f"cr-{lrp.name}" in bound, lsps, vips))  # fmt: skip
        gateway_here = pinned or any(p.bound_here for p in ports)
        nats = []
        for nat in lr.nat:
            ext = _addr(nat.external_ip)
            if ext is None:
                log.warning("bad_nat router=%s external_ip=%r", lr.name, nat.external_ip)
                continue
            # a distributed dnat_and_snat is served where its logical port is bound
            distributed = nat.type == "dnat_and_snat" and nat.logical_port and nat.external_mac
            here = nat.logical_port[0] in bound if distributed else gateway_here
            nats.append(IntentNat(ext, dict(nat.options), here))
        vips = tuple(v for lb in lr.load_balancer for v in _vips(lb))
        routers.append(IntentRouter(lr.name, options, tuple(ports), tuple(nats), vips,
                                    pinned_here=pinned))  # fmt: skip
    return tuple(sorted(routers, key=lambda r: r.name))


@dataclass(frozen=True, slots=True)
class StaticRow:
    """A Logical_Router_Static_Route row ovn-frr did not write."""

    uuid: str
    ip_prefix: str
    policy: str
    options: Mapping[str, str]
    external_ids: Mapping[str, str]


def static_rows(nb_idl: Any) -> tuple[StaticRow, ...]:
    """The static routes the IDL monitors (call with the IDL quiescent)."""
    return tuple(
        StaticRow(
            str(r.uuid),
            r.ip_prefix,
            r.policy[0] if r.policy else "dst-ip",
            dict(r.options),
            dict(r.external_ids),
        )
        for r in nb_idl.tables[LRSR].rows.values()
    )


def with_statics(
    routers: tuple[IntentRouter, ...], rows: tuple[StaticRow, ...], router_of: Mapping[str, str]
) -> tuple[IntentRouter, ...]:
    """Attach to each router its static routes that can be announced: destination routes
    (``policy=src-ip`` routes match sources, they are not reachability), not written by any
    ovn-frr (a row of an older ovn-frr without the owner pair still has its chassis marker)."""
    by_router: dict[str, list[IntentStatic]] = {}
    for row in rows:
        name = router_of.get(row.uuid)
        if name is None or row.policy == "src-ip":
            continue
        if any(k.startswith("ovn-frr:") for k in row.external_ids):
            continue
        try:
            prefix = ipaddress.ip_network(row.ip_prefix, strict=False)
        except ValueError:
            log.warning("bad_static_route router=%s ip_prefix=%r", name, row.ip_prefix)
            continue
        by_router.setdefault(name, []).append(IntentStatic(prefix, row.options))
    return tuple(
        replace(r, statics=tuple(sorted(by_router.get(r.name, ()), key=str)))
        if r.name in by_router else r
        for r in routers
    )  # fmt: skip
