"""The EVPN pipeline's pass where OVN carries EVPN itself (25.09+): ovn-frr is the host side
(:mod:`ovn_frr.core.evpn_native`). Per EVPN switch it makes the kernel devices the switch's
options name, for zebra alone; it sets the chassis' ``ovn-evpn-local-ip`` /
``ovn-evpn-vxlan-ports``; it takes down what ovn-frr's own data path of older OVN left on this
chassis (its OVS bridges and their bridge mappings: an upgrade of OVN to 25.09 hands the VNIs
over to ovn-controller; its localnet ports, NB's, are reported); and it reads, for status, the
entries zebra and ovn-controller keep in those devices and what ovn-controller says it
learned. It writes no FDB or neighbour entry: ovn-controller writes the local ones itself.

Its kernel, OVS and ovn-controller are the Protocols below (the adapters ``KernelEvpn``,
``LocalOvs`` and ``OvnController``; fakes in the unit tests).

Level-triggered like the rest of the pipeline: each pass reads the kernel, the local OVS and
ovn-controller and changes only what differs.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ovn_frr.core.evpn import (
    LOCALNET,
    OPT_ADVERTISE_IF,
    OPT_BRIDGE,
    OPT_VXLAN,
    Devices,
    EvpnIntent,
    EvpnSwitch,
    KernelVni,
    default_devices,
)
from ovn_frr.core.evpn_native import (
    CONTROL_PORT,
    OvnEvpn,
    chassis_change,
    chassis_settings,
    port_problem,
)
from ovn_frr.core.model import Address
from ovn_frr.kernel.evpn import Link, VniSpec
from ovn_frr.ovn.errors import OvnError
from ovn_frr.reconcilers.evpn_views import PassResult, VniView
from ovn_frr.vswitch.bridges import OvsState


class Kernel(Protocol):
    """The kernel's EVPN devices and entries (:class:`ovn_frr.kernel.evpn.KernelEvpn`)."""

    def links(self) -> dict[str, Link]: ...
    def owned(self, links: dict[str, Link]) -> dict[int, list[Link]]: ...
    def problems(self, spec: VniSpec, links: dict[str, Link]) -> list[str]: ...
    def ensure(
        self, spec: VniSpec, links: dict[str, Link], userspace: bool = True
    ) -> list[str]: ...
    def remove(self, vni: int, links: Sequence[Link]) -> None: ...
    def read_neighbours(
        self, bridge: str, remote_only: bool = False
    ) -> tuple[dict[Address, str], dict[Address, str]]: ...
    def read_fdb(self, d: Devices) -> KernelVni: ...


class Ovs(Protocol):
    """The local Open vSwitch (:class:`ovn_frr.vswitch.bridges.LocalOvs`)."""

    def state(self) -> OvsState: ...
    def update_external_ids(self, put: Mapping[str, str], remove: Sequence[str]) -> None: ...
    def remove_bridge(self, bridge: str) -> None: ...
    def set_mappings(self, mappings: Mapping[str, str]) -> None: ...


class Controller(Protocol):
    """The local ovn-controller (:class:`ovn_frr.vswitch.controller.OvnController`)."""

    def evpn(self) -> OvnEvpn: ...


log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class NativeSettings:
    local_ip: str
    #: ``[evpn] udp_port``: the port OVS's vxlan ports listen on (``ovn-evpn-vxlan-ports``)
    port: int
    mtu: int
    #: the kernel VXLAN devices' port: one nothing sends to
    control_port: int = CONTROL_PORT
    #: OVN 26.03+: a switch names its devices itself (no defaults)
    names_required: bool = False


def remove_strays(
    kernel: Kernel, vni: int, d: Devices, links: dict[str, Link], mine: list[Link],
    changes: list[str],
) -> dict[str, Link]:  # fmt: skip
    """Remove ``vni``'s devices (``mine``) under names it no longer has (a renamed bridge,
    say); returns ``links`` without them."""
    stray = [x for x in mine if x.name not in (*d.kernel(), d.ovs_port)]
    if not stray:
        return links
    kernel.remove(vni, stray)
    changes.append(f"removed {', '.join(x.name for x in stray)}")
    return {n: x for n, x in links.items() if x not in stray}


def _default(sw: EvpnSwitch, option: str) -> str:
    d = sw.devices
    return {OPT_BRIDGE: d.bridge, OPT_VXLAN: d.vxlan, OPT_ADVERTISE_IF: d.advertise}[option]


class NativeHost:
    """One pass of the host side, on the EVPN pipeline's worker thread."""

    def __init__(
        self,
        settings: NativeSettings,
        kernel: Kernel,
        ovs: Ovs,
        controller: Controller,
    ) -> None:
        self.settings = settings
        self.kernel = kernel
        self.ovs = ovs
        self.controller = controller
        #: what ovn-controller said at the last pass (trace)
        self.last_ovn = OvnEvpn()

    def run(self, intent: EvpnIntent, active: bool) -> PassResult:
        """Serve ``intent``'s switches (``active``: EVPN is on), or take ovn-frr's part down."""
        s = self.settings
        links = self.kernel.links()
        owned = self.kernel.owned(links)
        problems: list[str] = []
        changes: list[str] = []
        switches = intent.switches if active else ()
        ovs = self.ovs.state()  # one read: the chassis settings and the own path's leftovers
        # the chassis settings first: without them ovn-controller makes no vxlan port
        want = chassis_settings(s.local_ip, s.port) if active else None
        change = chassis_change(ovs.external_ids, want)
        if change:
            self.ovs.update_external_ids(change.set, change.remove)
            changes.append("chassis " + ", ".join(
                [f"{k}={v}" for k, v in sorted(change.set.items())]
                + [f"-{k}" for k in change.remove]))  # fmt: skip
        problems += change.problems
        if active and (why := port_problem(s.port)):
            problems.append(why)
        ovn = self.controller.evpn() if switches else OvnEvpn()
        self.last_ovn = ovn
        if ovn.error:
            problems.append(f"ovn-controller's EVPN state could not be read: {ovn.error}")
        views: list[VniView] = []
        for sw in switches:
            try:
                view = self._vni(sw, links, owned.get(sw.vni, []), ovn, changes)
            except (OSError, OvnError) as exc:
                log.error("evpn_vni_failed vni=%d error=%s", sw.vni, exc)
                problems.append(f"VNI {sw.vni} (switch {sw.switch}): {exc}")
                continue
            if isinstance(view, VniView):
                views.append(view)
            else:
                problems += view
        wanted = {sw.vni for sw in switches}
        for vni, devs in owned.items():
            if vni not in wanted:
                self.kernel.remove(vni, devs)
                changes.append(f"removed VNI {vni} devices")
        self._drop_own_path(intent, ovs, changes, problems)
        if changes:
            log.info("evpn_native_changes %s", "; ".join(changes))
        return PassResult(tuple(views), tuple(problems), 0, tuple(changes))

    def teardown(self, intent: EvpnIntent) -> PassResult:
        """EVPN off: remove what ovn-frr made on this chassis (a node whose kernel holds none
        of ovn-frr's devices and whose OVS cannot be asked has nothing to remove)."""
        try:
            return self.run(intent, active=False)
        except OSError as exc:
            if self.kernel.owned(self.kernel.links()):
                raise
            log.debug("evpn_native_teardown_skipped error=%s", exc)
            return PassResult()

    def _vni(
        self, sw: EvpnSwitch, links: dict[str, Link], mine: list[Link], ovn: OvnEvpn,
        changes: list[str],
    ) -> VniView | list[str]:  # fmt: skip
        s = self.settings
        d = sw.devices
        if s.names_required and sw.unnamed:
            # OVN 26.03 leaves out each device the switch does not name: nothing is made
            return [f"switch {sw.switch}: OVN 26.03 serves an EVPN switch only with its "
                    f"devices named, and {', '.join(sw.unnamed)} is not set (OVN 25.09's "
                    f"name would be {', '.join(_default(sw, o) for o in sw.unnamed)})"]  # fmt: skip
        notes: list[str] = []
        if not s.names_required:
            # OVN 25.09 uses br-N, vxlan-N, lo-N whatever the options say: those are made
            named = default_devices(sw.vni)
            if d.kernel() != named.kernel():
                notes.append(f"switch {sw.switch}: OVN 25.09 names the devices "
                             f"{', '.join(named.kernel())} itself (the switch's "
                             "dynamic-routing-*-ifname options need OVN 26.03): those are "
                             "made")  # fmt: skip
                d = named
                sw = dataclasses.replace(sw, devices=named)
            if sw.ip:
                notes.append(f"switch {sw.switch}: OVN 25.09 announces a switch's MACs only "
                             "with dynamic-routing-redistribute=fdb exactly (fdb,ip needs OVN "
                             "26.03): this one announces nothing")  # fmt: skip
        spec = VniSpec(sw.vni, d, s.local_ip, s.control_port, s.mtu)
        clash = [f"VNI {sw.vni} (switch {sw.switch}): {c}"
                 for c in self.kernel.problems(spec, links)]  # fmt: skip
        if clash:
            return clash
        links = remove_strays(self.kernel, sw.vni, d, links, mine, changes)
        # the advertise device is a veth (this kernel has no dummy): its other end stays out
        # of OVS, so OVS's checksum needs do not apply
        changes += self.kernel.ensure(spec, links, userspace=False)
        local_ips, remote_ips = self.kernel.read_neighbours(d.bridge)
        seen = dataclasses.replace(self.kernel.read_fdb(d), local_ips=local_ips,
                                   remote_ips=remote_ips)  # fmt: skip
        return VniView(sw, seen, None, tuple(notes), ovn=ovn.for_vni(sw.vni))

    def _drop_own_path(
        self, intent: EvpnIntent, state: OvsState, changes: list[str], problems: list[str]
    ) -> None:
        """What ovn-frr's own data path (OVN < 25.09) left on this chassis: its OVS bridges
        and their mappings (OVN's own data path needs neither). Its localnet ports stay: they
        are NB's, shared by every chassis, and one still on older OVN uses its own (each is
        reported here, to be removed once no chassis is). A failure is a problem of this
        pass, not its end."""
        try:
            for bridge in sorted(state.bridges.values()):
                self.ovs.remove_bridge(bridge)
                changes.append(f"removed ovs bridge {bridge}")
            kept = {n: b for n, b in state.mappings.items() if not n.startswith(LOCALNET)}
            if kept != dict(state.mappings):
                self.ovs.set_mappings(kept)
                changes.append("removed ovn-frr's bridge mappings")
        except OSError as exc:
            problems.append(f"ovn-frr's own EVPN path could not be removed from OVS: {exc}")
        ports = [(x.switch_uuid, x.port) for x in intent.stale]
        ports += [(sw.switch_uuid, sw.network) for sw in intent.switches if sw.localnet_present]
        problems += [f"localnet port {port} of ovn-frr's own EVPN path (OVN < 25.09) is still "
                     "in NB: remove it once no chassis runs OVN older than 25.09"
                     for _uuid, port in ports]  # fmt: skip
