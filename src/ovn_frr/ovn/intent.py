"""OVN's advertisement intent as frozen values for :mod:`ovn_frr.core.advertise`.

Reads NB (routers, ports, the switches behind them, NAT, load balancers) with the IDL quiescent,
and takes from SB the logical ports bound on this chassis for locality.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from ovn_frr.core.advertise import IntentNat, IntentPort, IntentRouter, SwitchPort, Vip
from ovn_frr.core.model import Address
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
