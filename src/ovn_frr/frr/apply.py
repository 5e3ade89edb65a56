"""Keep FRR at ovn-frr's desired config, compared with what FRR really runs (blocking).

One :meth:`FrrApplier.check` reads ``show running-config`` (or takes a reading made
elsewhere, if no batch landed since), plans the exact batch that brings ovn-frr's part of it to
the desired config (:mod:`ovn_frr.frr.plan`) and applies it in one ``vtysh -f``. What counts is
what FRR runs: a restarted FRR, a ``no neighbor`` typed by hand or an frr-reload of another
file shows up as lines missing from the running config, and they are sent again. When the
desired config did not change since FRR last matched it, that is *drift*: counted, logged and
reported. Between two reads, a change of the desired config may be planned from what FRR
matched at the last check (``read=False``); if FRR rejects any of that batch, the next check
reads and plans again.

FRR applies every line of a batch that it accepts. A rejected line is isolated: the first
rejected line's unit (its neighbor, or the line, a removal included) is held at what FRR had
before the batch, so the lines of it that did land are rolled back at the next check, which
comes at once; it is retried with back-off. Later rejected lines may have failed only because
of the first (vtysh leaves config mode at the ``exit`` after a failed context line; FRR >= 9.1
stops reading the batch there), so they are not held: the next check sends them again without
the held unit. A bad neighbor never takes a good one down, and a rollback never removes lines
FRR had before.

A line FRR accepts but does not show as rendered would be sent at every check: when the same
drift repeats three checks in a row it is reported as not kept and sent again only with
back-off (5 s doubling to 60 s), until a check finds FRR matching or the drift changes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ovn_frr.frr.diff import Batch, Node, Path, render_tree
from ovn_frr.frr.plan import Plan, Unit, plan, plan_from, unit_lines, unit_of
from ovn_frr.frr.vtysh import LineError, VtyshError
from ovn_frr.redact import Redactor

log = logging.getLogger(__name__)

#: identical drift this many checks in a row: FRR does not keep those lines
STUCK_AFTER = 3
#: then they are sent again after this long, doubling up to the second figure
STUCK_DELAY = (5.0, 60.0)


#: what a plan from a read depends on: running config, desired config, adoption, held units
_Inputs = tuple[str, str, bool, tuple[Unit, ...]]


@dataclass(frozen=True, slots=True)
class _Stuck:
    drift: tuple[str, frozenset[Path]]
    until: float
    delay: float


class FrrConfig(Protocol):
    """What the applier needs of FRR (``frr.vtysh.Vtysh``, or a fake in tests)."""

    def running_config(self) -> str: ...

    def apply_batch(self, config: str) -> tuple[LineError, ...]: ...


def show(path: Path) -> str:
    """A config path as one readable line, for logs and status (a password masked)."""
    return Redactor().text(" > ".join(path))


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
        #: replaced on every change, never changed in place (read from other threads)
        self.held: Mapping[Unit, Held] = {}
        #: the effective desired config FRR last matched (None: not since the start or a
        #: rejection): a batch against the same one is drift
        self._matched: str | None = None
        self._stuck: _Stuck | None = None
        #: the inputs of the last check that had nothing to send
        self._quiet: _Inputs | None = None
        #: what FRR runs of ovn-frr's as of the last check, when it matched (None: unknown)
        self._base: Node | None = None
        self._repeats = 0
        self._last_drift: frozenset[Path] = frozenset()
        self.drift_lines = 0
        self.drift_checks = 0
        self.last_drift_at: float | None = None
        self.rejected_total = 0
        #: counts batches (odd while one is applied): a running config read elsewhere is
        #: current only if this did not change during the read
        self.generation = 0
        #: how long the last batch's vtysh took
        self.batch_s = 0.0

    def invalidate(self) -> None:
        """FRR could not be read or written: nothing is known of what it runs."""
        self._base = None
        self._quiet = None
        self._stuck = None

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
        config read elsewhere, with the :attr:`generation` at the start of that read; if a
        batch was applied since, the running config is read here instead."""
        now = self.clock()
        planned = self._plan(now, desired, adopt_networks, read, running)
        if planned is None:
            return CheckResult()  # FRR unchanged since a check that found nothing to send
        p, fast, inputs = planned
        key = render_tree(p.desired)
        commands = frozenset(p.batch.commands)
        if not p.batch:
            self._matched, self._repeats, self._stuck = key, 0, None
            self._release(now)
            self._quiet = inputs
            self._base = p.desired
            return CheckResult()
        self._quiet = None
        drift = not fast and key == self._matched
        stuck = self._stuck
        if drift and stuck and stuck.drift == (key, commands) and now < stuck.until:
            return CheckResult()  # reported when it got stuck; tried again with back-off
        self.generation += 1  # odd while a batch is applied
        sending = self.clock()
        try:
            errors = self.frr.apply_batch(p.batch.text)
            self.batch_s = self.clock() - sending
        except VtyshError:
            self.invalidate()
            raise
        finally:
            self.generation += 1
        sent = len(commands)
        if drift:
            self._count_drift(key, commands, now)
        else:
            self._repeats, self._stuck = 0, None
        if not errors:
            self._release(now)
            self._matched = key
            self._base = p.desired
            log.info("frr_config_applied lines=%d drift=%d", sent, sent if drift else 0)
            return CheckResult(sent, sent if drift else 0)
        rejected = tuple((_path(p.batch, e), e.reason) for e in errors)
        self._matched = None
        self._base = None
        if fast:  # planned without a read: FRR may have changed since; read and plan again
            log.info("frr_batch_replanned rejected=%d first=%r (read before planning)",
                     len(errors), show(rejected[0][0]))  # fmt: skip
            return CheckResult(sent, 0, rejected, again=True)
        self.rejected_total += len(errors)
        first, reason = rejected[0]
        unit = unit_of(first)
        new = unit not in self.held
        self._hold(unit, first, reason, p.ours, now)
        log.error("frr_line_rejected line=%r reason=%r others=%d (held, rest applied)",
                  show(first), reason, len(errors) - 1)  # fmt: skip
        # at once: to roll back what landed of a new hold, and to send what may have failed
        # only because of it (a unit that cannot be held, an unattributed line, would loop)
        again = new or (len(errors) > 1 and not unit[0].startswith(UNATTRIBUTED))
        return CheckResult(sent, sent if drift else 0, rejected, again=again)

    def _plan(
        self,
        now: float,
        desired: str,
        adopt_networks: bool,
        read: bool,
        running: tuple[str, int] | None,
    ) -> tuple[Plan, bool, _Inputs | None] | None:
        """The plan, whether it was made without a read, and the inputs of a read plan;
        None when those inputs are the same as at a check that found nothing to send (the
        plan is a function of them alone: a plan of 10k networks costs ~0.1 s of CPU)."""
        active = {u: h.before for u, h in self.held.items() if h.retry_at > now}
        if not read and not adopt_networks and self._base is not None:
            p = plan_from(self._base, desired, active)
            if p is not None:
                return p, True, None
        if running is not None and running[1] != self.generation:
            running = None  # read before or while a batch landed: stale
        try:
            text = running[0] if running is not None else self.frr.running_config()
        except VtyshError:
            self.invalidate()
            raise
        inputs = (text, desired, adopt_networks, tuple(active))
        if inputs == self._quiet:
            return None
        self._quiet = None
        return plan(text, desired, active, adopt_networks), False, inputs

    def _count_drift(self, key: str, commands: frozenset[Path], now: float) -> None:
        self.drift_lines += len(commands)
        self.drift_checks += 1
        self.last_drift_at = now
        self._repeats = self._repeats + 1 if commands == self._last_drift else 1
        self._last_drift = commands
        sample = ", ".join(show(c) for c in sorted(commands)[:3])
        if self._repeats < STUCK_AFTER:
            log.warning("frr_drift lines=%d sample=%r (re-applying)", len(commands), sample)
            return
        old = self._stuck
        delay = min(old.delay * 2, STUCK_DELAY[1]) if old else STUCK_DELAY[0]
        self._stuck = _Stuck((key, commands), now + delay, delay)
        log.error("frr_lines_not_kept lines=%d sample=%r (FRR accepts them but does not show "
                  "them: sent again in %.0f s)", len(commands), sample, delay)  # fmt: skip

    def _hold(self, unit: Unit, line: Path, reason: str, ours_before: Node, now: float) -> None:
        old = self.held.get(unit)
        attempts = old.attempts + 1 if old else 1
        before = old.before if old else unit_lines(ours_before, unit)
        delay = min(self.backoff[0] * 2 ** (attempts - 1), self.backoff[1])
        held = Held(unit, line, reason, before, attempts, old.since if old else now, now + delay)
        self.held = {**self.held, unit: held}  # replaced, never changed: status reads it

    def _release(self, now: float) -> None:
        """After a check (at ``now``) with no rejection: the units retried in it are no longer
        held."""
        done = [u for u, h in self.held.items() if h.retry_at <= now]
        for unit in done:
            log.info("frr_line_accepted line=%r after=%d attempts", show(self.held[unit].line),
                     self.held[unit].attempts)  # fmt: skip
        if done:
            self.held = {u: h for u, h in self.held.items() if u not in done}

    @property
    def unkept(self) -> frozenset[Path]:
        """Lines FRR accepts but never shows (reported; sent again only with back-off)."""
        return self._stuck.drift[1] if self._stuck else frozenset()

    @property
    def matched(self) -> bool:
        """FRR ran ovn-frr's config at the last check (a change can be planned without a read)."""
        return self._base is not None

    def next_retry(self) -> float | None:
        return min((h.retry_at for h in self.held.values()), default=None)


UNATTRIBUTED = "batch line "


def _path(batch: Batch, error: LineError) -> Path:
    line = batch.line(error.line)
    if line is None or line.path is None:
        return (f"{UNATTRIBUTED}{error.line}",)
    return line.path
