"""OVN 25.09+'s own EVPN L2, with ovn-frr as its host side (lab.evpn on OVN >= 25.09: the sid
root's OVN 26.03). The same node config as on older OVN; OVN carries the packets in OVS (its
``ovn-evpn-4789`` vxlan port), ovn-frr makes the kernel devices zebra needs, the chassis
settings and FRR's EVPN. Against a plain FRR VTEP, real packets."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ovn_frr.lab import wait_for
from ovn_frr.lab.evpn import HOST1, SWITCH, VM1, VM2, VNI, EvpnLab, ovs_counters
from ovn_frr.lab.proc import run
from ovn_frr.versions import detect

NODE1, NODE2, VTEP1 = "192.0.2.1", "192.0.2.2", "192.0.2.102"
#: the vxlan port ovn-controller makes on br-int for ovn-evpn-vxlan-ports=4789
OVN_PORT = "ovn-evpn-4789"
pytestmark = pytest.mark.skipif(
    not detect().ovn_native_evpn,
    reason="OVN < 25.09 has no EVPN of its own (ovn-frr carries it: tests/e2e/test_evpn.py)",
)


@pytest.fixture(scope="module")
def ev() -> Iterator[EvpnLab]:
    lab = EvpnLab()
    try:
        lab.up(agents=False)
        _leftovers_of_the_own_path(lab)
        for node in ("node1", "node2"):
            lab.start_agent(node)
        lab.wait_remote("vtep1", VM1.mac, NODE1, timeout=60)
        lab.wait_remote("vtep1", VM2.mac, NODE2)
        lab.wait_remote("node1", HOST1.mac, VTEP1)
        wait_for(lambda: f"{VTEP1}:4789" in lab.vni_status("node1").get("ovn", {}).get(
            "remote_vteps", ()), timeout=30, what="ovn-controller's remote VTEP")  # fmt: skip
        yield lab
    finally:
        lab.down()


def _leftovers_of_the_own_path(ev: EvpnLab) -> None:
    """What ovn-frr's own data path (OVN < 25.09) leaves: an OVS bridge and its mapping on
    node1, the switch's localnet port in NB (an OVN upgraded to 25.09 under a running
    ovn-frr)."""
    assert ev.lab.ovn is not None
    ch = ev.lab.chassis["node1"]
    mapping = f'external_ids:ovn-bridge-mappings="ovnfrr-evpn-{VNI}:br-ev{VNI}"'
    ch.vsctl("add-br", f"br-ev{VNI}", "--", "set", "Bridge", f"br-ev{VNI}",
             "datapath_type=netdev", f"external_ids:ovn-frr-evpn={VNI}", "--", "set",
             "Open_vSwitch", ".", mapping)  # fmt: skip
    ev.lab.ovn.nbctl("lsp-add", SWITCH, f"ovnfrr-evpn-{VNI}", "--", "lsp-set-type",
                     f"ovnfrr-evpn-{VNI}", "localnet", "--", "lsp-set-addresses",
                     f"ovnfrr-evpn-{VNI}", "unknown", "--", "lsp-set-options",
                     f"ovnfrr-evpn-{VNI}", f"network_name=ovnfrr-evpn-{VNI}", "--", "set",
                     "Logical_Switch_Port", f"ovnfrr-evpn-{VNI}",
                     f"external_ids:ovn-frr\\:evpn={VNI}",
                     "external_ids:ovn-frr\\:owner=ovn-frr")  # fmt: skip


def test_type2_and_type3_both_ways(ev: EvpnLab) -> None:
    assert ev.remote_vtep_of("vtep1", VM1.mac) == NODE1
    assert ev.remote_vtep_of("vtep1", VM2.mac) == NODE2
    floods = {e["dst"] for e in ev.fdb("vtep1") if e["mac"] == "00:00:00:00:00:00"}
    assert floods >= {NODE1, NODE2}
    st = ev.status("node1")["evpn"]
    assert st["data_path"] == "ovn" and st["enabled"]
    v = ev.vni_status("node1")
    assert v["switch"] == SWITCH and v["devices"]["ovs_bridge"] is None
    assert VTEP1 in v["vteps"]  # zebra's, in the kernel
    assert f"{VTEP1}:4789" in v["ovn"]["remote_vteps"]  # ovn-controller's
    wait_for(lambda: ev.vni_status("node1")["ovn"]["remote_macs"] >= 1, timeout=30,
             what="host1's MAC in ovn-controller's FDB")  # fmt: skip
    # trace: the remote MAC's story says what ovn-controller knows of it
    story = " ".join(ev.agents["node1"].trace(HOST1.mac)["story"])
    assert "in ovn-controller's evpn/vtep-fdb-list" in story, story


def test_the_host_side_is_ovn_frrs(ev: EvpnLab) -> None:
    ns = ev.lab.netns("node1")
    vx = json.loads(run(["ip", "-j", "-d", "link", "show", f"vxlan-{VNI}"], netns=ns))[0]
    data = vx["linkinfo"]["info_data"]
    # bound to a port no VTEP sends to: OVS carries the packets on 4789
    assert data["port"] == 60000 and data["local"] == NODE1 and not data.get("learning")
    assert vx["ifalias"] == f"ovn-frr:evpn:{VNI}"
    ch = ev.lab.chassis["node1"]
    ids = ch.vsctl("get", "Open_vSwitch", ".", "external_ids")
    for kv in (f'ovn-evpn-local-ip="{NODE1}"', 'ovn-evpn-vxlan-ports="4789"',
               'ovn-frr-evpn-chassis="ovn-evpn-local-ip,ovn-evpn-vxlan-ports"'):  # fmt: skip
        assert kv in ids, ids
    assert OVN_PORT in ch.vsctl("list-ports", "br-int")


def test_what_the_own_path_left_goes_from_this_chassis(ev: EvpnLab) -> None:
    """Its OVS bridge and mapping go; its localnet port is NB's, shared with chassis that may
    still run older OVN: it stays, reported until someone removes it."""
    ch, nb = ev.lab.chassis["node1"], ev.lab.ovn
    assert nb is not None
    wait_for(lambda: f"br-ev{VNI}" not in ch.vsctl("list-br"), timeout=30,
             what="ovn-frr's OVS bridge removed")  # fmt: skip
    assert "ovnfrr-evpn" not in ch.vsctl("--if-exists", "get", "Open_vSwitch", ".",
                                         "external_ids:ovn-bridge-mappings")  # fmt: skip
    assert f"ovnfrr-evpn-{VNI}" in nb.nbctl("lsp-list", SWITCH)
    wait_for(lambda: any(f"localnet port ovnfrr-evpn-{VNI}" in p
                         for p in ev.status("node1")["agent"]["problems"]),
             timeout=30, what="the leftover localnet port reported")  # fmt: skip
    nb.nbctl("lsp-del", f"ovnfrr-evpn-{VNI}")
    wait_for(lambda: not any("localnet port" in p
                             for p in ev.status("node1")["agent"]["problems"]),
             timeout=30, what="the report gone with the port")  # fmt: skip


def test_ping_crosses_ovs_not_the_kernel_vxlan(ev: EvpnLab) -> None:
    kernel = ev.counters("node1", f"vxlan-{VNI}")
    ovs = ovs_counters(ev.lab, "node1", OVN_PORT)
    wait_for(lambda: ev.ping("vm1", HOST1.ip), timeout=30, what="vm1 -> host1")
    assert ev.ping("host1", VM1.ip, count=3)
    assert ev.ping("vm1", HOST1.ip6, count=3)
    rx, tx = ovs_counters(ev.lab, "node1", OVN_PORT)
    assert rx - ovs[0] >= 3 and tx - ovs[1] >= 3, (ovs, (rx, tx))
    assert ev.counters("node1", f"vxlan-{VNI}") == kernel, "a packet crossed the kernel VXLAN"
    # the OVN ports of both chassis, across the switch
    assert ev.ping("vm1", VM2.ip, count=2)


def test_agent_restart_changes_nothing(ev: EvpnLab) -> None:
    ns = ev.lab.netns("node1")

    def ifindex() -> int:
        return int(json.loads(run(["ip", "-j", "link", "show", f"vxlan-{VNI}"], netns=ns))[0][
            "ifindex"])  # fmt: skip

    before = ifindex()
    ev.agents["node1"].kill()  # no clean-up of any kind
    agent = ev.start_agent("node1")

    def evpn_runs() -> int:
        return int(next(r["runs"] for r in agent.status()["reconcilers"] if r["name"] == "evpn"))

    wait_for(lambda: evpn_runs() >= 2, timeout=30, what="two EVPN passes")
    assert not agent.status()["evpn"]["last_changes"], agent.status()["evpn"]
    assert ifindex() == before
    assert ev.remote_vtep_of("vtep1", VM1.mac) == NODE1
    assert ev.ping("host1", VM1.ip)
