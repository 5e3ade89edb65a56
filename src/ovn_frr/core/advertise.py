"""What this chassis announces, from OVN's intent (pure), as OVN 26.03 means it.

OVN's own dynamic routing (25.03 on) makes SB ``Advertised_Route`` rows in ovn-northd and has
each ovn-controller write the rows local to its chassis into the router's kernel table, which
FRR announces. This module gives the same answer for one chassis from NB and SB alone
(docs/intent.md; the differential test checks it against OVN 26.03's own northd):

- a router takes part on this chassis when ``dynamic-routing=true`` and it is served here: a
  gateway router pinned here (``options:chassis``), or a router one of whose distributed
  gateway ports has its chassisredirect binding here. A router with neither (pinned nowhere,
  no gateway port) is announced by no chassis;
- each router port announces the classes of its ``-redistribute`` (its own list replaces the
  router's; "" none), when the port is local: any port of a gateway router here, a gateway port
  whose chassisredirect binding is here, any other (a plain port is on every chassis):

  - ``connected``: the port's networks (not link-local);
  - ``connected-as-host`` (replaces ``connected``'s networks): a host route per address behind
    the port: of every port on its switch (the router ports' own networks, theirs and the other
    routers', the addresses of every other port), or of the router port it is peered with;
    nothing for a port on neither;
  - ``static``: the router's static routes that leave through that port (``output_port``, else
    the port whose network holds the next hop), but discard routes;
  - ``nat``: the NAT external IPs of the router and of its neighbours (the routers with a port
    on the same switch, or peered directly), whether or not those take part themselves;
  - ``lb``: the VIPs of the router's load balancers (its own and its groups') when it is a
    gateway router or has gateway ports, and of its neighbours'. Switches' load balancers are
    never announced;

- an announcement that stands for an object somewhere (a host route for its port, a NAT for
  its VM or gateway port, a VIP for a gateway port or a neighbour's port) is left out when that
  object is not on this chassis and ``-redistribute-local-only`` is set (on the port, else on
  the router).

Deliberately otherwise (docs/intent.md says why): default routes and ``policy=src-ip`` routes
are never announced, nor the static routes ovn-frr itself imported; ``dynamic-routing-advertise
=false`` (OVN main's per-object option) opts a switch port, NAT, load balancer or static route
out; virtual ports are not announced. A router's ``-v4/v6-prefix-nexthop`` is the next hop its
prefixes are announced with.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass

from ovn_frr.core.model import Address, Network
from ovn_frr.core.ovn import LogicalRouter, LogicalSwitch, Nat, OvnState, RouterPort, host_route


@dataclass(frozen=True, slots=True)
class Announcement:
    """One prefix and the OVN object behind it (for status and trace)."""

    vrf: str
    prefix: Network
    source: str
    #: announced as the next hop (None: FRR's own address)
    next_hop: Address | None = None


#: a router port and the router that holds it
Owned = tuple[LogicalRouter, RouterPort]

_LLA6 = ipaddress.ip_network("fe80::/64")
_LL4 = ipaddress.ip_network("169.254.0.0/16")
_LL6 = ipaddress.ip_network("fe80::/10")


def link_local(net: Network) -> bool:
    """As OVN: 169.254.0.0/16 and fe80::/10 and what is inside them."""
    if net.version == 4:
        return net.prefixlen >= 16 and net.subnet_of(_LL4)  # type: ignore[arg-type]
    return net.prefixlen >= 10 and net.subnet_of(_LL6)  # type: ignore[arg-type]


def announcements(state: OvnState) -> frozenset[Announcement]:
    """Everything this chassis should announce."""
    view = _View(state)
    out: set[Announcement] = set()
    for r in state.routers:
        # a native router's prefixes are OVN's own routes, redistributed (core.native_routing)
        if r.routing.advertises and not r.routing.native and served_here(r):
            for p in r.ports:
                if port_local(r, p):
                    out.update(_Port(view, r, p).announcements())
    # what the node config adds (ovn-kubernetes' RouteAdvertisements: core.ovnk)
    out.update(Announcement(x.vrf, x.prefix, x.source) for x in state.announce)
    return frozenset(out)


def served_here(r: LogicalRouter) -> bool:
    """A gateway router pinned here, or a gateway port's chassisredirect binding here (a
    gateway port on no switch and peered with no router port does not count: OVN makes no
    chassisredirect port of it)."""
    if r.pinned_here or "chassis" in r.options:
        return r.pinned_here and any(_peered(p) for p in r.ports)
    return any(p.gateway and p.bound_here and _peered(p) for p in r.ports)


def port_local(r: LogicalRouter, p: RouterPort) -> bool:
    """As ovn-controller: a gateway router's port is its chassis', a gateway port is where its
    chassisredirect binding is, any other router port (a gateway port on nothing too) is on
    every chassis. The ports of a router not served here are all taken as peered (this
    chassis does not read the switches behind them)."""
    if r.pinned_here or "chassis" in r.options:
        return r.pinned_here
    if p.gateway and (_peered(p) or not served_here(r)):
        return p.bound_here
    return True


def _peered(p: RouterPort) -> bool:
    return bool(p.switch or p.peer)


class _View:
    """The state's router ports by name and by the switch they are on."""

    def __init__(self, state: OvnState) -> None:
        self.state = state
        self.by_name: dict[str, Owned] = {}
        self.on_switch: dict[str, list[Owned]] = {}
        for r in state.routers:
            for p in r.ports:
                self.by_name[p.name] = (r, p)
                if p.switch:
                    self.on_switch.setdefault(p.switch, []).append((r, p))

    def neighbours(self, p: RouterPort) -> list[Owned]:
        """The router ports across ``p``: the one peered with it, or the others on its switch."""
        if p.peer:
            return [self.by_name[p.peer]] if p.peer in self.by_name else []
        return [(r, q) for r, q in self.on_switch.get(p.switch, []) if q is not p]


class _Port:
    """One local port's announcements."""

    def __init__(self, view: _View, r: LogicalRouter, p: RouterPort) -> None:
        self.view, self.r, self.p = view, r, p
        classes = p.routing.redistribute
        self.classes = r.routing.redistribute if classes is None else classes
        local_only = p.routing.local_only
        self.local_only = r.routing.local_only if local_only is None else local_only
        self.found: list[Announcement] = []

    def add(self, prefix: Network, source: str, tracked_here: bool | None = None) -> None:
        """``tracked_here``: the object it stands for is on this chassis (None: it stands for
        none: announced wherever the port is)."""
        if tracked_here is False and self.local_only:
            return
        routing = self.r.routing
        hop = routing.nexthop_v4 if prefix.version == 4 else routing.nexthop_v6
        self.found.append(Announcement(routing.vrf, prefix, source, hop))

    def announcements(self) -> list[Announcement]:
        c, p = self.classes, self.p
        if "connected-as-host" in c:
            self._hosts()
        elif "connected" in c:
            for n in p.networks:
                if not link_local(n.network):
                    self.add(n.network, f"port {p.name}")
        if "static" in c:
            self._statics()
        if "nat" in c:
            self._nats()
        if "lb" in c:
            self._vips()
        return self.found

    def _hosts(self) -> None:
        p, view = self.p, self.view
        if p.peer:
            across = view.neighbours(p)
        elif (sw := view.state.switch_of(p)) is not None:
            across = view.on_switch.get(sw.uuid, [])
            self._switch_hosts(sw)
        else:
            return  # on nothing: OVN announces nothing of its networks either
        for r, q in across:
            for n in q.networks:
                if n.ip.version == 4 or n.ip not in _LLA6:
                    self.add(host_route(n.ip), f"router port {q.name}", port_local(r, q))

    def _switch_hosts(self, sw: LogicalSwitch) -> None:
        for lsp in sw.ports:
            if not lsp.advertise or lsp.type == "virtual":
                continue
            for a in lsp.addresses:
                if a.version == 4 or a not in _LLA6:
                    self.add(host_route(a), f"switch port {lsp.name}", lsp.bound_here)

    def _statics(self) -> None:
        r, p = self.r, self.p
        for st in self.view.state.statics:
            # a source route says nothing of where its prefix is, a default route would draw
            # every peer's traffic here: neither is announced (docs/intent.md)
            if st.router != r.name or st.policy == "src-ip" or not st.advertise:
                continue
            if st.nexthop == "discard" or not st.prefix.prefixlen or link_local(st.prefix):
                continue
            if _out_port(r, st.output_port, st.nexthop) == p.name:
                self.add(st.prefix, f"static route {st.prefix} on {r.name}")

    def _nats(self) -> None:
        routers = {id(r): r for r in [self.r, *(r for r, _q in self.view.neighbours(self.p))]}
        for r in routers.values():
            for nat in r.nats:
                tracked = nat_tracked_here(r, nat, self.view.state)
                if nat.advertise and tracked != "invalid":
                    here = None if tracked is None else tracked == "here"
                    self.add(host_route(nat.external_ip), f"NAT {nat.external_ip} on {r.name}",
                             here)  # fmt: skip

    def _vips(self) -> None:
        r = self.r
        if r.pinned_here or "chassis" in r.options:  # a gateway router's own
            for vip in r.vips:
                if vip.advertise:
                    self.add(host_route(vip.address), f"load balancer {vip.lb}")
        else:  # one per gateway port (none without)
            for d in (d for d in r.ports if d.gateway):
                for vip in r.vips:
                    if vip.advertise:
                        self.add(host_route(vip.address), f"load balancer {vip.lb}",
                                 port_local(r, d))  # fmt: skip
        for nr, q in self.view.neighbours(self.p):
            for vip in nr.vips:
                if vip.advertise:
                    self.add(host_route(vip.address), f"load balancer {vip.lb} of {nr.name}",
                             port_local(nr, q))  # fmt: skip


def _out_port(r: LogicalRouter, output_port: str, nexthop: str) -> str:
    """The port a static route leaves through: its ``output_port``, else the first port whose
    networks hold the next hop ("" none)."""
    if output_port:
        return output_port
    try:
        hop = ipaddress.ip_address(nexthop)
    except ValueError:
        return ""
    for p in r.ports:
        if any(n.version == hop.version and hop in n.network for n in p.networks):
            return p.name
    return ""


def nat_tracked_here(r: LogicalRouter, nat: Nat, state: OvnState) -> str | None:
    """Where the object a NAT stands for is, as OVN tracks it: "here" / "elsewhere"; None
    (nothing: a gateway router's, or a router's without gateway ports); "invalid" (a router
    with several gateway ports, none of which is the NAT's: OVN drops it).

    A floating IP (``logical_port`` and ``external_mac``) stands for its VM, unless OVN
    centralizes it: its router has one gateway port, whose switch has no localnet port (OVN
    then routes that switch's traffic on the gateway chassis); any other NAT stands for its
    gateway port."""
    gateways = [p for p in r.ports if p.gateway]
    if not gateways:
        return None
    gw: RouterPort | None = None
    if nat.gateway_port:
        gw = next((p for p in gateways if p.name == nat.gateway_port), None)
    elif len(gateways) == 1:
        gw = gateways[0]
    else:
        gw = next((p for p in gateways if any(nat.external_ip in n.network
                                              for n in p.networks)), None)  # fmt: skip
    if gw is None:
        return "invalid"
    if nat.logical_port and not _centralized(gateways, gw, state):
        return "here" if nat.bound_here else "elsewhere"
    return "here" if port_local(r, gw) else "elsewhere"


def _centralized(gateways: list[RouterPort], gw: RouterPort, state: OvnState) -> bool:
    """OVN routes the gateway port's switch on the gateway chassis: the router's only gateway
    port, on a switch without a localnet port. The switch is in the state for a router
    served here; for a neighbour, ``gateway_localnet`` says; a switch not read at all is
    taken to have a localnet port (a provider network)."""
    if len(gateways) != 1:
        return False
    if (sw := state.switch_of(gw)) is None:
        return not state.gateway_localnet.get(gw.name, True)
    return not any(lsp.type == "localnet" for lsp in sw.ports)


def prefixes_by_vrf(items: frozenset[Announcement]) -> dict[str, dict[Network, Address | None]]:
    """What desired_frr takes: VRF name ("" = default) -> prefix -> its next hop (None: FRR's
    own address). Two routers announcing one prefix in one VRF with different next hops: the
    one without, else the lowest address, wins (the same choice on every pass)."""
    hops: dict[str, dict[Network, list[Address | None]]] = {}
    for a in sorted(items, key=announcement_order):
        hops.setdefault(a.vrf, {}).setdefault(a.prefix, []).append(a.next_hop)

    def first(found: list[Address | None]) -> Address | None:
        return min(found, key=lambda h: (0, 0) if h is None else (1, int(h)))

    return {vrf: {p: first(h) for p, h in nets.items()} for vrf, nets in hops.items()}


def announcement_order(a: Announcement) -> tuple[str, int, int, int, str]:
    p = a.prefix
    return (a.vrf, p.version, int(p.network_address), p.prefixlen, a.source)


def redistributes_static(state: OvnState) -> bool:
    """Some router that takes part announces static routes (then the reader must know the
    routers of the static routes)."""
    return any(r.routing.advertises and "static" in _all_classes(r) for r in state.routers)


def _all_classes(r: LogicalRouter) -> Iterator[str]:
    yield from r.routing.redistribute
    for p in r.ports:
        yield from p.routing.redistribute or ()
