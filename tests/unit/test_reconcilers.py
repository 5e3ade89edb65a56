"""The reconcilers' own logic, with fakes for what they talk to (no NB, no FRR): back-off,
failure isolation between pipelines, the import writer's read-back, the FRR pipeline's
drift repair and adoption. The fakes stand for other systems, never for ovn-frr's code."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from ovn_frr import config
from ovn_frr.config.convert import frr_settings
from ovn_frr.core.model import DesiredRoute, ImportPolicy, Network, OwnedRoute
from ovn_frr.core.ovn import LogicalRouter, OvnState, RouterPort
from ovn_frr.fpm.netlink import NextHop, RouteMessage
from ovn_frr.fpm.rib import Rib
from ovn_frr.fpm.server import FpmCounters
from ovn_frr.frr.diff import parse, paths
from ovn_frr.ovn.bulk import WriteResult
from ovn_frr.ovn.db import OvnError
from ovn_frr.reconcilers.advertise import AdvertiseReconciler, Networks
from ovn_frr.reconcilers.base import Cell, Runner, Sample, Signal, TracePart
from ovn_frr.reconcilers.frr import FrrReconciler
from ovn_frr.reconcilers.importer import ImportReconciler
from ovn_frr.reconcilers.ovn import OvnWatch
from tests.unit.fakefrr import FakeFrr

net = ipaddress.ip_network
iface = ipaddress.ip_interface


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Flaky:
    """A reconciler whose step fails ``fails`` times, then succeeds."""

    name = "flaky"

    def __init__(self, fails: int, signal: Signal | None = None) -> None:
        self.fails = fails
        self.steps = 0
        self.watches: tuple[Signal, ...] = (signal,) if signal else ()

    async def step(self) -> float | None:
        self.steps += 1
        if self.steps <= self.fails:
            raise OvnError("NB at unix:nb.sock: connection refused")
        return None

    def status(self, now: float) -> dict[str, object]:
        return {}

    def problems(self, now: float) -> list[str]:
        return []

    def samples(self) -> list[Sample]:
        return []

    async def trace(self, prefix: Network) -> TracePart:
        return TracePart()

    async def close(self) -> None:
        return None


def test_runner_backs_off_doubling_and_resets_after_a_success() -> None:
    clock = Clock()
    runner = Runner(Flaky(fails=6), clock, backoff=(1.0, 8.0), expected=(OvnError,))

    async def main() -> list[float | None]:
        return [await runner.step_once() for _ in range(8)]

    dues = asyncio.run(main())
    assert [d - clock.now if d else d for d in dues] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0, None, None]
    assert (runner.failures, runner.consecutive, runner.runs, runner.healthy) == (6, 0, 2, True)


def test_runner_reports_a_failing_pipeline() -> None:
    clock = Clock()
    runner = Runner(Flaky(fails=3), clock, expected=(OvnError,))
    asyncio.run(runner.step_once())
    runner.next_due = clock.now + 1.0
    (line,) = runner.problems(clock.now)
    assert line == "flaky: NB at unix:nb.sock: connection refused (failed 1x, retry in 1 s)"
    assert runner.status(clock.now)["healthy"] is False


class Hung(Flaky):
    """A step that never returns (a hung vtysh)."""

    name = "hung"

    async def step(self) -> float | None:
        await asyncio.Event().wait()
        return None


def test_a_failing_or_stuck_pipeline_does_not_stop_another() -> None:
    async def main() -> int:
        signal = Signal("fpm")
        stop = asyncio.Event()
        good = Flaky(fails=0, signal=signal)
        runners = [Runner(Flaky(fails=10**6), debounce=0.0, backoff=(0.01, 0.02),
                          expected=(OvnError,)), Runner(Hung(0)),
                   Runner(good, debounce=0.0)]  # fmt: skip
        tasks = [asyncio.create_task(r.run(stop)) for r in runners]
        deadline = asyncio.get_running_loop().time() + 10
        while good.steps < 15 or runners[0].failures <= 5:  # both go on, side by side
            assert asyncio.get_running_loop().time() < deadline, (good.steps, runners[0].failures)
            signal.notify()
            await asyncio.sleep(0.01)
        assert runners[1].busy_since is not None  # still stuck meanwhile
        stop.set()
        tasks[1].cancel()  # the stuck one is cancelled at stop
        await asyncio.wait(tasks, timeout=5)
        return good.steps

    assert asyncio.run(main()) >= 15


class BrokenLoop(Flaky):
    """A step whose answer breaks the runner's own loop (a bug: not a float)."""

    name = "broken"

    async def step(self) -> float | None:
        self.steps += 1
        return "soon" if self.steps <= 2 else None  # type: ignore[return-value]


def test_a_runner_whose_loop_fails_says_so_and_starts_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    problems: list[str] = []

    async def main() -> Runner:
        stop = asyncio.Event()
        runner = Runner(BrokenLoop(0), debounce=0.0, backoff=(0.2, 0.4))
        task = asyncio.create_task(runner.run(stop))
        deadline = asyncio.get_running_loop().time() + 5
        while runner.failures < 2 or runner.runs < 3:
            assert asyncio.get_running_loop().time() < deadline
            assert not task.done()  # never ends while not stopped
            problems.extend(runner.problems(asyncio.get_running_loop().time()))
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, 5)
        return runner

    runner = asyncio.run(main())
    failed = [r for r in caplog.records if "reconciler_loop_failed" in r.getMessage()]
    assert len(failed) == 2 and all(r.exc_info for r in failed)  # with the traceback
    assert problems and problems[0].startswith("broken: ")  # unhealthy meanwhile
    assert runner.healthy and runner.runs >= 3  # and it went on


# --- import --------------------------------------------------------------------------------


class FakeNb:
    """This chassis' route rows in an NB (what ovn.bulk.BulkWriter does, in memory)."""

    def __init__(self) -> None:
        self.rows: dict[str, OwnedRoute] = {}
        self.fail_writes = 0
        self.reads = 0
        self.writes = 0
        self.down = False
        self._n = 0
        #: router name -> the UUID of its row (unknown routers: any UUID is taken)
        self.homes: dict[str, str] = {}

    def count_owned(self) -> int:
        if self.down:
            raise OvnError("OVN_Northbound transact: Connection refused")
        return len(self.rows)

    def owned(self) -> tuple[dict[str, OwnedRoute], dict[str, frozenset[str]]]:
        if self.down:
            raise OvnError("OVN_Northbound transact: Connection refused")
        self.reads += 1
        return dict(self.rows), {r.router: frozenset({self.homes[r.router]})
                                 for r in self.rows.values() if r.router in self.homes}  # fmt: skip

    def replace_router(self, name: str, uuid: str) -> None:
        """The router deleted and created again: its rows went with the old one."""
        self.homes[name] = uuid
        self.rows = {k: r for k, r in self.rows.items() if r.router != name}

    def new_rows(self, routes: Sequence[DesiredRoute]) -> list[OwnedRoute]:
        out = []
        for r in routes:
            self._n += 1
            out.append(OwnedRoute(f"00000000-0000-4000-8000-{self._n:012x}", r))
        return out

    def write(
        self,
        add: Sequence[OwnedRoute],
        delete: Sequence[OwnedRoute],
        routers: Mapping[str, str],
        homes: Mapping[str, Collection[str]] | None = None,
    ) -> WriteResult:
        self.writes += 1
        if self.fail_writes:
            self.fail_writes -= 1
            for row in add[: len(add) // 2]:  # part of it landed
                self.rows[row.uuid] = row
            raise OvnError("OVN_Northbound transact: Connection reset by peer")

        def live(name: str, uuid: str) -> bool:  # an unknown router takes any UUID
            return name not in self.homes or self.homes[name] == uuid

        gone: set[str] = set()
        for row in delete:
            targets = set((homes or {}).get(row.router, ())) or {routers[row.router]}
            gone.update(u for u in targets if not live(row.router, u))
            if any(live(row.router, u) for u in targets):
                self.rows.pop(row.uuid, None)
        inserted = 0
        for row in add:
            if live(row.router, routers[row.router]):
                self.rows[row.uuid] = row
                inserted += 1
            else:
                gone.add(routers[row.router])
        return WriteResult(inserted, len(delete), frozenset(gone))

    def close(self) -> None:
        return None


#: a row written before the agent started (row UUIDs are UUIDs: the agent keeps them as numbers)
OLD = "0000000a-0000-4000-8000-000000000000"

GR = LogicalRouter.of(
    "GR_node1", {"dynamic-routing": "true"},
    (RouterPort.of("rtoe-GR_node1", (iface("10.255.0.1/24"),)),), pinned_here=True,
)  # fmt: skip


def route(prefix: str, add: bool = True) -> RouteMessage:
    hops = (NextHop(ipaddress.ip_address("10.255.0.2"), 2),)
    return RouteMessage(add, False, prefix, 254, 186, "unicast" if add else "unspec",
                        hops if add else (), None, 20)  # fmt: skip


def importer(nb: FakeNb, clock: Clock) -> tuple[ImportReconciler, Rib, Cell[OvnState | None]]:
    rib = Rib(coalesce=0.0, replay_quiet=1.0)
    state: Cell[OvnState | None] = Cell("ovn", OvnState((GR,)))
    rec = ImportReconciler(rib, FpmCounters(), Signal("fpm"), state, nb, ImportPolicy(), 120,
                           clock)  # fmt: skip
    return rec, rib, state


def prefixes(nb: FakeNb) -> list[str]:
    return sorted(r.prefix for r in nb.rows.values())


def test_import_adds_before_the_replay_ends_and_deletes_only_after() -> None:
    nb = FakeNb()
    nb.rows[OLD] = OwnedRoute.of(OLD, "GR_node1", "192.0.2.0/24", "10.255.0.2",
                                   "rtoe-GR_node1")  # fmt: skip
    clock = Clock()
    rec, rib, _state = importer(nb, clock)

    async def main() -> None:
        rib.connected(clock.now)
        rib.apply([route("198.51.100.0/24")], clock.now)
        await rec.step()
        await rec._write_landed()
        assert prefixes(nb) == ["192.0.2.0/24", "198.51.100.0/24"]  # nothing deleted yet
        clock.now += 2.0  # the replay is over: what it did not bring back goes
        await rec.step()
        await rec.close()

    asyncio.run(main())
    assert prefixes(nb) == ["198.51.100.0/24"]


def test_the_next_plan_is_made_while_a_write_is_in_flight() -> None:
    """Routes that arrive during a write are planned before it lands (pipelined), also when a
    router port names a host interface (the chassis' port mapping is read meanwhile)."""
    nb = FakeNb()
    clock = Clock()
    rec, rib, state = importer(nb, clock)
    port = RouterPort.of("rtoe-GR_node1", (iface("10.255.0.1/24"),),
                         {"dynamic-routing-port-name": "eth1"})  # fmt: skip
    state.publish(OvnState((replace(GR, ports=(port,)),)))
    rec.port_mapping = lambda: "eth1:eth1"
    rec.ifnames = lambda: {2: "eth1"}
    landed = threading.Event()
    write = nb.write

    def slow_write(*args: Any) -> WriteResult:
        landed.wait(5)
        return write(*args)

    nb.write = slow_write  # type: ignore[method-assign,assignment]

    async def main() -> list[str]:
        rib.connected(clock.now)
        rib.apply([route("198.51.100.0/24")], clock.now)
        clock.now += 2.0
        await rec.step()  # its write is in flight
        rib.apply([route("198.51.101.0/24")], clock.now)
        second = asyncio.ensure_future(rec.step())
        memo = rec.decisions._routers["GR_node1"]
        for _ in range(200):
            if "198.51.101.0/24" in memo.single:
                break
            await asyncio.sleep(0.01)
        planned = sorted(memo.single)
        landed.set()
        await second
        await rec.close()
        return planned

    assert asyncio.run(main()) == ["198.51.100.0/24", "198.51.101.0/24"]
    assert prefixes(nb) == ["198.51.100.0/24", "198.51.101.0/24"]


def test_a_failed_write_is_read_back_never_doubled() -> None:
    nb = FakeNb()
    clock = Clock()
    rec, rib, _state = importer(nb, clock)
    nb.fail_writes = 1

    async def main() -> None:
        rib.connected(clock.now)
        rib.apply([route(f"198.51.100.{i * 4}/30") for i in range(4)], clock.now)
        clock.now += 2.0
        await rec.step()
        await rec._write_landed()  # failed: half of it landed
        assert len(nb.rows) == 2
        await rec.step()  # the rows are read back, the rest is written
        await rec._write_landed()
        await rec.close()

    asyncio.run(main())
    assert nb.reads == 2
    assert prefixes(nb) == sorted(f"198.51.100.{i * 4}/30" for i in (0, 1, 2, 3))


def test_a_router_created_again_under_its_name_gets_its_routes_in_the_same_pass() -> None:
    nb = FakeNb()
    nb.homes["GR_node1"] = "uuid-a"
    clock = Clock()
    rec, rib, state = importer(nb, clock)
    state.publish(OvnState((replace(GR, uuid="uuid-a"),)))

    async def main() -> None:
        rib.connected(clock.now)
        rib.apply([route("198.51.100.0/24"), route("203.0.113.0/24")], clock.now)
        clock.now += 2.0
        await rec.step()
        await rec._write_landed()
        assert prefixes(nb) == ["198.51.100.0/24", "203.0.113.0/24"]
        # the CMS deletes the router and creates it again (same name, another row): its
        # rows went with the old row; the OVN pipeline publishes the new one
        nb.replace_router("GR_node1", "uuid-b")
        state.publish(OvnState((replace(GR, uuid="uuid-b"),)))
        await rec.step()  # one pass, not resync_s later
        await rec._write_landed()
        assert prefixes(nb) == ["198.51.100.0/24", "203.0.113.0/24"]
        # the IDL lags behind NB: planned for the old row, the write finds it gone; nothing is
        # read back and nothing written through it again until the state shows the new row
        nb.replace_router("GR_node1", "uuid-c")
        rib.apply([route("192.0.2.0/24")], clock.now)
        reads = nb.reads
        await rec.step()
        await rec._write_landed()
        assert prefixes(nb) == []
        writes = nb.writes
        rib.apply([route("192.0.2.128/25")], clock.now)  # more changes, the same state
        await rec.step()
        await rec._write_landed()
        assert (nb.writes, nb.reads) == (writes, reads)
        state.publish(OvnState((replace(GR, uuid="uuid-c"),)))
        await rec.step()
        await rec._write_landed()
        await rec.close()

    asyncio.run(main())
    assert prefixes(nb) == ["192.0.2.0/24", "192.0.2.128/25", "198.51.100.0/24",
                            "203.0.113.0/24"]  # fmt: skip


GR2 = LogicalRouter.of(
    "GR_node2", {"dynamic-routing": "true"},
    (RouterPort.of("rtoe-GR_node2", (iface("10.255.0.1/24"),)),), pinned_here=True,
    uuid="uuid-2",
)  # fmt: skip


def test_a_write_that_finds_one_router_gone_counts_what_it_wrote_to_the_others() -> None:
    nb = FakeNb()
    nb.homes.update({"GR_node1": "uuid-a", "GR_node2": "uuid-2"})
    clock = Clock()
    rec, rib, state = importer(nb, clock)
    state.publish(OvnState((replace(GR, uuid="uuid-a"), GR2)))

    async def main() -> None:
        rib.connected(clock.now)
        clock.now += 2.0
        await rec.step()  # rows read: none
        nb.replace_router("GR_node1", "uuid-b")  # the state still shows uuid-a
        rib.apply([route("198.51.100.0/24")], clock.now)
        await rec.step()
        await rec._write_landed()
        await rec.close()

    asyncio.run(main())
    assert {r.router for r in nb.rows.values()} == {"GR_node2"}
    assert rec.added == 1  # GR_node2's row, though GR_node1's went nowhere
    assert rec.status(clock.now)["imported"]["total"] == 1


def test_two_routers_with_one_name_get_no_routes_and_lose_those_they_had() -> None:
    nb = FakeNb()
    nb.rows[OLD] = OwnedRoute.of(OLD, "GR_node1", "192.0.2.0/24", "10.255.0.2",
                                   "rtoe-GR_node1")  # fmt: skip
    nb.homes["GR_node1"] = "uuid-a"
    clock = Clock()
    rec, rib, state = importer(nb, clock)
    # a second router row named GR_node1 (ovn-nbctl refuses such a name: so does the import)
    state.publish(OvnState((replace(GR, uuid="uuid-a"), replace(GR, uuid="uuid-x"))))

    async def main() -> None:
        rib.connected(clock.now)
        rib.apply([route("198.51.100.0/24")], clock.now)
        clock.now += 2.0
        await rec.step()
        await rec._write_landed()
        await rec.step()
        await rec._write_landed()
        await rec.close()

    asyncio.run(main())
    assert prefixes(nb) == []
    reasons = {r["reason"] for r in rec.status(clock.now)["rejected"]}
    assert reasons == {"ambiguous"}


def test_import_with_nb_down_raises_for_the_runner_to_back_off() -> None:
    nb = FakeNb()
    nb.down = True
    rec, _rib, _state = importer(nb, Clock())
    with pytest.raises(OvnError):
        asyncio.run(rec.step())


# --- advertise and FRR ---------------------------------------------------------------------

CFG = frr_settings(config.parse(
    '[bgp]\nasn = 64512\nrouter_id = "192.0.2.10"\n'
    '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\n'
))  # fmt: skip


def frr_lines(frr: FakeFrr) -> set[tuple[str, ...]]:
    return set(paths(parse(frr.running_config())))


def test_frr_is_configured_from_the_last_state_while_ovn_is_gone() -> None:
    """The OVN pipeline published once, then NB went away; FRR restarts (loses everything):
    the FRR pipeline puts back the whole config, networks included, and says it drifted."""
    frr = FakeFrr()
    state: Cell[OvnState | None] = Cell("ovn", None)
    networks: Cell[Networks] = Cell("networks", None)
    adv = AdvertiseReconciler(state, networks)
    rec = FrrReconciler(CFG, frr, networks, check_every=0.05)
    port = RouterPort.of("rtoe", (iface("10.128.0.1/23"),), switch="ext")
    announce = replace(GR, routing=replace(GR.routing, redistribute=frozenset({"connected"})),
                       ports=(port,))  # fmt: skip

    async def main() -> None:
        await adv.step()
        assert networks.value is None  # no OVN state yet: nothing published
        await rec.step()  # the BGP peering is configured all the same
        assert ("router bgp 64512", "neighbor 10.255.0.2 remote-as 65001") in frr_lines(frr)
        state.publish(OvnState((announce,)))
        await adv.step()
        await rec.step()
        want = frr_lines(frr)
        assert any(p[-1].startswith("network 10.128.0.0/23") for p in want)
        frr.tree = parse("")  # FRR restarted; the OVN state stays the last one read
        for _ in range(100):  # the next check, on what the observer reads
            await asyncio.sleep(0.02)
            await rec.step()
            if frr_lines(frr) == want:
                break
        assert frr_lines(frr) == want
        await rec.close()

    asyncio.run(main())
    doc = rec.status(0.0)["frr"]
    assert doc["drift"]["lines"] > 10 and doc["reachable"]


def test_a_hung_vtysh_delays_no_import() -> None:
    release = threading.Event()

    class HungFrr(FakeFrr):
        def running_config(self) -> str:
            release.wait(10)
            return super().running_config()

    nb = FakeNb()
    clock = Clock()
    rec, rib, _state = importer(nb, clock)
    frr_rec = FrrReconciler(CFG, HungFrr(), Cell("networks", None))

    async def main() -> None:
        stop = asyncio.Event()
        runners = [Runner(frr_rec), Runner(rec, clock, debounce=0.0)]
        tasks = [asyncio.create_task(r.run(stop)) for r in runners]
        rib.connected(clock.now)
        rib.apply([route("198.51.100.0/24")], clock.now)
        for signal in rec.watches:
            signal.notify()
        for _ in range(100):
            await asyncio.sleep(0.02)
            if nb.rows:
                break
        assert runners[0].busy_since is not None  # still inside its hung vtysh call
        release.set()
        stop.set()
        await asyncio.wait(tasks, timeout=5)
        await rec.close()
        await frr_rec.close()

    asyncio.run(main())
    assert prefixes(nb) == ["198.51.100.0/24"]


# --- OVN -----------------------------------------------------------------------------------


class FakeDb:
    def __init__(self, remote: str) -> None:
        self.remote = remote
        self.connected = True
        self.received = (0, 0)


class FakeReader:
    """NB and SB as ovn.reader.OvnReader reads them: states to hand out, or an error."""

    def __init__(self, *states: OvnState | OvnError | None) -> None:
        self.nb = FakeDb("unix:nb.sock")
        self.sb = FakeDb("unix:sb.sock")
        self.states = list(states)
        self.reads = 0
        self.count: int | None = None

    def read(self, wait_s: float = 0.0) -> OvnState | None:
        self.reads += 1
        item = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        if isinstance(item, OvnError):
            raise item
        return item

    def close(self) -> None:
        return None

    @property
    def change_count(self) -> int:
        """As many changes as reads (each state handed out is one), or ``count`` if set."""
        return self.reads if self.count is None else self.count

    @property
    def seen_count(self) -> int:
        return self.reads - 1 if self.count is None else self.count


def test_the_ovn_pipeline_reads_only_when_the_monitors_saw_a_change_since_its_last_read() -> None:
    reader = FakeReader(OvnState((GR,)))
    reader.count = 7
    watch = OvnWatch(reader, Signal("ovsdb"), Cell("ovn", None))

    async def main() -> list[int]:
        reads = []
        for count in (7, 7, 8, 8):  # woken by its own condition acks; then a change
            reader.count = count
            await watch.step()
            reads.append(reader.reads)
        await watch.close()
        return reads

    assert asyncio.run(main()) == [1, 1, 2, 2]


def test_the_ovn_pipeline_publishes_changes_only_and_keeps_the_last_state_on_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    maybe = LogicalRouter.of("r", {"dynamic-routing": "maybe"})
    # None: the monitors' conditions are settling (rows on their way): nothing published
    reader = FakeReader(OvnError("NB: connection refused"), OvnState((GR,)), None,
                        OvnState((GR,)), OvnState((GR, maybe)), OvnState((GR, maybe)))  # fmt: skip
    out: Cell[OvnState | None] = Cell("ovn", None)

    watch = OvnWatch(reader, Signal("ovsdb"), out)
    runner = Runner(watch, expected=(OvnError,))

    async def main() -> list[int]:
        versions = []
        for _ in range(6):
            await runner.step_once()
            versions.append(out.version)
            settling.append(watch.status(0.0)["ovn"]["settling"])
        reader.nb.connected = False
        await watch.close()
        return versions

    settling: list[bool] = []
    assert asyncio.run(main()) == [0, 1, 1, 1, 2, 2]  # an error publishes nothing
    assert settling == [False, False, True, False, False, False]
    assert out.value == OvnState((GR, maybe))
    assert runner.failures == 1
    logged = [r.getMessage() for r in caplog.records if "intent_ignored" in r.getMessage()]
    assert logged == ["intent_ignored router r: dynamic-routing='maybe' is not true or false"]
    assert watch.problems(0.0) == ["OVN NB not connected"]
    assert watch.status(0.0)["intent_problems"] == [
        "router r: dynamic-routing='maybe' is not true or false"
    ]


def test_frr_announcements_go_without_a_read_checks_use_the_observers_reading() -> None:
    frr = FakeFrr()
    networks: Cell[Networks] = Cell("networks", {"": ()})
    rec = FrrReconciler(CFG, frr, networks, check_every=3600)  # the observer reads once

    async def main() -> None:
        await rec.step()  # at start: reads itself (and the observer reads once)
        for _ in range(500):  # until the observer's reading is in
            if rec._observed is not None:
                break
            await asyncio.sleep(0.01)
        assert rec._observed is not None
        reads = frr.reads
        networks.publish({"": (net("10.9.0.0/16"),)})
        await rec.step()  # the change: planned from what FRR matched, no read
        assert frr.reads == reads
        assert any("network 10.9.0.0/16" in p[-1] for p in frr_lines(frr))
        # the observer's reading began before that batch: stale, the check reads instead
        assert rec._observed is not None
        reads = frr.reads
        frr.tree = parse("")
        await rec.step()
        assert frr.reads == reads + 1
        assert any("network 10.9.0.0/16" in p[-1] for p in frr_lines(frr))
        await rec.close()

    asyncio.run(main())
    assert rec.status(0.0)["frr"]["last_apply"]["lines"] > 1


class BrokenShow(FakeFrr):
    """An FRR whose session reading fails unexpectedly (a timeout, an OSError) a few times."""

    def __init__(self, fails: int) -> None:
        super().__init__()
        self.fails = fails

    def show_json(self, command: str, daemon: str | None = None) -> object:
        if self.fails > 0:
            self.fails -= 1
            raise TimeoutError("vtysh: no answer in 10 s")
        return super().show_json(command)


def test_the_frr_observer_survives_surprises_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    frr = BrokenShow(fails=2)
    networks: Cell[Networks] = Cell("networks", {"": ()})
    rec = FrrReconciler(CFG, frr, networks, check_every=0.05)
    problems: list[str] = []

    async def main() -> None:
        await rec.step()
        for _ in range(500):
            problems.extend(rec.problems(0.0))
            if frr.fails == 0 and not rec.observer_error and rec.sessions is not None:
                break
            await asyncio.sleep(0.01)
        await rec.close()

    asyncio.run(main())
    assert "frr: reading FRR failed: vtysh: no answer in 10 s (retrying)" in problems
    assert rec.observer_failures == 2 and rec.problems(0.0) == []
    logged = [r for r in caplog.records if "frr_observer_failed" in r.getMessage()]
    assert len(logged) == 2 and all(r.exc_info for r in logged)
