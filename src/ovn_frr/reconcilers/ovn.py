"""The OVN pipeline: on every NB/SB change, read the one :class:`OvnState` and publish it.

Import and advertise (and later EVPN and VRF-Lite) consume the published state; while NB or SB
is unreachable, they keep working from the last one (the FRR side is re-configured from it, an
FRR restart included). Malformed ``dynamic-routing*`` options are logged once each, when they
appear, and listed in status for as long as they are there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from ovn_frr.core.model import Network
from ovn_frr.core.native_routing import mark_native
from ovn_frr.core.ovn import OvnState, map_vrfs
from ovn_frr.core.ovnk import OvnkIntent, apply
from ovn_frr.reconcilers.base import Cell, Sample, Signal, TracePart, Worker

log = logging.getLogger(__name__)

#: how long one step waits for the monitors' conditions to settle before it gives up until
#: woken again (the reader hands out a state still settling once the last is a second old)
SETTLE_WAIT_S = 1.0


class Database(Protocol):
    @property
    def remote(self) -> str: ...

    @property
    def connected(self) -> bool: ...

    @property
    def received(self) -> tuple[int, int]: ...


class Reader(Protocol):
    """``ovn.reader.OvnReader`` (blocking)."""

    @property
    def nb(self) -> Database: ...

    @property
    def sb(self) -> Database: ...

    def read(self, wait_s: float = 0.0) -> OvnState | None:
        """The state, or None while the monitors settle (after waiting up to ``wait_s`` for
        them to)."""
        ...

    def close(self) -> None: ...

    @property
    def change_count(self) -> int:
        """Grows with every change either monitor saw."""
        ...

    @property
    def seen_count(self) -> int:
        """:attr:`change_count` when the last read took its data (it saw every change
        before)."""
        ...


class OvnWatch:
    name = "ovn"

    def __init__(
        self,
        reader: Reader,
        changed: Signal,
        out: Cell[OvnState | None],
        clock: Callable[[], float] = time.monotonic,
        vrf_map: Mapping[str, str] | None = None,
        ovnk: OvnkIntent | None = None,
        native: tuple[bool, bool] = (False, False),
    ) -> None:
        self.reader = reader
        #: (OVN exchanges routes itself: 25.03+, it reads dynamic-routing-vrf-id): the routers
        #: it serves through their VRF's table are marked (core.native_routing)
        self.native = native
        #: the node config's ``bgp.vrf_map``, applied to every state read
        self.vrf_map = dict(vrf_map or {})
        #: the node config's ``[ovn_kubernetes]``, applied to every state read after it
        self.ovnk = ovnk
        self.out = out
        self.clock = clock
        self.watches: tuple[Signal, ...] = (changed,)
        self.io = Worker(self.name)
        self.read_at: float | None = None
        self.read_ms = 0.0
        self._problems: tuple[str, ...] = ()
        #: the last read found the monitors' conditions not yet in force
        self.settling = False
        #: the monitors' change count when the last read started
        self._read_count = -1

    async def step(self) -> float | None:
        started = self.clock()
        last = self.out.value
        if last is not None and not self.settling and self.reader.change_count == self._read_count:
            return None  # woken by what the last read already saw (its own condition acks)
        # read and compare with the last state on this pipeline's thread (a large NB: the
        # event loop must not wait for either)
        state, same = await self.io(self._read, last)
        self._read_count = self.reader.seen_count
        if state is None:
            # rows are on their way (their arrival wakes this pipeline; look again in a
            # second regardless): the last state holds until then
            self.settling = True
            return self.clock() + 1.0
        self.settling = False
        self.read_at = self.clock()
        self.read_ms = (self.read_at - started) * 1000
        problems = state.problems()
        for line in problems:
            if line not in self._problems:
                log.warning("intent_ignored %s", line)
        self._problems = problems
        if not same and self.out.publish(state, compared=True):
            log.info("ovn_state_read routers=%d switches=%d ms=%.0f", len(state.routers),
                     len(state.switches), self.read_ms)  # fmt: skip
        return None

    def _read(self, last: OvnState | None) -> tuple[OvnState | None, bool]:
        # a change whose rows need another condition round trip is read once they are in,
        # here: returning to be woken again would cost a debounce per round trip
        state = self.reader.read(SETTLE_WAIT_S)
        if state is not None:
            if self.native[0]:
                state = mark_native(state, self.native[1])
            state = map_vrfs(state, self.vrf_map)
            if self.ovnk is not None:
                state = apply(state, self.ovnk)
        return state, state == last

    def status(self, now: float) -> dict[str, Any]:
        state = self.out.value
        db = {
            name: {"remote": d.remote, "connected": d.connected,
                   "received_bytes": d.received[0], "updates": d.received[1]}
            for name, d in (("nb", self.reader.nb), ("sb", self.reader.sb))
        }  # fmt: skip
        return {
            "ovn": {
                **db,
                "snapshot": None if state is None else {
                    "routers": len(state.routers),
                    "switches": len(state.switches),
                    "age_s": round(now - self.read_at, 1) if self.read_at else None,
                    "read_ms": round(self.read_ms, 1),
                },
                "settling": self.settling,
            },
            "intent_problems": list(self._problems),
        }  # fmt: skip

    def problems(self, now: float) -> list[str]:
        out = []
        if not self.reader.nb.connected:
            out.append("OVN NB not connected")
        if not self.reader.sb.connected:
            out.append("OVN SB not connected")
        return out

    def samples(self) -> Iterable[Sample]:
        yield Sample("ovnfrr_intent_problems", "gauge", "Malformed dynamic-routing options",
                     len(self._problems))  # fmt: skip
        for name, d in (("nb", self.reader.nb), ("sb", self.reader.sb)):
            received, updates = d.received
            yield Sample(
                "ovnfrr_ovsdb_received_bytes",
                "counter",
                "Bytes received from the OVN database",
                received,
                (("db", name),),
            )
            yield Sample(
                "ovnfrr_ovsdb_updates",
                "counter",
                "Row updates received from the OVN database",
                updates,
                (("db", name),),
            )

    async def trace(self, prefix: Network) -> TracePart:
        return TracePart()

    async def close(self) -> None:
        self.io.close()
        await asyncio.to_thread(self.reader.close)
