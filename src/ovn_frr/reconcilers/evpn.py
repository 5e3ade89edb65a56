"""The EVPN pipeline: OVN's EVPN switches -> the kernel and OVS data path, and the local
MACs/IPs zebra announces; the remote VTEPs, MACs and IPs zebra installed -> status and the
ARP/ND answers in OVS.

Each pass is level-triggered: it reads what the kernel, the local OVS and NB hold (devices,
FDB and neighbour entries, bridges and mappings, the localnet port) and changes only what
differs from the intent (:mod:`ovn_frr.core.evpn`). An OVN change, a kernel FDB or
neighbour change (``bridge monitor``/``ip monitor``) or the check interval wakes it. A restart
of the agent or of FRR changes nothing that is in place: no type-2 is withdrawn and
announced again for a port that did not change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ovn_frr.core.evpn import (
    LOCALNET,
    EvpnIntent,
    EvpnSwitch,
    KernelVni,
    entry_change,
    evpn_intent,
    parse_mac,
    responder_flows,
)
from ovn_frr.core.model import Network
from ovn_frr.core.ovn import OvnState
from ovn_frr.kernel.evpn import KernelEvpn, VniSpec
from ovn_frr.ovn.localnet import LocalnetWriter
from ovn_frr.reconcilers.base import LIST_LIMIT, Cell, Sample, Signal, TracePart, Worker
from ovn_frr.vswitch.bridges import LocalOvs, OvsState

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EvpnSettings:
    #: False: no neighbor carries l2vpn-evpn; EVPN switches are reported, nothing is built
    enabled: bool
    local_ip: str
    port: int = 4789
    mtu: int = 1450
    check_s: float = 2.0


@dataclass(frozen=True, slots=True)
class VniView:
    """One VNI as the last pass left it (status, metrics, trace)."""

    sw: EvpnSwitch
    kernel: KernelVni
    #: the localnet patch port is there and the flow table is ovn-frr's
    wired: bool
    flows: int
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PassResult:
    vnis: tuple[VniView, ...] = ()
    problems: tuple[str, ...] = ()
    #: entries written in this pass (fdb + neigh adds and deletes)
    written: int = 0
    device_changes: tuple[str, ...] = field(default_factory=tuple)


class KernelMonitor:
    """``bridge monitor fdb`` and ``ip monitor neigh``: any line wakes the pipeline."""

    COMMANDS = (("bridge", "monitor", "fdb"), ("ip", "monitor", "neigh"))

    def __init__(self, notify: Callable[[], None]) -> None:
        self._notify = notify
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
        while await proc.stdout.readline():
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
    ) -> None:
        self.settings = settings
        self.ovn = ovn
        self.kernel = kernel
        self.ovs = ovs
        self.localnet = localnet
        self.clock = clock
        self.kernel_changed = Signal("kernel-evpn")
        self.watches: tuple[Signal, ...] = (ovn, self.kernel_changed)
        self.io = Worker(self.name)
        self.intent = EvpnIntent()
        self.last = PassResult()
        self.written_total = 0
        self._monitor = KernelMonitor(self.kernel_changed.notify) if monitor else None
        self._monitor_started = False

    async def step(self) -> float | None:
        state = self.ovn.value
        if state is None:
            return None  # nothing known yet: what is in place stays
        self.intent = evpn_intent(state)
        if not self.settings.enabled:
            return None
        if self._monitor is not None and not self._monitor_started:
            self._monitor_started = True
            await self._monitor.start()
        self.last = await self.io(self._pass, self.intent)
        self.written_total += self.last.written
        waiting = any(not v.wired for v in self.last.vnis)  # for ovn-controller's patch port
        return self.clock() + (
            min(0.5, self.settings.check_s) if waiting else self.settings.check_s
        )

    # --- one pass, on the worker thread -------------------------------------------------------

    def _pass(self, intent: EvpnIntent) -> PassResult:
        s = self.settings
        links = self.kernel.links()
        owned = self.kernel.owned(links)
        ovs = self.ovs.state()
        views: list[VniView] = []
        problems: list[str] = []
        written = 0
        changes: list[str] = []
        mappings = {n: b for n, b in ovs.mappings.items() if not n.startswith(LOCALNET)}
        for sw in intent.switches:
            d = sw.devices
            spec = VniSpec(sw.vni, d, s.local_ip, s.port, s.mtu)
            clash = self.kernel.problems(spec, links)
            if clash:
                problems += [f"VNI {sw.vni} (switch {sw.switch}): {c}" for c in clash]
                continue
            changes += self.kernel.ensure(spec, links)
            if d.ovs_port not in ovs.ports.get(d.ovs_bridge, ()) or (
                ovs.bridges.get(sw.vni) != d.ovs_bridge
            ):
                self.ovs.ensure_bridge(sw.vni, d.ovs_bridge, d.ovs_port, ovs.datapath_type)
                changes.append(f"ovs bridge {d.ovs_bridge}")
            mappings[sw.network] = d.ovs_bridge
            if not sw.localnet_present:
                self.localnet.create(sw.switch_uuid, sw.network, sw.vni)
            seen = self.kernel.read(d)
            change = entry_change(sw, seen)
            if change:
                self.kernel.write(d, change)
                written += (
                    len(change.add_macs)
                    + len(change.del_macs)
                    + len(change.add_ips)
                    + len(change.del_ips)
                )
                log.info(
                    "evpn_entries vni=%d macs=+%d/-%d ips=+%d/-%d",
                    sw.vni,
                    len(change.add_macs),
                    len(change.del_macs),
                    len(change.add_ips),
                    len(change.del_ips),
                )
            wired, flows, why = self._flows(sw, ovs, seen)
            views.append(VniView(sw, seen, wired, flows, why))
        wanted = {sw.vni for sw in intent.switches}
        for vni, devs in owned.items():
            if vni not in wanted:
                self.kernel.remove(vni, devs)
                changes.append(f"removed VNI {vni} devices")
        for vni, bridge in ovs.bridges.items():
            if vni not in wanted:
                self.ovs.remove_bridge(bridge)
                changes.append(f"removed ovs bridge {bridge}")
        if mappings != ovs.mappings:
            self.ovs.set_mappings(mappings)
        for stale in intent.stale:
            self.localnet.remove(stale.switch_uuid, stale.port)
        return PassResult(tuple(views), tuple(problems), written, tuple(changes))

    def _flows(
        self, sw: EvpnSwitch, ovs: OvsState, seen: KernelVni
    ) -> tuple[bool, int, tuple[str, ...]]:
        d = sw.devices
        ports = ovs.ports.get(d.ovs_bridge, ())
        patch = [ovs.ofports[p] for p in ports if p.startswith("patch-") and p in ovs.ofports]
        if not patch or d.ovs_port not in ovs.ofports:
            why = (f"VNI {sw.vni}: ovn-controller has not patched {d.ovs_bridge} to the "
                   f"integration bridge yet (localnet {sw.network})")  # fmt: skip
            return False, 0, (why,)
        flows = responder_flows(str(patch[0]), str(ovs.ofports[d.ovs_port]), seen.remote_ips)
        self.ovs.replace_flows(d.ovs_bridge, flows)
        return True, len(flows), ()

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
                        "ovs_bridge": v.sw.devices.ovs_bridge,
                    },
                    "wired": v.wired,
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
                    "responder_flows": v.flows,
                }
            )
        return {
            "evpn": {
                "enabled": self.settings.enabled,
                "vtep": self.settings.local_ip,
                "vnis": vnis,
                "entries_written": self.written_total,
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
                    f"VNI {v.sw.vni}: {ip} is {rmac} behind VTEP {vtep} (type-2 MAC+IP) "
                    f"-> ARP/ND answered in {v.sw.devices.ovs_bridge}"
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
            if (remote := v.kernel.remote_macs.get(mac)) is not None:
                vtep = remote
                ips = sorted(str(i) for i, m in v.kernel.remote_ips.items() if m == mac)
                story.append(
                    f"VNI {v.sw.vni}: {mac} is remote, behind VTEP {vtep} (type-2"
                    f"{' with ' + ', '.join(ips) if ips else ''}) -> OVN reaches it "
                    f"through localnet {v.sw.network} and {v.sw.devices.vxlan}"
                )
                doc.append({"vni": v.sw.vni, "side": "remote", "vtep": vtep, "ips": ips})
        if not doc:
            story.append(f"{mac} is in no EVPN switch on this chassis, local or remote")
        return TracePart({"mac": mac, "evpn": doc}, tuple(story))

    async def close(self) -> None:
        if self._monitor is not None:
            await self._monitor.close()
        self.io.close()
        self.localnet.close()
