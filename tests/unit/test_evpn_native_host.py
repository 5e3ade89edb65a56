"""The host side of OVN's own EVPN, one pass after another, against fakes of the kernel, the
local OVS and ovn-controller (the Protocols of ovn_frr.reconcilers.evpn_native)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ovn_frr.core.evpn import Devices, EvpnIntent, KernelVni, evpn_intent
from ovn_frr.core.evpn_native import CHASSIS_OWNER, LOCAL_IP, VXLAN_PORTS, OvnEvpn
from ovn_frr.core.model import Address
from ovn_frr.kernel.evpn import ALIAS, Link, VniSpec
from ovn_frr.reconcilers.evpn_native import NativeHost, NativeSettings
from ovn_frr.vswitch.bridges import OvsState
from tests.unit.test_evpn import port, state, switch

NAMES = {"dynamic-routing-bridge-ifname": "br-100", "dynamic-routing-vxlan-ifname": "vxlan-100",
         "dynamic-routing-advertise-ifname": "lo-100"}  # fmt: skip


@dataclass
class FakeKernel:
    links_: dict[str, Link] = field(default_factory=dict)
    made: list[int] = field(default_factory=list)

    def links(self) -> dict[str, Link]:
        return dict(self.links_)

    def owned(self, links: dict[str, Link]) -> dict[int, list[Link]]:
        out: dict[int, list[Link]] = {}
        for x in links.values():
            if x.vni is not None:
                out.setdefault(x.vni, []).append(x)
        return out

    def problems(self, spec: VniSpec, links: dict[str, Link]) -> list[str]:
        return []

    def ensure(self, spec: VniSpec, links: dict[str, Link], userspace: bool = True) -> list[str]:
        d = spec.devices
        want = {n: Link(n, k, f"{ALIAS}{spec.vni}", "", True, spec.mtu,
                        (spec.vni, spec.local_ip, spec.port, False) if k == "vxlan" else None)
                for n, k in ((d.bridge, "bridge"), (d.vxlan, "vxlan"), (d.advertise, "veth"),
                             (d.ovs_port, "veth"))}  # fmt: skip
        if all(self.links_.get(n) == x for n, x in want.items()):
            return []
        self.links_.update(want)
        self.made.append(spec.port)
        return [f"add {d.bridge}"]

    def remove(self, vni: int, links: Sequence[Link]) -> None:
        for x in links:
            self.links_.pop(x.name, None)

    def read_neighbours(
        self, bridge: str, remote_only: bool = False
    ) -> tuple[dict[Address, str], dict[Address, str]]:
        return {}, {}

    def read_fdb(self, d: Devices) -> KernelVni:
        return KernelVni(vteps=frozenset({"192.0.2.102"}))


@dataclass
class FakeOvs:
    ids: dict[str, str] = field(default_factory=dict)
    bridges: dict[int, str] = field(default_factory=dict)
    mappings: dict[str, str] = field(default_factory=dict)

    def state(self) -> OvsState:
        return OvsState(dict(self.bridges), mappings=dict(self.mappings),
                        external_ids=dict(self.ids))  # fmt: skip

    def update_external_ids(self, put: Mapping[str, str], remove: Sequence[str]) -> None:
        self.ids.update(put)
        for k in remove:
            self.ids.pop(k, None)

    def remove_bridge(self, bridge: str) -> None:
        self.bridges = {v: b for v, b in self.bridges.items() if b != bridge}

    def set_mappings(self, mappings: Mapping[str, str]) -> None:
        self.mappings = dict(mappings)


@dataclass
class FakeController:
    said: OvnEvpn = field(default_factory=lambda: OvnEvpn((("192.0.2.102", 4789, 100),)))

    def evpn(self) -> OvnEvpn:
        return self.said


def intent(**other: str) -> EvpnIntent:
    sw = switch("ls-evpn", {"dynamic-routing-vni": "100", **other},
                port("vm1", "0a:00:00:00:01:01", "10.100.0.11"),
                port("ovnfrr-evpn-100", "", type="localnet"))  # fmt: skip
    return evpn_intent(state(sw))


def host(names_required: bool = True) -> tuple[NativeHost, FakeKernel, FakeOvs]:
    kernel, ovs = (
        FakeKernel(),
        FakeOvs(
            bridges={100: "br-ev100"}, mappings={"ovnfrr-evpn-100": "br-ev100", "phys": "br-ex"}
        ),
    )
    settings = NativeSettings("192.0.2.1", 4789, 1450, names_required=names_required)
    return NativeHost(settings, kernel, ovs, FakeController()), kernel, ovs


def test_a_pass_builds_the_host_side_and_the_next_changes_nothing() -> None:
    h, kernel, ovs = host()
    first = h.run(intent(**NAMES), active=True)
    assert kernel.made == [60000]  # the VXLAN device on the control port
    assert ovs.ids == {LOCAL_IP: "192.0.2.1", VXLAN_PORTS: "4789",
                       CHASSIS_OWNER: f"{LOCAL_IP},{VXLAN_PORTS}"}  # fmt: skip
    assert ovs.bridges == {} and ovs.mappings == {"phys": "br-ex"}  # the own path's, gone
    (view,) = first.vnis
    assert view.ovn == {"remote_vteps": ["192.0.2.102:4789"], "remote_macs": 0, "remote_ips": 0}
    # the localnet port is NB's (other chassis may use it): reported, not removed
    assert any("localnet port ovnfrr-evpn-100" in p for p in first.problems)
    second = h.run(intent(**NAMES), active=True)
    assert second.device_changes == () and kernel.made == [60000]


def test_evpn_off_takes_only_ovn_frrs_part_down() -> None:
    h, kernel, ovs = host()
    h.run(intent(**NAMES), active=True)
    ovs.ids["system-id"] = "node1"
    h.teardown(intent(**NAMES))
    assert kernel.links_ == {} and ovs.ids == {"system-id": "node1"}


def test_ovn_26_03_needs_the_devices_named() -> None:
    h, kernel, _ovs = host(names_required=True)
    result = h.run(intent(), active=True)
    assert result.vnis == () and kernel.made == []
    assert any("dynamic-routing-bridge-ifname" in p for p in result.problems)


def test_ovn_25_09_makes_its_own_names_and_says_what_it_ignores() -> None:
    h, kernel, _ovs = host(names_required=False)
    result = h.run(intent(**{"dynamic-routing-bridge-ifname": "brx",
                             "dynamic-routing-redistribute": "fdb,ip"}), active=True)  # fmt: skip
    (view,) = result.vnis
    assert view.sw.devices.bridge == "br-100" and "br-100" in kernel.links_
    assert any("OVN 25.09 names the devices" in p for p in view.problems)
    assert any("fdb,ip needs OVN 26.03" in p for p in view.problems)
