"""The VRF pipeline: the kernel VRF devices this chassis needs (``core/vrf.py``) against the
ones the kernel really has, read each pass.

It wakes on a new OVN state and every ``check_s`` (a VRF deleted by hand is made again). Before
the first OVN state it makes the node config's VRFs but removes nothing: a router not read yet
may need a VRF of ovn-frr's. zebra sees a new VRF device by itself; FRR's ``router bgp ASN vrf
NAME`` then comes up. Each pass publishes every kernel VRF's table (ovn-frr's and the
operator's), the one read of them the import pipeline maps ``dynamic-routing-vrf-name`` with;
a failed read publishes nothing, so the tables read last stand. It keeps the L3VNI devices of
EVPN type-5 (``[vrfs.NAME] l3vni``) too: made once their VRF is in the kernel.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from ovn_frr.core.evpn import evpn_intent
from ovn_frr.core.model import Address, Interface, Network
from ovn_frr.core.ovn import OvnState
from ovn_frr.core.vrf import (
    KernelL3vni,
    KernelLink,
    KernelVrf,
    L3vni,
    L3vniPlan,
    Type5Hops,
    VrfConfig,
    VrfNeed,
    VrfPlan,
    needed_vrfs,
    plan_l3vnis,
    plan_vrfs,
    return_routes,
    type5_port_names,
)
from ovn_frr.reconcilers.advertise import Networks
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

    def read_l3vnis(self, vnis: Iterable[int]) -> list[KernelL3vni]: ...

    def apply_l3vnis(self, delete: Sequence[str], make: Sequence[L3vni]) -> None: ...

    def addresses(self, names: Iterable[str]) -> dict[str, tuple[Interface, ...]]: ...

    def routes(self, table: int) -> frozenset[tuple[Network, Address]]: ...

    def apply_routes(
        self,
        table: int,
        add: Iterable[tuple[Network, Address]],
        delete: Iterable[tuple[Network, Address]],
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
        networks: Cell[Networks] | None = None,
        type5: Cell[Type5Hops] | None = None,
    ) -> None:
        self.config = config
        self.ovn = ovn
        self.tables = tables
        self.kernel = kernel
        self.check_s = check_s
        self.clock = clock
        #: what advertise announces (the way back into OVN for type-5), and what the import
        #: needs for type-5 routes (published here)
        self.networks: Cell[Networks] = networks or Cell("networks", None)
        self.type5: Cell[Type5Hops] = type5 or Cell("type5", Type5Hops())
        self.watches: tuple[Signal, ...] = (ovn, self.networks)
        self._swept = False
        self.io = Worker(self.name)
        self.plan = VrfPlan()
        self.l3plan = L3vniPlan()
        self.l3vnis: list[KernelL3vni] = []
        self.made = 0
        self.removed = 0
        #: the last failure to change the kernel's VRFs ("" none since a success)
        self._failed = ""
        #: what the last pass was made of, and when the next is due without a change
        self._inputs: object = None
        self._due: float | None = None

    async def step(self) -> float | None:
        state = self.ovn.value
        needed = needed_vrfs(state, self.config)
        # what the pass depends on: the VRFs needed, and with an L3VNI the EVPN switches and
        # the announcements; anything else changing (a NAT, a port) costs no kernel read
        inputs = (needed, self._l3_inputs(state))
        if inputs == self._inputs and self._due is not None and self.clock() < self._due:
            return self._due
        self._due = await self._pass(state, needed)
        self._inputs = inputs
        return self._due

    def _l3_inputs(self, state: OvnState | None) -> object:
        if not self.config.l3vnis:
            return None
        switches = None if state is None else state.switches
        return (switches, self.networks.value)

    async def _pass(self, state: OvnState | None, needed: Mapping[str, VrfNeed]) -> float:
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
                # once per distinct failure (a kernel without VRFs fails the same every pass);
                # status lists it for as long as it lasts
                if str(exc) != self._failed:
                    log.warning("vrf_apply_failed error=%s", exc)
                self._failed = str(exc)
                self.plan = replace(plan, problems=(*plan.problems, f"VRF change failed: {exc}"))
                return self.clock() + min(self.check_s, 2.0)
            self._failed = ""
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
        l3plan, failed = await self._l3vnis(state, kernel)
        if self.config.l3vnis:
            await self._type5(state, kernel)
        if not self._swept:
            await self._sweep(kernel)
        if failed:  # never a tight loop of remaking devices
            return self.clock() + min(self.check_s, 2.0)
        if plan.create or plan.remove or l3plan.make or l3plan.delete:
            return self.clock() + min(self.check_s, 0.2)  # read them back soon
        return self.clock() + self.check_s

    async def _l3vnis(
        self, state: OvnState | None, kernel: Sequence[KernelVrf]
    ) -> tuple[L3vniPlan, bool]:
        """The L3VNI devices at the node config (in VRFs the kernel has now); whether a read or
        a change failed."""
        try:
            found = await self.io(self.kernel.read_l3vnis, self.config.l3vnis.values())
        except OSError as exc:
            log.warning("l3vni_read_failed error=%s", exc)
            return self.l3plan, True
        l2vnis = {} if state is None else {s.vni: s.switch for s in evpn_intent(state).switches}
        plan = plan_l3vnis(self.config, kernel, found, l2vnis)
        failed = False
        if plan.delete or plan.make:
            try:
                await self.io(self.kernel.apply_l3vnis, plan.delete, plan.make)
            except OSError as exc:
                log.warning("l3vni_apply_failed error=%s", exc)
                plan = replace(plan, problems=(*plan.problems, f"L3VNI change failed: {exc}"))
                failed = True
            for x in plan.make:
                log.info("l3vni_devices vrf=%s vni=%d bridge=%s vxlan=%s local=%s", x.vrf,
                         x.vni, x.bridge, x.vxlan, x.local)  # fmt: skip
            for vni in plan.remove:
                log.info("l3vni_devices_removed vni=%d (not in the node config)", vni)
        if plan.problems != self.l3plan.problems:
            for p in plan.problems:
                log.warning("l3vni_problem %s", p)
        self.l3plan, self.l3vnis = plan, found
        return plan, failed

    async def _sweep(self, kernel: Sequence[KernelVrf]) -> None:
        """Once per start: the routes back of VRFs that had an L3VNI before (the node config
        is read at start only)."""
        for v in kernel:
            if v.name in self.config.l3vnis:
                continue
            old = await self.io(self.kernel.routes, v.table)
            if old:
                await self.io(self.kernel.apply_routes, v.table, (), sorted(old, key=str))
                log.info("vrf_return_routes vrf=%s table=%d deleted=%d (no L3VNI)", v.name,
                         v.table, len(old))  # fmt: skip
        self._swept = True

    async def _type5(self, state: OvnState | None, kernel: Sequence[KernelVrf]) -> None:
        """Publish what the import needs for type-5 routes; keep the way back (the announced
        prefixes with a next hop, in each L3VNI VRF's table)."""
        svis = frozenset(k.found.bridge for k in self.l3vnis if k.found is not None and k.ready
                         and self.config.l3vnis.get(k.found.vrf) == k.vni)  # fmt: skip
        names = type5_port_names(state, self.config)
        addrs = await self.io(self.kernel.addresses, names) if names else {}
        self.type5.publish(Type5Hops(svis, addrs))
        if self.networks.value is None:
            return  # what is announced is not known yet: the routes there stay
        tables = {v.name: v.table for v in kernel}
        for vrf, want in return_routes(self.networks.value, self.config).items():
            table = tables.get(vrf)
            if table is None:
                continue
            have = await self.io(self.kernel.routes, table)
            add, delete = sorted(want - have, key=str), sorted(have - want, key=str)
            if add or delete:
                await self.io(self.kernel.apply_routes, table, add, delete)
                log.info("vrf_return_routes vrf=%s table=%d added=%d deleted=%d", vrf, table,
                         len(add), len(delete))  # fmt: skip

    def status(self, now: float) -> dict[str, Any]:
        return {
            "vrf_devices": [{"vrf": name, "table": table, "owner": owner, "users": list(users)}
                            for name, table, owner, users in self.plan.view],
            "vrf_problems": list(self.plan.problems + self.l3plan.problems),
            "l3vnis": [{"vrf": vrf, "vni": vni, "ready": self._ready(vni),
                        "router_mac": self._mac(vni)}
                       for vrf, vni in sorted(self.config.l3vnis.items())],
        }  # fmt: skip

    def _ready(self, vni: int) -> bool:
        return any(k.vni == vni and k.ready for k in self.l3vnis)

    def _mac(self, vni: int) -> str | None:
        return next((k.router_mac for k in self.l3vnis if k.vni == vni and k.found), None)

    def problems(self, now: float) -> list[str]:
        return list(self.plan.problems + self.l3plan.problems)

    def samples(self) -> Iterable[Sample]:
        yield Sample("ovnfrr_vrf_devices_created", "counter", "VRF devices ovn-frr made",
                     self.made)  # fmt: skip
        yield Sample("ovnfrr_vrf_devices_removed", "counter",
                     "VRF devices of ovn-frr's removed when nothing needed them",
                     self.removed)  # fmt: skip
        yield Sample("ovnfrr_vrf_problems", "gauge", "VRFs needed but not usable as asked",
                     len(self.plan.problems) + len(self.l3plan.problems))  # fmt: skip
        for vrf, vni in sorted(self.config.l3vnis.items()):
            yield Sample("ovnfrr_vrf_l3vni_ready", "gauge",
                         "EVPN type-5: the L3VNI's devices are up in the VRF (1) or not (0)",
                         float(self._ready(vni)), (("vrf", vrf), ("vni", str(vni))))  # fmt: skip

    async def trace(self, prefix: Network) -> TracePart:
        return TracePart()

    async def close(self) -> None:
        self.io.close()
