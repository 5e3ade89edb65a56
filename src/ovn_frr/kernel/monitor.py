"""Kernel FDB and neighbour changes as wake-ups: ``bridge monitor fdb`` and ``ip monitor
neigh`` run as child processes of the event loop, and a line naming one of the watched
devices calls ``notify`` (what changed is read afterwards, level-triggered)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable


class KernelMonitor:
    """``bridge monitor fdb`` and ``ip monitor neigh``: a line about one of ``devices()`` wakes
    the pipeline (the underlay's neighbours and other bridges do not)."""

    COMMANDS = (("bridge", "monitor", "fdb"), ("ip", "monitor", "neigh"))

    def __init__(self, notify: Callable[[], None], devices: Callable[[], frozenset[str]]) -> None:
        self._notify = notify
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
                self._notify()

    async def close(self) -> None:
        for proc in self._procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for proc in self._procs:
            with contextlib.suppress(Exception):
                await proc.wait()
        for task in self._tasks:
            task.cancel()
