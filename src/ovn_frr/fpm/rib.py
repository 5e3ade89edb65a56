"""zebra's selected routes, rebuilt from the FPM message stream (sans-I/O; time is a parameter).

Three behaviours of zebra shape this reducer:

- An update of a route arrives as RTM_DELROUTE immediately followed by RTM_NEWROUTE (FRR < 9.1;
  later releases send one RTM_NEWROUTE with NLM_F_REPLACE). A delete is therefore held for
  ``coalesce`` seconds: if the route comes back meanwhile, it never leaves the snapshot.
- Routes reference next-hop objects (RTA_NH_ID) that may arrive after the route, and a group may
  arrive before its members. A route is resolved when everything it references is known; until
  then the snapshot keeps its previous resolution (if any), so nothing is dropped.
- On every (re)connect zebra replays all routes, with no end marker and no deletes for what
  vanished meanwhile. :meth:`connected` marks every route stale; routes refreshed by the replay
  lose the mark, and once the stream has been quiet for ``replay_quiet`` seconds, and at least
  ``replay_hold`` seconds have passed since the connection, the still-stale ones are swept. The
  hold covers an FRR restart: zebra replays at once, but bgpd re-learns its routes only after
  its sessions come back, seconds later (like fpmsyncd's reconcile timer). Likewise a route
  replayed with fewer next hops than it had keeps the missing ones until the sweep: bgpd
  re-learns an ECMP route one session at a time, and a leg must not leave OVN meanwhile.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ovn_frr.core.model import Hop, RibRoute, RibSnapshot
from ovn_frr.fpm.netlink import Message, NexthopMessage, RouteMessage

#: (table, prefix text)
Key = tuple[int, str]


@dataclass(frozen=True, slots=True)
class _Waiting:
    """A route's last message, while the next hops it references are not all known (its
    last complete resolution, if any, stays published meanwhile)."""

    nh_id: int
    protocol: int
    kind: str


class Rib:
    """Memory at 1M routes is what shapes the state: per route, one entry in its table's dict
    (the prefix text -> a RibRoute shared by every route with the same next hops), nothing
    else (~45 bytes a route beside the prefix's text, was ~310 with an entry object, a key
    tuple and an index of each next-hop object's routes). A next-hop object that changes in
    place, which zebra seldom does (a new next-hop set gets a new id), costs a pass over the
    routes instead (one per batch of messages, ~0.2 s at 1M)."""

    def __init__(
        self, coalesce: float = 0.05, replay_quiet: float = 1.0, replay_hold: float = 0.0
    ) -> None:
        self.coalesce = coalesce
        self.replay_quiet = replay_quiet
        self.replay_hold = replay_hold
        self._connected_at = 0.0
        #: table -> prefix -> the route as last resolved: what snapshot() copies
        self._tables: dict[int, dict[str, RibRoute]] = defaultdict(dict)
        #: routes whose last message waits for its next hops
        self._waiting: dict[Key, _Waiting] = {}
        #: table -> prefixes whose route changed since the last snapshot, and its number
        self._changed: dict[int, set[str]] = defaultdict(set)
        self._serial = 0
        self._nexthops: dict[int, NexthopMessage] = {}
        #: next-hop id -> how many routes' last message references it (this zebra run's)
        self._nh_count: dict[int, int] = {}
        #: ids whose routes are to be resolved again at the end of the batch
        self._rescan: set[int] = set()
        #: next-hop id -> the groups that have it as a member
        self._group_users: dict[int, set[int]] = defaultdict(set)
        self._pending_del: dict[Key, float] = {}
        #: one object per distinct hop set, and per distinct route (most routes share a few):
        #: memory at scale. Bounded: next-hop churn makes a new route object per change
        self._hopsets: dict[frozenset[Hop], frozenset[Hop]] = {}
        self._interned: dict[RibRoute, RibRoute] = {}
        #: next-hop id -> its resolved hop set, while no next-hop message changes anything
        self._resolved: dict[int, frozenset[Hop]] = {}
        #: during a replay: table -> the prefixes not replayed yet
        self._stale: dict[int, set[str]] | None = None
        #: during a replay: each route as it was before the (re)connect, and the real next
        #: hops of the routes replayed with fewer (published with the old ones added until
        #: the sweep: an FRR restart re-learns ECMP legs one session at a time)
        self._before: dict[int, dict[str, RibRoute]] = {}
        self._widened: dict[Key, frozenset[Hop]] = {}
        self._last_message = 0.0
        self.version = 0
        #: A replay has completed since start: the snapshot is the whole RIB (deletes are safe).
        self.synced = False

    # --- input -------------------------------------------------------------------------------

    def connected(self, now: float, restarted: bool = True) -> None:
        """A new FPM connection: zebra is about to replay everything. ``restarted``: it is
        another zebra process than before (or that is not known), so bgpd is re-learning its
        routes: next hops missing from the replay are held too. A reconnect of the same zebra
        replays what it has: it is taken as it comes."""
        self._stale = {t: set(routes) for t, routes in self._tables.items() if routes}
        for table, prefix in self._waiting:
            self._stale.setdefault(table, set()).add(prefix)
        # (a reconnect during a replay keeps the first's, unless all of it is gone)
        if restarted and not any(self._before.values()):
            self._before = {t: dict(routes) for t, routes in self._tables.items() if routes}
        self._connected_at = now
        # next-hop ids belong to one zebra run; routes keep their last resolution meanwhile
        self._nexthops.clear()
        self._resolved.clear()
        self._nh_count.clear()
        self._group_users.clear()
        self._last_message = now

    def apply(self, messages: Iterable[Message], now: float) -> None:
        """The routes a next-hop message changes are resolved again once per run of such
        messages: before the next route message or next-hop delete, and at the end (the
        result does not depend on where the stream was split into batches)."""
        for m in messages:
            if isinstance(m, RouteMessage):
                self._flush()
                self._route(m, now)
            elif isinstance(m, NexthopMessage):
                if not m.add:
                    self._flush()
                self._nexthop(m)
        self._flush()
        self._last_message = now

    def _flush(self) -> None:
        if self._rescan:
            ids, self._rescan = self._rescan, set()
            self._resolve_again(ids)

    def _last_nh_id(self, table: int, prefix: str) -> int | None:
        """The next-hop id the route's last message referenced."""
        waiting = self._waiting.get((table, prefix))
        if waiting is not None:
            return waiting.nh_id
        route = self._tables[table].get(prefix)
        return route.nh_id if route is not None else None

    def _route(self, m: RouteMessage, now: float) -> None:
        table, prefix = m.table, m.prefix
        key = (table, prefix)
        if not m.add:
            if prefix in self._tables[table] or key in self._waiting:
                self._pending_del[key] = now
            return
        self._pending_del.pop(key, None)
        counted = self._counted(table, prefix)
        if self._stale is not None and not counted:
            self._stale[table].discard(prefix)
        old = self._last_nh_id(table, prefix) if counted else None
        if old != m.nh_id:
            if old is not None:
                self._unuse(old)
            if m.nh_id is not None:
                self._nh_count[m.nh_id] = self._nh_count.get(m.nh_id, 0) + 1
        if m.nh_id is None:
            self._waiting.pop(key, None)
            inline = frozenset(Hop(n.gateway, n.ifindex, n.weight) for n in m.nexthops)
            self._set(table, prefix, m.protocol, m.kind, inline, None)
            return
        hops = self._hops(m.nh_id)
        if hops is None:
            self._waiting[key] = _Waiting(m.nh_id, m.protocol, m.kind)
        else:
            self._waiting.pop(key, None)
            self._set(table, prefix, m.protocol, m.kind, hops, m.nh_id)

    def _nexthop(self, m: NexthopMessage) -> None:
        self._resolved.clear()
        old = self._nexthops.pop(m.id, None)
        if old is not None:  # a group no longer uses the members it had
            for member, _w in old.group:
                users = self._group_users.get(member)
                if users is not None:
                    users.discard(m.id)
                    if not users:
                        del self._group_users[member]
        if not m.add:
            return
        self._nexthops[m.id] = m
        for member, _w in m.group:
            self._group_users[member].add(m.id)
        # routes waiting for this id, directly or through a group, and those it changes
        ids = {m.id} | self._group_users.get(m.id, set())
        self._rescan.update(i for i in ids if i in self._nh_count)

    def _counted(self, table: int, prefix: str) -> bool:
        """The route's last message is of this zebra run (not stale from the one before)."""
        return self._stale is None or prefix not in self._stale.get(table, ())

    def _resolve_again(self, ids: set[int]) -> None:
        """Resolve the routes whose last message references one of ``ids`` again: those
        waiting, then, if there are others, those resolved (a pass over every route)."""
        waiting = [((t, p), w.nh_id) for (t, p), w in self._waiting.items()
                   if w.nh_id in ids and self._counted(t, p)]  # fmt: skip
        for (table, prefix), nh_id in waiting:
            self._resolve(table, prefix, nh_id)
        if sum(self._nh_count.get(i, 0) for i in ids) <= len(waiting):
            return  # no resolved route references them
        for table, routes in list(self._tables.items()):
            found = [(p, r.nh_id) for p, r in routes.items() if r.nh_id in ids]
            for prefix, nh_id in found:
                if nh_id is not None and self._counted(table, prefix):
                    self._resolve(table, prefix, nh_id)

    def _hops(self, nh_id: int) -> frozenset[Hop] | None:
        hops = self._resolved.get(nh_id)
        if hops is None:
            hops = self._resolve_id(nh_id)
            if hops is not None:
                self._resolved[nh_id] = hops
        return hops

    def _resolve_id(self, nh_id: int) -> frozenset[Hop] | None:
        nh = self._nexthops.get(nh_id)
        if nh is None:
            return None
        if not nh.group:
            return frozenset({Hop(nh.gateway, nh.ifindex)})
        members = set()
        for member, weight in nh.group:
            m = self._nexthops.get(member)
            if m is None:
                return None  # a member is still to come
            members.add(Hop(m.gateway, m.ifindex, weight))
        return frozenset(members)

    def _resolve(self, table: int, prefix: str, nh_id: int) -> None:
        """Resolve the route again if its last message references ``nh_id`` (an unresolvable
        id keeps the last resolution)."""
        waiting = self._waiting.get((table, prefix))
        route = self._tables[table].get(prefix)
        last: _Waiting | RibRoute | None = waiting if waiting is not None else route
        if last is None or last.nh_id != nh_id:
            return
        hops = self._hops(nh_id)
        if hops is not None:
            self._waiting.pop((table, prefix), None)
            self._set(table, prefix, last.protocol, last.kind, hops, nh_id)

    def _set(
        self, table: int, prefix: str, protocol: int, kind: str, hops: frozenset[Hop],
        nh_id: int | None,
    ) -> None:  # fmt: skip
        if self._stale is not None:
            before = self._before.get(table, {}).get(prefix)
            if (before is not None and before.protocol == protocol
                    and before.kind == kind and not before.hops <= hops):  # fmt: skip
                self._widened[(table, prefix)] = hops
                hops = hops | before.hops
            else:
                self._widened.pop((table, prefix), None)
        if len(self._hopsets) > 100_000:
            self._hopsets.clear()  # only sharing is lost
        if len(self._interned) > 10_000:
            self._interned.clear()
        new = RibRoute(protocol, kind, self._hopsets.setdefault(hops, hops), nh_id)
        route = self._interned.setdefault(new, new)
        routes = self._tables[table]
        old = routes.get(prefix)
        if old is route:
            return
        routes[prefix] = route
        if (old is None or old.hops != hops or old.protocol != protocol
                or old.kind != kind):  # fmt: skip
            self._changed[table].add(prefix)  # (another next-hop id alone changes nothing)
            self.version += 1

    def _unuse(self, nh_id: int) -> None:
        """A route no longer references ``nh_id`` (nothing is kept for an id no route uses:
        memory under next-hop churn stays flat)."""
        n = self._nh_count.get(nh_id, 0) - 1
        if n > 0:
            self._nh_count[nh_id] = n
        else:
            self._nh_count.pop(nh_id, None)

    # --- time --------------------------------------------------------------------------------

    def tick(self, now: float) -> float | None:
        """Commit held deletes and a finished replay's sweep that are due at ``now``.

        Returns when the next one falls due (for the caller's timer), or None.
        """
        due = [k for k, t in self._pending_del.items() if now - t >= self.coalesce]
        for key in due:
            del self._pending_del[key]
            self._drop(*key)
        if self._stale is not None and now >= self._sweep_at():
            for table, prefixes in self._stale.items():
                for prefix in prefixes:
                    self._drop(table, prefix)
            self._stale = None
            self.synced = True
            widened, self._widened, self._before = self._widened, {}, {}
            for (table, prefix), hops in widened.items():  # the next hops zebra has now only
                route = self._tables[table].get(prefix)
                if route is not None:
                    self._set(table, prefix, route.protocol, route.kind, hops, route.nh_id)
        deadlines = [t + self.coalesce for t in self._pending_del.values()]
        if self._stale is not None:
            deadlines.append(self._sweep_at())
        return min(deadlines) if deadlines else None

    def _sweep_at(self) -> float:
        return max(self._last_message + self.replay_quiet, self._connected_at + self.replay_hold)

    def _drop(self, table: int, prefix: str) -> None:
        self._widened.pop((table, prefix), None)
        before = self._before.get(table)
        if before is not None:
            before.pop(prefix, None)  # zebra deleted it: what it had before is no more
        last = self._last_nh_id(table, prefix) if self._counted(table, prefix) else None
        if last is not None:
            self._unuse(last)
        self._waiting.pop((table, prefix), None)
        if self._tables[table].pop(prefix, None) is not None:
            self._changed[table].add(prefix)
            self.version += 1

    # --- output ------------------------------------------------------------------------------

    @property
    def replaying(self) -> bool:
        return self._stale is not None

    def snapshot(self) -> RibSnapshot:
        tables = {table: dict(routes) for table, routes in self._tables.items() if routes}
        self._serial += 1
        changed = {table: frozenset(keys) for table, keys in self._changed.items() if keys}
        self._changed.clear()
        return RibSnapshot(tables, self.replaying, self._serial, changed)

    def lookup(self, prefix: str) -> list[tuple[int, RibRoute]]:
        """The routes for one prefix, by table (for trace)."""
        return [(t, routes[prefix]) for t, routes in self._tables.items() if prefix in routes]

    def __len__(self) -> int:
        waiting = sum(1 for t, p in self._waiting if p not in self._tables.get(t, {}))
        return sum(len(routes) for routes in self._tables.values()) + waiting
