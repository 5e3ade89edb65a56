"""The pipelines apart, with the whole agent, real FRR and real OVN: FRR kept at ovn-frr's
config against what FRR runs (drift repaired and reported, operator lines kept), FRR
re-configured from the last OVN state while NB is down, a rejected neighbor that never
disturbs the good one or the imports, and NB/SB given as cluster lists."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.nbtopo import OpenShiftNode, openshift_node
from tests.e2e.conftest import FAST_SYNC

SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1"),),
)
FRR_CHECK_S = 1.0  # agent.frr_check_ms's default
#: what one check may take beyond frr_check_ms (a read, a plan, a vtysh -f): generous
APPLY_S = 3.0
#: node1's own address (FRR refuses it, check-config cannot know), with a password
SECRET = "hunter2-never-shown"
BAD_NEIGHBOR = (
    f'[[bgp.neighbors]]\naddress = "10.255.0.1"\nremote_as = 65003\npassword = "{SECRET}"\n'
)


class Env:
    def __init__(self, lab: Lab, topo: OpenShiftNode) -> None:
        self.lab = lab
        self.topo = topo
        self.config = neighbors_config(lab, "node1", keepalive=1, hold=3) + FAST_SYNC
        self.agent = AgentProcess.start(lab, "node1", self.config)

    def restart(self, extra: str = "", ovn: tuple[str, str] | None = None) -> None:
        self.agent.stop()
        self.agent = AgentProcess.start(self.lab, "node1", self.config + extra, ovn=ovn)

    def tor1(self) -> set[str]:
        return set(self.lab.frr["tor1"].bgp_prefixes())

    def node1_running(self) -> str:
        return self.lab.frr["node1"].vtysh.running_config()

    def session(self) -> tuple[str, int]:
        """tor1's session to node1: (state, how many times it was established)."""
        peer = self.lab.frr["tor1"].show("show bgp neighbors 10.255.0.1 json")["10.255.0.1"]
        return str(peer["bgpState"]), int(peer.get("connectionsEstablished", 0))

    def imported(self) -> set[str]:
        assert self.lab.ovn is not None
        return {p for p, _nh, _port in self.lab.ovn.owned_rows(self.topo.gr, "node1")}


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    with Lab(SPEC) as lab:
        state = Env(lab, openshift_node(lab))
        try:
            lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
            yield state
        finally:
            state.agent.stop()


@contextlib.contextmanager
def announcing_nat(env: Env) -> Iterator[str]:
    """The GR redistributes NAT for the block: its EgressIP is at tor1."""
    assert env.lab.ovn is not None
    env.lab.ovn.nbctl("set", "Logical_Router", env.topo.gr,
                      "options:dynamic-routing-redistribute=nat")  # fmt: skip
    egress = f"{env.topo.egress_ip}/32"
    try:
        wait_for(lambda: egress in env.tor1(), timeout=30, what="EgressIP at tor1")
        yield egress
    finally:
        env.lab.ovn.nbctl("remove", "Logical_Router", env.topo.gr, "options",
                          "dynamic-routing-redistribute")  # fmt: skip


def drift(env: Env) -> int:
    d = env.agent.status()["frr"]["drift"]
    return int(d["lines"]) if d else 0


def test_lines_removed_by_hand_come_back_and_the_drift_is_reported(env: Env) -> None:
    node1 = env.lab.frr["node1"]
    with announcing_nat(env) as egress:
        ours = "neighbor 10.255.0.2 remote-as 65001"
        assert ours in env.node1_running()
        before = drift(env)
        t0 = time.monotonic()
        node1.apply("router bgp 64512\n no neighbor 10.255.0.2\nexit\n")
        wait_for(lambda: ours in env.node1_running(), timeout=FRR_CHECK_S + APPLY_S,
                 what="the agent's neighbor back")  # fmt: skip
        print(f"neighbor back {time.monotonic() - t0:.2f} s after `no neighbor`")
        assert drift(env) > before
        env.lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=30)
        wait_for(lambda: egress in env.tor1(), timeout=30, what="EgressIP at tor1 again")

        # the whole instance removed, then re-created by hand with an operator neighbor only
        before = drift(env)
        t0 = time.monotonic()
        node1.apply("no router bgp 64512\nrouter bgp 64512\n"
                    " neighbor 10.99.0.2 remote-as 65099\nexit\n")  # fmt: skip
        wait_for(lambda: ours in env.node1_running(), timeout=FRR_CHECK_S + APPLY_S,
                 what="the agent's lines back in the re-created instance")  # fmt: skip
        print(f"instance lines back {time.monotonic() - t0:.2f} s after `no router bgp`")
        running = env.node1_running()
        assert "neighbor 10.99.0.2 remote-as 65099" in running  # the operator's stays
        assert f"network {egress} route-map ovnfrr-origin" in running
        status = env.agent.status()
        assert status["frr"]["drift"]["lines"] > before
        assert not status["agent"]["problems"] or all(
            "FRR" not in p for p in status["agent"]["problems"]
        )
        env.lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=30)
        wait_for(lambda: egress in env.tor1(), timeout=30, what="EgressIP at tor1 again")
    assert "frr_drift" in env.agent.output()
    node1.apply("router bgp 64512\n no neighbor 10.99.0.2\nexit\n")


def test_frr_restarted_while_nb_is_down_is_configured_from_the_last_state(env: Env) -> None:
    assert env.lab.ovn is not None
    with announcing_nat(env) as egress:
        env.lab.ovn.stop_nb()
        try:
            wait_for(lambda: "OVN NB not connected" in env.agent.status()["agent"]["problems"],
                     timeout=30, what="the agent sees NB gone")  # fmt: skip
            env.lab.frr["node1"].restart()  # FRR loses everything ovn-frr configured
            env.lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
            wait_for(lambda: egress in env.tor1(), timeout=30,
                     what="the EgressIP back at tor1 with NB still down")  # fmt: skip
            assert "OVN NB not connected" in env.agent.status()["agent"]["problems"]
        finally:
            env.lab.ovn.start_nb()
        wait_for(lambda: "OVN NB not connected" not in env.agent.status()["agent"]["problems"],
                 timeout=60, what="NB back")  # fmt: skip


class SessionWatch:
    """Samples tor1's session to node1 in the background: any state but Established, or a
    new establishment, is a disturbance."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.seen: list[tuple[str, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(Exception):
                self.seen.append(self.env.session())
            self._stop.wait(0.2)

    def __enter__(self) -> SessionWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


def test_a_rejected_neighbor_disturbs_neither_the_good_one_nor_the_imports(env: Env) -> None:
    lab = env.lab
    lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=30)
    state, established = env.session()
    assert state == "Established"
    lab.announcer("tor1").announce(["198.51.100.0/24"])
    wait_for(lambda: "198.51.100.0/24" in env.imported(), timeout=30, what="imported")
    with SessionWatch(env) as watch:
        env.restart(BAD_NEIGHBOR)  # the agent starts with a neighbor line FRR rejects

        def rejected() -> list[str] | None:
            problems = env.agent.status()["agent"]["problems"]
            return [p for p in problems if "10.255.0.1" in p] or None

        (problem,) = wait_for(rejected, timeout=30, what="the rejected line reported")
        assert problem.startswith("FRR rejected `router bgp 64512 > neighbor 10.255.0.1")
        lab.announcer("tor1").announce(["198.51.101.0/24"])  # imports go on
        wait_for(lambda: "198.51.101.0/24" in env.imported(), timeout=30, what="imported")
        # restarted again: FRR has the agent's lines, the bad one is still rejected; the
        # imported rows are counted all along, until the new agent reports it
        counts: list[int] = []

        def rejected_again() -> list[str] | None:
            counts.append(len(env.imported()))
            return rejected()

        env.restart(BAD_NEIGHBOR)
        wait_for(rejected_again, timeout=30, what="the rejected line reported again")

        def frr_steps() -> int:
            doc = env.agent.status()
            return int(next(r["runs"] for r in doc["reconcilers"] if r["name"] == "frr"))

        steps = frr_steps()  # a few more checks (and the bad line's retries) under watch
        wait_for(lambda: frr_steps() >= steps + 3, timeout=30, what="three more FRR checks")
        wait_for(lambda: env.agent.status()["fpm"]["connected"], timeout=30,
                 what="zebra connected on FPM")  # fmt: skip
    assert watch.seen and all(s == ("Established", established) for s in watch.seen), watch.seen
    assert min(counts) >= 2  # the imported rows never fell
    status = env.agent.status()
    assert status["frr"]["rejected"][0]["attempts"] >= 1
    # the bad line is the only thing wrong: no drift, nothing else rejected or not kept
    assert [p for p in status["agent"]["problems"] if "10.255.0.1" not in p] == []
    # the password went to FRR in rejected batches, and is nowhere in what the agent printed
    assert SECRET in env.agent.config.read_text()
    assert SECRET not in json.dumps(status) and SECRET not in env.agent.output()
    assert "password ****" in json.dumps(status) + env.agent.output()
    assert status["frr"]["drift"] is None and status["frr"]["not_kept"] == []
    lab.announcer("tor1").withdraw(["198.51.100.0/24", "198.51.101.0/24"])
    wait_for(lambda: not env.imported(), timeout=30, what="withdrawn")
    env.restart()


def test_nb_and_sb_as_cluster_lists_whose_first_member_is_down(env: Env) -> None:
    lab = env.lab
    assert lab.ovn is not None
    gone = lab.rundir / "ovn"
    remotes = (f"unix:{gone}/nb-gone.sock,{lab.ovn.nb}", f"unix:{gone}/sb-gone.sock,{lab.ovn.sb}")
    env.restart(ovn=remotes)
    try:
        with announcing_nat(env):  # NB and SB read through the list: advertised
            lab.announcer("tor1").announce(["198.51.102.0/24"])  # written through it: imported
            wait_for(lambda: "198.51.102.0/24" in env.imported(), timeout=30, what="imported")
            status = env.agent.status()
            for db, remote in zip(("nb", "sb"), remotes, strict=True):
                got = status["ovn"][db]
                assert (got["remote"], got["connected"]) == (remote, True)
                assert got["received_bytes"] > 0 and got["updates"] > 0
            assert not [p for p in status["agent"]["problems"] if "OVN" in p]
        lab.announcer("tor1").withdraw(["198.51.102.0/24"])
        wait_for(lambda: not env.imported(), timeout=30, what="withdrawn")
    finally:
        env.restart()
