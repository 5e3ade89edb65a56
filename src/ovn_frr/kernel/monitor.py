"""Kernel FDB and neighbour changes as wake-ups: ``bridge monitor fdb`` and ``ip monitor
neigh`` run as child processes of the event loop, and a line naming one of the watched
devices calls ``notify`` (what changed is read afterwards, level-triggered). Their output is
read in chunks and searched with one regular expression per chunk: 10k entries written are
20k lines, and a Python step per line was CPU taken from zebra while it announced them.

A burst wakes the pipeline once, when it ends (:class:`Burst`): zebra installs or deletes 10k
remote entries in ~0.3-1 s, and a pass woken by the first of them read the kernel while zebra
was still writing (slowly, with zebra busy), then needed a second pass for the rest."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable

log = logging.getLogger(__name__)

#: a burst ends after this long without a line about a watched device ...
QUIET_S = 0.02
#: ... or this long after its first line, whichever comes first (a steady stream of changes
#: still wakes the pipeline)
BURST_MAX_S = 1.0


class Burst:
    """Calls ``notify`` once per burst of :meth:`poke` calls: ``quiet`` after the last one,
    at most ``longest`` after the first (on the running event loop)."""

    def __init__(
        self, notify: Callable[[], None], quiet: float = QUIET_S, longest: float = BURST_MAX_S
    ) -> None:
        self._notify = notify
        self.quiet = quiet
        self.longest = longest
        self._first: float | None = None
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        loop = asyncio.get_running_loop()
        self._last = loop.time()
        if self._first is None:
            self._first = self._last
            self._timer = loop.call_at(self._last + self.quiet, self._check)

    def _check(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._first is not None
        now = loop.time()
        due = min(self._last + self.quiet, self._first + self.longest)
        if now < due:
            self._timer = loop.call_at(due, self._check)
            return
        self._first = self._timer = None
        self._notify()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._first = self._timer = None


class KernelMonitor:
    """``bridge monitor fdb`` and ``ip monitor neigh``: a line about one of ``devices()`` wakes
    the pipeline (the underlay's neighbours and other bridges do not)."""

    #: ``ip`` asks for a netlink receive buffer of 4 MiB (capped at net.core.rmem_max;
    #: ``bridge`` has no such option): events lost anyway are a wake-up (:meth:`_lost`)
    COMMANDS = (("bridge", "monitor", "fdb"), ("ip", "-rcvbuf", "4194304", "monitor", "neigh"))

    #: bytes read at once
    CHUNK = 1 << 16

    def __init__(self, notify: Callable[[], None], devices: Callable[[], frozenset[str]]) -> None:
        self._burst = Burst(notify)
        self._devices = devices
        self._procs: list[asyncio.subprocess.Process] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._names: frozenset[str] | None = None
        self._closing = False
        self._pattern: re.Pattern[bytes] | None = None

    def matches(self, text: bytes) -> bool:
        """Whether ``text`` (whole lines) names one of the watched devices (as a word of its
        own, or ``name@peer``)."""
        names = self._devices()
        if names != self._names:
            self._names = names
            alts = b"|".join(re.escape(n.encode()) for n in sorted(names))
            self._pattern = re.compile(rb"(?<!\S)(?:" + alts + rb")(?=[\s@]|$)") if names else None
        return self._pattern is not None and self._pattern.search(text) is not None

    async def start(self) -> None:
        for argv in self.COMMANDS:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            self._procs.append(proc)
            self._tasks.append(asyncio.create_task(self._drain(proc), name="evpn-monitor"))
            self._tasks.append(asyncio.create_task(self._lost(proc), name="evpn-monitor-lost"))

    async def _drain(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        rest = b""  # a line not yet complete
        while chunk := await proc.stdout.read(self.CHUNK):
            text = rest + chunk
            end = text.rfind(b"\n") + 1
            text, rest = text[:end], text[end:]
            if text and self.matches(text):
                self._burst.poke()
        if not self._closing:  # the check interval still reads the kernel
            log.warning("evpn_monitor_ended pid=%s rc=%s", proc.pid, proc.returncode)

    async def _lost(self, proc: asyncio.subprocess.Process) -> None:
        """A line on stderr is the kernel dropping events the monitor could not take in time
        (``netlink receive error No buffer space available``: 10k changes at once): what
        they said is unknown, so it wakes the pipeline like a change."""
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            log.info("evpn_monitor_lost %s", line.decode(errors="replace").strip())
            self._burst.poke()

    async def close(self) -> None:
        self._closing = True
        self._burst.cancel()
        for proc in self._procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for proc in self._procs:
            with contextlib.suppress(Exception):
                await proc.wait()
        for task in self._tasks:
            task.cancel()
