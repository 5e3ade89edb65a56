"""The import pipeline: zebra's routes (FPM) -> OVN static routes on the routers that learn here.

Each step is level-triggered: snapshot the RIB, plan the whole desired route set from it and the
OVN state (:func:`~ovn_frr.core.importer.plan_import`), diff it against the rows this chassis
owns, write the difference. No route is deleted before the first complete FPM replay since
start (the RIB is partial until then), so a restart adopts the rows that are still valid and
never re-creates them.

Writes are pipelined: row UUIDs are chosen here, so the next step plans while ovsdb-server
inserts, and it is timed to end about when that write lands (see :meth:`_plan_window`). The
writer's requests run one at a time on this pipeline's own thread; planning runs on a second
one, so a 100k-route plan never holds up the event loop (BFD withdrawals, FRR checks).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any, Protocol

from ovn_frr.core.importer import (
    MIXED_FAMILY,
    DecisionCache,
    OwnedRows,
    RouteDiff,
    diff_routes,
    plan_import,
)
from ovn_frr.core.model import (
    RTPROT_BGP,
    DesiredRoute,
    ImportPlan,
    ImportPolicy,
    Network,
    OwnedRoute,
    Rejection,
)
from ovn_frr.core.ovn import OvnState, parse_port_mapping
from ovn_frr.core.vrf import Type5Hops
from ovn_frr.fpm.rib import Rib
from ovn_frr.fpm.server import FpmCounters
from ovn_frr.ovn.bulk import EarlierWriteLanded, WriteResult
from ovn_frr.reconcilers.base import LIST_LIMIT, Cell, Sample, Signal, TracePart, Worker
from ovn_frr.reconcilers.selfroutes import SelfRouteCheck, SelfRoutes

log = logging.getLogger(__name__)

#: a refused FPM connection is a problem (unhealthy) for this long after it
REFUSED_PROBLEM_S = 300.0
PROTOCOL_NAMES = {3: "kernel", 4: "static", RTPROT_BGP: "bgp", 187: "isis", 188: "ospf"}


class RouteWriter(Protocol):
    """``ovn.bulk.BulkWriter`` (blocking), or a fake in tests."""

    def count_owned(self) -> int: ...

    def owned(self) -> tuple[dict[str, OwnedRoute], dict[str, frozenset[str]]]: ...

    def new_rows(self, routes: Sequence[DesiredRoute]) -> list[OwnedRoute]: ...

    def write(
        self,
        add: Sequence[OwnedRoute],
        delete: Sequence[OwnedRoute],
        routers: Mapping[str, str],
        homes: Mapping[str, Collection[str]] | None = None,
    ) -> WriteResult: ...

    def close(self) -> None: ...


class ImportReconciler:
    name = "import"

    def __init__(
        self,
        rib: Rib,
        fpm: FpmCounters,
        fpm_changed: Signal,
        ovn: Cell[OvnState | None],
        writer: RouteWriter,
        policy: ImportPolicy,
        resync_s: float,
        clock: Callable[[], float] = time.monotonic,
        ifnames: Callable[[], Mapping[int, str]] = dict,
        vrf_tables: Cell[Mapping[str, int]] | None = None,
        type5: Cell[Type5Hops] | None = None,
        stale: SelfRouteCheck | None = None,
        port_mapping: Callable[[], str] = str,
    ) -> None:
        self.rib = rib
        self.fpm = fpm
        self.ovn = ovn
        self.writer = writer
        self.policy = policy
        self.resync_s = resync_s
        self.clock = clock
        self.ifnames = ifnames
        #: this chassis' OVS ``dynamic-routing-port-mapping`` (read while a router port has
        #: ``-port-name``), and the problem last logged with it
        self.port_mapping = port_mapping
        self._mapping_problem = ""
        #: the kernel's VRF devices -> table, as the VRF pipeline last read them
        self.vrf_tables: Cell[Mapping[str, int]] = vrf_tables or Cell("vrf-tables", {})
        #: EVPN type-5: the L3VNI SVIs and host addresses, as the VRF pipeline last read them
        self.type5: Cell[Type5Hops] = type5 or Cell("type5", Type5Hops())
        #: a failed write wakes the pipeline to read the rows back
        self._retry = Signal("import-retry")
        self.watches: tuple[Signal, ...] = (fpm_changed, ovn, self._retry, self.vrf_tables,
                                            self.type5)  # fmt: skip
        self.io = Worker(self.name)
        self.cpu = Worker(f"{self.name}-plan")
        #: the local OVS's port mapping is read on a thread of its own: on ``io`` it waited
        #: for the write in flight, and the next plan with it (at 1M routes, 10 s a pass)
        self.ovs = Worker(f"{self.name}-ovs")
        self.decisions = DecisionCache()
        #: this chassis' route rows: read at start and when a resync finds them changed, then
        #: kept from the writer's own writes, the one in flight included
        self._owned: OwnedRows | None = None
        self._resync_at = 0.0
        #: the route write in flight (at most one)
        self._writing: asyncio.Future[None] | None = None
        self._write_eta = 0.0
        self._write_s_per_row = 100e-6
        self._plan_s = 0.0
        self._planned_version = -1
        self.added = 0
        self.deleted = 0
        self.rejected: tuple[Rejection, ...] = ()
        self.tables: dict[str, int] = {}
        #: router -> the VRF it learns from ("default" for the default VRF)
        self.vrfs: dict[str, str] = {}
        self._reported: dict[tuple[str, str], frozenset[str]] = {}
        #: router rows a write found gone, while the OVN state still shows them
        self._gone: set[str] = set()
        #: what the writes found gone, for the rows' bookkeeping (see _routers_gone), and
        #: whether a plan reads the rows on the planning thread now
        self._gone_found: list[tuple[frozenset[str], Mapping[str, str]]] = []
        self._planning = False
        #: rows in a router row that is not (or no longer) the one of their router's name,
        #: to unlink from there in the next write (what they are in, by name)
        self._stale: list[OwnedRoute] = []
        self._stale_homes: dict[str, frozenset[str]] = {}
        #: zebra's routes of an earlier bgpd, read after each replay of a zebra that keeps them
        self.self_routes = SelfRoutes(stale, clock, resync_s, self._retry.notify)

    # --- the step ------------------------------------------------------------------------------

    async def step(self) -> float | None:
        was_synced = self.rib.synced
        next_due = self.rib.tick(self.clock())
        if self.rib.synced and not was_synced:
            log.info("fpm_replay_complete routes=%d", len(self.rib))
            self.self_routes.replayed(self.fpm.zebra)
        self.self_routes.poll(len(self.rib))
        state = self.ovn.value
        if state is None:
            return next_due  # nothing to plan against before the first OVN state
        await self._plan_window()
        t0 = self.clock()
        rib = self.rib.snapshot()
        vrfs = {**self.vrf_tables.value, **self.policy.vrf_tables}
        t5 = self.type5.value
        policy = replace(self.policy, ifnames=dict(self.ifnames()), vrf_tables=vrfs,
                         l3vni_svis=t5.svis, host_addrs=t5.host_addrs,
                         port_mapping=await self._port_mapping(state))  # fmt: skip
        owned = await self._resync_owned()
        routers = self._routers(state, owned)
        version = self.ovn.version
        t1 = self.clock()
        self._planning = True
        try:
            plan, diff = await self.cpu(self._plan, state, rib, policy, owned)
        finally:
            self._planning = False
            self._routers_gone()  # what a write found while the plan read the rows
        t2 = self.clock()
        self._plan_s = t2 - t0
        self._planned_version = version
        if self._stale:
            diff = RouteDiff(diff.add, (*diff.delete, *self._stale))
        if diff and not await self._dispatch(diff, owned, routers, (t1 - t0, t2 - t1)):
            return self.clock()  # the write before it failed: read the rows back first
        self._record(plan)
        self.vrfs = {r.name: r.routing.vrf or "default" for r in state.routers
                     if r.name in plan.routers}  # fmt: skip
        due = [t for t in (next_due, self._resync_at, self.self_routes.due) if t is not None]
        return min(due)

    async def _port_mapping(self, state: OvnState) -> dict[str, str]:
        """``-port-name`` -> interface, from this chassis' OVS (only when a port names one)."""
        if not any(p.routing.port_name for r in state.routers for p in r.ports):
            return {}
        mapping, problem = parse_port_mapping(await self.ovs(self.port_mapping))
        if problem and problem != self._mapping_problem:
            log.warning("port_mapping_invalid problem=%r", problem)
        self._mapping_problem = problem
        return mapping

    def _routers(self, state: OvnState, owned: OwnedRows) -> dict[str, str]:
        """Router name -> the row routes go into: the names one row of the state has, but
        rows a write found gone (the IDL lags behind NB: not written through again before the
        state shows another). The rows of a name whose routes sit in another row than that
        (the router deleted and created again under its name, or a name two rows shared) are
        planned again from nothing: the next write unlinks them from where they are (gone
        with their router, most of the time) and inserts them into the router's row."""
        rows: dict[str, list[str]] = defaultdict(list)
        for r in state.routers:
            rows[r.name].append(r.uuid)
        self._gone &= {u for us in rows.values() for u in us}  # the state caught up
        routers = {n: us[0] for n, us in rows.items() if len(us) == 1 and us[0] not in self._gone}
        counts = owned.routers()
        for name in [n for n in owned.homes if not counts.get(n)]:
            del owned.homes[name]
        for name, homes in list(owned.homes.items()):
            into = routers.get(name)
            if into is None or homes == {into}:
                continue
            stale = owned.of_router(name)
            log.info("ovn_router_replaced router=%s rows=%d (written again)", name, len(stale))
            for row in stale:
                owned.remove(row)
            self._stale.extend(stale)
            self._stale_homes[name] = self._stale_homes.get(name, frozenset()) | homes
            del owned.homes[name]
        return routers

    def _plan(
        self, state: OvnState, rib: Any, policy: ImportPolicy, owned: OwnedRows
    ) -> tuple[ImportPlan, RouteDiff]:
        plan = plan_import(state, rib, policy, self.decisions, owned)
        diff = diff_routes(plan.routes, owned)
        if not self.rib.synced:
            diff = RouteDiff(diff.add, ())  # the RIB is partial until the first replay ends
        return plan, diff

    async def _dispatch(
        self,
        diff: RouteDiff,
        owned: OwnedRows,
        routers: dict[str, str],
        timings: tuple[float, float],
    ) -> bool:
        """Start writing ``diff`` once the write before it has landed, and return without
        waiting for this one (its rows' UUIDs are chosen here, so ``owned`` already holds
        them). A failed write makes the next step read the rows back; a diff planned on top
        of it is dropped (False)."""
        await self._write_landed()
        if self._owned is not owned:
            return False
        add = self.writer.new_rows([r for r in diff.add if r.router in routers])
        if not add and not diff.delete:
            return True  # only routes for routers not written through now
        names = {r.router for r in (*add, *diff.delete)}
        homes = {n: frozenset(owned.homes.get(n, ())) | self._stale_homes.get(n, frozenset())
                 for n in names}  # fmt: skip
        self._stale, self._stale_homes = [], {}
        for row in diff.delete:
            owned.remove(row)
        for row in add:
            owned.add(row)
            owned.homes.setdefault(row.router, set()).add(routers[row.router])
        self._writing = asyncio.ensure_future(
            self._write(add, diff.delete, routers, homes, timings)
        )
        self._write_eta = self.clock() + (len(add) + len(diff.delete)) * self._write_s_per_row
        return True

    async def _plan_window(self) -> None:
        """While a write is in flight, start the next plan only so that it ends about when
        that write lands: a plan made early would leave out what arrives meanwhile and go
        out as a small write of its own, delaying the rest (measured during a 100k import:
        writes alternated 16k, 1.5k, 22k, 6k rows). A new OVN state does not wait."""
        if self._writing is None or self.ovn.version != self._planned_version:
            return
        delay = self._write_eta - self._plan_s - self.clock()
        if delay > 0:
            await asyncio.wait({self._writing}, timeout=delay)

    async def _write(
        self,
        add: list[OwnedRoute],
        delete: tuple[OwnedRoute, ...],
        routers: dict[str, str],
        homes: Mapping[str, frozenset[str]],
        timings: tuple[float, float],
    ) -> None:
        started = self.clock()
        try:
            result = await self.io(self.writer.write, add, delete, routers, homes)
        except EarlierWriteLanded as exc:  # expected after a lost answer (a leader died)
            self._owned = None
            log.warning("ovn_write_aborted reason=%s", exc)
            self._retry.notify()
            return
        except Exception as exc:
            self._owned = None  # part of it may have landed: read back before the next
            log.error("ovn_write_failed error=%s (reading the rows back)", exc)
            self._retry.notify()
            return
        inserted, removed = result.inserted, result.removed
        self.added += inserted
        self.deleted += removed
        if result.gone:
            self._gone |= result.gone
            self._gone_found.append((result.gone, routers))
            if not self._planning:
                self._routers_gone()
        if inserted + removed >= 1000:  # small writes are mostly fixed cost
            per_row = (self.clock() - started) / (inserted + removed)
            self._write_s_per_row = (self._write_s_per_row + per_row) / 2
        log.info(
            "ovn_routes_written added=%d deleted=%d snapshot_ms=%.0f plan_ms=%.0f write_ms=%.0f",
            inserted, removed, timings[0] * 1e3, timings[1] * 1e3, (self.clock() - started) * 1e3,
        )  # fmt: skip

    def _routers_gone(self) -> None:
        """Writes found router rows gone (deleted, or the name's row is another now): what
        was inserted through them went nowhere and what they held went with them. Nothing is
        written through them again before the OVN state shows another row for the name (no
        read of the rows back, no retry: the state's change wakes this pipeline). Not while
        a plan runs: it reads the rows on another thread (then once it is done)."""
        found, self._gone_found = self._gone_found, []
        owned = self._owned
        if owned is None:
            return
        for gone, routers in found:
            self._rows_gone(owned, gone, routers)

    @staticmethod
    def _rows_gone(owned: OwnedRows, gone: frozenset[str], routers: Mapping[str, str]) -> None:
        for name, homes in list(owned.homes.items()):
            if not homes & gone:
                continue
            homes.difference_update(gone)
            if routers.get(name) in gone or not homes:
                rows = owned.of_router(name)
                for row in rows:
                    owned.remove(row)
                owned.homes.pop(name, None)
                log.info("ovn_router_gone router=%s rows=%d (until OVN shows its new row)",
                         name, len(rows))  # fmt: skip

    async def _write_landed(self) -> None:
        """Wait for the write in flight, if any (its failure is handled by ``_write``)."""
        if self._writing is not None:
            await asyncio.shield(self._writing)
            self._writing = None

    async def _resync_owned(self) -> OwnedRows:
        """Read this chassis' rows in full at start and after a failed write; every
        ``resync_s`` count them (a no-op update's count: nothing per row) and read them in
        full only when the count differs from what ovn-frr's own writes left (someone else
        removed or added rows). A full read of 300k rows held ~0.7 KB per row while parsing:
        done every resync, it set the agent's peak memory."""
        if self._owned is not None:
            if self.clock() < self._resync_at:
                return self._owned
            await self._write_landed()
            if self._owned is not None:
                count = await self.io(self.writer.count_owned)
                self._resync_at = self.clock() + self.resync_s
                if count == len(self._owned):
                    return self._owned
                log.warning("ovn_owned_routes_changed rows=%d known=%d (reading them again)",
                            count, len(self._owned))  # fmt: skip
        started = self.clock()
        await self._write_landed()
        rows, homes = await self.io(self.writer.owned)
        self._owned = OwnedRows(rows.values(), homes)
        self._stale, self._stale_homes = [], {}  # where they are is read again
        self._resync_at = self.clock() + self.resync_s
        log.info("ovn_owned_routes_read rows=%d ms=%.0f", len(self._owned),
                 (self.clock() - started) * 1e3)  # fmt: skip
        return self._owned

    def _record(self, plan: ImportPlan) -> None:
        """Rejections: one log line per router and reason whose prefixes changed, with a
        count and a sample (100k rejected prefixes must not make 100k lines)."""
        self.rejected = plan.rejected
        self.tables = dict(plan.routers)
        groups: dict[tuple[str, str], list[Rejection]] = defaultdict(list)
        for r in plan.rejected:
            groups[(r.router, r.reason)].append(r)
        for key, items in groups.items():
            prefixes = frozenset(r.prefix for r in items)
            old = self._reported.get(key, frozenset())
            new = prefixes - old
            if new:
                sample = sorted(new)[:3]
                detail = next(r.detail for r in items if r.prefix == sample[0])
                log.warning("routes_rejected router=%s reason=%s count=%d new=%d sample=%s "
                            "detail=%r", key[0], key[1], len(prefixes), len(new),
                            ",".join(sample), detail)  # fmt: skip
        self._reported = {k: frozenset(r.prefix for r in v) for k, v in groups.items()}

    # --- reports -------------------------------------------------------------------------------

    def per_router(self) -> Mapping[str, int]:
        return dict(self._owned.routers()) if self._owned else {}

    def status(self, now: float) -> dict[str, Any]:
        c = self.fpm
        per_router = self.per_router()
        owned = len(self._owned) if self._owned else 0
        return {
            "fpm": {"connected": c.connected, "connections": c.connections,
                    "messages": c.messages, "errors": c.errors, "last_error": c.last_error,
                    "refused": c.refused, "last_refused": c.last_refused,
                    "last_refused_s_ago": (None if c.last_refused_at is None
                                           else round(now - c.last_refused_at, 1)),
                    "zebra_pid": c.zebra.pid if c.zebra else None,
                    "zebra_sweep": c.zebra.sweep_option if c.zebra else None,
                    "rib_routes": len(self.rib), "synced": self.rib.synced,
                    **self.self_routes.status()},
            "imported": {"total": owned, "added": self.added, "deleted": self.deleted,
                         "routers": [{"router": r, "vrf": self.vrfs.get(r, "?"),
                                      "table": self.tables.get(r),
                                      "rows": per_router.get(r, 0)}
                                     for r in sorted(set(self.tables) | set(per_router))]},
            "rejected": [asdict(r) for r in self.rejected[:LIST_LIMIT]],
            "rejected_total": len(self.rejected),
            "rejected_by_reason": dict(Counter(r.reason for r in self.rejected)),
        }  # fmt: skip

    def problems(self, now: float) -> list[str]:
        c = self.fpm
        out = [] if c.connected else ["zebra not connected on FPM"]
        out += self.self_routes.problems()
        # one line per router whose IPv4 routes all wait for an OVN that routes them
        mixed = Counter(
            r.router for r in self.rejected
            if r.reason == "unresolvable-nexthop" and MIXED_FAMILY in r.detail
        )  # fmt: skip
        out += [f"router {router}: {n} IPv4 route(s) via IPv6 next hops not imported: this OVN "
                f"cannot route IPv4 via an IPv6 next hop ({MIXED_FAMILY})"
                for router, n in sorted(mixed.items())]  # fmt: skip
        if c.last_refused_at is not None and now - c.last_refused_at < REFUSED_PROBLEM_S:
            out.append(f"FPM: {c.refused} connection(s) refused, not from zebra "
                       f"(last: {c.last_refused})")  # fmt: skip
        return out

    def samples(self) -> Iterable[Sample]:
        c = self.fpm
        yield Sample("ovnfrr_routes_imported", "gauge", "Route rows ovn-frr owns in OVN NB",
                     len(self._owned) if self._owned else 0)  # fmt: skip
        by_vrf: Counter[str] = Counter()
        for router, rows in self.per_router().items():
            by_vrf[self.vrfs.get(router, "?")] += rows
        for vrf, n in sorted(by_vrf.items()):
            yield Sample("ovnfrr_vrf_routes_imported", "gauge",
                         "Route rows ovn-frr owns in OVN NB, by the VRF they were learned in",
                         n, (("vrf", vrf),))  # fmt: skip
        for reason, n in sorted(Counter(r.reason for r in self.rejected).items()):
            yield Sample("ovnfrr_routes_rejected", "gauge", "Routes not imported, by reason",
                         n, (("reason", reason),))  # fmt: skip
        yield Sample("ovnfrr_fpm_messages", "counter", "Netlink messages received on FPM",
                     c.messages)  # fmt: skip
        yield Sample("ovnfrr_fpm_errors", "counter", "Malformed FPM streams (connection reset)",
                     c.errors)  # fmt: skip
        yield Sample("ovnfrr_fpm_connections", "counter", "FPM connections from zebra",
                     c.connections)  # fmt: skip
        yield Sample(
            "ovnfrr_fpm_refused",
            "counter",
            "FPM connections refused because the peer is not zebra",
            c.refused,
        )

    async def trace(self, prefix: Network) -> TracePart:
        text = str(prefix)
        story = []
        rib = self.rib.lookup(text)
        for table, route in rib:
            hops = ", ".join(str(h.gateway or f"ifindex {h.ifindex}") for h in sorted(route.hops))
            proto = PROTOCOL_NAMES.get(route.protocol, route.protocol)
            story.append(f"zebra -> FPM: table {table} {proto} {route.kind} via {hops}")
        rejected = [r for r in self.rejected if r.prefix == text]
        for r in rejected:
            story.append(f"policy: not imported into {r.router}: {r.reason} ({r.detail})")
        # the plan is not kept between steps (a set of every imported route): the decisions
        # are, per router and prefix
        desired = sorted(d for decision in self.decisions.decided(text)
                         if not isinstance(decision, Rejection) for d in decision)  # fmt: skip
        for d in desired:
            story.append(f"policy: import into {d.router} via {d.nexthop} port {d.output_port}")
        rows = sorted(self._owned.of_prefix(text) if self._owned else (), key=lambda r: r.uuid)
        for row in rows:
            story.append(f"OVN: row {row.uuid} on {row.router} via {row.nexthop}")
        if desired and len(rows) < len(desired):
            story.append("OVN: not all rows written yet")
        doc = {
            "rib": [{"table": t, "protocol": PROTOCOL_NAMES.get(x.protocol, x.protocol),
                     "kind": x.kind, "hops": [str(h.gateway) for h in sorted(x.hops)]}
                    for t, x in rib],
            "rejected": [asdict(r) for r in rejected],
            "desired": [d._asdict() for d in desired],
            "rows": [{"uuid": r.uuid, "router": r.router, "prefix": r.prefix,
                      "nexthop": r.nexthop, "output_port": r.output_port} for r in rows],
        }  # fmt: skip
        return TracePart({"import": doc}, tuple(story))

    async def close(self) -> None:
        self.self_routes.close()
        try:
            await self._write_landed()
        finally:
            self.io.close()
            self.cpu.close()
            self.ovs.close()
            self.writer.close()
