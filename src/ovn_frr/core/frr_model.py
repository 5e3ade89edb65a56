"""The FRR configuration ovn-frr wants, as typed values, and the pure function that builds it.

Only ovn-frr's own objects are modelled; operator-written FRR config lives beside them. Names
ovn-frr creates start with ``ovnfrr-`` so that ownership is visible in ``show running-config``.

Export policy: a neighbor is sent only what the OVN intent produced, narrowed by its own export
filters. What ovn-frr originates (``network P route-map ovnfrr-origin``) carries a large
community (``ASN:4242:1``) that each neighbor's outbound route-map requires and strips; prefix
lists would scale badly (FRR loads a 10k-entry prefix-list in minutes, measured). Import
policy: the neighbor's import filters per family, or everything.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace

from ovn_frr.core.model import Address, Network

DEFAULT_VRF = ""


# --- what the node config says (turned into these values at the edge, by ovn_frr.config) ---


@dataclass(frozen=True, slots=True)
class PrefixFilter:
    """One prefix-list entry: ``prefix`` matched exactly, or with lengths ge..le."""

    prefix: Network
    ge: int | None = None
    le: int | None = None
    action: str = "permit"


@dataclass(frozen=True, slots=True)
class Neighbor:
    address: Address
    remote_as: str
    description: str | None = None
    password: str | None = None
    keepalive: int | None = None
    hold: int | None = None
    connect_retry: int | None = None
    ebgp_multihop: int | None = None
    update_source: str | None = None
    bfd_profile: str | None = None
    #: "ipv4-unicast", "ipv6-unicast", "l2vpn-evpn"; None: the neighbor address' family
    address_families: tuple[str, ...] | None = None
    import_filters: tuple[PrefixFilter, ...] = ()
    export_filters: tuple[PrefixFilter, ...] = ()
    max_prefix: int | None = None
    #: "" the default VRF
    vrf: str = ""
    #: BGP graceful restart (restarting speaker, forwarding state preserved)
    graceful_restart: bool = False


@dataclass(frozen=True, slots=True)
class VniOverride:
    """A VNI's RD and route targets where the node config sets them (FRR's auto otherwise)."""

    vni: int
    rd: str | None = None
    rt_import: tuple[str, ...] = ()
    rt_export: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EvpnSettings:
    """EVPN in the default VRF: ``advertise-all-vni`` (zebra announces every VNI whose
    VXLAN device it sees), per-VNI overrides, and the VTEP address announced in ipv4 unicast
    (None: not announced by ovn-frr)."""

    vnis: tuple[VniOverride, ...] = ()
    vtep: Network | None = None


@dataclass(frozen=True, slots=True)
class FrrSettings:
    """The node config's part of FRR's config: BGP peering, BFD profiles, the FPM address."""

    asn: int
    router_id: str
    neighbors: tuple[Neighbor, ...] = ()
    bfd_profiles: tuple[BfdProfile, ...] = ()
    fpm: tuple[str, int] | None = ("127.0.0.1", 2620)
    #: None: no EVPN (no neighbor carries l2vpn-evpn)
    evpn: EvpnSettings | None = None
    #: EVPN type-5: VRF name -> its L3VNI (``[vrfs.NAME] l3vni``)
    l3vnis: Mapping[str, int] = field(default_factory=dict)
    #: ``coalesce-time`` of ovn-frr's BGP instances (ms; None: FRR's default, not rendered)
    coalesce_ms: int | None = None
    #: VRF route leaking: VRF name -> the VRFs whose routes its instance imports (``import
    #: vrf NAME``; "default" the default VRF)
    leaks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


# --- the FRR config ovn-frr wants ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PrefixListEntry:
    seq: int
    action: str
    prefix: Network
    ge: int | None = None
    le: int | None = None


@dataclass(frozen=True, slots=True)
class PrefixList:
    name: str
    afi: str  # "ip" | "ipv6"
    entries: tuple[PrefixListEntry, ...]


@dataclass(frozen=True, slots=True)
class RouteMapEntry:
    seq: int
    action: str
    #: the prefix-list matched (one per entry: FRR keeps only one per family); none: any
    match_ip: str | None = None
    match_ipv6: str | None = None
    match_large_community: str | None = None
    #: added to the route (additive)
    set_large_community: str | None = None
    #: large communities matching this list are removed from the route
    delete_large_comm_list: str | None = None
    #: the next hop set on the route (an address: ``set ip next-hop`` / ``set ipv6 next-hop
    #: global``)
    set_next_hop: str | None = None


@dataclass(frozen=True, slots=True)
class LargeCommunityList:
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class RouteMap:
    name: str
    entries: tuple[RouteMapEntry, ...]


@dataclass(frozen=True, slots=True)
class BfdProfile:
    name: str
    receive_ms: int
    transmit_ms: int
    multiplier: int
    passive: bool


@dataclass(frozen=True, slots=True)
class BgpNeighbor:
    address: str
    remote_as: str
    description: str | None
    password: str | None
    timers: tuple[int, int] | None
    connect_retry: int | None
    ebgp_multihop: int | None
    update_source: str | None
    bfd_profile: str | None
    afis: tuple[str, ...]  # "ipv4", "ipv6", "l2vpn-evpn"
    route_map_in: str
    route_map_out: str
    max_prefix: int | None
    graceful_restart: bool = False


@dataclass(frozen=True, slots=True)
class BgpInstance:
    asn: int
    vrf: str  # DEFAULT_VRF for the default VRF
    router_id: str
    neighbors: tuple[BgpNeighbor, ...]
    #: afi -> prefixes announced with `network ... route-map <origin_map>`
    networks: Mapping[str, tuple[Network, ...]]
    origin_map: str
    evpn: EvpnSettings | None = None
    #: prefixes originated with a route-map of their own (their next hop) instead
    origin_maps: Mapping[Network, str] = field(default_factory=dict)
    #: EVPN type-5: the VRF's L3VNI (``vrf X`` > ``vni N``, and its prefixes announced as
    #: type-5 routes: ``advertise ipv4/ipv6 unicast``)
    l3vni: int | None = None
    #: ``coalesce-time`` (ms; None: FRR's default)
    coalesce_ms: int | None = None
    #: the VRFs whose routes it imports (``import vrf NAME`` in each unicast family)
    imports: tuple[str, ...] = ()
    #: announces the kernel routes of its table (OVN 25.03+'s own, protocol 84: the VRF's
    #: routers are served natively) with ``redistribute kernel route-map <origin_map>``
    redistribute_kernel: bool = False


@dataclass(frozen=True, slots=True)
class FrrModel:
    fpm: tuple[str, int] | None
    bfd_profiles: tuple[BfdProfile, ...]
    large_community_lists: tuple[LargeCommunityList, ...]
    prefix_lists: tuple[PrefixList, ...]
    route_maps: tuple[RouteMap, ...]
    bgp: tuple[BgpInstance, ...]


def _token(text: str) -> str:
    """``text`` as a name part, one character for one: distinct addresses (``fd00::255:2``,
    ``fd00:255::2``) and VRF names keep distinct names."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _afi(net: Network) -> str:
    return "ipv6" if net.version == 6 else "ipv4"


def _plist_entries(filters: Iterable[PrefixFilter]) -> tuple[PrefixListEntry, ...]:
    return tuple(
        PrefixListEntry(5 * (i + 1), f.action, f.prefix, f.ge, f.le) for i, f in enumerate(filters)
    )


def _any_list(name: str, afi: str) -> PrefixList:
    anything = ipaddress.ip_network("0.0.0.0/0" if afi == "ipv4" else "::/0")
    entry = PrefixListEntry(5, "permit", anything, le=anything.max_prefixlen)
    return PrefixList(name, "ip" if afi == "ipv4" else "ipv6", (entry,))


ORIGIN_MAP = "ovnfrr-origin"
#: EVPN type-5: ``advertise ipv4/ipv6 unicast route-map`` (permits all; marks the lines)
TYPE5_MAP = "ovnfrr-type5"


def origin_map(hop: Address | None) -> str:
    """The route-map a prefix is originated with: the origin community (and its next hop)."""
    return ORIGIN_MAP if hop is None else f"{ORIGIN_MAP}-nh-{_token(str(hop))}"


ORIGIN_LIST = "ovnfrr-origin"


def _neighbor_policy(nb: Neighbor, vtok: str) -> tuple[list[PrefixList], RouteMap, RouteMap]:
    """Import: the neighbor's import filters per family, or everything. Export: routes ovn-frr
    originated (the origin community, stripped on the way out), narrowed per family by the
    neighbor's export filters."""
    tok = f"{vtok}{_token(str(nb.address)).replace('.', '_')}"
    lists: list[PrefixList] = []
    rm_in: list[RouteMapEntry] = []
    rm_out: list[RouteMapEntry] = []
    for afi in ("ipv4", "ipv6"):
        imports = [f for f in nb.import_filters if _afi(f.prefix) == afi]
        if imports:
            name = f"ovnfrr-in-{tok}-{afi}"
            lists.append(
                PrefixList(name, "ip" if afi == "ipv4" else "ipv6", _plist_entries(imports))
            )
        else:  # filters narrow only their own family
            name = f"ovnfrr-any-{afi}"
            lists.append(_any_list(name, afi))
        rm_in.append(_match(10 * (len(rm_in) + 1), afi, name))
        exports = [f for f in nb.export_filters if _afi(f.prefix) == afi]
        if exports:
            name = f"ovnfrr-out-{tok}-{afi}"
            lists.append(
                PrefixList(name, "ip" if afi == "ipv4" else "ipv6", _plist_entries(exports))
            )
        else:
            name = f"ovnfrr-any-{afi}"
            lists.append(_any_list(name, afi))
        rm_out.append(
            replace(
                _match(10 * (len(rm_out) + 1), afi, name),
                match_large_community=ORIGIN_LIST,
                delete_large_comm_list=ORIGIN_LIST,
            )
        )
    if not nb.import_filters:
        rm_in = [RouteMapEntry(10, "permit")]
    return (
        lists,
        RouteMap(f"ovnfrr-in-{tok}", tuple(rm_in)),
        RouteMap(f"ovnfrr-out-{tok}", tuple(rm_out)),
    )


def _match(seq: int, afi: str, plist: str) -> RouteMapEntry:
    if afi == "ipv4":
        return RouteMapEntry(seq, "permit", match_ip=plist)
    return RouteMapEntry(seq, "permit", match_ipv6=plist)


def desired_frr(
    cfg: FrrSettings,
    networks: Mapping[str, Iterable[Network]] | None = None,
    redistribute: Collection[str] = (),
) -> FrrModel:
    """The FRR config for ``cfg`` announcing ``networks`` (VRF name, "" = default -> prefixes;
    a mapping prefix -> next hop (None: FRR's own address) where some have one) and, in the
    ``redistribute`` VRFs, the kernel routes of their tables (OVN's own)."""
    networks = networks or {}
    hops: set[Address] = set()
    vrfs = sorted({nb.vrf for nb in cfg.neighbors} | set(networks) | set(cfg.l3vnis)
                  | set(cfg.leaks) | set(redistribute)
                  | ({""} if cfg.evpn is not None else set()))  # fmt: skip
    lists: list[PrefixList] = []
    maps: list[RouteMap] = []
    instances = []
    for vrf in vrfs:
        vtok = f"{_token(vrf)}-" if vrf else ""
        given = networks.get(vrf, ())
        wanted = {ipaddress.ip_network(p) for p in given}
        origins = {}
        if isinstance(given, Mapping):
            origins = {p: origin_map(h) for p, h in given.items() if h is not None}
            hops.update(h for h in given.values() if h is not None)
        evpn = cfg.evpn if not vrf else None
        if evpn is not None and evpn.vtep is not None:
            wanted.add(evpn.vtep)
        prefixes = sorted(
            wanted,
            key=lambda n: (n.version, int(n.network_address), n.prefixlen),
        )
        intent = {afi: tuple(p for p in prefixes if _afi(p) == afi) for afi in ("ipv4", "ipv6")}
        neighbors = []
        for nb in (n for n in cfg.neighbors if n.vrf == vrf):
            nb_lists, rm_in, rm_out = _neighbor_policy(nb, vtok)
            lists += nb_lists
            maps += [rm_in, rm_out]
            afis = nb.address_families or (
                ("ipv6-unicast",) if nb.address.version == 6 else ("ipv4-unicast",)
            )
            timers = None
            if nb.keepalive is not None and nb.hold is not None:
                timers = (nb.keepalive, nb.hold)
            neighbors.append(
                BgpNeighbor(
                    address=str(nb.address),
                    remote_as=nb.remote_as,
                    description=nb.description,
                    password=nb.password,
                    timers=timers,
                    connect_retry=nb.connect_retry,
                    ebgp_multihop=nb.ebgp_multihop,
                    update_source=nb.update_source,
                    bfd_profile=nb.bfd_profile,
                    afis=tuple(a.replace("-unicast", "") for a in afis),
                    route_map_in=rm_in.name,
                    route_map_out=rm_out.name,
                    max_prefix=nb.max_prefix,
                    graceful_restart=nb.graceful_restart,
                )
            )
        instances.append(
            BgpInstance(
                cfg.asn,
                vrf,
                cfg.router_id,
                tuple(neighbors),
                intent,
                ORIGIN_MAP,
                evpn,
                origins,
                cfg.l3vnis.get(vrf) if vrf else None,
                cfg.coalesce_ms,
                cfg.leaks.get(vrf, ()),
                bool(vrf) and vrf in redistribute,
            )
        )
    lists = list({pl.name: pl for pl in lists}.values())  # shared lists appear once
    origin = f"{cfg.asn}:4242:1"
    maps[:0] = [RouteMap(origin_map(h), (RouteMapEntry(10, "permit", set_large_community=origin,
                                                       set_next_hop=str(h) if h else None),))
                for h in [None, *sorted(hops, key=lambda h: (h.version, int(h)))]]  # fmt: skip
    if any(b.l3vni for b in instances):
        maps.append(RouteMap(TYPE5_MAP, (RouteMapEntry(10, "permit"),)))
    communities = (LargeCommunityList(ORIGIN_LIST, origin),)
    return FrrModel(cfg.fpm, cfg.bfd_profiles, communities, tuple(lists), tuple(maps),
                    tuple(instances))  # fmt: skip
