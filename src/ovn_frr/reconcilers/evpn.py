"""The EVPN pipeline: OVN's EVPN switches -> the kernel and OVS data path, and the local
MACs/IPs zebra announces; the remote VTEPs, MACs and IPs zebra installed -> status. The VNIs it
has wired go to the ARP/ND answers (:mod:`ovn_frr.reconcilers.evpn_answers`), a pipeline of
their own.

Each pass is level-triggered: it reads what the kernel, the local OVS and NB hold (devices,
FDB and neighbour entries, bridges and mappings, the localnet port) and changes only what
differs from the intent (:mod:`ovn_frr.core.evpn`). An OVN change, a kernel FDB or
neighbour change (``bridge monitor``/``ip monitor``) or the check interval wakes it. A pass
woken by OVN plans from the VNI's entries as an earlier pass read them, if that read is younger
than the check interval and the kernel monitor has seen no change of the VNI's devices since
(:meth:`EvpnReconciler._seen`). A restart
of the agent or of FRR changes nothing that is in place: no type-2 is withdrawn and
announced again for a port that did not change.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ovn_frr.core.evpn import (
    LOCALNET,
    EvpnIntent,
    EvpnSwitch,
    KernelVni,
    entry_change,
    evpn_intent,
    parse_mac,
)
from ovn_frr.core.evpn_native import CONTROL_PORT
from ovn_frr.core.model import Network
from ovn_frr.core.ovn import LogicalSwitch, OvnState
from ovn_frr.kernel.evpn import KernelEvpn, Link, VniSpec
from ovn_frr.kernel.monitor import KernelMonitor
from ovn_frr.ovn.errors import OvnError
from ovn_frr.ovn.localnet import LocalnetWriter
from ovn_frr.reconcilers.base import LIST_LIMIT, Cell, Sample, Signal, TracePart, Worker
from ovn_frr.reconcilers.evpn_answers import EvpnAnswers, Wiring
from ovn_frr.reconcilers.evpn_native import NativeHost, NativeSettings, remove_strays
from ovn_frr.reconcilers.evpn_views import PassResult, VniView
from ovn_frr.vswitch.bridges import LocalOvs, OvsState
from ovn_frr.vswitch.controller import OvnController

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EvpnSettings:
    #: False: no neighbor carries l2vpn-evpn; EVPN switches are reported, nothing is built
    #: (and what an earlier run built is taken down)
    enabled: bool
    local_ip: str
    port: int = 4789
    mtu: int = 1450
    check_s: float = 2.0
    #: this chassis' OVN does EVPN itself (25.09+): ovn-frr is its host side
    #: (:mod:`ovn_frr.reconcilers.evpn_native`)
    ovn_native: bool = False
    #: with ``ovn_native``: the kernel VXLAN devices' UDP port (one nothing sends to)
    control_port: int = CONTROL_PORT
    #: OVN 26.03+: an EVPN switch must name its devices (``dynamic-routing-*-ifname``)
    names_required: bool = False

    @property
    def active(self) -> bool:
        return self.enabled and not self.ovn_native


@dataclass(frozen=True, slots=True)
class KernelRead:
    """What a pass read of one VNI's entries, with the kernel monitor's count of changes
    before the read began, and when it began."""

    seen: KernelVni
    events: int
    at: float


def still_current(last: KernelRead | None, events: int | None, now: float, max_age: float) -> bool:
    """Whether ``last`` is still what the kernel holds: the monitor runs (``events``, its
    count now; None: it does not), has seen no change since before that read (its lines come
    after the change, so a change during the read counts too), and the read is younger than
    ``max_age`` (a line the monitor has not shown yet is caught by the next read)."""
    return (last is not None and events is not None and last.events == events
            and now - last.at < max_age)  # fmt: skip


class EvpnReconciler:
    name = "evpn"

    def __init__(
        self,
        settings: EvpnSettings,
        ovn: Cell[OvnState | None],
        kernel: KernelEvpn,
        ovs: LocalOvs,
        localnet: LocalnetWriter,
        clock: Callable[[], float] = time.monotonic,
        monitor: bool = True,
        controller: OvnController | None = None,
    ) -> None:
        self.settings = settings
        self.ovn = ovn
        self.kernel = kernel
        self.ovs = ovs
        self.localnet = localnet
        self.clock = clock
        #: OVN 25.09+: the host side of OVN's own EVPN
        self.native = (NativeHost(NativeSettings(settings.local_ip, settings.port, settings.mtu,
                                                 settings.control_port, settings.names_required),
                                  kernel, ovs, controller or OvnController("/run/ovn"))
                       if settings.ovn_native else None)  # fmt: skip
        #: the wired VNIs, for the ARP/ND answers (a pipeline of their own: the agent runs
        #: ``answers`` beside this one)
        self.wiring: Cell[tuple[Wiring, ...]] = Cell("evpn-wiring", ())
        self.answers = EvpnAnswers(self.wiring, kernel, ovs, settings.check_s, clock)
        self.kernel_changed = Signal("kernel-evpn")
        self.watches: tuple[Signal, ...] = (ovn, self.kernel_changed)
        self.io = Worker(self.name)
        self.intent = EvpnIntent()
        self.last = PassResult()
        self.written_total = 0
        self._monitor = (KernelMonitor(self.kernel_changed.notify,
                                       self.answers.neigh_changed.notify, self._device_names,
                                       self._bridge_names, self.answers.answered,
                                       self.answers.touch)
                         if monitor else None)  # fmt: skip
        self._monitor_started = False
        #: a second thread of the pass: two reads at once (their commands run side by side)
        self._aside = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ovn-frr-evpn-read")
        #: OVS bridge -> when this pass last made or repaired it (:attr:`Wiring.epoch`: from
        #: one counter, never reused, so a bridge made again is never taken for the old one)
        self._epochs: dict[str, int] = {}
        self._epoch = itertools.count(1)
        #: VNI -> its wiring as the last pass that served it found it (worker thread only)
        self._wired: dict[int, Wiring] = {}
        self._teardown_checked = False
        #: VNI -> its entries as the last pass read them (worker thread only): see :meth:`_seen`
        self._reads: dict[int, KernelRead] = {}
        #: the switches the intent was made of; the intent and the kernel monitor's count the
        #: last pass was made for, and when the next check is due without a change
        self._switches: Mapping[str, LogicalSwitch] | None = None
        self._passed: EvpnIntent | None = None
        self._events = -1
        self._due: float | None = None

    def _device_names(self) -> frozenset[str]:
        return frozenset(n for sw in self.intent.switches for n in sw.devices.kernel())

    def _bridge_names(self) -> frozenset[str]:
        return frozenset(sw.devices.bridge for sw in self.intent.switches)

    async def step(self) -> float | None:
        state = self.ovn.value
        if state is None:
            return None  # nothing known yet: what is in place stays
        # the intent is the switches' alone: a change elsewhere (a NAT, a router) costs a
        # comparison here, and no pass (it must not take CPU from the announcement it is)
        if self._switches is None or state.switches != self._switches:
            # on the pipeline's thread: 10k ports of a switch are ~0.1 s the loop would wait
            t0 = self.clock()
            intent = await self.io(evpn_intent, state)
            log.debug("evpn_intent ms=%.0f", (self.clock() - t0) * 1e3)
            for line in sorted(set(intent.problems) - set(self.intent.problems)):
                log.warning("evpn_intent_problem %s", line)
            self.intent, self._switches = intent, state.switches
        events = self._monitor.events if self._monitor is not None else 0
        quiet = (self.intent is self._passed and events == self._events
                 and self._due is not None and self.clock() < self._due)  # fmt: skip
        if quiet:  # nothing it serves changed, in OVN or in the kernel, and no check is due
            return self._due
        # OVN 25.09+ carries EVPN itself: the pass is its host side (evpn_native)
        native = self.native
        if not self.settings.enabled:
            if not self._teardown_checked:  # what an earlier run built goes (once it did)
                self.last = await (self.io(native.teardown, self.intent) if native
                                   else self.io(self._teardown))  # fmt: skip
                self._teardown_checked = True
                self.wiring.publish(())
            return None
        if self._monitor is not None and not self._monitor_started:
            self._monitor_started = True
            await self._monitor.start()
        intent = self.intent
        self.last = await (self.io(native.run, intent, True) if native
                           else self.io(self._pass, intent))  # fmt: skip
        self._passed, self._events = intent, events  # (after a pass that did not fail)
        self.written_total += self.last.written
        self.wiring.publish(self.last.wiring)
        # ovn-controller's patch port to ovn-frr's own bridge
        waiting = native is None and any(v.wiring is None for v in self.last.vnis)
        self._due = self.clock() + (
            min(0.5, self.settings.check_s) if waiting else self.settings.check_s
        )
        return self._due

    # --- one pass, on the worker thread -------------------------------------------------------

    def _teardown(self) -> PassResult:
        """With EVPN off: remove whatever ovn-frr built before (only if the kernel shows any
        of it; a node without EVPN never needs its OVS)."""
        links = self.kernel.links()
        if not self.kernel.owned(links):
            return PassResult()
        return self._pass(EvpnIntent(), links)

    def _pass(self, intent: EvpnIntent, links: dict[str, Link] | None = None) -> PassResult:
        t0 = self.clock()
        ovs_read = self._aside.submit(self.ovs.state)
        links = self.kernel.links() if links is None else links
        owned = self.kernel.owned(links)
        t1 = self.clock()
        ovs = ovs_read.result()
        t2 = self.clock()
        views: list[VniView] = []
        problems: list[str] = []
        written = 0
        changes: list[str] = []
        #: the mappings of ovn-frr's localnet networks that stay
        mappings: dict[str, str] = {}
        for sw in intent.switches:
            # one VNI's failure is its own: the others and the clean-up below go on
            try:
                result = self._vni(sw, links, owned.get(sw.vni, []), ovs, changes)
            except (OSError, OvnError) as exc:
                log.error("evpn_vni_failed vni=%d error=%s", sw.vni, exc)
                result = [f"VNI {sw.vni} (switch {sw.switch}): {exc}"]
            if isinstance(result, VniView):
                written += result.written
                mappings[sw.network] = sw.devices.ovs_bridge
                views.append(result)
                if result.wiring is None:
                    self._wired.pop(sw.vni, None)
                else:
                    self._wired[sw.vni] = result.wiring
                continue
            # its answers go on with the wiring it had (an entry that cannot be written, say,
            # must not freeze the answers of the remote IPs)
            problems += result
            # a VNI that fails keeps its mapping: its data path is not taken down for an
            # error (only when the VNI is no longer wanted)
            if sw.network in ovs.mappings:
                mappings[sw.network] = ovs.mappings[sw.network]
        wanted = {sw.vni for sw in intent.switches}
        self._wired = {v: w for v, w in self._wired.items() if v in wanted}
        self._reads = {v: r for v, r in self._reads.items() if v in wanted}
        for vni, devs in owned.items():
            if vni not in wanted:
                self.kernel.remove(vni, devs)
                changes.append(f"removed VNI {vni} devices")
        for vni, bridge in ovs.bridges.items():
            if vni not in wanted:
                self.ovs.remove_bridge(bridge)
                self._epochs.pop(bridge, None)
                changes.append(f"removed ovs bridge {bridge}")
        now = self.ovs.mappings()  # read again: just before writing
        merged = {n: b for n, b in now.items() if not n.startswith(LOCALNET)} | mappings
        if merged != now:
            self.ovs.set_mappings(merged)
        for stale in intent.stale:
            self.localnet.remove(stale.switch_uuid, stale.port)
        log.debug("evpn_pass ms=%.0f links=%.0f ovs=%.0f vnis=%.0f", (self.clock() - t0) * 1e3,
                  (t1 - t0) * 1e3, (t2 - t1) * 1e3, (self.clock() - t2) * 1e3)  # fmt: skip
        return PassResult(tuple(views), tuple(problems), written, tuple(changes),
                          tuple(w for _, w in sorted(self._wired.items())))  # fmt: skip

    def _vni(
        self,
        sw: EvpnSwitch,
        links: dict[str, Link],
        mine: list[Link],
        ovs: OvsState,
        changes: list[str],
    ) -> VniView | list[str]:
        """One VNI served (its view), or why it cannot be (problem lines)."""
        s = self.settings
        d = sw.devices
        spec = VniSpec(sw.vni, d, s.local_ip, s.port, s.mtu)
        clash = [
            f"VNI {sw.vni} (switch {sw.switch}): {c}" for c in self.kernel.problems(spec, links)
        ]
        if d.ovs_bridge in ovs.ports and ovs.bridges.get(sw.vni) != d.ovs_bridge:
            clash.append(f"VNI {sw.vni} (switch {sw.switch}): OVS bridge {d.ovs_bridge} exists "
                         "and is not ovn-frr's")  # fmt: skip
        if self.ovs.br_int not in ovs.ports:
            clash.append(f"VNI {sw.vni}: no integration bridge {self.ovs.br_int} in the local "
                         "OVS yet")  # fmt: skip
        if clash:
            return clash
        before = len(links)
        links = remove_strays(self.kernel, sw.vni, d, links, mine, changes)
        stray = len(links) != before
        made = self.kernel.ensure(spec, links, userspace=ovs.datapath_type == "netdev")
        changes += made
        if (d.ovs_port not in ovs.ports.get(d.ovs_bridge, ())
                or ovs.bridges.get(sw.vni) != d.ovs_bridge
                or ovs.datapath_types.get(d.ovs_bridge, "") != ovs.datapath_type):  # fmt: skip
            self.ovs.ensure_bridge(sw.vni, d.ovs_bridge, d.ovs_port, ovs.datapath_type)
            # a new or repaired bridge: its flow table is sent in full again
            self._epochs[d.ovs_bridge] = next(self._epoch)
            changes.append(f"ovs bridge {d.ovs_bridge}")
        problems: list[str] = []
        if not sw.localnet_present and not self.localnet.create(sw.switch_uuid, sw.network,
                                                                sw.vni):  # fmt: skip
            problems.append(f"VNI {sw.vni} (switch {sw.switch}): a port named {sw.network} "
                            "exists on another switch: no localnet for this one")  # fmt: skip
        wiring, why = self._wiring(sw, ovs)
        t0 = self.clock()
        seen = self._seen(sw, fresh=bool(made or stray))
        t1 = self.clock()
        change = entry_change(sw, seen)
        t2 = self.clock()
        n = 0
        if change:
            self._reads.pop(sw.vni, None)  # read again next time, whatever the monitor says
            self.kernel.write(d, change)
            n = (
                len(change.add_macs)
                + len(change.del_macs)
                + len(change.add_ips)
                + len(change.del_ips)
            )
            log.info("evpn_entries vni=%d macs=+%d/-%d ips=+%d/-%d", sw.vni,
                     len(change.add_macs), len(change.del_macs), len(change.add_ips),
                     len(change.del_ips))  # fmt: skip
        log.debug("evpn_vni vni=%d read=%.0f diff=%.0f write=%.0f ms", sw.vni,
                  (t1 - t0) * 1e3, (t2 - t1) * 1e3, (self.clock() - t2) * 1e3)  # fmt: skip
        return VniView(sw, seen, wiring, tuple(problems) + why, n)

    def _seen(self, sw: EvpnSwitch, fresh: bool) -> KernelVni:
        """``sw``'s entries in the kernel: read (FDB and neighbours side by side), or as the
        last pass read them, if that read is younger than the check interval and the kernel
        monitor has seen no line about the VNI's devices (nor lost any) since it began. 10k
        local entries are ~0.1 s of reads on the path from OVN to the fabric; the periodic
        pass always reads, and a pass that wrote reads again next time."""
        now = self.clock()
        monitor = self._monitor
        events = monitor.events if monitor is not None and monitor.running else None
        last = self._reads.get(sw.vni)
        if not fresh and last is not None and still_current(last, events, now,
                                                            self.settings.check_s):  # fmt: skip
            return last.seen
        d = sw.devices
        neighbours = self._aside.submit(self.kernel.read_neighbours, d.bridge)
        fdb = self.kernel.read_fdb(d)  # 10k remote MACs: 20k entries, the longer read
        local_ips, remote_ips = neighbours.result()
        seen = dataclasses.replace(fdb, local_ips=local_ips, remote_ips=remote_ips)
        if events is not None:
            self._reads[sw.vni] = KernelRead(seen, events, now)
        return seen

    def _wiring(self, sw: EvpnSwitch, ovs: OvsState) -> tuple[Wiring | None, tuple[str, ...]]:
        """What the answers need of ``sw``'s OVS bridge, or why it is not there yet."""
        d = sw.devices
        ports = ovs.ports.get(d.ovs_bridge, ())
        patch = [ovs.ofports[p] for p in ports if p.startswith("patch-") and p in ovs.ofports]
        if not patch or d.ovs_port not in ovs.ofports:
            why = (f"VNI {sw.vni}: ovn-controller has not patched {d.ovs_bridge} to the "
                   f"integration bridge yet (localnet {sw.network})")  # fmt: skip
            return None, (why,)
        return Wiring(sw.vni, d.bridge, d.ovs_bridge, patch[0], ovs.ofports[d.ovs_port],
                      self._epochs.get(d.ovs_bridge, 0)), ()  # fmt: skip

    # --- status, metrics, trace ---------------------------------------------------------------

    def status(self, now: float) -> dict[str, Any]:
        vnis = []
        for v in self.last.vnis:
            k = v.kernel
            local = sorted(v.sw.local.items())
            vnis.append(
                {
                    "vni": v.sw.vni,
                    "switch": v.sw.switch,
                    "announce": "fdb,ip" if v.sw.ip else "fdb",
                    "devices": {
                        "bridge": v.sw.devices.bridge,
                        "vxlan": v.sw.devices.vxlan,
                        "advertise": v.sw.devices.advertise,
                        "ovs_bridge": None if v.ovn is not None else v.sw.devices.ovs_bridge,
                    },
                    "wired": v.wiring is not None,
                    # OVN 25.09+: what ovn-controller says it learned (evpn/* commands)
                    **({"ovn": dict(v.ovn)} if v.ovn is not None else {}),
                    "local": [
                        {"mac": m, "ips": [str(i) for i in ips], "port": v.sw.owners.get(m, "")}
                        for m, ips in local[:LIST_LIMIT]
                    ],
                    "local_total": len(local),
                    "remote_macs": [
                        {"mac": m, "vtep": t} for m, t in sorted(k.remote_macs.items())[:LIST_LIMIT]
                    ],
                    "remote_macs_total": len(k.remote_macs),
                    "remote_ips": [
                        {"ip": str(i), "mac": m}
                        for i, m in sorted(k.remote_ips.items(), key=lambda x: str(x[0]))[
                            :LIST_LIMIT
                        ]
                    ],
                    "remote_ips_total": len(k.remote_ips),
                    "vteps": sorted(k.vteps),
                    "responder_flows": a.flows if (a := self.answers.last.get(v.sw.vni)) else 0,
                }
            )
        return {
            "evpn": {
                "enabled": self.settings.enabled,
                # who carries the packets: OVN 25.09+ itself, or ovn-frr's own path
                "data_path": "ovn" if self.settings.ovn_native else "ovn-frr",
                "ovn_native": self.settings.ovn_native,
                "vtep": self.settings.local_ip,
                "vnis": vnis,
                "entries_written": self.written_total,
                "intent_problems": list(self.intent.problems),
                "last_changes": list(self.last.device_changes),
            }
        }

    def problems(self, now: float) -> list[str]:
        out = list(self.intent.problems) + list(self.last.problems)
        if not self.settings.enabled and self.intent.switches:
            out += [
                f"switch {sw.switch}: dynamic-routing-vni={sw.vni} but no BGP neighbor "
                "carries l2vpn-evpn (EVPN is off on this node)"
                for sw in self.intent.switches
            ]
        for v in self.last.vnis:
            out += list(v.problems)
        return out

    def samples(self) -> Iterable[Sample]:
        for v in self.last.vnis:
            labels = (("vni", str(v.sw.vni)),)
            yield Sample(
                "ovnfrr_evpn_local_macs",
                "gauge",
                "Local MACs announced (type-2)",
                len(v.sw.local),
                labels,
            )
            yield Sample(
                "ovnfrr_evpn_local_ips",
                "gauge",
                "Local IPs announced (type-2 MAC+IP)",
                sum(len(i) for i in v.sw.local.values()),
                labels,
            )
            yield Sample(
                "ovnfrr_evpn_remote_macs",
                "gauge",
                "Remote MACs zebra installed",
                len(v.kernel.remote_macs),
                labels,
            )
            yield Sample(
                "ovnfrr_evpn_remote_ips",
                "gauge",
                "Remote IPs zebra installed (answered in OVS)",
                len(v.kernel.remote_ips),
                labels,
            )
            yield Sample(
                "ovnfrr_evpn_vteps", "gauge", "Remote VTEPs (type-3)", len(v.kernel.vteps), labels
            )
        yield Sample(
            "ovnfrr_evpn_entries_written",
            "counter",
            "FDB and neighbour entries written or deleted",
            self.written_total,
        )

    async def trace(self, prefix: Network) -> TracePart:
        if prefix.prefixlen != prefix.max_prefixlen:
            return TracePart()
        ip = prefix.network_address
        story: list[str] = []
        doc: list[dict[str, Any]] = []
        for v in self.last.vnis:
            for mac, ips in v.sw.local.items():
                if ip in ips:
                    story.append(
                        f"VNI {v.sw.vni}: {ip} is port {v.sw.owners.get(mac, '?')} "
                        f"({mac}) bound here -> neighbour on {v.sw.devices.bridge} "
                        "-> zebra announces type-2 MAC+IP"
                    )
                    doc.append({"vni": v.sw.vni, "side": "local", "mac": mac})
            if (rmac := v.kernel.remote_ips.get(ip)) is not None:
                vtep = v.kernel.remote_macs.get(rmac, "?")
                story.append(
                    f"VNI {v.sw.vni}: {ip} is {rmac} behind VTEP {vtep} (type-2 MAC+IP)"
                    + (
                        self._native_ip(str(ip), v.sw.vni)
                        if v.ovn is not None
                        else f" -> ARP/ND answered in {v.sw.devices.ovs_bridge}"
                    )
                )
                doc.append({"vni": v.sw.vni, "side": "remote", "mac": rmac, "vtep": vtep})
        return TracePart({"evpn": doc}, tuple(story)) if doc else TracePart()

    def trace_mac(self, text: str) -> TracePart | None:
        """One MAC's story both ways (None: ``text`` is no MAC)."""
        mac = parse_mac(text)
        if mac is None:
            return None
        story: list[str] = []
        doc: list[dict[str, Any]] = []
        for v in self.last.vnis:
            if mac in v.sw.local:
                port = v.sw.owners.get(mac, "?")
                written = mac in v.kernel.local_macs
                story.append(
                    f"VNI {v.sw.vni}: {mac} is port {port} on switch {v.sw.switch}, bound here "
                    f"-> static FDB on {v.sw.devices.advertise} "
                    f"({'written' if written else 'not yet written'}) -> zebra announces "
                    f"type-2 from VTEP {self.settings.local_ip}"
                )
                doc.append(
                    {
                        "vni": v.sw.vni,
                        "side": "local",
                        "port": port,
                        "ips": [str(i) for i in v.sw.local[mac]],
                        "written": written,
                    }
                )
            if (vtep := v.kernel.remote_macs.get(mac)) is not None:
                ips = sorted(str(i) for i, m in v.kernel.remote_ips.items() if m == mac)
                story.append(
                    f"VNI {v.sw.vni}: {mac} is remote, behind VTEP {vtep} (type-2"
                    f"{' with ' + ', '.join(ips) if ips else ''}) -> OVN reaches it"
                    + (
                        self._native_mac(mac, v.sw.vni)
                        if v.ovn is not None
                        else f" through localnet {v.sw.network} and {v.sw.devices.vxlan}"
                    )
                )
                doc.append({"vni": v.sw.vni, "side": "remote", "vtep": vtep, "ips": ips})
        if not doc:
            story.append(f"{mac} is in no EVPN switch on this chassis, local or remote")
        return TracePart({"mac": mac, "evpn": doc}, tuple(story))

    def _native_ip(self, ip: str, vni: int) -> str:
        known = self.native is not None and self.native.last_ovn.has_ip(ip, vni)
        return (" -> ARP/ND answered by ovn-controller (evpn/vtep-arp-list)" if known
                else " -> not in ovn-controller's evpn/vtep-arp-list yet")  # fmt: skip

    def _native_mac(self, mac: str, vni: int) -> str:
        known = self.native is not None and self.native.last_ovn.has_mac(mac, vni)
        return (" through OVS's vxlan port (OVN's own EVPN: in ovn-controller's "
                "evpn/vtep-fdb-list)" if known
                else ", not in ovn-controller's evpn/vtep-fdb-list yet")  # fmt: skip

    async def close(self) -> None:
        if self._monitor is not None:
            await self._monitor.close()
        self.io.close()
        self._aside.shutdown(wait=False, cancel_futures=True)
        self.localnet.close()
