"""EVPN L2 end to end: an OVN switch extended over VXLAN EVPN (lab.evpn), real packets."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from ovn_frr.lab import wait_for
from ovn_frr.lab.evpn import HOST1, SWITCH, VM1, VM2, VNI, EvpnLab
from ovn_frr.lab.proc import read_pid, run
from ovn_frr.versions import detect

NODE1, NODE2 = "192.0.2.1", "192.0.2.2"
pytestmark = pytest.mark.skipif(
    detect().ovn_native_evpn,
    reason="OVN >= 25.09 does EVPN L2 itself (ovn-frr builds its data path for older OVN); "
    "the host side for OVN's own EVPN is issue 32",
)


@pytest.fixture(scope="module")
def ev(newer_frr_root: str) -> Iterator[EvpnLab]:
    # tor1 runs FRR 10.7: an EVPN graceful-restart helper (FRR 8.4 and 10.3 keep only the
    # unicast routes of a restarting peer; l2vpn evpn came with FRR 10.6)
    lab = EvpnLab(tor_root=newer_frr_root)
    try:
        lab.up()
        lab.wait_remote("vtep1", VM1.mac, NODE1)
        lab.wait_remote("vtep1", VM2.mac, NODE2)
        lab.wait_remote("node1", HOST1.mac, "192.0.2.102")
        wait_for(lambda: all(lab.vni_status(n).get("wired") for n in ("node1", "node2")),
                 timeout=30, what="both chassis wired")  # fmt: skip
        yield lab
    finally:
        lab.down()


def _updates_at(lab: EvpnLab, member: str) -> int:
    """UPDATE messages ``member`` received from its one neighbor (tor1)."""
    out = json.loads(run(["vtysh", "--vty_socket", str(lab.lab.frr[member].rundir), "-c",
                          "show bgp neighbors json"], netns=lab.lab.netns(member)))  # fmt: skip
    return sum(int(n["messageStats"]["updatesRecv"]) for n in out.values())


def _sent_by_tor1(lab: EvpnLab, to: str) -> tuple[int, int]:
    """UPDATE messages tor1 sent ``to``, and the depth of its output queue toward it."""
    stats = lab.lab.frr["tor1"].show("show bgp neighbors json")[to]["messageStats"]
    return int(stats["updatesSent"]), int(stats["depthOutq"])


def test_type2_and_type3_both_ways_and_ping(ev: EvpnLab) -> None:
    # type-2 of the OVN ports at the remote VTEP, type-3 (flood entries) for both chassis
    assert ev.remote_vtep_of("vtep1", VM1.mac) == NODE1
    fdb = ev.fdb("vtep1")
    assert {e["dst"] for e in fdb if e["mac"] == "00:00:00:00:00:00"} >= {NODE1, NODE2}
    # OVN port on node1 <-> the host behind the remote VTEP, both ways, v4 and v6
    assert ev.ping("vm1", HOST1.ip, count=2)
    assert ev.ping("host1", VM1.ip, count=2)
    assert ev.ping("vm1", HOST1.ip6, count=2)
    # OVN ports on two chassis, across the switch (through the fabric: the switch's localnet)
    assert ev.ping("vm1", VM2.ip, count=2)
    assert ev.ping("vm2", VM1.ip, count=2)
    st = ev.vni_status("node1")
    assert st["switch"] == SWITCH and st["local"][0]["mac"] == VM1.mac
    assert sorted(st["vteps"]) == ["192.0.2.102", NODE2]
    assert {x["ip"] for x in st["remote_ips"]} >= {HOST1.ip, HOST1.ip6}


def test_arp_and_nd_answered_in_ovs_not_in_the_fabric(ev: EvpnLab) -> None:
    arp = f"arp_tpa={HOST1.ip}"
    got: tuple[int, int] = (-1, -1)
    for _attempt in range(3):  # a stray broadcast of someone else's may land in the window
        run(["ip", "neigh", "flush", "all"], netns=ev.lab.netns("vm1"))
        answered = ev.flow_packets("node1", arp)
        _, vx_tx = ev.counters("node1", f"vxlan-{VNI}")
        lo_rx, _ = ev.counters("node1", f"lo-{VNI}")
        assert ev.ping("vm1", HOST1.ip)
        # OVS credits flow statistics of slow-path actions a little later
        wait_for(lambda a=answered: ev.flow_packets("node1", arp) > a, timeout=10,  # type: ignore[misc]
                 what="the ARP answered by br-ev100's flow")  # fmt: skip
        # the request reached neither the kernel bridge (lo-100 took only the echo request)
        # nor the fabric (vxlan-100 sent only that)
        got = (ev.counters("node1", f"lo-{VNI}")[0] - lo_rx,
               ev.counters("node1", f"vxlan-{VNI}")[1] - vx_tx)  # fmt: skip
        if got == (1, 1):
            break
    assert got == (1, 1), f"(packets into lo-{VNI}, out of vxlan-{VNI}): {got}"
    # IPv6: the neighbour solicitation is answered the same way
    run(["ip", "-6", "neigh", "flush", "all"], netns=ev.lab.netns("vm2"))
    nd = f"nd_target={HOST1.ip6}"
    before = ev.flow_packets("node2", nd)
    assert ev.ping("vm2", HOST1.ip6)
    wait_for(lambda: ev.flow_packets("node2", nd) > before, timeout=10,
             what="the NS answered by br-ev100's flows")  # fmt: skip


def test_trace_a_mac_both_ways(ev: EvpnLab) -> None:
    local = ev.agents["node1"].trace(VM1.mac)
    assert local["evpn"][0]["side"] == "local" and local["evpn"][0]["port"] == "vm1"
    remote = ev.agents["node1"].trace(HOST1.mac)
    assert remote["evpn"][0] == {"vni": VNI, "side": "remote", "vtep": "192.0.2.102",
                                 "ips": sorted([HOST1.ip, HOST1.ip6])}  # fmt: skip


def test_bad_vni_is_a_problem_naming_the_switch(ev: EvpnLab) -> None:
    assert ev.lab.ovn is not None
    ev.lab.ovn.nbctl("ls-add", "ls-bad", "--", "set", "Logical_Switch", "ls-bad",
                     "other_config:dynamic-routing-vni=99999999")  # fmt: skip
    # the switch is in node1's share once a port of it is bound there
    ev.lab.ovn.nbctl("lsp-add", "ls-bad", "bad1")
    node1 = ev.lab.chassis["node1"]
    node1.vsctl("add-port", "br-int", "bad1", "--", "set", "Interface", "bad1",
                "type=internal", "external_ids:iface-id=bad1")  # fmt: skip

    def problem() -> bool:
        return any("switch ls-bad" in p and "dynamic-routing-vni" in p
                   for p in ev.status("node1")["agent"]["problems"])  # fmt: skip

    wait_for(problem, timeout=30, what="the bad VNI reported")
    assert ev.status("node1")["evpn"]["intent_problems"]
    assert ev.vni_status("node1")["wired"]  # the good switch is untouched
    node1.vsctl("del-port", "br-int", "bad1")
    ev.lab.ovn.nbctl("ls-del", "ls-bad")
    wait_for(lambda: not problem(), timeout=30, what="the problem cleared")


def test_a_vtep_that_withdraws_gets_no_more_bum(ev: EvpnLab) -> None:
    def vteps() -> set[str]:
        return {str(e["dst"]) for e in ev.fdb("node1") if e["mac"] == "00:00:00:00:00:00"}

    assert "192.0.2.102" in vteps()
    ns = ev.lab.netns("vtep1")
    run(["ip", "link", "set", f"vxlan-{VNI}", "down"], netns=ns)  # zebra withdraws its type-3
    wait_for(lambda: "192.0.2.102" not in vteps(), timeout=30, what="vtep1's type-3 withdrawn")
    assert "192.0.2.102" not in ev.vni_status("node1")["vteps"] or wait_for(
        lambda: "192.0.2.102" not in ev.vni_status("node1")["vteps"], timeout=10, what="status"
    )
    run(["ip", "link", "set", f"vxlan-{VNI}", "up"], netns=ns)
    wait_for(lambda: "192.0.2.102" in vteps(), timeout=30, what="vtep1's type-3 back")
    wait_for(lambda: ev.ping("vm1", HOST1.ip), timeout=30, what="ping after vtep1 is back")


def test_agent_restart_changes_nothing(ev: EvpnLab) -> None:
    updates = _updates_at(ev, "vtep1")
    ev.agents["node1"].kill()  # no clean-up of any kind
    agent = ev.start_agent("node1")
    wait_for(lambda: ev.vni_status("node1").get("wired"), timeout=30, what="agent back")

    def evpn_runs() -> int:
        return int(next(r["runs"] for r in agent.status()["reconcilers"] if r["name"] == "evpn"))

    runs = evpn_runs()  # two passes more: anything it would rewrite is written by then
    wait_for(lambda: evpn_runs() >= runs + 2, timeout=30, what="two more EVPN passes")
    assert agent.status()["evpn"]["entries_written"] == 0
    assert _updates_at(ev, "vtep1") == updates, "node1's type-2 were withdrawn or re-sent"
    assert ev.ping("host1", VM1.ip)


def test_frr_restart_withdraws_nothing(ev: EvpnLab) -> None:
    """zebra reads the entries ovn-frr left in the kernel, the agent configures bgpd again and
    writes nothing. node1 restarts gracefully (its session with tor1 says Restart, F bit) and
    tor1, an EVPN graceful-restart helper (FRR >= 10.6), keeps node1's type-2 and type-3
    while it is away and finds them unchanged when it is back: vtep1 receives no UPDATE at
    all, so no type-2 was withdrawn or announced again. (With a tor1 of FRR 8.4 or 10.3,
    whose helper keeps unicast routes only, vtep1 sees them withdrawn and back ~4 s later.)"""
    version = re.search(r"FRRouting (\d+)\.(\d+)", ev.lab.frr["tor1"].vtysh.command("show version"))
    assert version is not None and (int(version[1]), int(version[2])) >= (10, 6), version
    before = ev.status("node1")["evpn"]["entries_written"]
    node1 = str(ev.lab.link("tor1", "node1").peer_v4)
    session = ev.lab.frr["tor1"].graceful_restart(node1)
    assert (session["mode"], session["f_bit"]) == ("Restart", True), session
    updates = _updates_at(ev, "vtep1")
    vtep1 = str(ev.lab.link("tor1", "vtep1").peer_v4)
    sent, _queued = _sent_by_tor1(ev, vtep1)
    ev.lab.frr["node1"].restart()

    def back() -> bool:
        now = ev.lab.frr["tor1"].graceful_restart(node1)
        return now["connections"] > session["connections"] and bool(now["eor"].get("l2VpnEvpn"))

    wait_for(back, timeout=60, what="node1's session back at tor1, with its End-of-RIB")

    def delivered() -> bool:
        # node1's routes came before its End-of-RIB, on which tor1 swept what stayed stale
        # (none is left), and every UPDATE tor1 has sent vtep1 since (withdrawals, routes
        # sent again: none, if all went well) reached it
        table = ev.lab.frr["tor1"].vtysh.command("show bgp l2vpn evpn route json")
        stale = '"stale":true' in table.replace(" ", "")
        now, queued = _sent_by_tor1(ev, vtep1)
        return not stale and queued == 0 and now - sent == _updates_at(ev, "vtep1") - updates

    wait_for(delivered, timeout=30, what="tor1's updates to vtep1 delivered")
    assert ev.remote_vtep_of("vtep1", VM1.mac) == NODE1
    assert ev.status("node1")["evpn"]["entries_written"] == before
    wait_for(lambda: ev.ping("host1", VM1.ip), timeout=30, what="ping after FRR restart")
    assert _updates_at(ev, "vtep1") == updates, "node1's type-2 were withdrawn or re-sent"


def test_bgpd_restarted_alone_gets_ovn_frrs_config_again(ev: EvpnLab) -> None:
    """watchfrr restarting bgpd alone: zebra keeps the route-maps and prefix-lists it shares
    with bgpd, and vtysh's merged config shows them; the agent sees bgpd's own config lacking
    them (and its pid changed) and sends them again, so the underlay and EVPN routes of tor1
    are accepted and the remote host answers again."""
    node = ev.lab.frr["node1"]

    def drift() -> int:
        d = ev.status("node1")["frr"]["drift"]
        return int(d["lines"]) if d else 0

    before, drifted = node.bgpd_policy(), drift()
    assert before
    pid = read_pid(node.rundir / "bgpd.pid")
    node.restart_daemon("bgpd")
    assert read_pid(node.rundir / "bgpd.pid") != pid
    wait_for(lambda: node.bgpd_policy() == before, timeout=30, what="the route-maps back in bgpd")
    # the agent sent them: FRR's own startup file has none of ovn-frr's lines (status counts
    # the drift once the batch that sent them is done: it may lag bgpd's config a little)
    wait_for(lambda: drift() > drifted, timeout=10, what="the drift reported")
    wait_for(lambda: ev.ping("vm1", HOST1.ip), timeout=60, what="ping after bgpd's restart")
    assert ev.remote_vtep_of("vtep1", VM1.mac) == NODE1


def test_port_moves_to_node2_then_is_deleted(ev: EvpnLab) -> None:
    ev.unplug(VM1, "node1")
    ev.plug(VM1, "node2")  # the same port, now bound on node2
    ev.wait_remote("vtep1", VM1.mac, NODE2)  # MAC mobility: the remote follows
    wait_for(lambda: ev.ping("host1", VM1.ip), timeout=30, what="ping to the moved port")
    # node1 has no port of the switch any more: the switch left its share of OVN, and with
    # it the VNI's devices there (they come back with the next port bound on node1)
    wait_for(lambda: ev.vni_status("node1") == {}, timeout=30, what="VNI gone from node1")
    assert f"vxlan-{VNI}" not in run(["ip", "-br", "link"], netns=ev.lab.netns("node1"))
    assert ev.lab.ovn is not None
    ev.lab.ovn.nbctl("lsp-del", VM1.name)
    ev.wait_remote("vtep1", VM1.mac, None)


def test_vni_removed_takes_everything_away(ev: EvpnLab) -> None:
    assert ev.lab.ovn is not None
    ev.lab.ovn.nbctl("remove", "Logical_Switch", SWITCH, "other_config", "dynamic-routing-vni")

    def gone() -> bool:
        links = run(["ip", "-br", "link"], netns=ev.lab.netns("node2"))
        ovs = ev.lab.chassis["node2"].vsctl("list-br")
        mappings = ev.lab.chassis["node2"].vsctl("get", "Open_vSwitch", ".", "external_ids")
        assert ev.lab.ovn is not None
        ports = ev.lab.ovn.nbctl("--bare", "--columns=name", "list", "Logical_Switch_Port")
        return (f"vxlan-{VNI}" not in links and f"br-{VNI}" not in links
                and f"br-ev{VNI}" not in ovs and "ovnfrr-evpn" not in mappings
                and "ovnfrr-evpn" not in ports)  # fmt: skip

    wait_for(gone, timeout=30, what="every kernel, OVS and NB object of the VNI removed")
    ev.wait_remote("vtep1", VM2.mac, None)
    fdb = ev.fdb("vtep1")
    assert not [e for e in fdb if e.get("dst") in (NODE1, NODE2)], "type-3 still there"
    # the operator's own bridge survives: only ovn-frr's objects were removed
    assert "br-int" in ev.lab.chassis["node2"].vsctl("list-br")
