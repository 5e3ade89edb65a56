"""Wake-ups from kernel FDB/neighbour changes: a burst wakes the pipeline once, when it ends."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable

import pytest

from ovn_frr.kernel.monitor import Burst, Handle, KernelMonitor


class FakeTimers:
    """A clock that moves only when told, and the timers due by then (in order)."""

    def __init__(self) -> None:
        self.now = 0.0
        self._due: list[tuple[float, int, Callable[[], None], list[bool]]] = []
        self._n = 0

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        cancelled = [False]
        self._n += 1
        heapq.heappush(self._due, (when, self._n, callback, cancelled))
        return _Handle(cancelled)

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while self._due and self._due[0][0] <= end:
            when, _n, callback, cancelled = heapq.heappop(self._due)
            self.now = max(self.now, when)
            if not cancelled[0]:
                callback()
        self.now = end


class _Handle:
    def __init__(self, cancelled: list[bool]) -> None:
        self._cancelled = cancelled

    def cancel(self) -> None:
        self._cancelled[0] = True


def test_a_burst_wakes_once_and_a_lone_change_at_once() -> None:
    timers = FakeTimers()
    woken: list[float] = []
    burst = Burst(lambda: woken.append(timers.now), quiet=0.01, longest=10.0, timers=timers)
    for _ in range(1000):  # zebra writing 1000 entries, one line each, 10 µs apart
        burst.poke()
        timers.advance(1e-5)
    timers.advance(0.1)
    assert woken == [pytest.approx(0.01 + 0.01, abs=1e-3)]  # once, 10 ms after the last line
    at = timers.now
    burst.poke()  # a lone change later: 10 ms after it
    timers.advance(0.1)
    assert woken[1:] == [pytest.approx(at + 0.01, abs=1e-3)]


def test_a_steady_stream_still_wakes() -> None:
    """Changes that never pause wake the pipeline every ``longest``."""
    timers = FakeTimers()
    woken: list[float] = []
    burst = Burst(lambda: woken.append(timers.now), quiet=0.05, longest=0.1, timers=timers)
    for _ in range(110):  # a change every 5 ms for 0.55 s
        burst.poke()
        timers.advance(0.005)
    burst.cancel()
    assert len(woken) == 5  # every 0.1 s: never starved until the stream ends
    assert all(b - a == pytest.approx(0.1, abs=0.006) for a, b in itertools.pairwise(woken))


def test_a_chunk_wakes_only_for_the_watched_devices() -> None:
    names = {"br-100", "vxlan-100", "lo-100"}
    m = KernelMonitor(lambda: None, lambda: None, lambda: frozenset(names),
                      lambda: frozenset({"br-100"}))  # fmt: skip
    assert m.matches(b"0a:01:00:00:00:01 dev lo-100 master br-100 static\n")
    assert m.matches(b"10.0.0.1 dev eth0 lladdr 0a:00:00:00:00:01 REACHABLE\n"
                     b"Deleted 0a:01:00:00:00:01 dev vxlan-100 dst 192.0.2.2 self\n")  # fmt: skip
    assert m.matches(b"00:00:00:00:00:00 dev lo-100@ovs-100 self permanent\n")
    # a longer name, or one inside another word, is not one of them
    assert not m.matches(b"0a:01:00:00:00:01 dev br-1000 master static\n")
    assert not m.matches(b"10.0.0.1 dev xbr-100 lladdr 0a:00:00:00:00:01 STALE\n")
    assert not m.matches(b"")
    names.clear()  # nothing watched (the devices are read again for each chunk)
    assert not m.matches(b"0a:01:00:00:00:01 dev lo-100 master br-100 static\n")


def test_only_a_bridge_neighbour_wakes_the_answers() -> None:
    m = KernelMonitor(lambda: None, lambda: None, lambda: frozenset({"br-100", "vxlan-100"}),
                      lambda: frozenset({"br-100"}), lambda: {"10.64.0.1"})  # fmt: skip
    # zebra's (extern_learn NOARP), or anyone's but ovn-frr's
    assert m.neighbour(b"10.64.0.5 dev br-100 lladdr 0a:00:00:00:00:05 extern_learn NOARP\n")
    assert m.neighbour(b"10.64.0.5 dev br-100 lladdr 0a:00:00:00:00:05 STALE\n")
    assert m.neighbour(b"10.64.0.9 dev br-100 lladdr 0a:00:00:00:00:09 extern_learn PERMANENT\n")
    # an IP answered, gone (as the kernel shows a deletion: failed, then deleted)
    assert m.neighbour(b"10.64.0.1 dev br-100 FAILED\n")
    assert m.neighbour(b"10.64.0.3 dev br-100 FAILED\nDeleted 10.64.0.1 dev br-100 FAILED\n")
    # an IP answered that ovn-frr takes over (its port moved here): yes
    assert m.neighbour(b"10.64.0.1 dev br-100 lladdr 0a:00:00:00:00:01 PERMANENT \n")
    # a local IP ovn-frr wrote (permanent), or deleted (not answered): not
    assert not m.neighbour(b"10.64.0.9 dev br-100 lladdr 0a:00:00:00:00:09 PERMANENT \n")
    assert not m.neighbour(b"10.64.0.9 dev br-100 FAILED\nDeleted 10.64.0.9 dev br-100 FAILED\n")
    # ip monitor neigh shows the bridge's FDB entries as well: not neighbours
    assert not m.neighbour(b"192.0.2.102 dev vxlan-100 lladdr 0a:00:00:00:00:01 NOARP\n")
    assert not m.neighbour(b"dev vxlan-100 lladdr 0a:00:00:00:00:02 NOARP\n")
    assert not m.neighbour(b"10.64.0.1 dev br-1000 lladdr 0a:00:00:00:00:01 NOARP\n")
    assert not m.neighbour(b"Deleted 10.64.0.1 dev br-1000 FAILED\n")
    assert m.matches(b"dev vxlan-100 lladdr 0a:00:00:00:00:02 NOARP\n")  # the pass: yes


def test_each_change_is_counted_and_a_loss_wakes_the_answers_later() -> None:
    """The pass reuses a read while the count stays; a lost event counts, and wakes the
    answers 0.5 s after the last loss, not 10 ms after."""

    class Proc:  # what _drain and _lost read of a monitor process
        pid, returncode = 1, None

        def __init__(self, out: bytes) -> None:
            self.stdout = asyncio.StreamReader()
            self.stdout.feed_data(out)
            self.stdout.feed_eof()
            self.stderr = self.stdout

    timers = FakeTimers()

    async def scenario() -> tuple[int, int, int, int, int, int]:
        answers: list[None] = []
        touches: list[None] = []
        m = KernelMonitor(lambda: None, lambda: answers.append(None),
                          lambda: frozenset({"br-100", "lo-100"}),
                          lambda: frozenset({"br-100"}),
                          touched=lambda: touches.append(None), timers=timers)  # fmt: skip
        m._closing = True
        line = b"10.64.0.5 dev br-100 lladdr 0a:00:00:00:00:05 extern_learn NOARP\n"
        await m._drain(Proc(line), neigh=True)  # type: ignore[arg-type]
        await m._drain(Proc(b"0a:01:00:00:00:01 dev eth9 master br9\n"), neigh=False)  # type: ignore[arg-type]
        counted = m.events
        timers.advance(0.1)
        soon = len(answers)
        await m._lost(Proc(b"netlink receive error No buffer space available (105)\n"),  # type: ignore[arg-type]
                      neigh=True)  # fmt: skip
        timers.advance(0.1)
        early = len(answers)
        timers.advance(0.5)
        late = len(answers)
        await m.close()
        return counted, soon, early, late, m.events, len(touches)

    # one change counted (the other device is not watched), the answers woken once; the loss
    # counted, its wake-up of the answers not due yet 0.1 s after, due 0.5 s after; both
    # touched the answers at once (what holds back deletions while zebra removes)
    assert asyncio.run(scenario()) == (1, 1, 1, 2, 2, 2)
