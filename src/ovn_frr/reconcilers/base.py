"""The shape every pipeline of the agent has, and what runs it.

A :class:`Reconciler` names what it watches (:class:`Signal`s: an FPM update, an OVSDB change,
a value another reconciler published in a :class:`Cell`), makes one level-triggered
:meth:`~Reconciler.step` (the whole desired state against what the system really has) and
reports its own status, problems, metrics and part of ``trace``.

A :class:`Runner` gives each reconciler its own asyncio task: it waits for a watched signal
or the time the last step asked for, debounces bursts, runs the step, and on an exception
records it and backs off (1 s doubling to 10 s by default) without touching any other
reconciler. Each reconciler also does its blocking I/O on a :class:`Worker` thread of its
own, so a hung ``vtysh`` or a slow ovsdb-server stalls only the pipeline that called it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from ovn_frr.core.model import Network

log = logging.getLogger(__name__)
T = TypeVar("T")

#: lists in status documents are cut here (totals are always given)
LIST_LIMIT = 1000


class Signal:
    """A change that wakes every reconciler watching it (each through its own event)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._events: list[asyncio.Event] = []

    def watch(self, event: asyncio.Event) -> None:
        self._events.append(event)

    def notify(self) -> None:
        for event in self._events:
            event.set()


class Cell(Signal, Generic[T]):
    """The latest value one reconciler produces for others; publishing a different value
    wakes the watchers."""

    def __init__(self, name: str, value: T) -> None:
        super().__init__(name)
        self.value = value
        self.version = 0

    def publish(self, value: T, compared: bool = False) -> bool:
        """Set the value and wake the watchers, unless it equals the current one
        (``compared``: the caller found it different already, off the event loop)."""
        if not compared and value == self.value:
            return False
        self.value = value
        self.version += 1
        self.notify()
        return True


class Sample(NamedTuple):
    """One metric value (families are assembled by :mod:`ovn_frr.status`)."""

    name: str
    kind: str  # "gauge" | "counter"
    help: str
    value: float
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class TracePart:
    """A reconciler's part of ``trace PREFIX``: fields of the document, lines of the story."""

    doc: Mapping[str, Any] = field(default_factory=dict)
    story: tuple[str, ...] = ()


class Reconciler(Protocol):
    name: str
    #: what wakes it
    watches: tuple[Signal, ...]

    async def step(self) -> float | None:
        """One pass; returns when the next one is due without any event (clock time)."""
        ...

    def status(self, now: float) -> dict[str, Any]:
        """Its part of the status document (top-level keys)."""
        ...

    def problems(self, now: float) -> list[str]: ...

    def samples(self) -> Iterable[Sample]: ...

    async def trace(self, prefix: Network) -> TracePart: ...

    async def close(self) -> None: ...


class Worker:
    """One thread of a reconciler's own for its blocking calls."""

    def __init__(self, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"ovn-frr-{name}")

    async def __call__(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args))

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class Runner:
    """Runs one reconciler as its own task (see the module docstring)."""

    def __init__(
        self,
        reconciler: Reconciler,
        clock: Callable[[], float] = time.monotonic,
        debounce: float = 0.05,
        backoff: tuple[float, float] = (1.0, 10.0),
        expected: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.reconciler = reconciler
        self.name = reconciler.name
        self.clock = clock
        self.debounce = debounce
        self.backoff = backoff
        #: errors of the systems it talks to (logged without a traceback)
        self.expected = expected
        self.wake = asyncio.Event()
        for signal in reconciler.watches:
            signal.watch(self.wake)
        self.runs = 0
        self.failures = 0
        self.consecutive = 0
        self.last_error = ""
        self.last_ok_at: float | None = None
        self.busy_since: float | None = None
        self.next_due: float | None = None
        self._delay = backoff[0]

    async def run(self, stop: asyncio.Event) -> None:
        """Step until ``stop``. A failure of the loop itself (not of a step: those are
        handled per step) is logged with its traceback, makes this pipeline unhealthy, and
        the loop starts again after the back-off: no pipeline ends without a word."""
        self.wake.set()  # the first step at once
        stopper = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                try:
                    await self._loop(stop, stopper)
                except Exception as exc:
                    delay = self._failed(exc)
                    log.exception("reconciler_loop_failed reconciler=%s restart_in=%.1fs",
                                  self.name, delay)  # fmt: skip
                    self.next_due = self.clock() + delay
                    await asyncio.wait({stopper}, timeout=delay)
                    self.wake.set()
        finally:
            stopper.cancel()

    async def _loop(self, stop: asyncio.Event, stopper: asyncio.Future[Any]) -> None:
        last = -1e9
        while not stop.is_set():
            await self._wait(stopper)
            if stop.is_set():
                break
            woke = self.clock()
            pause = last + self.debounce - woke
            if pause > 0:  # at most one step per debounce; a lone change goes at once
                await asyncio.sleep(pause)
            self.wake.clear()
            last = self.clock()
            self.next_due = await self.step_once()
            log.debug("reconciler_step reconciler=%s waited_ms=%.1f ms=%.1f", self.name,
                      (last - woke) * 1e3, (self.clock() - last) * 1e3)  # fmt: skip

    def _failed(self, exc: Exception) -> float:
        """Record a failure; returns the back-off before the next attempt."""
        self.failures += 1
        self.consecutive += 1
        self.last_error = str(exc) or type(exc).__name__
        delay = self._delay
        self._delay = min(self._delay * 2, self.backoff[1])
        return delay

    async def _wait(self, stopper: asyncio.Future[Any]) -> None:
        if self.wake.is_set():
            return
        timeout = None if self.next_due is None else max(0.0, self.next_due - self.clock())
        waker = asyncio.ensure_future(self.wake.wait())
        try:
            await asyncio.wait({waker, stopper}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        finally:
            waker.cancel()

    async def step_once(self) -> float | None:
        """One step with the runner's bookkeeping; returns when the next is due."""
        self.busy_since = self.clock()
        try:
            due = await self.reconciler.step()
        except Exception as exc:  # the top of this pipeline's loop: record, back off
            delay = self._failed(exc)
            if isinstance(exc, self.expected):
                log.error("reconciler_failed reconciler=%s error=%s retry_in=%.1fs",
                          self.name, self.last_error, delay)  # fmt: skip
            else:
                log.exception("reconciler_failed reconciler=%s retry_in=%.1fs", self.name, delay)
            return self.clock() + delay
        finally:
            self.busy_since = None
        self.runs += 1
        self.consecutive = 0
        self.last_error = ""
        self.last_ok_at = self.clock()
        self._delay = self.backoff[0]
        return due

    @property
    def healthy(self) -> bool:
        return self.consecutive == 0

    def status(self, now: float) -> dict[str, Any]:
        retry = None
        if self.consecutive and self.next_due is not None:
            retry = round(max(0.0, self.next_due - now), 1)
        return {
            "name": self.name,
            "healthy": self.healthy,
            "runs": self.runs,
            "failures": self.failures,
            "last_error": self.last_error,
            "retry_in_s": retry,
            "busy_s": None if self.busy_since is None else round(now - self.busy_since, 1),
            "last_ok_s_ago": None if self.last_ok_at is None else round(now - self.last_ok_at, 1),
        }

    def problems(self, now: float) -> list[str]:
        out = []
        if self.consecutive:
            retry = max(0.0, (self.next_due or now) - now)
            out.append(f"{self.name}: {self.last_error} (failed {self.consecutive}x, "
                       f"retry in {retry:.0f} s)")  # fmt: skip
        if self.busy_since is not None and now - self.busy_since > 30:
            out.append(f"{self.name}: one step running for {now - self.busy_since:.0f} s")
        return out

    def samples(self) -> Iterable[Sample]:
        labels = (("reconciler", self.name),)
        yield Sample("ovnfrr_reconcile_passes", "counter", "Reconciler steps completed",
                     self.runs, labels)  # fmt: skip
        yield Sample("ovnfrr_reconcile_failures", "counter", "Reconciler steps that failed",
                     self.failures, labels)  # fmt: skip
        yield Sample("ovnfrr_reconciler_healthy", "gauge", "1 when the last step succeeded",
                     1.0 if self.healthy else 0.0, labels)  # fmt: skip


async def stop_all(tasks: Iterable[asyncio.Task[None]], timeout: float) -> None:
    """Wait for the runner tasks to end (their stop event is set); cancel the stuck ones."""
    pending = set(tasks)
    if not pending:
        return
    _done, stuck = await asyncio.wait(pending, timeout=timeout)
    for task in stuck:
        log.warning("reconciler_stuck_at_stop task=%s (cancelled)", task.get_name())
        task.cancel()
    for task in stuck:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
