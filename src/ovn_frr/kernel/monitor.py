"""Kernel FDB and neighbour changes as wake-ups: ``bridge monitor fdb`` and ``ip monitor
neigh`` run as child processes of the event loop, and a line naming one of the watched
devices calls ``notify`` (what changed is read afterwards, level-triggered).

A burst wakes the pipeline once, when it ends (:class:`Burst`): zebra installs or deletes 10k
remote entries in ~0.3-1 s, and a pass woken by the first of them read the kernel while zebra
was still writing (slowly, with zebra busy), then needed a second pass for the rest."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

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

    COMMANDS = (("bridge", "monitor", "fdb"), ("ip", "monitor", "neigh"))

    def __init__(self, notify: Callable[[], None], devices: Callable[[], frozenset[str]]) -> None:
        self._burst = Burst(notify)
        self._devices = devices
        self._procs: list[asyncio.subprocess.Process] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        for argv in self.COMMANDS:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
            )
            self._procs.append(proc)
            self._tasks.append(asyncio.create_task(self._drain(proc), name="evpn-monitor"))

    async def _drain(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            words = line.decode(errors="replace").split()
            names = self._devices()
            if any(w.split("@", 1)[0] in names for w in words):
                self._burst.poke()

    async def close(self) -> None:
        self._burst.cancel()
        for proc in self._procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for proc in self._procs:
            with contextlib.suppress(Exception):
                await proc.wait()
        for task in self._tasks:
            task.cancel()
