"""The VRF pipeline: the kernel VRF devices this chassis needs (``core/vrf.py``) against the
ones the kernel really has, read each pass.

It wakes on a new OVN state and every ``check_s`` (a VRF deleted by hand is made again). Before
the first OVN state it makes the node config's VRFs but removes nothing: a router not read yet
may need a VRF of ovn-frr's. zebra sees a new VRF device by itself; FRR's ``router bgp ASN vrf
NAME`` then comes up. Each pass publishes every kernel VRF's table (ovn-frr's and the
operator's), the one read of them the import pipeline maps ``dynamic-routing-vrf-name`` with;
a failed read publishes nothing, so the tables read last stand.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from ovn_frr.core.model import Network
from ovn_frr.core.ovn import OvnState
from ovn_frr.core.vrf import KernelLink, KernelVrf, VrfConfig, VrfPlan, needed_vrfs, plan_vrfs
from ovn_frr.reconcilers.base import Cell, Sample, Signal, TracePart, Worker

log = logging.getLogger(__name__)


class VrfDevices(Protocol):
    def read(self, names: Iterable[str]) -> tuple[list[KernelVrf], list[KernelLink]]: ...

    def apply(
        self,
        create: Sequence[tuple[str, int]],
        enslave: Sequence[tuple[str, str]],
        remove: Sequence[str],
    ) -> None: ...


class VrfReconciler:
    name = "vrf"

    def __init__(
        self,
        config: VrfConfig,
        ovn: Cell[OvnState | None],
        kernel: VrfDevices,
        tables: Cell[Mapping[str, int]],
        check_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.ovn = ovn
        self.tables = tables
        self.kernel = kernel
        self.check_s = check_s
        self.clock = clock
        self.watches: tuple[Signal, ...] = (ovn,)
        self.io = Worker(self.name)
        self.plan = VrfPlan()
        self.made = 0
        self.removed = 0

    async def step(self) -> float | None:
        state = self.ovn.value
        needed = needed_vrfs(state, self.config)
        names = [*needed, *(i for n in needed.values() for i in n.interfaces)]
        kernel, links = await self.io(self.kernel.read, names)
        tables = {v.name: v.table for v in kernel}
        if self.tables.publish(tables):
            log.info("vrf_tables %s", " ".join(f"{k}={v}" for k, v in sorted(tables.items())))
        plan = plan_vrfs(needed, kernel, links)
        if state is None:
            plan = replace(plan, remove=())  # nothing is known to be unneeded yet
        if plan.create or plan.enslave or plan.remove:
            try:
                await self.io(self.kernel.apply, plan.create, plan.enslave, plan.remove)
            except OSError as exc:  # the lines that worked stand; the next pass reads them
                log.warning("vrf_apply_failed error=%s", exc)
                self.plan = replace(plan, problems=(*plan.problems, f"VRF change failed: {exc}"))
                return self.clock() + min(self.check_s, 2.0)
            for name, table in plan.create:
                log.info("vrf_created vrf=%s table=%d", name, table)
            for ifname, vrf in plan.enslave:
                log.info("vrf_interface_added vrf=%s interface=%s", vrf, ifname)
            for name in plan.remove:
                log.info("vrf_removed vrf=%s (no router or neighbor needs it)", name)
            self.made += len(plan.create)
            self.removed += len(plan.remove)
        if plan.problems != self.plan.problems:
            for p in plan.problems:
                log.warning("vrf_problem %s", p)
        self.plan = plan
        if plan.create or plan.remove:  # read them back (and publish their tables) soon
            return self.clock() + min(self.check_s, 0.2)
        return self.clock() + self.check_s

    def status(self, now: float) -> dict[str, Any]:
        return {
            "vrf_devices": [{"vrf": name, "table": table, "owner": owner, "users": list(users)}
                            for name, table, owner, users in self.plan.view],
            "vrf_problems": list(self.plan.problems),
        }  # fmt: skip

    def problems(self, now: float) -> list[str]:
        return list(self.plan.problems)

    def samples(self) -> Iterable[Sample]:
        yield Sample("ovnfrr_vrf_devices_created", "counter", "VRF devices ovn-frr made",
                     self.made)  # fmt: skip
        yield Sample("ovnfrr_vrf_devices_removed", "counter",
                     "VRF devices of ovn-frr's removed when nothing needed them",
                     self.removed)  # fmt: skip
        yield Sample("ovnfrr_vrf_problems", "gauge", "VRFs needed but not usable as asked",
                     len(self.plan.problems))  # fmt: skip

    async def trace(self, prefix: Network) -> TracePart:
        return TracePart()

    async def close(self) -> None:
        self.io.close()
