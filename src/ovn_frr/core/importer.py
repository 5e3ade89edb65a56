"""Import policy: which of zebra's routes become which OVN static routes (pure).

``plan_import(state, rib, policy)`` decides, for every router that learns on this chassis, the
static routes it should have; ``diff_routes`` turns that into rows to add and rows to delete.
"""

from __future__ import annotations

import ipaddress
import itertools
import sys
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from ovn_frr.core.model import (
    MAIN_TABLE,
    Address,
    DesiredRoute,
    Hop,
    ImportPlan,
    ImportPolicy,
    Network,
    OwnedRoute,
    Rejection,
    RibRoute,
    RibSnapshot,
)
from ovn_frr.core.ovn import (
    OPT_PORT_NAME,
    LogicalRouter,
    OvnState,
    RouterPort,
    owned_prefixes_by_vrf,
)
from ovn_frr.core.prefixes import PrefixIndex, prefix_key


def learning_routers(
    state: OvnState, policy: ImportPolicy
) -> tuple[dict[str, tuple[LogicalRouter, int]], list[Rejection]]:
    """Routers that learn on this chassis -> (router, table), and routers skipped with why
    (malformed options are reported by the OVN state itself)."""
    out: dict[str, tuple[LogicalRouter, int]] = {}
    problems: list[Rejection] = []
    names = Counter(r.name for r in state.routers)
    for r in state.routers:
        routing = r.routing
        if not routing.learns or not r.gateway_here or routing.native:
            continue  # (a native router learns through OVN itself: core.native_routing)
        if names[r.name] > 1:  # as ovn-nbctl, which refuses a name that is not unique
            problems.append(Rejection(r.name, "*", "ambiguous",
                                      f"{names[r.name]} Logical_Router rows are named "
                                      f"{r.name!r}: routes go into none of them (rename "
                                      "one)"))  # fmt: skip
            continue
        if not routing.vrf:
            table = MAIN_TABLE
        elif routing.vrf in policy.vrf_tables:
            table = policy.vrf_tables[routing.vrf]
        else:  # its table is the kernel VRF's, read, never assumed (not even from -vrf-id)
            problems.append(Rejection(r.name, "*", "vrf",
                                      f"no VRF device {routing.vrf!r} in the kernel"))  # fmt: skip
            continue
        out[r.name] = (r, table)
    return out, problems


_EMPTY = PrefixIndex({})


@dataclass(frozen=True, slots=True)
class _PortMatcher:
    """Finds the router port a next hop leaves through."""

    ports: tuple[RouterPort, ...]
    #: ports restricted to a host interface (options:dynamic-routing-port-name)
    by_ifname: Mapping[str, RouterPort]

    @classmethod
    def of(cls, router: LogicalRouter, mapping: Mapping[str, str]) -> _PortMatcher:
        """The ports that learn (as OVN: where the router is served, a gateway router's
        ports, else its gateway ports active here), their ``-port-name`` through the
        ``dynamic-routing-port-mapping`` of this chassis' OVS (a name it does not map is taken
        as the interface's own name)."""
        ports = tuple(p for p in router.ports if p.routing.learning
                      and not p.routing.learn_problems and learns_here(router, p))  # fmt: skip
        named = {mapping.get(n, n): p for p in ports if (n := p.routing.port_name)}
        return cls(ports, named)

    def _not_named(self, gw: Address, via: str, ifnames: Mapping[int, str]) -> str:
        named = ", ".join(f"{n} ({p.name})" for n, p in sorted(self.by_ifname.items()))
        reason = f"next hop {gw} is via {via}, not the {OPT_PORT_NAME} {named}"
        known = set(ifnames.values())
        missing = sorted(n for n in self.by_ifname if n not in known)
        if known and missing:
            reason += f"; no interface {', '.join(missing)} on this chassis"
        return reason

    def via_host(
        self, hop: Hop, version: int, policy: ImportPolicy
    ) -> tuple[RouterPort, Address] | str | None:
        """A type-5 route (its next hop a remote VTEP, through an L3VNI's SVI) leaves the
        router toward the host, whose VRF carries it over the L3VNI: the port whose
        ``dynamic-routing-port-name`` interface has a host address in the port's networks,
        with that address as next hop. None: not a type-5 next hop."""
        ifname = policy.ifnames.get(hop.ifindex)
        if ifname is None or ifname not in policy.l3vni_svis:
            return None
        for name, port in sorted(self.by_ifname.items()):
            for iface in policy.host_addrs.get(name, ()):
                if iface.ip.version == version and _contains(port, iface.ip):
                    return port, iface.ip
        named = ", ".join(f"{n} ({p.name})" for n, p in sorted(self.by_ifname.items()))
        return (
            f"type-5 next hop {hop.gateway} via {ifname}: no IPv{version} address of the host "
            f"on the {OPT_PORT_NAME} {named or '(none)'} in that port's networks"
        )

    def match(self, hop: Hop, ifnames: Mapping[int, str]) -> RouterPort | str:
        """The output port, or the reason there is none."""
        gw = hop.gateway
        if gw is None:
            return "next hop has no gateway address"
        if self.by_ifname:
            ifname = ifnames.get(hop.ifindex)
            port = self.by_ifname.get(ifname or "")
            if port is None:
                return self._not_named(gw, ifname or str(hop.ifindex), ifnames)
            if gw.is_link_local or _contains(port, gw):
                return port
            return f"next hop {gw} is not in the networks of {port.name}"
        if gw.is_link_local:
            return f"link-local next hop {gw} needs options:{OPT_PORT_NAME} on the router port"
        for port in self.ports:
            if _contains(port, gw):
                return port
        return f"next hop {gw} is in no network of the router's ports"


#: why an IPv4 route via an IPv6 next hop is not imported on an older OVN
MIXED_FAMILY = "needs OVN >= 25.03"


def learns_here(r: LogicalRouter, p: RouterPort) -> bool:
    """A port of a router served here learns where OVN's ovn-controller has it learn: every
    port of a gateway router, only the gateway ports active here of any other router (its
    other ports face OVN's own networks)."""
    if r.pinned_here or "chassis" in r.options:
        return r.pinned_here
    return p.gateway and p.bound_here


def _contains(port: RouterPort, addr: Address) -> bool:
    return any(n.version == addr.version and addr in n.network for n in port.networks)


Decision = tuple[DesiredRoute, ...] | Rejection

#: the next hops of a hop set as (nexthop, output port) rows, or why none is usable
HopRows = tuple[tuple[str, str], ...] | str


@dataclass(slots=True)
class _RouterMemo:
    """What the passes for one router decided so far (see :class:`DecisionCache`): each
    prefix's decision in exactly one of three maps (at 1M routes, one dict entry a route)."""

    ctx: tuple[Hashable, Mapping[Network, str], ImportPolicy]
    #: prefix -> its one route (most routes: no tuple around it)
    single: dict[str, DesiredRoute] = field(default_factory=dict)
    #: prefix -> its routes, one per next hop (ECMP)
    multi: dict[str, tuple[DesiredRoute, ...]] = field(default_factory=dict)
    rejects: dict[str, Rejection] = field(default_factory=dict)
    #: (hop set, IP version of the prefix) -> its rows (see _hop_rows)
    hops: dict[tuple[frozenset[Hop], int], HopRows] = field(default_factory=dict)
    #: the RIB snapshot (serial, table) these reflect; (0, 0): none
    seen: tuple[int, int] = (0, 0)

    def forget(self, prefix: str) -> None:
        self.single.pop(prefix, None)
        self.multi.pop(prefix, None)
        self.rejects.pop(prefix, None)

    def record(self, prefix: str, decision: Decision) -> None:
        self.forget(prefix)
        if isinstance(decision, Rejection):
            self.rejects[prefix] = decision
        elif len(decision) == 1:
            self.single[prefix] = decision[0]
        else:
            self.multi[prefix] = decision

    def decision(self, prefix: str) -> Decision | None:
        if (one := self.single.get(prefix)) is not None:
            return (one,)
        return self.multi.get(prefix) or self.rejects.get(prefix)

    def accepted(self) -> int:
        return len(self.single) + len(self.multi)

    def routes(self) -> Iterable[DesiredRoute]:
        return itertools.chain(self.single.values(),
                               itertools.chain.from_iterable(self.multi.values()))  # fmt: skip

    def accepted_by_prefix(self) -> dict[str, tuple[DesiredRoute, ...]]:
        return {**{p: (r,) for p, r in self.single.items()}, **self.multi}


class DecisionCache:
    """Per router, the decisions of earlier passes, valid while the router, the prefixes OVN
    owns and the policy stay the same. A pass whose RIB snapshot directly follows the one of
    the pass before (``RibSnapshot.serial``) decides only the prefixes that snapshot names as
    changed: its cost follows the change, not the table (a 100k-route import runs ~20 passes).
    Any other snapshot (the first for a router, in the agent) gets a full pass that decides
    every prefix again. The result is the same either way (a unit test checks it on random
    change sequences)."""

    def __init__(self) -> None:
        self._routers: dict[str, _RouterMemo] = {}
        #: the OVN state last seen, what OVN owns in it and its index: a new state that owns
        #: the same prefixes keeps the very same mapping, so the memos stay valid
        self._state: OvnState | None = None
        #: VRF -> (what OVN owns in it, its index)
        self._owned: dict[str, tuple[Mapping[Network, str], PrefixIndex]] = {}

    def owned(self, state: OvnState, vrf: str) -> tuple[Mapping[Network, str], PrefixIndex]:
        """What OVN owns in the networks routed in ``vrf`` (the hijack guard is per VRF)."""
        if state is not self._state:
            fresh = owned_prefixes_by_vrf(state)
            kept = {}
            for name, owned in fresh.items():
                old = self._owned.get(name)
                kept[name] = (
                    old if old is not None and old[0] == owned else (owned, PrefixIndex(owned))
                )
            self._owned, self._state = kept, state
        return self._owned.get(vrf) or ({}, _EMPTY)

    def router(
        self, router: LogicalRouter, owned: Mapping[Network, str], policy: ImportPolicy
    ) -> _RouterMemo:
        ctx = (_import_view(router), owned, policy)
        memo = self._routers.get(router.name)
        if memo is None or memo.ctx != ctx:
            memo = self._routers[router.name] = _RouterMemo(ctx)
        if len(memo.hops) > 10_000:  # hop sets come and go with next-hop changes
            memo.hops.clear()
        return memo

    def decided(self, prefix: str) -> list[Decision]:
        """What the last pass decided for ``prefix``, in every router (for trace; a plan may
        be under way in another thread: the memos are copied first, in one step)."""
        memos = list(self._routers.values())
        return [d for m in memos if (d := m.decision(prefix)) is not None]

    def forget_others(self, routers: Iterable[str]) -> None:
        """Drop the memos of routers that no longer learn here."""
        keep = set(routers)
        for name in [n for n in self._routers if n not in keep]:
            del self._routers[name]


def _import_view(r: LogicalRouter) -> Hashable:
    """What the import decisions for a router depend on (not its NATs, VIPs, switches)."""
    return (r.name, r.routing, r.pinned_here,
            tuple((p.name, p.networks, p.routing, p.gateway, p.bound_here, p.switch, p.peer)
                  for p in r.ports))  # fmt: skip


def plan_import(
    state: OvnState,
    rib: RibSnapshot,
    policy: ImportPolicy,
    cache: DecisionCache | None = None,
    owned_rows: Iterable[OwnedRoute] = (),
) -> ImportPlan:
    """The routes every router that learns here should have. ``owned_rows``: what this chassis
    has written already (max-prefix keeps those before it adds new ones)."""
    cache = cache or DecisionCache()
    routers, rejected = learning_routers(state, policy)
    allowed = PrefixIndex(policy.allow_overlap)
    desired: list[Iterable[DesiredRoute]] = []
    for name, (router, table) in sorted(routers.items()):
        ovn_owned, owned = cache.owned(state, router.routing.vrf)
        memo = cache.router(router, ovn_owned, policy)
        hop_rows = _HopRowsMemo(_PortMatcher.of(router, policy.port_mapping), policy, memo.hops)
        routes = rib.table(table)
        changed = _changed_since(memo.seen, rib, table)
        if changed is None:  # a full pass
            memo.single.clear()
            memo.multi.clear()
            memo.rejects.clear()
            changed = routes.keys()
        for prefix in changed:
            route = routes.get(prefix)
            if route is None or route.protocol not in policy.protocols:
                # gone, or connected, kernel, ...: never candidates, not "rejected"
                memo.forget(prefix)
                continue
            memo.record(prefix, _decide(name, prefix, route, hop_rows, owned, allowed, policy))
        memo.seen = (rib.serial, table)
        rejected.extend(memo.rejects.values())
        if memo.accepted() <= policy.max_prefix:
            desired.append(memo.routes())
        else:
            existing = (owned_rows.prefixes(name) if isinstance(owned_rows, OwnedRows)
                        else {row.prefix for row in owned_rows if row.router == name})  # fmt: skip
            desired.append(_limit(name, memo.accepted_by_prefix(), existing, policy.max_prefix,
                                  rejected))  # fmt: skip
    cache.forget_others(routers)
    return ImportPlan(  # one set built once: at 1M routes, no copy of it
        frozenset(itertools.chain.from_iterable(desired)),
        tuple(sorted(rejected)),
        {n: t for n, (_r, t) in routers.items()},
    )


def _changed_since(seen: tuple[int, int], rib: RibSnapshot, table: int) -> AbstractSet[str] | None:
    """The prefixes of ``table`` that changed since the snapshot ``seen`` (serial, table), or
    None if that is not known (then every prefix is looked at)."""
    serial, seen_table = seen
    if not serial or seen_table != table or rib.changed is None:
        return None
    if rib.serial == serial:
        return frozenset()  # the very same snapshot
    if rib.serial == serial + 1:
        return rib.changed.get(table, frozenset())
    return None


def _decide(
    router: str,
    prefix: str,
    route: RibRoute,
    hop_rows: Callable[[frozenset[Hop], int], HopRows],
    owned: PrefixIndex,
    allowed: PrefixIndex,
    policy: ImportPolicy,
) -> Decision:
    if route.kind != "unicast":
        return Rejection(router, prefix, "not-unicast", f"{route.kind} route")
    version, addr, length = prefix_key(prefix)
    if length == 0:
        if not policy.allow_default:
            return Rejection(router, prefix, "default-route", "default route not allowed")
    elif (hit := owned.overlapping_key(version, addr, length)) is not None and (
        not allowed.overlapping_key(version, addr, length)
    ):
        net, what = hit
        return Rejection(router, prefix, "hijack", f"overlaps {net} ({what}) owned by OVN")
    rows = hop_rows(route.hops, version)
    if isinstance(rows, str):
        return Rejection(router, prefix, "unresolvable-nexthop", rows)
    return tuple(DesiredRoute(router, prefix, nexthop, port) for nexthop, port in rows)


@dataclass(frozen=True, slots=True)
class _HopRowsMemo:
    matcher: _PortMatcher
    policy: ImportPolicy
    memo: dict[tuple[frozenset[Hop], int], HopRows]

    def __call__(self, hops: frozenset[Hop], version: int) -> HopRows:
        key = (hops, version)
        rows = self.memo.get(key)
        if rows is None:
            rows = self.memo[key] = _hop_rows(hops, version, self.matcher, self.policy)
        return rows


def _hop_rows(
    hops: frozenset[Hop], version: int, matcher: _PortMatcher, policy: ImportPolicy
) -> HopRows:
    """Where each next hop leaves the router (most routes share a few hop sets: memoized)."""
    rows = []
    reasons = []
    for hop in sorted(hops, key=_hop_key):
        if hop.gateway and hop.gateway.version != version and not policy.mixed_family:
            reasons.append(f"IPv4 via IPv6 next hop {hop.gateway} {MIXED_FAMILY}")
            continue
        via = matcher.via_host(hop, version, policy) if policy.l3vni_svis else None
        if isinstance(via, tuple):  # remote VTEPs (ECMP) all go through the host: one row
            rows.append((sys.intern(str(via[1])), via[0].name))
            continue
        port = via if via is not None else matcher.match(hop, policy.ifnames)
        if isinstance(port, str):
            reasons.append(port)
            continue
        rows.append((sys.intern(str(hop.gateway)), port.name))
    return tuple(dict.fromkeys(rows)) if rows else "; ".join(reasons)


def _hop_key(h: Hop) -> tuple[int, str, int]:
    return (h.gateway.version if h.gateway else 0, str(h.gateway), h.ifindex)


def _limit(
    router: str,
    accepted: Mapping[str, tuple[DesiredRoute, ...]],
    existing: set[str],
    limit: int,
    rejected: list[Rejection],
) -> Iterable[DesiredRoute]:
    """Max-prefix: beyond ``limit`` nothing new is added; what OVN already has stays."""
    keep = sorted((p for p in accepted if p in existing), key=_prefix_order)[:limit]
    new = sorted((p for p in accepted if p not in existing), key=_prefix_order)
    room = limit - len(keep)
    keep += new[:room]
    for p in new[room:]:
        rejected.append(Rejection(router, p, "max-prefix", f"router is at its limit of {limit}"))
    return (r for p in keep for r in accepted[p])


def _prefix_order(p: str) -> tuple[int, int, int]:
    n = ipaddress.ip_network(p)
    return (n.version, int(n.network_address), n.prefixlen)


@dataclass(frozen=True, slots=True)
class RouteDiff:
    add: tuple[DesiredRoute, ...]
    delete: tuple[OwnedRoute, ...]

    def __bool__(self) -> bool:
        return bool(self.add or self.delete)


class OwnedRows:
    """The rows this chassis owns, by what they route: the agent's bookkeeping, kept from its
    own writes, so that a pass diffs the whole desired state against it with set operations
    (100k routes: a few ms) instead of a loop over every row. Mutable, not shared. One dict
    entry a row, what it routes -> its UUID as a number (the DesiredRoute is the plan's own
    object): at 1M rows ~90 bytes a row, was ~220 with the UUID's text and a second index."""

    def __init__(
        self, rows: Iterable[OwnedRoute] = (), homes: Mapping[str, Iterable[str]] | None = None
    ) -> None:
        #: router name -> the UUIDs of the router rows these rows are in: one, unless two
        #: routers share the name (a router deleted and created again under its name is
        #: another row: the rows went with the old one)
        self.homes: dict[str, set[str]] = {n: set(h) for n, h in (homes or {}).items()}
        self._by_route: dict[DesiredRoute, int] = {}
        #: rows that route the same as another one (left by an interrupted write, say): extra
        self._dupes: dict[int, DesiredRoute] = {}
        self._per_router: Counter[str] = Counter()
        for row in rows:
            self.add(row)

    def add(self, row: OwnedRoute) -> None:
        uuid, known = _uuid_number(row.uuid), self._by_route.get(row.route)
        if known == uuid or uuid in self._dupes:
            return  # known already
        self._per_router[row.router] += 1
        if known is not None:
            self._dupes[uuid] = row.route
        else:
            self._by_route[row.route] = uuid

    def remove(self, row: OwnedRoute) -> None:
        uuid = _uuid_number(row.uuid)
        if self._dupes.pop(uuid, None) is None:
            if self._by_route.get(row.route) != uuid:
                return  # not known
            del self._by_route[row.route]
            for uuid, route in self._dupes.items():  # a duplicate now stands for the route
                if route == row.route:
                    del self._dupes[uuid]
                    self._by_route[route] = uuid
                    break
        self._per_router[row.router] -= 1
        if not self._per_router[row.router]:
            del self._per_router[row.router]

    def routers(self) -> Mapping[str, int]:
        """Router name -> how many rows this chassis owns there."""
        return self._per_router

    def of_router(self, router: str) -> list[OwnedRoute]:
        return self._rows(lambda route: route.router == router)

    def prefixes(self, router: str) -> set[str]:
        """The prefixes of ``router``'s rows (no row made: every pass of a router at its
        max-prefix asks)."""
        out = {r.prefix for r in self._by_route if r.router == router}
        return out | {r.prefix for r in self._dupes.values() if r.router == router}

    def of_prefix(self, prefix: str) -> list[OwnedRoute]:
        return self._rows(lambda route: route.prefix == prefix)

    def _rows(self, keep: Callable[[DesiredRoute], bool]) -> list[OwnedRoute]:
        """The rows that route what ``keep`` keeps (their UUIDs made text only for them)."""
        rows = [(u, r) for r, u in self._by_route.items() if keep(r)]
        rows += [(u, r) for u, r in self._dupes.items() if keep(r)]
        return [OwnedRoute(_uuid_text(u), r) for u, r in rows]

    def __len__(self) -> int:
        return len(self._by_route) + len(self._dupes)

    def __iter__(self) -> Iterator[OwnedRoute]:
        for route, uuid in self._by_route.items():
            yield OwnedRoute(_uuid_text(uuid), route)
        for uuid, route in self._dupes.items():
            yield OwnedRoute(_uuid_text(uuid), route)


def _uuid_number(text: str) -> int:
    """A UUID's 128 bits (~48 bytes; its text ~85)."""
    return int(text.replace("-", ""), 16)


def _uuid_text(number: int) -> str:
    h = f"{number:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def diff_routes(
    desired: frozenset[DesiredRoute], owned: OwnedRows | Iterable[OwnedRoute]
) -> RouteDiff:
    """Rows to add and owned rows to delete (no longer desired, or duplicates); a still-valid
    row is never touched."""
    rows = owned if isinstance(owned, OwnedRows) else OwnedRows(owned)
    by_route = rows._by_route
    stale = by_route.keys() - desired
    delete = [OwnedRoute(_uuid_text(by_route[k]), k) for k in stale] if stale else []
    dupes = [OwnedRoute(_uuid_text(u), r) for u, r in rows._dupes.items()]
    return RouteDiff(tuple(sorted(desired.difference(by_route))), (*delete, *dupes))
