"""Wake-ups from kernel FDB/neighbour changes: a burst wakes the pipeline once, when it ends."""

from __future__ import annotations

import asyncio

from ovn_frr.kernel.monitor import Burst, KernelMonitor


def test_a_burst_wakes_once_and_a_lone_change_at_once() -> None:
    async def scenario() -> list[int]:
        woken: list[int] = []
        burst = Burst(lambda: woken.append(len(woken)), quiet=0.01, longest=10.0)
        for _ in range(1000):  # zebra writing 1000 entries, one line each
            burst.poke()
            await asyncio.sleep(0)
        await asyncio.sleep(0.1)
        counts = [len(woken)]
        burst.poke()  # a lone change later
        await asyncio.sleep(0.1)
        counts.append(len(woken))
        return counts

    assert asyncio.run(scenario()) == [1, 2]


def test_a_steady_stream_still_wakes() -> None:
    """Changes that never pause wake the pipeline every ``longest``."""

    async def scenario() -> int:
        woken: list[None] = []
        burst = Burst(lambda: woken.append(None), quiet=0.05, longest=0.1)
        loop = asyncio.get_running_loop()
        end = loop.time() + 0.55
        while loop.time() < end:
            burst.poke()
            await asyncio.sleep(0.005)
        burst.cancel()
        return len(woken)

    assert asyncio.run(scenario()) >= 2  # about 5; never starved until the stream ends


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

    async def scenario() -> tuple[int, int, int, int, int]:
        answers: list[None] = []
        touches: list[None] = []
        m = KernelMonitor(lambda: None, lambda: answers.append(None),
                          lambda: frozenset({"br-100", "lo-100"}),
                          lambda: frozenset({"br-100"}),
                          touched=lambda: touches.append(None))  # fmt: skip
        m._closing = True
        line = b"10.64.0.5 dev br-100 lladdr 0a:00:00:00:00:05 extern_learn NOARP\n"
        await m._drain(Proc(line), neigh=True)  # type: ignore[arg-type]
        await m._drain(Proc(b"0a:01:00:00:00:01 dev eth9 master br9\n"), neigh=False)  # type: ignore[arg-type]
        counted = m.events
        await asyncio.sleep(0.1)
        soon = len(answers)
        await m._lost(Proc(b"netlink receive error No buffer space available (105)\n"),  # type: ignore[arg-type]
                      neigh=True)  # fmt: skip
        await asyncio.sleep(0.1)
        early = len(answers)
        await m.close()
        return counted, soon, early, m.events, len(touches)

    # one change counted (the other device is not watched), the answers woken once; the loss
    # counted, its wake-up of the answers not due yet 0.1 s after; both touched the answers
    # at once (what holds back deletions while zebra removes)
    assert asyncio.run(scenario()) == (1, 1, 1, 2, 2)
