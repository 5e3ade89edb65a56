"""What this chassis announces, from OVN's intent (pure).

OVN's own option names (OVN 25.03 vocabulary, read on any OVN version):

- Logical_Router ``options:dynamic-routing=true`` turns a router on;
  ``options:dynamic-routing-redistribute`` (comma list), overridable per router port, picks the
  classes: ``connected`` (port networks), ``connected-as-host`` (a host route per address of
  each logical switch port on those networks), ``static`` (the router's destination static
  routes, never the ones ovn-frr imported, never a default route), ``nat`` (NAT external IPs),
  ``lb`` (load balancer VIPs on the router or its switches);
  ``options:dynamic-routing-vrf-name`` the FRR VRF.
- ``options:dynamic-routing-redistribute-local-only=true``: only what is bound on this chassis.
- ``options:dynamic-routing-advertise=false`` on a switch port, NAT, load balancer or static
  route opts that object out.
An unknown token or malformed value is reported with the object's name and that object is
ignored; everything else is still announced.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ovn_frr.core.model import Address, Interface, Network

#: a Linux interface name, as FRR VRFs are (at most 15 characters)
VRF_NAME = re.compile(r"[A-Za-z0-9_.-]{1,15}")
CLASSES = frozenset({"connected", "connected-as-host", "static", "nat", "lb"})
OPT_REDISTRIBUTE = "dynamic-routing-redistribute"
OPT_LOCAL_ONLY = "dynamic-routing-redistribute-local-only"
OPT_ADVERTISE = "dynamic-routing-advertise"


@dataclass(frozen=True, slots=True)
class SwitchPort:
    name: str
    addresses: tuple[Address, ...]
    options: Mapping[str, str] = field(default_factory=dict)
    bound_here: bool = False


@dataclass(frozen=True, slots=True)
class Vip:
    """A load balancer VIP (the balancer's name and options travel with it)."""

    lb: str
    address: Address
    options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IntentPort:
    name: str
    networks: tuple[Interface, ...]
    options: Mapping[str, str] = field(default_factory=dict)
    #: the port's gateway (chassisredirect) binding is on this chassis
    bound_here: bool = False
    #: the logical switch behind the port: its ports and its load balancers' VIPs
    switch_ports: tuple[SwitchPort, ...] = ()
    switch_vips: tuple[Vip, ...] = ()


@dataclass(frozen=True, slots=True)
class IntentNat:
    external_ip: Address
    options: Mapping[str, str] = field(default_factory=dict)
    #: where the NAT is served: its logical port (distributed dnat_and_snat) or the gateway
    bound_here: bool = False


@dataclass(frozen=True, slots=True)
class IntentStatic:
    prefix: Network
    options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IntentRouter:
    name: str
    options: Mapping[str, str]
    ports: tuple[IntentPort, ...] = ()
    nats: tuple[IntentNat, ...] = ()
    vips: tuple[Vip, ...] = ()
    #: static routes not written by ovn-frr
    statics: tuple[IntentStatic, ...] = ()
    pinned_here: bool = False


@dataclass(frozen=True, slots=True)
class Announcement:
    """One prefix and the OVN object behind it (for status and trace)."""

    vrf: str
    prefix: Network
    source: str


def _true(options: Mapping[str, str], key: str) -> bool:
    return options.get(key, "").strip().lower() == "true"


def _opted_out(options: Mapping[str, str]) -> bool:
    return options.get(OPT_ADVERTISE, "").strip().lower() == "false"


def _classes(text: str) -> tuple[frozenset[str], list[str]]:
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in tokens if t not in CLASSES]
    return frozenset(t for t in tokens if t in CLASSES), unknown


def _host(addr: Address) -> Network:
    return ipaddress.ip_network(addr)


def announcements(routers: tuple[IntentRouter, ...]) -> tuple[set[Announcement], list[str]]:
    """Everything this chassis should announce, and one problem line per ignored object."""
    out: set[Announcement] = set()
    problems: list[str] = []
    for r in routers:
        if _true(r.options, "dynamic-routing"):
            _router(r, out, problems)
    return out, problems


def _router(r: IntentRouter, out: set[Announcement], problems: list[str]) -> None:
    router_classes, unknown = _classes(r.options.get(OPT_REDISTRIBUTE, ""))
    if unknown:
        problems.append(f"router {r.name}: unknown {OPT_REDISTRIBUTE} token(s) {unknown}")
        return
    vrf = r.options.get("dynamic-routing-vrf-name", "").strip()
    if vrf and not VRF_NAME.fullmatch(vrf):
        problems.append(f"router {r.name}: dynamic-routing-vrf-name {vrf!r} is not a VRF name")
        return
    local_only = _true(r.options, OPT_LOCAL_ONLY)
    gateway_here = r.pinned_here or any(p.bound_here for p in r.ports)

    def here(bound: bool) -> bool:
        return not local_only or r.pinned_here or bound

    def add(prefix: Network, source: str) -> None:
        out.add(Announcement(vrf, prefix, source))

    for port in r.ports:
        classes = router_classes
        if OPT_REDISTRIBUTE in port.options:
            classes, unknown = _classes(port.options[OPT_REDISTRIBUTE])
            if unknown:
                problems.append(f"port {port.name}: unknown {OPT_REDISTRIBUTE} token(s) {unknown}")
                continue
        # a router port's network is reached through the router's gateway (or that port)
        if "connected" in classes and here(port.bound_here or gateway_here):
            for net in port.networks:
                add(net.network, f"port {port.name}")
        if "connected-as-host" in classes:
            nets = [n.network for n in port.networks]
            for lsp in port.switch_ports:
                if _opted_out(lsp.options) or not here(lsp.bound_here):
                    continue
                for a in lsp.addresses:
                    if any(a in n for n in nets if n.version == a.version):
                        add(_host(a), f"switch port {lsp.name}")
        if "lb" in classes:
            for vip in port.switch_vips:
                if not _opted_out(vip.options) and here(gateway_here):
                    add(_host(vip.address), f"load balancer {vip.lb}")
    if "nat" in router_classes:
        for nat in r.nats:
            if not _opted_out(nat.options) and here(nat.bound_here):
                add(_host(nat.external_ip), f"NAT {nat.external_ip} on {r.name}")
    if "lb" in router_classes:
        for vip in r.vips:
            if not _opted_out(vip.options) and here(gateway_here):
                add(_host(vip.address), f"load balancer {vip.lb}")
    if "static" in router_classes:
        for st in r.statics:
            # a default route would draw all of the peers' traffic to this chassis
            if st.prefix.prefixlen and not _opted_out(st.options) and here(gateway_here):
                add(st.prefix, f"static route {st.prefix} on {r.name}")


def prefixes_by_vrf(items: set[Announcement]) -> dict[str, list[Network]]:
    """What desired_frr takes: VRF name ("" = default) -> prefixes."""
    out: dict[str, list[Network]] = {}
    for a in items:
        out.setdefault(a.vrf, []).append(a.prefix)
    return out
