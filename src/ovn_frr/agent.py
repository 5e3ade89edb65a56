"""The agent: one asyncio loop that wakes on FPM and OVSDB changes and reconciles.

Each pass is level-triggered, in both directions:
- import: snapshot zebra's RIB and OVN, compute the desired OVN routes with the pure import
  policy, diff against the rows this chassis owns, write the difference. No route is deleted
  before the first complete FPM replay since start (the RIB is partial until then), so a
  restart adopts the rows that are still valid and never re-creates them;
- advertise: compute what OVN's intent announces from here, render the FRR config and apply
  the exact diff when it changed (a rejected batch keeps the last good config, retried with
  back-off).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ovn_frr.config import NodeConfig
from ovn_frr.core.advertise import (
    OPT_REDISTRIBUTE,
    Announcement,
    IntentRouter,
    announcements,
    prefixes_by_vrf,
)
from ovn_frr.core.frr_model import desired_frr
from ovn_frr.core.importer import DecisionCache, OwnedRows, RouteDiff, diff_routes, plan_import
from ovn_frr.core.model import (
    PROTOCOLS,
    ImportPlan,
    ImportPolicy,
    OvnSnapshot,
    OwnedRoute,
    Rejection,
)
from ovn_frr.fpm.rib import Rib
from ovn_frr.fpm.server import FpmServer
from ovn_frr.frr.apply import ApplyResult, FrrApplier
from ovn_frr.frr.render import render
from ovn_frr.frr.show import Session, sessions
from ovn_frr.frr.vtysh import Vtysh, VtyshError
from ovn_frr.ovn.bulk import BulkWriter
from ovn_frr.ovn.db import OvnError, OvsdbConnection
from ovn_frr.ovn.intent import StaticRow, intent_snapshot, static_rows, with_statics
from ovn_frr.ovn.routes import bound_ports, gateway_ports, nb_snapshot
from ovn_frr.report import metric_values, status_doc, trace_doc
from ovn_frr.status import Metrics, MetricsServer, StatusServer
from ovn_frr.versions import Versions, detect

log = logging.getLogger(__name__)


def import_policy(cfg: NodeConfig, versions: Versions) -> ImportPolicy:
    imp = cfg.import_
    return ImportPolicy(
        protocols=frozenset(PROTOCOLS[p] for p in imp.protocols),
        allow_default=imp.allow_default,
        allow_overlap=imp.allow_overlap,
        max_prefix=imp.max_prefix,
        mixed_family=versions.ovn_mixed_family_routes,
    )


@dataclass(slots=True)
class AgentState:
    started: float = 0.0
    passes: int = 0
    routes_imported: int = 0
    added: int = 0
    deleted: int = 0
    last_error: str = ""
    rejected: tuple[Rejection, ...] = ()
    routers: dict[str, int] = field(default_factory=dict)
    last_apply: ApplyResult | None = None
    last_apply_at: float = 0.0
    last_apply_ms: float = 0.0
    apply_failures: int = 0
    intent_problems: tuple[str, ...] = ()
    announcements: frozenset[Announcement] = frozenset()
    #: BGP sessions (with BFD state) as FRR showed them last
    sessions: tuple[Session, ...] = ()
    frr_reachable: bool = False


class StartError(Exception):
    """The agent cannot start (a socket it must serve cannot be bound)."""


class Agent:
    def __init__(
        self,
        cfg: NodeConfig,
        chassis: str,
        vtysh: Vtysh,
        nb: OvsdbConnection,
        sb: OvsdbConnection,
        fpm_socket: socket.socket,
        clock: Callable[[], float] = time.monotonic,
        ifnames: Callable[[], dict[int, str]] = lambda: dict(socket.if_nameindex()),
        versions: Versions | None = None,
    ) -> None:
        self.cfg = cfg
        self.chassis = chassis
        self.vtysh = vtysh
        self.nb = nb
        self.sb = sb
        self.clock = clock
        self.ifnames = ifnames
        self.versions = versions or detect()
        self.policy = import_policy(cfg, self.versions)
        imp = cfg.import_
        self.rib = Rib(
            imp.coalesce_ms / 1000, imp.replay_quiet_ms / 1000, imp.replay_hold_ms / 1000
        )
        self.state = AgentState()
        self._wake = asyncio.Event()
        self._fpm_socket = fpm_socket
        self.fpm = FpmServer(self.rib, self._wake.set, clock)
        self._reported: set[tuple[str, str, str]] = set()
        self.writer = BulkWriter(nb.remote, chassis)
        #: this chassis' route rows: read at start and when a resync finds them changed, then
        #: kept from the writer's own writes, the one in flight included (the IDL does not
        #: monitor them)
        self._owned: OwnedRows | None = None
        self._resync_at = 0.0
        #: the route write in flight (at most one); its connection is the writer's, which
        #: ``_nb_lock`` serializes with the writer's other requests
        self._writing: asyncio.Future[None] | None = None
        self._nb_lock = asyncio.Lock()
        #: to time the next plan while a write is in flight (see _plan_window)
        self._write_eta = 0.0
        self._write_s_per_row = 100e-6
        self._plan_s = 0.0
        self.decisions = DecisionCache()
        self.applier = FrrApplier(vtysh)
        #: BGP instances (VRF names as FRR shows them) of the config applied last
        self._applied_vrfs: frozenset[str] = frozenset()
        self._apply_retry_at = 0.0
        self._apply_backoff = 1.0
        #: OVSDB changed since the OVN snapshots were last read; FPM-only wakes reuse them
        self._ovn_changed = True
        self._ovn_view: OvnSnapshot | None = None
        #: the FRR config rendered from the last intent read, and its BGP instances
        self._rendered = ""
        self._rendered_vrfs: frozenset[str] = frozenset()
        #: router of each static route ovn-frr did not write, asked when that set changes
        self._static_router_of: dict[str, str] = {}
        self._static_asked: frozenset[str] | None = None
        self._static_ask_at = 0.0
        self.metrics = Metrics(lambda: metric_values(self))
        self.status_server = StatusServer(cfg.agent.status_socket, self._status_request)
        listen = cfg.agent.metrics_listen
        self.metrics_server = (
            MetricsServer(str(listen.host), listen.port, self.metrics) if listen else None
        )

    def imported_per_router(self) -> dict[str, int]:
        return dict(self._owned.routers()) if self._owned else {}

    def owned_rows(self) -> list[OwnedRoute]:
        return list(self._owned) if self._owned else []

    async def _status_request(self, request: str) -> dict[str, object]:
        verb, _, arg = request.partition(" ")
        if verb == "status":
            return status_doc(self, self.clock())
        if verb == "trace" and arg:
            return await trace_doc(self, arg)
        return {"error": f"unknown request {request!r} (status | trace PREFIX)"}

    def _ovsdb_wake(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        """The IDL thread's change hook: mark OVN changed and wake the loop."""

        def changed() -> None:
            self._ovn_changed = True
            self._wake.set()

        def wake() -> None:
            loop.call_soon_threadsafe(changed)

        return wake

    async def run(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        self.state.started = self.clock()
        for db in (self.nb, self.sb):
            db.on_change = self._ovsdb_wake(loop)
            await asyncio.to_thread(db.start)
        servers: list[StatusServer | MetricsServer] = [self.status_server]
        if self.metrics_server is not None:
            servers.append(self.metrics_server)
        for server in servers:
            try:
                await server.start()
            except OSError as exc:
                what = ("agent.status_socket" if server is self.status_server
                        else "agent.metrics_listen")  # fmt: skip
                raise StartError(f"{what}: cannot listen: {exc.strerror or exc}") from None
        await self._configure_frr()
        await self.fpm.start(self._fpm_socket)
        log.info("agent_started chassis=%s fpm=%s", self.chassis, self.cfg.frr.fpm_listen)
        self._wake.set()  # the first pass configures FRR even if nothing changes
        watcher = asyncio.ensure_future(self._watch_frr(stop))
        try:
            await self._loop(stop)
        finally:
            watcher.cancel()
            for server in servers:
                await server.close()
            await self.fpm.close()
            for db in (self.nb, self.sb):
                await asyncio.to_thread(db.stop)
            await self._write_landed()
            self.writer.close()

    async def _configure_frr(self) -> None:
        """Point zebra's FPM at us before anything else. The advertise path renders the same
        line, but a batch FRR rejects is rolled back whole, and the import direction must not
        depend on the BGP config being accepted."""
        fpm = self.cfg.frr.fpm_listen
        try:
            await asyncio.to_thread(self.vtysh.apply, f"fpm address {fpm.host} port {fpm.port}\n")
        except VtyshError as exc:
            # FRR may be restarting: the advertise path applies the line again when it can
            self.state.last_error = f"FRR: {exc}"
            log.error("frr_fpm_config_failed error=%s", exc)

    async def _loop(self, stop: asyncio.Event) -> None:
        debounce = self.cfg.agent.debounce_ms / 1000
        last_pass = -1e9
        next_due: float | None = None
        stopper = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                timeout = None if next_due is None else max(0.0, next_due - self.clock())
                waker = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait({waker, stopper}, timeout=timeout,
                                   return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
                waker.cancel()
                if stop.is_set():
                    break
                # debounce bursts: at most one pass per `debounce`, a lone change goes at once
                pause = last_pass + debounce - self.clock()
                if pause > 0:
                    await asyncio.sleep(pause)
                self._wake.clear()
                last_pass = self.clock()
                next_due = await self.reconcile()
        finally:
            stopper.cancel()

    async def reconcile(self) -> float | None:
        """One pass; returns when the next one is due without any event (held deletes and the
        replay sweep of the RIB, the read-back of the owned rows)."""
        was_synced = self.rib.synced
        next_due = self.rib.tick(self.clock())
        if self.rib.synced and not was_synced:
            log.info("fpm_replay_complete routes=%d", len(self.rib))
        await self._plan_window()
        t0 = self.clock()
        rib = self.rib.snapshot()
        policy = replace(self.policy, ifnames=self.ifnames())
        try:
            owned = await self._resync_owned()
            ovn = await self._ovn_snapshots()
            ovn = replace(ovn, routes=tuple(owned))
            t1 = self.clock()
            plan = plan_import(ovn, rib, policy, self.decisions)
            diff = diff_routes(plan.routes, owned)
            if not self.rib.synced:
                diff = RouteDiff(diff.add, ())  # the RIB is partial until the first replay ends
            t2 = self.clock()
            self._plan_s = t2 - t0
            routers = {r.name: r.uuid for r in ovn.routers}
            for gone in [r for r in owned.routers() if r not in routers]:
                for row in owned.of_router(gone):
                    owned.remove(row.uuid)  # the router is gone, its routes with it
            if diff and not await self._dispatch(diff, owned, routers, (t1 - t0, t2 - t1)):
                return self.clock()  # the write before it failed: read the rows back first
            self._record(plan, len(owned))
            self.state.last_error = ""
        except OvnError as exc:
            self.state.last_error = str(exc)
            log.error("reconcile_failed error=%s", exc)
            return self.clock() + 1.0  # retry
        self.state.passes += 1
        due = [t for t in (next_due, self._resync_at) if t is not None]
        if self.state.last_apply is not None and not self.state.last_apply.ok:
            due.append(self._apply_retry_at)
        return min(due)

    async def _dispatch(
        self,
        diff: RouteDiff,
        owned: OwnedRows,
        routers: dict[str, str],
        timings: tuple[float, float],
    ) -> bool:
        """Start writing ``diff`` once the write before it has landed, and return without
        waiting for this one: the next pass plans while ovsdb-server inserts (the rows'
        UUIDs are chosen here, so ``owned`` already holds them). A failed write makes the
        next pass read the owned rows back; a diff planned on top of it is dropped (False)."""
        await self._write_landed()
        if self._owned is not owned:
            return False
        add = self.writer.new_rows([r for r in diff.add if r.router in routers])
        for row in diff.delete:
            owned.remove(row.uuid)
        for row in add:
            owned.add(row)
        self._writing = asyncio.ensure_future(self._write(add, diff.delete, routers, timings))
        self._write_eta = self.clock() + (len(add) + len(diff.delete)) * self._write_s_per_row
        return True

    async def _plan_window(self) -> None:
        """While a write is in flight, start the next plan only so that it ends about when
        that write lands: a plan made early would leave out what arrives meanwhile and go
        out as a small write of its own, delaying the rest (measured during a 100k import:
        writes alternated 16k, 1.5k, 22k, 6k rows). An intent change in OVN does not wait:
        the pass applies it to FRR before it plans."""
        if self._writing is None or self._ovn_changed:
            return
        delay = self._write_eta - self._plan_s - self.clock()
        if delay > 0:
            await asyncio.wait({self._writing}, timeout=delay)

    async def _write(
        self,
        add: list[OwnedRoute],
        delete: tuple[OwnedRoute, ...],
        routers: dict[str, str],
        timings: tuple[float, float],
    ) -> None:
        started = self.clock()
        try:
            async with self._nb_lock:
                inserted, removed = await asyncio.to_thread(self.writer.write, add, delete,
                                                            routers)  # fmt: skip
        except OvnError as exc:
            self._owned = None  # part of it may have landed: read back before the next
            self.state.last_error = str(exc)
            log.error("ovn_write_failed error=%s", exc)
            self._wake.set()
            return
        self.state.added += inserted
        self.state.deleted += removed
        if inserted + removed >= 1000:  # small writes are mostly fixed cost
            per_row = (self.clock() - started) / (inserted + removed)
            self._write_s_per_row = (self._write_s_per_row + per_row) / 2
        log.info(
            "ovn_routes_written added=%d deleted=%d snapshot_ms=%.0f plan_ms=%.0f write_ms=%.0f",
            inserted, removed, timings[0] * 1e3, timings[1] * 1e3, (self.clock() - started) * 1e3,
        )  # fmt: skip

    async def _write_landed(self) -> None:
        """Wait for the write in flight, if any (its failure is handled by ``_write``)."""
        if self._writing is not None:
            await asyncio.shield(self._writing)
            self._writing = None

    async def _resync_owned(self) -> OwnedRows:
        """Read this chassis' rows in full at start and after a failed write; every
        ``import.resync_s`` count them (a no-op update's count: nothing per row) and read them
        in full only when the count differs from what ovn-frr's own writes left (someone else
        removed or added rows). A full read of 300k rows held ~0.7 KB per row while parsing:
        done every resync, it set the agent's peak memory."""
        if self._owned is not None:
            if self.clock() < self._resync_at:
                return self._owned
            await self._write_landed()
            if self._owned is None:
                return await self._resync_owned()
            async with self._nb_lock:
                count = await asyncio.to_thread(self.writer.count_owned)
            self._resync_at = self.clock() + self.cfg.import_.resync_s
            if count == len(self._owned):
                return self._owned
            log.warning("ovn_owned_routes_changed rows=%d known=%d (reading them again)",
                        count, len(self._owned))  # fmt: skip
        started = self.clock()
        await self._write_landed()
        async with self._nb_lock:
            self._owned = OwnedRows((await asyncio.to_thread(self.writer.owned)).values())
        took = self.clock() - started
        self._resync_at = self.clock() + self.cfg.import_.resync_s
        log.info("ovn_owned_routes_read rows=%d ms=%.0f", len(self._owned), took * 1e3)
        return self._owned

    async def _watch_frr(self, stop: asyncio.Event) -> None:
        """Every ``agent.frr_check_ms``: read the BGP sessions (with BFD) for status, and detect
        that FRR lost ovn-frr's config (a restart: its BGP instances are gone) to apply it
        again. ``show bgp vrfs json`` lists every instance, with or without neighbors."""
        interval = self.cfg.agent.frr_check_ms / 1000
        with_bfd = any(n.bfd_profile for n in self.cfg.bgp.neighbors)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=interval)
            if stop.is_set():
                break
            applied = self._applied_vrfs  # before asking: an apply may land meanwhile
            try:
                instances = await asyncio.to_thread(self.vtysh.show_json, "show bgp vrfs json")
                summary = await asyncio.to_thread(
                    self.vtysh.show_json, "show bgp vrf all summary json"
                )
                bfd = (await asyncio.to_thread(self.vtysh.show_json, "show bfd peers json")
                       if with_bfd else [])  # fmt: skip
            except VtyshError:
                self.state.frr_reachable = False
                continue  # FRR is (re)starting: ask again next round
            self.state.frr_reachable = True
            self.state.sessions = sessions(summary, bfd)
            lost = applied - set(instances.get("vrfs", {}))
            if lost and applied is self._applied_vrfs:
                log.warning("frr_config_lost bgp_instances=%s (re-applying)", sorted(lost))
                self.applier.forget()
                self._applied_vrfs = frozenset()
                self._wake.set()

    async def _ovn_snapshots(self) -> OvnSnapshot:
        """The import view of OVN; when OVSDB changed, read it again and recompute what to
        announce. FPM-only passes (most of them during a bulk import) reuse both."""
        if self._ovn_changed or self._ovn_view is None:
            self._ovn_changed = False  # before reading: a change meanwhile marks it again
            try:
                bound = await asyncio.to_thread(self.sb.read, bound_ports)
                ovn, intent, statics = await asyncio.to_thread(
                    self.nb.read,
                    lambda idl: (
                        nb_snapshot(idl, self.chassis, gateway_ports(bound)),
                        intent_snapshot(idl, self.chassis, bound),
                        static_rows(idl),
                    ),
                )
                intent = await self._with_statics(intent, statics)
            except BaseException:
                self._ovn_changed = True
                raise
            self._render(intent)
            self._ovn_view = ovn
        await self._advertise()
        return self._ovn_view

    async def _with_statics(
        self, intent: tuple[IntentRouter, ...], rows: tuple[StaticRow, ...]
    ) -> tuple[IntentRouter, ...]:
        """Attach the static routes to their routers when some router redistributes them.
        Which router holds a row is asked from ovsdb-server when the set of rows changed (or
        every ``import.resync_s``, for a row moved between routers)."""
        if not any("static" in r.options.get(OPT_REDISTRIBUTE, "") for r in intent):
            self._static_asked = None
            return intent
        uuids = frozenset(r.uuid for r in rows)
        if uuids != self._static_asked or self.clock() >= self._static_ask_at:
            async with self._nb_lock:
                self._static_router_of = await asyncio.to_thread(
                    self.writer.routers_of, sorted(uuids)
                )
            self._static_asked = uuids
            self._static_ask_at = self.clock() + self.cfg.import_.resync_s
        return with_statics(intent, rows, self._static_router_of)

    def _render(self, intent: tuple[IntentRouter, ...]) -> None:
        items, problems = announcements(intent)
        if tuple(problems) != self.state.intent_problems:
            for line in problems:
                log.warning("intent_ignored %s", line)
            self.state.intent_problems = tuple(problems)
        self.state.announcements = frozenset(items)
        model = desired_frr(self.cfg, prefixes_by_vrf(items))
        self._rendered = render(model)
        self._rendered_vrfs = frozenset(b.vrf or "default" for b in model.bgp)

    async def _advertise(self) -> None:
        """Apply the rendered config if FRR does not have it (changed, lost, or failed)."""
        text = self._rendered
        if text == self.applier.applied:
            return
        failed = self.state.last_apply is not None and not self.state.last_apply.ok
        if failed and self.clock() < self._apply_retry_at:
            return
        started = self.clock()
        result = await asyncio.to_thread(self.applier.apply, text)
        took = self.clock() - started
        self.metrics.apply_seconds.observe(took)
        self.state.last_apply = result
        self.state.last_apply_at = self.clock()
        self.state.last_apply_ms = took * 1000
        if result.ok:
            self._apply_backoff = 1.0
            self._applied_vrfs = self._rendered_vrfs
            log.info("frr_config_applied lines=%d advertised=%d", result.lines,
                     len(self.state.announcements))  # fmt: skip
        else:
            self.state.apply_failures += 1
            self._apply_retry_at = self.clock() + self._apply_backoff
            self._apply_backoff = min(self._apply_backoff * 2, 30.0)

    def _record(self, plan: ImportPlan, imported: int) -> None:
        self.state.routes_imported = imported
        self.state.rejected = plan.rejected
        self.state.routers = dict(plan.routers)
        for r in plan.rejected:
            key = (r.router, r.prefix, r.reason)
            if key not in self._reported:
                self._reported.add(key)
                log.warning("route_rejected router=%s prefix=%s reason=%s detail=%s",
                            r.router, r.prefix, r.reason, r.detail)  # fmt: skip
        if len(self._reported) > 100_000:
            self._reported = {(r.router, r.prefix, r.reason) for r in plan.rejected}
