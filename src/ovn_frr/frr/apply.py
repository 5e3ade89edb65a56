"""Keep FRR at ovn-frr's desired config, compared with what FRR really runs (blocking).

One :meth:`FrrApplier.check` reads ``show running-config``, plans the exact batch that brings
ovn-frr's part of it to the desired config (:mod:`ovn_frr.frr.plan`) and applies it in one
``vtysh -f``. Nothing is remembered of what was applied before: a restarted FRR, a ``no
neighbor`` typed by hand or an frr-reload of another file shows up as lines missing from the
running config, and they are sent again. When the desired config did not change since FRR last
matched it, that is *drift*: counted, logged and reported.

FRR applies every line of a batch that it accepts. A rejected line is isolated: the first
rejected line's unit (its neighbor, or the line) is held at what FRR had before the batch, so
the lines of it that did land are rolled back at the next check, which comes at once; it is
retried with back-off. Later rejected lines may have failed only because of the first (vtysh
leaves config mode at the ``exit`` after a failed context line), so they are not held: the
next check sends them again without the held unit. A bad neighbor never takes a good one down,
and a rollback never removes lines FRR had before.

A line FRR accepts but does not show as rendered would be sent at every check; when the same
drift repeats three times in a row with nothing else changing, it is reported and not sent
again until the desired config changes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ovn_frr.frr.diff import Batch, Node, Path, render_tree
from ovn_frr.frr.plan import Unit, plan, plan_from, unit_lines, unit_of
from ovn_frr.frr.vtysh import LineError

log = logging.getLogger(__name__)

#: identical drift this many checks in a row: FRR does not keep those lines
STUCK_AFTER = 3


class FrrConfig(Protocol):
    """What the applier needs of FRR (``frr.vtysh.Vtysh``, or a fake in tests)."""

    def running_config(self) -> str: ...

    def apply_batch(self, config: str) -> tuple[LineError, ...]: ...


def show(path: Path) -> str:
    """A config path as one readable line."""
    return " > ".join(path)


@dataclass(frozen=True, slots=True)
class Held:
    """A unit FRR rejected: kept at what FRR had before, retried with back-off."""

    unit: Unit
    #: the rejected line and FRR's words
    line: Path
    reason: str
    #: the unit's lines before the batch (what it is held at)
    before: frozenset[Path]
    attempts: int
    since: float
    retry_at: float


@dataclass(frozen=True, slots=True)
class CheckResult:
    #: commands sent (0: FRR already ran the desired config)
    sent: int = 0
    #: of those, the ones FRR had lost or changed (the desired config had not changed)
    drift: int = 0
    #: lines FRR rejected in this batch (the first one's unit is now held)
    rejected: tuple[tuple[Path, str], ...] = ()
    #: check again at once (after a rejection: roll back, send the rest)
    again: bool = False


class FrrApplier:
    def __init__(
        self,
        frr: FrrConfig,
        clock: Callable[[], float] = time.monotonic,
        backoff: tuple[float, float] = (1.0, 60.0),
    ) -> None:
        self.frr = frr
        self.clock = clock
        self.backoff = backoff
        self.held: dict[Unit, Held] = {}
        #: the effective desired config FRR last matched (None: not since the start or a
        #: rejection): a batch against the same one is drift
        self._matched: str | None = None
        self._stuck: tuple[str, frozenset[Path]] | None = None
        #: the inputs of the last check that had nothing to send
        self._quiet: tuple[str, str, bool, tuple[Unit, ...]] | None = None
        #: what FRR runs of ovn-frr's as of the last check, when it matched (None: unknown)
        self._base: Node | None = None
        self._repeats = 0
        self._last_drift: frozenset[Path] = frozenset()
        #: lines FRR accepts but never shows (reported; not sent again meanwhile)
        self.unkept: frozenset[Path] = frozenset()
        self.drift_lines = 0
        self.drift_checks = 0
        self.last_drift_at: float | None = None
        self.rejected_total = 0
        #: the running config of the last check (for status and trace)
        self.running = ""
        #: counts batches (odd while one is applied): a running config read elsewhere is
        #: current only if this did not change during the read
        self.generation = 0

    def check(
        self,
        desired: str,
        adopt_networks: bool = False,
        read: bool = True,
        running: tuple[str, int] | None = None,
    ) -> CheckResult:
        """Bring FRR to ``desired``. ``read=False``: the desired config changed since the last
        check; plan from what FRR ran of ovn-frr's then (if FRR matched it) instead of reading
        the running config again (~30 ms of vtysh on the path of every announcement); the next
        check reads, and repairs anything that changed meanwhile. ``running``: a running
        config read elsewhere, with the :attr:`generation` at the start of that read; it is
        used only if no batch was applied since (else nothing is done: the next read will)."""
        now = self.clock()
        active = {u: h.before for u, h in self.held.items() if h.retry_at > now}
        p = None
        if not read and not adopt_networks and self._base is not None:
            p = plan_from(self._base, desired, active)
        if p is None and running is not None and running[1] != self.generation:
            return CheckResult()  # read before or while a batch was applied: stale
        inputs = None
        if p is None:
            self.running = running[0] if running is not None else self.frr.running_config()
            # the plan is a function of these alone: FRR unchanged since a check that found
            # nothing to send needs no new plan (a plan of 10k networks costs ~0.1 s of CPU)
            inputs = (self.running, desired, adopt_networks, tuple(active))
            if inputs == self._quiet:
                return CheckResult()
            self._quiet = None
            p = plan(self.running, desired, active, adopt_networks)
        key = render_tree(p.desired)
        commands = frozenset(p.batch.commands)
        if not p.batch:
            self._matched, self._repeats, self.unkept = key, 0, frozenset()
            self._release(now, set())
            self._quiet = inputs
            self._base = p.desired
            return CheckResult()
        self._quiet = None
        drift = key == self._matched
        if drift and self._stuck == (key, commands):
            return CheckResult()  # reported when it got stuck; waits for a change
        self.generation += 1  # odd while a batch is applied
        try:
            errors = self.frr.apply_batch(p.batch.text)
        finally:
            self.generation += 1
        rejected = tuple((_path(p.batch, e), e.reason) for e in errors)
        failed = {unit_of(path) for path, _ in rejected}
        self._release(now, failed)
        if drift:
            self._count_drift(key, commands, now)
        else:
            self._repeats = 0
        if not errors:
            self._matched = key
            self._base = p.desired
            log.info(
                "frr_config_applied lines=%d drift=%d", len(commands), len(commands) if drift else 0
            )
            return CheckResult(len(commands), len(commands) if drift else 0)
        self._matched = None
        self._base = None
        self.rejected_total += len(errors)
        first, reason = rejected[0]
        self._hold(unit_of(first), first, reason, p.ours, now)
        log.error("frr_line_rejected line=%r reason=%r others=%d (held, rest applied)",
                  show(first), reason, len(errors) - 1)  # fmt: skip
        return CheckResult(len(commands), len(commands) if drift else 0, rejected, again=True)

    def _count_drift(self, key: str, commands: frozenset[Path], now: float) -> None:
        self.drift_lines += len(commands)
        self.drift_checks += 1
        self.last_drift_at = now
        self._repeats = self._repeats + 1 if commands == self._last_drift else 1
        self._last_drift = commands
        sample = ", ".join(show(c) for c in sorted(commands)[:3])
        if self._repeats >= STUCK_AFTER:
            self._stuck = (key, commands)
            self.unkept = commands
            log.error("frr_lines_not_kept lines=%d sample=%r (FRR accepts them but does not "
                      "show them: not sent again until the config changes)",
                      len(commands), sample)  # fmt: skip
        else:
            log.warning("frr_drift lines=%d sample=%r (re-applying)", len(commands), sample)

    def _hold(self, unit: Unit, line: Path, reason: str, ours_before: Node, now: float) -> None:
        old = self.held.get(unit)
        attempts = old.attempts + 1 if old else 1
        before = old.before if old else unit_lines(ours_before, unit)
        delay = min(self.backoff[0] * 2 ** (attempts - 1), self.backoff[1])
        self.held[unit] = Held(unit, line, reason, before, attempts, old.since if old else now,
                               now + delay)  # fmt: skip

    def _release(self, now: float, failed: set[Unit]) -> None:
        """Units whose retry was in this check and that FRR took are no longer held."""
        for unit, h in list(self.held.items()):
            if h.retry_at <= now and unit not in failed:
                log.info("frr_line_accepted line=%r after=%d attempts", show(h.line), h.attempts)
                del self.held[unit]

    @property
    def matched(self) -> bool:
        """FRR ran ovn-frr's config at the last check (a change can be planned without a read)."""
        return self._base is not None

    def next_retry(self) -> float | None:
        return min((h.retry_at for h in self.held.values()), default=None)


def _path(batch: Batch, error: LineError) -> Path:
    line = batch.line(error.line)
    if line is None or line.path is None:
        return (f"batch line {error.line}",)
    return line.path
