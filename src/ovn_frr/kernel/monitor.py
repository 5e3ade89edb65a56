"""Kernel FDB and neighbour changes as wake-ups: ``bridge monitor fdb`` and ``ip monitor
neigh`` run as child processes of the event loop; what changed is read afterwards
(level-triggered). Their output is read in chunks and searched with one regular expression
per chunk: 10k entries written are 20k lines, and a Python step per line was CPU taken from
zebra while it announced them.

Two pipelines are woken, each once per burst of changes (:class:`Burst`):

- the ARP/ND answers, by a neighbour of a VNI bridge, soon after a burst ends (``QUIET_S``):
  an answer for a remote IP is due as soon as zebra has installed it;
- the EVPN pass, by any line about a watched device, after a longer quiet (``PASS_QUIET_S``):
  what it does with the kernel's changes (status, repairs of the entries it wrote) is not
  urgent, and its reads (an FDB dump of 20k entries with 10k remote MACs) would take CPU
  from zebra while zebra installs or announces, its own writes included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Container
from typing import Protocol

log = logging.getLogger(__name__)

#: a burst ends after this long without a line about a watched device ...
QUIET_S = 0.01
#: ... or this long after its first line, whichever comes first (a steady stream of changes
#: still wakes the pipeline)
BURST_MAX_S = 1.0
#: the same for the EVPN pass: a second after a burst, so that the read that checks the pass's
#: own 10k writes comes once zebra has announced them (0.3-0.7 s after the writes)
PASS_QUIET_S = 1.0
PASS_MAX_S = 2.0
#: and for the answers, when the neighbour monitor lost events
LOST_QUIET_S = 0.5


class Handle(Protocol):
    def cancel(self) -> None: ...


class Timers(Protocol):
    """The clock and timers a :class:`Burst` runs on: the event loop's, or a test's."""

    def time(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle: ...


class Burst:
    """Calls ``notify`` once per burst of :meth:`poke` calls: ``quiet`` after the last one,
    at most ``longest`` after the first (on ``timers``; default: the running event loop)."""

    def __init__(
        self,
        notify: Callable[[], None],
        quiet: float = QUIET_S,
        longest: float = BURST_MAX_S,
        name: str = "",
        timers: Timers | None = None,
    ) -> None:
        self._notify = notify
        self.quiet = quiet
        self.longest = longest
        #: for the debug line of each burst (what started it, how many pokes, how long)
        self.name = name
        self._timers = timers
        self._first: float | None = None
        self._last = 0.0
        self._pokes = 0
        self._why = b""
        self._timer: Handle | None = None

    def _loop(self) -> Timers:
        return self._timers or asyncio.get_running_loop()

    def poke(self, why: bytes = b"") -> None:
        loop = self._loop()
        self._last = loop.time()
        self._pokes += 1
        if self._first is None:
            self._first = self._last
            self._pokes, self._why = 1, why
            self._timer = loop.call_at(self._last + self.quiet, self._check)

    def _check(self) -> None:
        loop = self._loop()
        assert self._first is not None
        now = loop.time()
        due = min(self._last + self.quiet, self._first + self.longest)
        if now < due:
            self._timer = loop.call_at(due, self._check)
            return
        log.debug("evpn_wake %s pokes=%d span=%.0f ms first=%r", self.name, self._pokes,
                  (self._last - self._first) * 1e3, self._why[:120])  # fmt: skip
        self._first = self._timer = None
        self._notify()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._first = self._timer = None


class KernelMonitor:
    """``bridge monitor fdb`` and ``ip monitor neigh``: a line about one of ``devices()`` wakes
    the pass (``changed``), a neighbour of one of ``bridges()`` the answers (``answers``);
    the underlay's neighbours and other bridges wake neither."""

    #: ``ip`` asks for a netlink receive buffer of 4 MiB (capped at net.core.rmem_max;
    #: ``bridge`` has no such option): events lost anyway are a wake-up (:meth:`_lost`)
    FDB = ("bridge", "monitor", "fdb")
    NEIGH = ("ip", "-rcvbuf", "4194304", "monitor", "neigh")

    #: bytes read at once
    CHUNK = 1 << 16

    def __init__(
        self,
        changed: Callable[[], None],
        answers: Callable[[], None],
        devices: Callable[[], frozenset[str]],
        bridges: Callable[[], frozenset[str]],
        answered: Callable[[], Container[str]] = frozenset,
        touched: Callable[[], None] = lambda: None,
        timers: Timers | None = None,
    ) -> None:
        self._pass = Burst(changed, PASS_QUIET_S, PASS_MAX_S, "pass", timers)
        self._answers = Burst(answers, name="answers", timers=timers)
        #: events the neighbour monitor lost wake the answers 0.5 s after the last loss (2 s
        #: at most), not 10 ms: the burst that overflowed it is likely still going on
        #: (ovn-frr's own 10k deletions, zebra's installs), and the lines it does show of
        #: remote IPs wake them at once
        self._answers_lost = Burst(answers, LOST_QUIET_S, PASS_MAX_S, "answers-lost", timers)
        self._devices = devices
        self._bridges = bridges
        self._answered = answered
        #: called at once for each chunk that concerns the answers (not after a quiet)
        self._touched = touched
        #: lines that woke the pass, and losses: while this count does not change, what the
        #: pass last read of the watched devices is what the kernel holds
        self.events = 0
        self._procs: list[asyncio.subprocess.Process] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        self._patterns: dict[str, tuple[frozenset[str], re.Pattern[bytes] | None]] = {}

    def _pattern(self, kind: str) -> re.Pattern[bytes] | None:
        names = self._devices() if kind == "device" else self._bridges()
        known, pattern = self._patterns.get(kind, (None, None))
        if names != known:
            alts = b"|".join(re.escape(n.encode()) for n in sorted(names))
            if not names:
                pattern = None
            elif kind == "device":
                # every line names its device after "dev " (an FDB entry's port, a
                # neighbour's bridge): a pattern with that literal first is searched for as a
                # string, a tenth of the time of one that tries each position (10k changes are
                # 1.5 MiB of lines)
                pattern = re.compile(rb"dev (?:" + alts + rb")(?=[\s@]|$)")
            elif kind == "added":
                # a neighbour added or changed, but not one ovn-frr wrote (a local IP:
                # permanent, not extern_learn): 10k of those must not wake the answers
                pattern = re.compile(rb"dev (?:" + alts + rb") lladdr \S+ (?!PERMANENT)")
            else:  # "other": failed or deleted (shown without its MAC), or now permanent
                pattern = re.compile(rb"^(?:Deleted )?(\S+) dev (?:" + alts
                                     + rb") (?:(?!lladdr)|lladdr \S+ PERMANENT)",
                                     re.MULTILINE)  # fmt: skip
            self._patterns[kind] = (names, pattern)
        return pattern

    def matches(self, text: bytes) -> bytes | None:
        """The first line of ``text`` (whole lines) about one of the watched devices
        (``dev <name>``, ``dev <name>@peer``), if any."""
        pattern = self._pattern("device")
        m = pattern.search(text) if pattern is not None else None
        return _line(text, m.start()) if m else None

    def neighbour(self, text: bytes) -> bytes | None:
        """The first line of ``text`` (whole lines of ``ip monitor neigh``) that changes what
        the answers answer, if any: a neighbour of one of the bridges added or changed (not one
        ovn-frr wrote), or one of the IPs answered gone or taken over by ovn-frr (a port that
        moved here). That monitor shows the bridges' FDB entries too, as ``dev <port> lladdr``
        (``dev vxlan-100``: zebra installing remote MACs): not those. A local IP ovn-frr
        deletes is shown as any other (``Deleted IP dev br-100 FAILED``): only the IP tells it
        from a remote one."""
        added = self._pattern("added")
        if added is None:
            return None
        if (m := added.search(text)) is not None:
            return _line(text, m.start())
        other = self._pattern("other")
        assert other is not None
        answered = self._answered()
        return next((_line(text, m.start()) for m in other.finditer(text)
                     if m[1].decode() in answered), None)  # fmt: skip

    async def start(self) -> None:
        for argv in (self.FDB, self.NEIGH):
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            self._procs.append(proc)
            neigh = argv == self.NEIGH
            self._tasks.append(asyncio.create_task(self._drain(proc, neigh), name="evpn-monitor"))
            self._tasks.append(asyncio.create_task(self._lost(proc, neigh),
                                                   name="evpn-monitor-lost"))  # fmt: skip

    async def _drain(self, proc: asyncio.subprocess.Process, neigh: bool) -> None:
        assert proc.stdout is not None
        rest = b""  # a line not yet complete
        while chunk := await proc.stdout.read(self.CHUNK):
            text = rest + chunk
            end = text.rfind(b"\n") + 1
            text, rest = text[:end], text[end:]
            if not text:
                continue
            if neigh and (why := self.neighbour(text)):
                self._touched()
                self._answers.poke(why)
                self._changed(why)
            elif why := self.matches(text):
                self._changed(why)
        if not self._closing:  # the check interval still reads the kernel
            log.warning("evpn_monitor_ended pid=%s rc=%s", proc.pid, proc.returncode)

    def _changed(self, why: bytes) -> None:
        self.events += 1
        self._pass.poke(why)

    @property
    def running(self) -> bool:
        """Both monitors run and are read (:attr:`events` counts what changed)."""
        return (len(self._procs) == 2 and all(p.returncode is None for p in self._procs)
                and not any(t.done() for t in self._tasks))  # fmt: skip

    async def _lost(self, proc: asyncio.subprocess.Process, neigh: bool) -> None:
        """A line on stderr is the kernel dropping events the monitor could not take in time
        (``netlink receive error No buffer space available``: 10k changes at once): what
        they said is unknown, so it wakes the pipelines like a change (the answers 0.5 s after
        the last loss: see ``_answers_lost``)."""
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            log.info("evpn_monitor_lost %s", line.decode(errors="replace").strip())
            self._changed(line)
            if neigh:
                self._touched()
                self._answers_lost.poke(line)

    async def close(self) -> None:
        self._closing = True
        self._pass.cancel()
        self._answers.cancel()
        self._answers_lost.cancel()
        for proc in self._procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for proc in self._procs:
            with contextlib.suppress(Exception):
                await proc.wait()
        for task in self._tasks:
            task.cancel()


def _line(text: bytes, at: int) -> bytes:
    """The whole line of ``text`` around offset ``at``."""
    start = text.rfind(b"\n", 0, at) + 1
    end = text.find(b"\n", at)
    return text[start : end if end >= 0 else len(text)]
