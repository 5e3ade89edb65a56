"""FRR config text from the typed model: one renderer per concern, concatenated in the order
FRR needs (BFD profiles and prefix-lists before the route-maps and BGP that use them).

Lines are rendered exactly as FRR shows them in ``show running-config``, defaults left out
(FRR hides the FPM port 2620 and a BFD profile's 300 ms / x3), so that the running config can
be compared line by line with what ovn-frr wants (checked against a real FRR by
``tests/functional/test_frr_goldens.py``)."""

from __future__ import annotations

from collections.abc import Iterable

from ovn_frr.core.frr_model import (
    TYPE5_MAP,
    BfdProfile,
    BgpInstance,
    BgpNeighbor,
    EvpnSettings,
    FrrModel,
    LargeCommunityList,
    PrefixList,
    RouteMap,
)


def render(model: FrrModel) -> str:
    return "".join(
        (
            render_fpm(model.fpm),
            render_bfd(model.bfd_profiles),
            render_large_community_lists(model.large_community_lists),
            render_prefix_lists(model.prefix_lists),
            render_route_maps(model.route_maps),
            render_l3vnis(model.bgp),
            *(render_bgp(b) for b in model.bgp),
        )
    )


FPM_PORT = 2620
BFD_INTERVAL_MS = 300
BFD_MULTIPLIER = 3


def render_fpm(fpm: tuple[str, int] | None) -> str:
    if fpm is None:
        return ""
    port = "" if fpm[1] == FPM_PORT else f" port {fpm[1]}"
    return f"fpm address {fpm[0]}{port}\n"


def render_bfd(profiles: Iterable[BfdProfile]) -> str:
    profiles = list(profiles)
    if not profiles:
        return ""
    lines = ["bfd"]
    for p in profiles:
        lines.append(f" profile {p.name}")
        if p.receive_ms != BFD_INTERVAL_MS:
            lines.append(f"  receive-interval {p.receive_ms}")
        if p.transmit_ms != BFD_INTERVAL_MS:
            lines.append(f"  transmit-interval {p.transmit_ms}")
        if p.multiplier != BFD_MULTIPLIER:
            lines.append(f"  detect-multiplier {p.multiplier}")
        if p.passive:
            lines.append("  passive-mode")
        lines.append(" exit")
    lines.append("exit")
    return "\n".join(lines) + "\n"


def render_large_community_lists(lists: Iterable[LargeCommunityList]) -> str:
    return "".join(
        f"bgp large-community-list standard {c.name} seq 5 permit {c.value}\n" for c in lists
    )


def render_prefix_lists(lists: Iterable[PrefixList]) -> str:
    out = []
    for pl in lists:
        for e in pl.entries:
            line = f"{pl.afi} prefix-list {pl.name} seq {e.seq} {e.action} {e.prefix}"
            if e.ge is not None:
                line += f" ge {e.ge}"
            if e.le is not None:
                line += f" le {e.le}"
            out.append(line)
    return "".join(f"{line}\n" for line in out)


def render_route_maps(maps: Iterable[RouteMap]) -> str:
    out = []
    for rm in maps:
        for e in rm.entries:
            out.append(f"route-map {rm.name} {e.action} {e.seq}")
            if e.match_ip:
                out.append(f" match ip address prefix-list {e.match_ip}")
            if e.match_ipv6:
                out.append(f" match ipv6 address prefix-list {e.match_ipv6}")
            if e.match_large_community:
                out.append(f" match large-community {e.match_large_community}")
            if e.set_large_community:
                out.append(f" set large-community {e.set_large_community} additive")
            if e.delete_large_comm_list:
                out.append(f" set large-comm-list {e.delete_large_comm_list} delete")
            if e.set_next_hop:
                ip = "ipv6" if ":" in e.set_next_hop else "ip"
                glob = " global" if ip == "ipv6" else ""
                out.append(f" set {ip} next-hop{glob} {e.set_next_hop}")
            out.append("exit")
    return "".join(f"{line}\n" for line in out)


def _neighbor(n: BgpNeighbor) -> list[str]:
    a = n.address
    lines = [f" neighbor {a} remote-as {n.remote_as}"]
    if n.description:
        lines.append(f" neighbor {a} description {n.description}")
    if n.password:
        lines.append(f" neighbor {a} password {n.password}")
    if n.timers:
        lines.append(f" neighbor {a} timers {n.timers[0]} {n.timers[1]}")
    if n.connect_retry:
        lines.append(f" neighbor {a} timers connect {n.connect_retry}")
    if n.ebgp_multihop:
        lines.append(f" neighbor {a} ebgp-multihop {n.ebgp_multihop}")
    if n.update_source:
        lines.append(f" neighbor {a} update-source {n.update_source}")
    if n.bfd_profile:
        # FRR shows the implied `neighbor X bfd` as a line of its own (8.4 and 10.3)
        lines.append(f" neighbor {a} bfd")
        lines.append(f" neighbor {a} bfd profile {n.bfd_profile}")
    if n.graceful_restart:
        lines.append(f" neighbor {a} graceful-restart")
    return lines


def render_vnis(evpn: EvpnSettings) -> list[str]:
    """Per-VNI overrides, as FRR shows them (``vni N`` ... ``exit-vni``)."""
    lines = []
    for v in sorted(evpn.vnis, key=lambda v: v.vni):
        if not (v.rd or v.rt_import or v.rt_export):
            continue
        lines.append(f"  vni {v.vni}")
        if v.rd:
            lines.append(f"   rd {v.rd}")
        lines += [f"   route-target import {rt}" for rt in v.rt_import]
        lines += [f"   route-target export {rt}" for rt in v.rt_export]
        lines.append("  exit-vni")
    return lines


#: EVPN type-5 in a VRF's instance (the route-map marks them as ovn-frr's)
TYPE5_LINES = (f"advertise ipv4 unicast route-map {TYPE5_MAP}",
               f"advertise ipv6 unicast route-map {TYPE5_MAP}")  # fmt: skip


def render_l3vnis(instances: Iterable[BgpInstance]) -> str:
    """EVPN type-5: each VRF's L3VNI, as FRR shows it (``vrf X`` / `` vni N`` / ``exit-vrf``)."""
    return "".join(f"vrf {b.vrf}\n vni {b.l3vni}\nexit-vrf\n" for b in instances if b.l3vni)


#: what makes a graceful restart keep routes (rendered with a neighbor's ``graceful_restart``)
GR_PRESERVE = "bgp graceful-restart preserve-fw-state"


def router_bgp(asn: int, vrf: str = "") -> str:
    """The ``router bgp`` line of an instance ("": the default VRF)."""
    return f"router bgp {asn}" + (f" vrf {vrf}" if vrf else "")


def render_bgp(b: BgpInstance) -> str:
    lines = [
        router_bgp(b.asn, b.vrf),
        f" bgp router-id {b.router_id}",
        " no bgp default ipv4-unicast",
        " no bgp network import-check",
        # ECMP over ToRs in different ASes (the usual leaf design): equal-length AS paths
        # through different neighbor ASes are multipath
        " bgp bestpath as-path multipath-relax",
    ]
    if b.coalesce_ms is not None:
        # FRR < 10.3 never withdrew a route removed while a new peer's update subgroup was
        # coalescing (see Versions.frr_withdraws_while_coalescing): no coalescing window
        lines.append(f" coalesce-time {b.coalesce_ms}")
    if any(n.graceful_restart for n in b.neighbors):
        # the F bit: a peer keeps this node's routes through an FRR restart, and after it
        # (without it the peer drops them as soon as the new session opens)
        lines.append(f" {GR_PRESERVE}")
    for n in b.neighbors:
        lines += _neighbor(n)
    for afi in ("ipv4", "ipv6"):
        members = [n for n in b.neighbors if afi in n.afis]
        nets = b.networks.get(afi, ())
        if not members and not nets and not b.imports and not b.redistribute_kernel:
            continue
        lines.append(f" address-family {afi} unicast")
        lines += [f"  network {p} route-map {b.origin_maps.get(p, b.origin_map)}" for p in nets]
        if b.redistribute_kernel:  # OVN 25.03+'s own routes of the VRF's table
            lines.append(f"  redistribute kernel route-map {b.origin_map}")
        lines += [f"  import vrf {v}" for v in b.imports]
        for n in members:
            lines += [
                f"  neighbor {n.address} activate",
                f"  neighbor {n.address} route-map {n.route_map_in} in",
                f"  neighbor {n.address} route-map {n.route_map_out} out",
            ]
            if n.max_prefix:
                lines.append(f"  neighbor {n.address} maximum-prefix {n.max_prefix}")
        lines.append(" exit-address-family")
    evpn = [n for n in b.neighbors if "l2vpn-evpn" in n.afis]
    if b.l3vni:  # the VRF's prefixes (its BGP table's best paths) go out as type-5 routes
        lines += [" address-family l2vpn evpn", *(f"  {x}" for x in TYPE5_LINES),
                  " exit-address-family"]  # fmt: skip
    elif evpn or b.evpn is not None:
        lines.append(" address-family l2vpn evpn")
        lines += [f"  neighbor {n.address} activate" for n in evpn]
        if b.evpn is not None:
            lines.append("  advertise-all-vni")
            lines += render_vnis(b.evpn)
        lines.append(" exit-address-family")
    lines.append("exit")
    return "\n".join(lines) + "\n"
