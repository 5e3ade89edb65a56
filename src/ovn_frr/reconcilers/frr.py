"""The FRR pipeline, the only writer of FRR: keeps FRR running ovn-frr's config.

The desired config is built from the node config (BGP peering, BFD profiles, the FPM address)
and what the advertise pipeline publishes (``network`` lines per VRF). An observer reads FRR's
running config (and the BGP sessions and BFD peers, for status) every ``agent.frr_check_ms`` on
a thread of its own; each reading wakes a check that compares it with the desired config and
applies exactly what is missing or different (:class:`~ovn_frr.frr.apply.FrrApplier`: drift
repaired, rejected lines isolated and retried with back-off). A change of the announcements is
applied at once, planned from what FRR matched at the last check, so that no read sits on an
announcement's path. The applies run on the pipeline's own thread: a hung vtysh stalls no other
pipeline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from typing import Any, Protocol

from ovn_frr.core.frr_model import FrrSettings, desired_frr, origin_map
from ovn_frr.core.model import Network
from ovn_frr.frr.apply import CheckResult, FrrApplier, show
from ovn_frr.frr.diff import Path, parse, paths
from ovn_frr.frr.render import render, router_bgp
from ovn_frr.frr.show import Session, advertised_to, best_paths, sessions
from ovn_frr.frr.vtysh import LineError, VtyshError
from ovn_frr.reconcilers.advertise import Networks
from ovn_frr.reconcilers.base import Cell, Sample, Signal, TracePart, Worker

log = logging.getLogger(__name__)


class Frr(Protocol):
    """``frr.vtysh.Vtysh``, or a fake in tests."""

    def running_config(self) -> str: ...

    def apply_batch(self, config: str) -> tuple[LineError, ...]: ...

    def show_json(self, command: str, daemon: str | None = None) -> Any: ...

    def close(self) -> None:
        """Let go of the daemons' sockets."""
        ...


class FrrReconciler:
    name = "frr"

    def __init__(
        self,
        settings: FrrSettings,
        frr: Frr,
        networks: Cell[Networks],
        check_every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        observe_apply: Callable[[float], None] = lambda _s: None,
        version: str = "",
        redistribute: Cell[frozenset[str]] | None = None,
    ) -> None:
        self.settings = settings
        self.frr = frr
        self.networks = networks
        #: VRFs whose instance redistributes OVN 25.03+'s own kernel routes (the advertise
        #: pipeline's: core.native_routing)
        self.redistribute: Cell[frozenset[str]] = redistribute or Cell("redistribute", frozenset())
        self.check_every = check_every
        self.clock = clock
        self.wall = wall
        self.observe_apply = observe_apply
        self.version = version
        #: a running config the observer read, with the applier's generation at its start
        self._observation = Signal("frr-running-config")
        self._observed: tuple[str, int] | None = None
        self._observer: asyncio.Future[None] | None = None
        #: an unexpected error of the observer: a problem (unhealthy) until it reads again
        self.observer_error = ""
        self.observer_failures = 0
        self._observer_streak = 0
        self.watches: tuple[Signal, ...] = (networks, self.redistribute, self._observation)
        self.io = Worker(self.name)
        self.show = Worker(f"{self.name}-show")
        self.applier = FrrApplier(frr, clock)
        self._with_bfd = any(n.bfd_profile for n in settings.neighbors)
        self._rendered: tuple[Networks, frozenset[str], str] | None = None
        self.reachable = False
        self.sessions: tuple[Session, ...] = ()
        self.last: CheckResult | None = None
        self.last_sent_at: float | None = None
        self.last_ms = 0.0
        self._seen = -1

    def desired(self) -> str:
        nets, redis = self.networks.value, self.redistribute.value
        if (
            self._rendered is None
            or self._rendered[0] is not nets
            or self._rendered[1] is not redis
        ):
            self._rendered = (nets, redis, render(desired_frr(self.settings, nets or {}, redis)))
        return self._rendered[2]

    async def step(self) -> float | None:
        if self._observer is None or self._observer.done():
            if self._observer is not None and not self._observer.cancelled():
                exc = self._observer.exception()
                log.error("frr_observer_ended error=%r (started again)", exc)
            self._observer = asyncio.ensure_future(self._observe())
            # should it end, the next step (woken now) says so and starts it again
            self._observer.add_done_callback(lambda _f: self._observation.notify())
        t0 = self.clock()
        text = await self.io(self.desired)  # 10k networks: ~80 ms, not on the event loop
        adopt = self.networks.value is None
        started = self.clock()
        version = self.networks.version + self.redistribute.version
        changed = version != self._seen
        self._seen = version
        try:
            if changed and not adopt and self.applier.matched:
                # a change of the announcements: planned from what FRR matched at the last
                # check, no running-config read on the announcement's path
                result = await self.io(self.applier.check, text, False, False)
            elif self._observed is not None:  # a check, on what the observer read
                observed, self._observed = self._observed, None
                result = await self.io(self.applier.check, text, adopt, True, observed)
            else:  # at start, after a rejection: read here
                result = await self.io(self.applier.check, text, adopt)
        except VtyshError:
            self.reachable = False
            raise
        self.reachable = True
        now = self.clock()
        if result.sent:
            log.debug("frr_step render_ms=%.1f check_ms=%.1f vtysh_ms=%.1f lines=%d",
                      (started - t0) * 1e3, (now - started) * 1e3,
                      self.applier.batch_s * 1e3, result.sent)  # fmt: skip
            self.last = result
            self.last_sent_at = now
            self.last_ms = (now - started) * 1000
            self.observe_apply(now - started)
        if result.again:
            return now
        return self.applier.next_retry()

    async def _observe(self) -> None:
        """Every ``check_every``: read FRR's running config (for the next check), sessions and
        BFD peers, on a thread of its own: a change of the announcements never waits for a
        read, and a check never waits for the sessions."""
        while True:
            started = self.clock()
            generation = self.applier.generation
            try:
                running = await self.show(self.frr.running_config)
                self._observed = (running, generation)
                self._observation.notify()
                summary = await self.show(self.frr.show_json, "show bgp vrf all summary json",
                                          "bgpd")  # fmt: skip
                bfd = (await self.show(self.frr.show_json, "show bfd peers json", "bfdd")
                       if self._with_bfd else [])  # fmt: skip
                self.sessions = sessions(summary, bfd)
            except VtyshError as exc:
                if self.reachable:  # once per outage, not every check
                    log.warning("frr_unreachable error=%s", exc)
                self.reachable = False
                self.applier.invalidate()  # nothing is known of what FRR runs
            except Exception as exc:  # the observer must outlive any surprise
                self.observer_failures += 1
                self._observer_streak += 1
                self.observer_error = str(exc) or type(exc).__name__
                log.exception("frr_observer_failed failures=%d", self.observer_failures)
            else:
                self.observer_error = ""
                self._observer_streak = 0
            # every check_every from the start of the last reading, not from its end; after
            # a surprise, back off up to 10 checks
            pause = self.check_every * min(10, 2**self._observer_streak)
            await asyncio.sleep(max(0.0, started + pause - self.clock()))

    # --- reports -------------------------------------------------------------------------------

    def _ago(self, at: float | None, now: float) -> float | None:
        return None if at is None else round(now - at, 1)

    def status(self, now: float) -> dict[str, Any]:
        a = self.applier
        last = None
        if self.last is not None and self.last_sent_at is not None:
            last = {"ok": not self.last.rejected, "lines": self.last.sent,
                    "drift": self.last.drift,
                    "rejected": [{"line": show(p), "reason": r} for p, r in self.last.rejected],
                    "seconds_ago": self._ago(self.last_sent_at, now),
                    "duration_ms": round(self.last_ms, 1)}  # fmt: skip
        drift = None
        if a.last_drift_at is not None:
            drift = {"lines": a.drift_lines, "checks": a.drift_checks,
                     "last_at": round(self.wall() - (now - a.last_drift_at), 3),
                     "seconds_ago": self._ago(a.last_drift_at, now)}  # fmt: skip
        return {
            "frr": {
                "reachable": self.reachable,
                "version": self.version,
                "last_apply": last,
                "drift": drift,
                "rejected": [{"line": show(h.line), "reason": h.reason, "attempts": h.attempts,
                              "retry_in_s": round(max(0.0, h.retry_at - now), 1)}
                             for h in a.held.values()],
                "not_kept": sorted(show(p) for p in a.unkept),
            },
            "bgp": [asdict(x) for x in self.sessions],
        }  # fmt: skip

    def problems(self, now: float) -> list[str]:
        out = [] if self.reachable else ["FRR not reachable (vtysh)"]
        if self.observer_error:
            out.append(f"frr: reading FRR failed: {self.observer_error} (retrying)")
        for h in self.applier.held.values():
            out.append(f"FRR rejected `{show(h.line)}`: {h.reason} "
                       f"(retry in {max(0.0, h.retry_at - now):.0f} s)")  # fmt: skip
        if self.applier.unkept:
            out.append(f"FRR does not keep {len(self.applier.unkept)} line(s) ovn-frr applies "
                       f"(e.g. `{show(min(self.applier.unkept))}`)")  # fmt: skip
        return out

    def samples(self) -> Iterable[Sample]:
        a = self.applier
        up: Counter[str] = Counter({x.vrf: 0 for x in self.sessions})
        for vrf, _neighbor in {(x.vrf, x.neighbor) for x in self.sessions if x.up}:
            up[vrf] += 1
        for vrf, n in sorted(up.items()):
            yield Sample("ovnfrr_bgp_sessions_up", "gauge", "BGP sessions Established", n,
                         (("vrf", vrf),))  # fmt: skip
        yield Sample("ovnfrr_frr_apply_failures", "counter", "Config lines FRR rejected",
                     a.rejected_total)  # fmt: skip
        yield Sample("ovnfrr_frr_rejected_lines", "gauge",
                     "Config units held after FRR rejected them", len(a.held))  # fmt: skip
        yield Sample(
            "ovnfrr_frr_drift_lines",
            "counter",
            "Config lines re-applied because FRR lost or changed them",
            a.drift_lines,
        )
        yield Sample("ovnfrr_frr_drift_checks", "counter", "Checks that found FRR drifted",
                     a.drift_checks)  # fmt: skip

    async def trace(self, prefix: Network) -> TracePart:
        afi = "ipv6" if prefix.version == 6 else "ipv4"

        async def bgp(vrf: str) -> Any:
            where = f"vrf {vrf} " if vrf else ""
            try:  # not on this pipeline's thread: it may be busy
                return await asyncio.to_thread(
                    self.frr.show_json, f"show bgp {where}{afi} unicast {prefix} json"
                )
            except VtyshError as exc:  # fmt: skip
                return {"error": str(exc)}

        nets = self.networks.value or {}
        vrfs = sorted(v for v, ps in nets.items() if prefix in ps)
        story = []
        networks = []
        running: set[Path] = set()
        if vrfs:
            try:  # as FRR runs it now
                running = set(paths(parse(await asyncio.to_thread(self.frr.running_config))))
            except VtyshError:
                running = set()
        for vrf in vrfs:
            instance = router_bgp(self.settings.asn, vrf)
            given = nets[vrf]
            hop = given.get(prefix) if isinstance(given, Mapping) else None
            line = f"network {prefix} route-map {origin_map(hop)}"
            there = (instance, f"address-family {afi} unicast", line) in running
            peers = advertised_to(await bgp(vrf))
            networks.append({"vrf": vrf or "default", "in_running_config": there,
                             "sent_to": list(peers)})  # fmt: skip
            held = [h for h in self.applier.held.values() if line in h.line[-1]]
            story.append(f"FRR: `network {prefix}` " + ("applied" if there
                         else "NOT applied" + (f" (FRR rejected it: {held[0].reason})"
                                               if held else "")))  # fmt: skip
            story.append("BGP: sent to " + (", ".join(peers) if peers else "no peer"))
        received: tuple[str, ...] = ()
        if not vrfs:
            received = best_paths(await bgp(""))
            if received:
                story.append("BGP: paths from " + ", ".join(received))
        doc = {"frr": {"networks": networks, "bgp_paths": list(received)}}
        return TracePart(doc, tuple(story))

    async def close(self) -> None:
        if self._observer is not None:
            self._observer.cancel()
        self.io.close()
        self.show.close()
        self.frr.close()
