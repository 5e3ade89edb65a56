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


@dataclass(slots=True)
class _Entry:
    """What re-resolution needs of the last message (not the message: memory, at 1M routes)."""

    nh_id: int | None
    protocol: int
    kind: str
    #: the last complete resolution; kept while a newer message waits for its next hops
    route: RibRoute | None


class Rib:
    def __init__(
        self, coalesce: float = 0.05, replay_quiet: float = 1.0, replay_hold: float = 0.0
    ) -> None:
        self.coalesce = coalesce
        self.replay_quiet = replay_quiet
        self.replay_hold = replay_hold
        self._connected_at = 0.0
        self._routes: dict[Key, _Entry] = {}
        #: table -> prefix -> the resolved route: what snapshot() copies (a dict copy per table)
        self._tables: dict[int, dict[str, RibRoute]] = defaultdict(dict)
        #: table -> prefixes whose route changed since the last snapshot, and its number
        self._changed: dict[int, set[str]] = defaultdict(set)
        self._serial = 0
        self._nexthops: dict[int, NexthopMessage] = {}
        #: next-hop id -> routes and groups that reference it
        self._nh_users: dict[int, set[Key]] = defaultdict(set)
        self._group_users: dict[int, set[int]] = defaultdict(set)
        self._pending_del: dict[Key, float] = {}
        #: one object per distinct next-hop set (most routes share a few): memory at scale
        self._hopsets: dict[frozenset[Hop], frozenset[Hop]] = {}
        #: next-hop id -> its resolved hop set, while no next-hop message changes anything
        self._resolved: dict[int, frozenset[Hop]] = {}
        self._stale: set[Key] | None = None
        #: during a replay: each route as it was before the (re)connect, and the real next
        #: hops of the routes replayed with fewer (published with the old ones added until
        #: the sweep: an FRR restart re-learns ECMP legs one session at a time)
        self._before: dict[Key, RibRoute] = {}
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
        self._stale = set(self._routes)
        if restarted and not self._before:  # (a reconnect during a replay keeps the first's)
            self._before = {k: e.route for k, e in self._routes.items() if e.route is not None}
        self._connected_at = now
        # next-hop ids belong to one zebra run; routes keep their last resolution meanwhile
        self._nexthops.clear()
        self._resolved.clear()
        self._nh_users.clear()
        self._group_users.clear()
        self._last_message = now

    def apply(self, messages: Iterable[Message], now: float) -> None:
        for m in messages:
            if isinstance(m, RouteMessage):
                self._route(m, now)
            elif isinstance(m, NexthopMessage):
                self._nexthop(m)
        self._last_message = now

    def _route(self, m: RouteMessage, now: float) -> None:
        key = (m.table, m.prefix)
        if not m.add:
            if key in self._routes:
                self._pending_del[key] = now
            return
        self._pending_del.pop(key, None)
        if self._stale is not None:
            self._stale.discard(key)
        old = self._routes.get(key)
        if old is not None and old.nh_id is not None and old.nh_id != m.nh_id:
            self._unuse(old.nh_id, key)
        entry = _Entry(m.nh_id, m.protocol, m.kind, old.route if old else None)
        self._routes[key] = entry
        if m.nh_id is not None:
            self._nh_users[m.nh_id].add(key)
            self._resolve(key, entry)
        else:
            hops = frozenset(Hop(n.gateway, n.ifindex, n.weight) for n in m.nexthops)
            self._set(key, entry, hops)

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
        # routes waiting for this id, directly or through a group
        ids = {m.id} | self._group_users.get(m.id, set())
        for nh_id in ids:
            for key in list(self._nh_users.get(nh_id, ())):
                entry = self._routes.get(key)
                if entry is not None and entry.nh_id == nh_id:
                    self._resolve(key, entry)

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

    def _resolve(self, key: Key, entry: _Entry) -> None:
        assert entry.nh_id is not None
        hops = self._hops(entry.nh_id)
        if hops is not None:
            self._set(key, entry, hops)

    def _set(self, key: Key, entry: _Entry, hops: frozenset[Hop]) -> None:
        if len(self._hopsets) > 100_000:
            self._hopsets.clear()  # only sharing is lost
        hops = self._hopsets.setdefault(hops, hops)
        if self._stale is not None:
            before = self._before.get(key)
            if (before is not None and before.protocol == entry.protocol
                    and before.kind == entry.kind and not before.hops <= hops):  # fmt: skip
                self._widened[key] = hops
                hops = self._hopsets.setdefault(hops | before.hops, hops | before.hops)
            else:
                self._widened.pop(key, None)
        route = RibRoute(key[0], key[1], entry.protocol, entry.kind, hops)
        if route != entry.route:
            entry.route = route
            self._tables[key[0]][key[1]] = route
            self._changed[key[0]].add(key[1])
            self.version += 1

    def _unuse(self, nh_id: int, key: Key) -> None:
        """``key`` no longer references ``nh_id`` (nothing is kept for an id no route uses:
        memory under next-hop churn stays flat)."""
        users = self._nh_users.get(nh_id)
        if users is not None:
            users.discard(key)
            if not users:
                del self._nh_users[nh_id]

    # --- time --------------------------------------------------------------------------------

    def tick(self, now: float) -> float | None:
        """Commit held deletes and a finished replay's sweep that are due at ``now``.

        Returns when the next one falls due (for the caller's timer), or None.
        """
        due = [k for k, t in self._pending_del.items() if now - t >= self.coalesce]
        for key in due:
            del self._pending_del[key]
            self._drop(key)
        if self._stale is not None and now >= self._sweep_at():
            for key in self._stale:
                self._drop(key)
            self._stale = None
            self.synced = True
            widened, self._widened, self._before = self._widened, {}, {}
            for key, hops in widened.items():  # the next hops zebra has now, and only those
                entry = self._routes.get(key)
                if entry is not None:
                    self._set(key, entry, hops)
        deadlines = [t + self.coalesce for t in self._pending_del.values()]
        if self._stale is not None:
            deadlines.append(self._sweep_at())
        return min(deadlines) if deadlines else None

    def _sweep_at(self) -> float:
        return max(self._last_message + self.replay_quiet, self._connected_at + self.replay_hold)

    def _drop(self, key: Key) -> None:
        self._widened.pop(key, None)
        self._before.pop(key, None)  # zebra deleted it: what it had before is no more
        entry = self._routes.pop(key, None)
        if entry is None:
            return
        if entry.nh_id is not None:
            self._unuse(entry.nh_id, key)
        if entry.route is not None:
            del self._tables[key[0]][key[1]]
            self._changed[key[0]].add(key[1])
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

    def lookup(self, prefix: str) -> list[RibRoute]:
        """The routes for one prefix, in every table (for trace)."""
        return [routes[prefix] for routes in self._tables.values() if prefix in routes]

    def __len__(self) -> int:
        return len(self._routes)
