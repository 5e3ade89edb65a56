"""The kernel EVPN adapter on iproute2 output captured from a lab (FRR 8.4, iproute2 6.1)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence

from ovn_frr.core.evpn import EntryChange, default_devices
from ovn_frr.kernel.evpn import KernelEvpn, VniSpec

# bridge -j fdb show br br-100, ip -j neigh show dev br-100 (node1, trimmed); the bridge's
# dump holds its ports' entries, the VXLAN device's own (self, with dst) among them: FDB_VX
FDB_BR = [
    {"mac": "33:33:00:00:00:01", "ifname": "br-100", "flags": ["self"], "state": "permanent"},
    {"mac": "0a:00:00:00:01:01", "ifname": "lo-100", "master": "br-100", "flags": [],
     "state": "static"},
    {"mac": "c6:35:10:03:9a:67", "ifname": "lo-100", "master": "br-100", "flags": [],
     "state": "permanent"},
    {"mac": "0a:00:00:00:02:20", "ifname": "vxlan-100", "flags": ["extern_learn"],
     "master": "br-100", "state": ""},
]  # fmt: skip
FDB_VX = [
    {"mac": "0a:00:00:00:01:02", "ifname": "vxlan-100", "dst": "192.0.2.2",
     "flags": ["self", "extern_learn"], "state": ""},
    {"mac": "0a:00:00:00:02:20", "ifname": "vxlan-100", "dst": "192.0.2.102",
     "flags": ["self", "extern_learn"], "state": ""},
    {"mac": "00:00:00:00:00:00", "ifname": "vxlan-100", "dst": "192.0.2.102", "flags": ["self"],
     "state": "permanent"},
    {"mac": "00:00:00:00:00:00", "ifname": "vxlan-100", "dst": "192.0.2.2", "flags": ["self"],
     "state": "permanent"},
]  # fmt: skip
NEIGH = [
    {"dst": "10.100.0.20", "lladdr": "0a:00:00:00:02:20", "extern_learn": None,
     "state": ["NOARP"], "protocol": "zebra"},
    {"dst": "10.100.0.11", "lladdr": "0a:00:00:00:01:01", "state": ["PERMANENT"]},
    {"dst": "fd00:100::20", "lladdr": "0a:00:00:00:02:20", "extern_learn": None,
     "state": ["NOARP"], "protocol": "zebra"},
    {"dst": "10.100.0.99", "state": ["FAILED"]},
]  # fmt: skip
LINKS = [
    {"ifname": "br-100", "flags": ["UP"], "mtu": 1450, "ifalias": "ovn-frr:evpn:100",
     "linkinfo": {"info_kind": "bridge"}},
    {"ifname": "vxlan-100", "flags": ["UP"], "mtu": 1450, "ifalias": "ovn-frr:evpn:100",
     "master": "br-100", "linkinfo": {"info_kind": "vxlan", "info_data": {
         "id": 100, "local": "192.0.2.1", "port": 4789, "learning": False}}},
    {"ifname": "lo-100", "flags": ["UP"], "mtu": 1450, "ifalias": "ovn-frr:evpn:100",
     "master": "br-100", "linkinfo": {"info_kind": "veth"}},
    {"ifname": "ovs-100", "flags": ["UP"], "mtu": 1450, "ifalias": "ovn-frr:evpn:100",
     "linkinfo": {"info_kind": "veth"}},
    {"ifname": "br-7", "flags": ["UP"], "mtu": 1500, "linkinfo": {"info_kind": "bridge"}},
]  # fmt: skip


class Recorder:
    """Answers each command with captured output and keeps what was run."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], str | None]] = []

    def __call__(self, argv: Sequence[str], stdin: str | None) -> str:
        self.calls.append((list(argv), stdin))
        if argv[:5] == ["bridge", "-j", "fdb", "show", "br"]:
            return json.dumps(FDB_BR + FDB_VX)
        if argv[:3] == ["ip", "-j", "neigh"]:
            return json.dumps(NEIGH)
        if argv[:3] == ["ip", "-j", "-d"]:
            return json.dumps(LINKS)
        return ""


def kernel(rec: Recorder, tx: bool = False) -> KernelEvpn:
    return KernelEvpn(rec, tx_get=lambda _n: tx, tx_set=lambda _n, _on: None)


def test_read_tells_local_from_remote() -> None:
    rec = Recorder()
    ke, d = kernel(rec), default_devices(100)
    local_ips, remote_ips = ke.read_neighbours(d.bridge)
    k = ke.read_fdb(d)
    assert [argv[:3] for argv, _ in rec.calls] == [["ip", "-j", "neigh"], ["bridge", "-j", "fdb"]]
    assert k.local_macs == {"0a:00:00:00:01:01"}  # static on lo-100 only
    assert local_ips == {ipaddress.ip_address("10.100.0.11"): "0a:00:00:00:01:01"}
    assert k.remote_macs == {"0a:00:00:00:01:02": "192.0.2.2", "0a:00:00:00:02:20": "192.0.2.102"}
    assert k.vteps == {"192.0.2.2", "192.0.2.102"}
    assert set(remote_ips) == {ipaddress.ip_address("10.100.0.20"),
                                 ipaddress.ip_address("fd00:100::20")}  # fmt: skip


def test_devices_in_place_need_nothing_and_strangers_are_reported() -> None:
    rec = Recorder()
    k = kernel(rec)
    links = k.links()
    spec = VniSpec(100, default_devices(100), "192.0.2.1", 4789, 1450)
    assert k.ensure(spec, links) == [] and len(rec.calls) == 1  # only the read
    assert k.owned(links).keys() == {100}
    other = VniSpec(7, default_devices(7), "192.0.2.1", 4789, 1450)
    assert k.problems(other, links) == ["interface br-7 exists and is not ovn-frr's (alias '')"]


def test_a_changed_vtep_address_recreates_the_vxlan_device() -> None:
    rec = Recorder()
    k = kernel(rec)
    spec = VniSpec(100, default_devices(100), "192.0.2.9", 4789, 1450)
    done = k.ensure(spec, k.links())
    assert done[0] == "recreate vxlan-100"
    cmds = [c for c, _ in rec.calls]
    assert ["ip", "link", "del", "vxlan-100"] in cmds
    add = next(c for c in cmds if c[:4] == ["ip", "link", "add", "vxlan-100"])
    assert add[add.index("local") + 1] == "192.0.2.9" and "nolearning" in add
    assert ["bridge", "link", "set", "dev", "vxlan-100", "learning", "off", "neigh_suppress",
            "on"] in cmds  # fmt: skip


def test_write_is_two_batches_neighbours_around_the_macs() -> None:
    rec = Recorder()
    ip = ipaddress.ip_address
    change = EntryChange(add_macs=("0a:00:00:00:01:03",), del_macs=("0a:00:00:00:01:01",),
                         add_ips=((ip("10.0.0.3"), "0a:00:00:00:01:03"),),
                         del_ips=(ip("10.100.0.11"),))  # fmt: skip
    kernel(rec).write(default_devices(100), change)
    assert [(c[0], s) for c, s in rec.calls] == [
        ("ip", "neigh del 10.100.0.11 dev br-100\n"),
        ("bridge", "fdb del 0a:00:00:00:01:01 dev lo-100 master static\n"
                   "fdb replace 0a:00:00:00:01:03 dev lo-100 master static\n"),
        ("ip", "neigh replace 10.0.0.3 lladdr 0a:00:00:00:01:03 dev br-100 nud permanent\n"),
    ]  # fmt: skip
