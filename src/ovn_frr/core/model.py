"""Values that cross the boundary between adapters and the pure core. All frozen."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

MAIN_TABLE = 254
RTPROT_BGP = 186
PROTOCOLS = {"kernel": 3, "boot": 3, "static": 4, "bgp": RTPROT_BGP, "ospf": 188, "isis": 187}

# --- FRR side ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class Hop:
    """A resolved next hop of a route zebra selected."""

    gateway: Address | None
    ifindex: int = 0
    weight: int = 1


@dataclass(frozen=True, slots=True)
class RibRoute:
    """What zebra selected for a prefix, without the prefix and its table (where it is filed):
    the routes that share protocol, kind and next hops share one object (at 1M routes, a
    handful of objects instead of ~80 MB)."""

    protocol: int
    kind: str
    hops: frozenset[Hop]
    #: zebra's next-hop object the route references (None: next hops given inline); the RIB
    #: re-resolves the route when that object changes
    nh_id: int | None = None


@dataclass(frozen=True, slots=True)
class RibSnapshot:
    """zebra's selected routes per table, as last seen on FPM: table -> prefix as text
    ("198.51.100.0/24": an ipaddress network object costs ~216 bytes a route at 1M routes, the
    text ~62, and the text is shared with the rows written for it) -> route."""

    tables: Mapping[int, Mapping[str, RibRoute]] = field(default_factory=dict)
    #: True while a (re)connect replay is still under way (stale routes are kept meanwhile).
    replaying: bool = False
    #: This snapshot's number from its RIB (0: none), and the prefixes per table that
    #: changed since the snapshot numbered one less (None: not known). Lets a pass decide
    #: only what changed (see core.importer.DecisionCache).
    serial: int = 0
    changed: Mapping[int, frozenset[str]] | None = None

    def table(self, table_id: int) -> Mapping[str, RibRoute]:
        return self.tables.get(table_id, {})


# --- import decisions -------------------------------------------------------------------------


class DesiredRoute(NamedTuple):
    """A static route row ovn-frr wants (a tuple: hashed in C, compared with plain tuples)."""

    router: str
    prefix: str
    nexthop: str
    output_port: str


@dataclass(frozen=True, slots=True)
class OwnedRoute:
    """A Logical_Router_Static_Route row that carries this chassis' ownership marker: its
    UUID and what it routes (``output_port`` "" when the row has none). For the rows ovn-frr
    writes, ``route`` is the very DesiredRoute the plan produced (shared, not copied)."""

    uuid: str
    route: DesiredRoute

    @classmethod
    def of(
        cls, uuid: str, router: str, prefix: str, nexthop: str, output_port: str | None
    ) -> OwnedRoute:
        return cls(uuid, DesiredRoute(router, prefix, nexthop, output_port or ""))

    @property
    def router(self) -> str:
        return self.route.router

    @property
    def prefix(self) -> str:
        return self.route.prefix

    @property
    def nexthop(self) -> str:
        return self.route.nexthop

    @property
    def output_port(self) -> str | None:
        return self.route.output_port or None


@dataclass(frozen=True, slots=True, order=True)
class Rejection:
    router: str
    prefix: str
    #: hijack | default-route | max-prefix | unresolvable-nexthop | not-unicast | vrf | ambiguous
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class ImportPolicy:
    protocols: frozenset[int] = frozenset({RTPROT_BGP})
    allow_default: bool = False
    #: Prefixes that may be imported although they overlap what OVN owns.
    allow_overlap: tuple[Network, ...] = ()
    max_prefix: int = 100_000
    #: FRR VRF name -> kernel table id (the default VRF is MAIN_TABLE).
    vrf_tables: Mapping[str, int] = field(default_factory=dict)
    #: kernel ifindex -> interface name (for options:dynamic-routing-port-name)
    ifnames: Mapping[int, str] = field(default_factory=dict)
    #: ``-port-name`` -> host interface, this chassis' OVS ``dynamic-routing-port-mapping``
    port_mapping: Mapping[str, str] = field(default_factory=dict)
    #: OVN can route an IPv4 prefix via an IPv6 next hop (OVN >= 25.03).
    mixed_family: bool = False
    #: EVPN type-5: the L3VNI bridges (SVIs) whose routes' next hops are remote VTEPs, reached
    #: through the host's VRF, and the host's addresses on the interfaces routers name
    #: (``dynamic-routing-port-name``): the next hop OVN gets for such a route
    l3vni_svis: frozenset[str] = frozenset()
    host_addrs: Mapping[str, tuple[Interface, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ImportPlan:
    routes: frozenset[DesiredRoute]
    rejected: tuple[Rejection, ...]
    #: router name -> table it learns from
    routers: Mapping[str, int]
