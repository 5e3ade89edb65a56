"""BFD: a dead ToR's routes leave OVN as soon as BFD declares it down (not at BGP hold time),
ECMP shrinks to the healthy next hop without a moment with no row, and comes back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from ovn_frr.lab import Lab, NodeSpec, demo_spec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.nbtopo import openshift_node
from ovn_frr.lab.nbwatch import RouteMonitor
from ovn_frr.lab.proc import LabTimeout
from tests.e2e.conftest import FAST_SYNC

#: node1's BGP rendered by the agent; BGP alone would notice a dead peer after 30 s
SPEC = replace(demo_spec(), nodes=(NodeSpec("node1", bgp=False),), bgp_timers=(10, 30),
               bfd=(100, 3))  # fmt: skip
TOR1 = ("10.255.0.2", "rtoe-GR_node1")
TOR2 = ("10.255.1.2", "rtoe2-GR_node1")


@pytest.fixture(scope="module")
def bfd_lab() -> Iterator[tuple[Lab, AgentProcess]]:
    with Lab(SPEC) as lab:
        openshift_node(lab)
        # both ToRs with BFD (100 ms x 3)
        config = neighbors_config(lab, "node1", keepalive=10, hold=30, bfd_ms=100) + FAST_SYNC
        agent = AgentProcess.start(lab, "node1", config)
        try:
            for i in (0, 1):
                lab.frr[f"tor{i + 1}"].wait_established([f"10.255.{i}.1"], timeout=60)
            yield lab, agent
        finally:
            agent.stop()


def bfd_peers(lab: Lab) -> dict[str, str]:
    return {p["peer"]: p["status"] for p in lab.frr["node1"].show("show bfd peers json")}


def test_bfd_down_withdraws_without_a_gap(bfd_lab: tuple[Lab, AgentProcess]) -> None:
    lab, agent = bfd_lab
    assert lab.ovn is not None
    p = "203.0.113.0/24"
    with RouteMonitor(lab.ovn.nb) as mon:
        for tor in ("tor1", "tor2"):
            lab.announcer(tor).announce([p])
        wait_for(lambda: mon.nexthops(p) == {TOR1[0], TOR2[0]}, timeout=30, what="ECMP rows")
        wait_for(lambda: lab.frr["node1"].bfd_protected([TOR1[0], TOR2[0]]), timeout=30,
                 what="BFD up on both sessions, as bgpd sees it")  # fmt: skip
        mon.arm(p, 2)
        lab.cut("node1", "tor2")
        try:
            try:
                wait_for(lambda: mon.nexthops(p) == {TOR1[0]}, timeout=20, what="tor2's row gone")
            except LabTimeout as exc:  # what each side had, for a failure that is rare
                node1 = lab.frr["node1"]
                raise AssertionError(
                    f"{exc}\nNB: {mon.nexthops(p)}\nzebra: {node1.rib().get(p)}\n"
                    f"BFD: {bfd_peers(lab)}\nsessions: {agent.status()['bgp']}\n"
                    f"agent: {agent.output()[-3000:]}"
                ) from None
            # it was BFD, not the 30 s hold timer: FRR says so
            assert bfd_peers(lab)["10.255.1.2"] == "down"
            neighbor = lab.frr["node1"].show("show bgp neighbors 10.255.1.2 json")["10.255.1.2"]
            last = {k: v for k, v in neighbor.items() if k.startswith("last")}
            assert "BFD" in str(last), last
            want = {("10.255.0.2", "up"), ("10.255.1.2", "down")}
            wait_for(lambda: want <= {(x["neighbor"], x["bfd"]) for x in agent.status()["bgp"]},
                     timeout=10, what="status shows tor2's BFD down")  # fmt: skip
        finally:
            lab.restore("node1", "tor2")
        wait_for(lambda: mon.nexthops(p) == {TOR1[0], TOR2[0]}, timeout=60, what="ECMP back")
        assert mon.min_after_armed[p] >= 1, "the prefix had no row at some point"
        for tor in ("tor1", "tor2"):
            lab.announcer(tor).withdraw([p])
        wait_for(lambda: mon.count(p) == 0, timeout=30, what="withdrawn")
