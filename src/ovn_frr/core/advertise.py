"""What this chassis announces, from OVN's intent (pure).

A router with ``dynamic-routing=true`` announces the classes of its
``dynamic-routing-redistribute`` (a router port may override them):

- ``connected``: the port networks;
- ``connected-as-host``: a host route per address of each switch port on those networks;
- ``static``: the router's destination static routes that no ovn-frr wrote, never a default
  route (it would draw all of the peers' traffic here);
- ``nat``: NAT external IPs;
- ``lb``: load balancer VIPs on the router or the switches behind it.

With ``dynamic-routing-redistribute-local-only=true`` only what is served on this chassis is
announced. ``dynamic-routing-advertise=false`` on a switch port, NAT, load balancer or static
route opts that object out. A router's ``dynamic-routing-v4-prefix-nexthop`` /
``-v6-prefix-nexthop`` is the next hop its prefixes are announced with. Malformed options are
parsed (and reported) in :mod:`ovn_frr.core.ovn`; the objects they govern are left out here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ovn_frr.core.model import Address, Network
from ovn_frr.core.ovn import LogicalRouter, OvnState, host_route


@dataclass(frozen=True, slots=True)
class Announcement:
    """One prefix and the OVN object behind it (for status and trace)."""

    vrf: str
    prefix: Network
    source: str
    #: announced as the next hop (None: FRR's own address)
    next_hop: Address | None = None


def announcements(state: OvnState) -> frozenset[Announcement]:
    """Everything this chassis should announce."""
    out: set[Announcement] = set()
    for r in state.routers:
        if r.routing.advertises:
            _router(r, state, out)
    return frozenset(out)


def _router(r: LogicalRouter, state: OvnState, out: set[Announcement]) -> None:
    routing = r.routing
    gateway_here = r.gateway_here
    if "chassis" in r.options and not r.pinned_here:
        return  # a gateway router of another chassis: OVN has it there only

    def here(bound: bool) -> bool:
        # as OVN's own dynamic routing: a router is announced from its gateway chassis (where
        # it is pinned, or where its gateway port is active); with local-only, each object
        # also from the chassis where it is bound (and only from there). A router pinned
        # nowhere and without a gateway port is on every chassis: announced from each.
        if routing.local_only:
            return r.pinned_here or bound
        return gateway_here or r.distributed

    def add(prefix: Network, source: str) -> None:
        hop = routing.nexthop_v4 if prefix.version == 4 else routing.nexthop_v6
        out.add(Announcement(routing.vrf, prefix, source, hop))

    for port in r.ports:
        if port.routing.advertise_problems:
            continue
        classes = port.routing.redistribute
        if classes is None:
            classes = routing.redistribute
        # a router port's network is reached through the router's gateway (or that port)
        if "connected" in classes and here(port.bound_here or gateway_here):
            for net in port.networks:
                add(net.network, f"port {port.name}")
        switch = state.switch_of(port)
        if switch is None:
            continue
        if "connected-as-host" in classes:
            nets = [n.network for n in port.networks]
            for lsp in switch.ports:
                if not lsp.advertise or not here(lsp.bound_here):
                    continue
                for a in lsp.addresses:
                    if any(a in n for n in nets if n.version == a.version):
                        add(host_route(a), f"switch port {lsp.name}")
        if "lb" in classes:
            for vip in switch.vips:
                if vip.advertise and here(gateway_here):
                    add(host_route(vip.address), f"load balancer {vip.lb}")
    if "nat" in routing.redistribute:
        for nat in r.nats:
            if nat.advertise and here(nat.bound_here):
                add(host_route(nat.external_ip), f"NAT {nat.external_ip} on {r.name}")
    if "lb" in routing.redistribute:
        for vip in r.vips:
            if vip.advertise and here(gateway_here):
                add(host_route(vip.address), f"load balancer {vip.lb}")
    if "static" in routing.redistribute:
        for st in state.statics:
            # policy=src-ip routes match sources: they are not reachability
            if st.router != r.name or st.policy == "src-ip" or not st.advertise:
                continue
            if st.prefix.prefixlen and here(gateway_here):
                add(st.prefix, f"static route {st.prefix} on {r.name}")


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
    """Some router announces static routes (then the reader must know their routers)."""
    return any(r.routing.advertises and "static" in r.routing.redistribute for r in state.routers)
