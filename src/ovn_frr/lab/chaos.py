"""Chaos scenarios against the whole agent, real FRR and real OVN: what a crash does to the
imported routes, checked row by row. The chaos tests run them with small counts, the bench
(``bench/chaos_bench.py``) with the full ones.

Each scenario ends when NB holds exactly what zebra selected, and reports:
- ``duplicates``: rows that route the same as another row;
- ``readded``: rows of prefixes that did not change which were deleted and written again (a
  different row UUID for the same prefix and next hop);
- ``ecmp_gaps``: ECMP prefixes that, in some committed NB state, missed a leg they kept in BGP
  throughout (watched transaction by transaction);
- ``converge_s``: from the fault's end (the agent, FRR or NB started again; for a cluster
  leader, its kill: the cluster heals by itself) to NB = zebra.

The SB leader scenario checks the other direction: what the agent announces must stay at the
ToR throughout (``readded``: BGP UPDATEs the ToR received from node1 meanwhile, each one a
withdrawal or a re-announcement; ``ecmp_gaps``: samples of the ToR's table missing one of the
prefixes).
"""

from __future__ import annotations

import ipaddress
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from ovn_frr.lab.agent import AgentProcess
from ovn_frr.lab.lab import Lab
from ovn_frr.lab.nbtopo import OpenShiftNode, openshift_node, openstack_router
from ovn_frr.lab.nbwatch import RouteMonitor
from ovn_frr.lab.proc import wait_for
from ovn_frr.lab.spec import LabSpec, LinkSpec, NodeSpec, PeerSpec
from ovn_frr.ovn.bulk import BulkWriter

SPEC = LabSpec(
    nodes=(NodeSpec("node1"),),
    peers=(PeerSpec("tor1", 65001), PeerSpec("tor2", 65002)),
    links=(LinkSpec("node1", "tor1"), LinkSpec("node1", "tor2")),
)
NODE = "node1"
#: (uuid, prefix, next hop)
Row = tuple[str, str, str]


def prefixes(n: int, start: int = 0, base: str = "198.18.0.0/15") -> list[str]:
    """n distinct /31s of the benchmarking range (65,536 of them), from the ``start``-th on."""
    subnets = ipaddress.ip_network(base).subnets(new_prefix=31)
    out = [str(s) for s in itertools.islice(subnets, start, start + n)]
    if len(out) < n:
        raise ValueError(f"{base} has no {n} /31s from the {start}th on")
    return out


@dataclass
class Figures:
    scenario: str
    routes: int
    ecmp: int
    converge_s: float = 0.0
    rows: int = 0
    duplicates: int = 0
    readded: int = 0
    ecmp_gaps: int = 0
    #: the fault came in the middle of the work (not before or after it)
    mid: bool = True
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.duplicates or self.readded or self.ecmp_gaps)


class Chaos:
    """node1 (agent, FRR with FPM, an OpenShift-shaped NB) and two ToRs."""

    def __init__(self, lab: Lab, topo: OpenShiftNode, agent_config: str = "") -> None:
        self.lab = lab
        self.topo = topo
        self.agent_config = agent_config
        self.agent = AgentProcess.start(lab, NODE, agent_config)
        self.gw = {"tor1": str(lab.link(NODE, "tor1").peer_v4),
                   "tor2": str(lab.link(NODE, "tor2").peer_v4)}  # fmt: skip

    # --- what each side has --------------------------------------------------------------------

    def rows(self) -> list[Row]:
        """Every row ovn-frr owns for node1, read in one transaction."""
        assert self.lab.ovn is not None
        return [(u, r.prefix, r.nexthop) for u, r in self.lab.ovn.owned(NODE).items()]

    def zebra(self) -> set[tuple[str, str]]:
        """(prefix, next hop) of every BGP route zebra selected on node1."""
        out = set()
        for prefix, entries in self.lab.frr[NODE].rib().items():
            for e in entries:
                if e.get("protocol") == "bgp" and e.get("selected"):
                    out |= {(prefix, nh["ip"]) for nh in e.get("nexthops", ())
                            if nh.get("active") and "ip" in nh}  # fmt: skip
        return out

    def converged(self, absent: frozenset[str] = frozenset()) -> list[Row] | None:
        """The rows, once they route exactly what zebra has and none of ``absent`` is in
        zebra (duplicates are not waited out: they are counted)."""
        rows = self.rows()
        routes = {(p, nh) for _u, p, nh in rows}
        zebra = self.zebra()
        if any(p in absent for p, _nh in zebra):
            return None
        return rows if routes == zebra else None

    def wait_converged(
        self, timeout: float, what: str, absent: frozenset[str] = frozenset()
    ) -> list[Row]:
        rows: list[Row] = wait_for(lambda: self.converged(absent), timeout=timeout,
                                   interval=0.5, what=what)  # fmt: skip
        return rows

    def load(self, single: list[str], ecmp: list[str], timeout: float) -> list[Row]:
        """``single`` from tor1, ``ecmp`` from both ToRs; returns the rows once all are in."""
        self.lab.announcer("tor1").announce(single + ecmp)
        self.lab.announcer("tor2").announce(ecmp)
        want = len(single) + 2 * len(ecmp)
        wait_for(lambda: len(self.zebra()) == want, timeout=timeout, interval=0.5,
                 what=f"{want} routes in zebra")  # fmt: skip
        return self.wait_converged(timeout, f"{want} rows in NB")

    def clear(self, single: list[str], ecmp: list[str], timeout: float) -> None:
        self.lab.announcer("tor1").withdraw(single + ecmp)
        self.lab.announcer("tor2").withdraw(ecmp)
        wait_for(lambda: not self.rows(), timeout=timeout, interval=0.5, what="NB emptied")

    # --- the scenarios -------------------------------------------------------------------------

    def agent_kill(self, n: int, e: int, timeout: float = 300) -> Figures:
        """kill -9 of the agent in the middle of an import of n + e (ECMP) prefixes."""
        fig = Figures("agent kill -9 mid-import", n, e)
        single, ecmp = prefixes(n), prefixes(e, start=n)
        assert self.lab.ovn is not None
        counter = BulkWriter(self.lab.ovn.nb, NODE)
        try:
            first = len(single) // 10
            self.lab.announcer("tor2").announce(ecmp)
            self.lab.announcer("tor1").announce(single[:first] + ecmp)
            # the first write landed; the rest is announced and the agent killed at once: it
            # is then in zebra, on FPM or in flight (killing after the first write of one
            # announcement found it all written when that write held everything)
            wait_for(lambda: counter.count_owned() > 0, timeout=timeout, interval=0.005,
                     what="the first rows in NB")  # fmt: skip
            self.lab.announcer("tor1").announce(single[first:])
            self.agent.kill()
        finally:
            counter.close()
        before = self.rows()
        fig.notes.append(f"killed with {len(before)} of {n + 2 * e} rows in NB")
        fig.mid = len(before) < n + 2 * e
        started = time.monotonic()
        self.agent = AgentProcess.start(self.lab, NODE, self.agent_config)
        after = self.wait_converged(timeout, "NB = zebra after the agent restart")
        fig.converge_s = time.monotonic() - started
        self._score(fig, before, after)
        self.clear(single, ecmp, timeout)
        return fig

    def frr_crash(self, n: int, e: int, w: int, timeout: float = 300) -> Figures:
        """kill -9 of zebra and bgpd with n + e (ECMP) prefixes; tor1 withdraws w of the n
        while FRR is down; FRR starts again (zebra re-reads its routes from the kernel)."""
        fig = Figures("FRR (zebra+bgpd) kill -9", n, e)
        single, ecmp = prefixes(n), prefixes(e, start=n)
        before = self.load(single, ecmp, timeout)
        gone = frozenset(single[:w])
        frr = self.lab.frr[NODE]
        assert self.lab.ovn is not None
        with RouteMonitor(self.lab.ovn.nb) as mon:
            for p in ecmp:
                mon.arm(p, 2)
            frr.stop(crash=True)
            self.lab.announcer("tor1").withdraw(sorted(gone))
            started = time.monotonic()
            frr.start_again()
            # zebra re-reads the withdrawn prefixes from the kernel and sweeps them only at
            # its --graceful_restart time (docs/frr.md)
            after = self.wait_converged(timeout, "NB = zebra after the FRR restart", gone)
            fig.converge_s = time.monotonic() - started
            fig.ecmp_gaps = sum(1 for p in ecmp if mon.min_after_armed.get(p, 0) < 2)
        left = {p for _u, p, _nh in after} & gone
        if left:
            fig.notes.append(f"{len(left)} withdrawn prefixes still in NB")
        self._score(fig, [r for r in before if r[1] not in gone], after)
        self.clear(single[w:], ecmp, timeout)
        return fig

    def nb_outage(self, n: int, churn: int, outage_s: float, timeout: float = 300) -> Figures:
        """NB's ovsdb-server stopped ``outage_s`` in the middle of churn (adds, withdrawals
        and next-hop changes of ``churn`` prefixes each round) over n stable prefixes."""
        fig = Figures(f"NB stopped {outage_s:.0f} s during churn", n, 0)
        stable = prefixes(n)
        moving = prefixes(churn, start=n)
        extra = prefixes(churn, start=n + churn)
        before = self.load(stable + moving, [], timeout)
        assert self.lab.ovn is not None
        rounds = 0
        started = None
        deadline = time.monotonic() + outage_s
        self.lab.ovn.stop_nb()
        for moved in itertools.cycle((True, False)):
            rounds += 1
            self._churn(moving, extra, moved)
            time.sleep(0.5)
            if started is None and time.monotonic() >= deadline:
                self.lab.ovn.start_nb()
                started = time.monotonic()
            elif started is not None and rounds % 2 == 0:
                break
        assert started is not None
        after = self.wait_converged(timeout, "NB = zebra after the NB outage")
        fig.converge_s = time.monotonic() - started
        fig.notes.append(f"{rounds} churn rounds of {churn} prefixes")
        unchanged = set(stable)
        self._score(fig, [r for r in before if r[1] in unchanged], after)
        self.clear(stable + moving, [], timeout)
        return fig

    def _churn(self, moving: list[str], extra: list[str], moved: bool) -> None:
        """One churn round: ``moving`` to next hop tor2 and ``extra`` in, or both back."""
        tor1, tor2 = self.lab.announcer("tor1"), self.lab.announcer("tor2")
        if moved:
            tor2.announce(moving)
            tor1.withdraw(moving)
            tor1.announce(extra)
        else:
            tor1.announce(moving)
            tor2.withdraw(moving)
            tor1.withdraw(extra)

    # --- clustered NB/SB: the leader killed ---------------------------------------------------

    def _kill_leader(self, db: str) -> str:
        """kill -9 of ``db``'s cluster leader; returns its name once another leads."""
        ovn = self.lab.ovn
        assert ovn is not None and ovn.members > 1, "a clustered lab (chaos_lab(members=3))"
        old = ovn.leader(db)
        assert old is not None, f"no {db} leader"
        ovn.stop_member(old, crash=True)
        wait_for(lambda: (lead := ovn.leader(db)) is not None and lead != old, timeout=60,
                 what=f"a new {db} leader after {old}")  # fmt: skip
        return old

    def _bgp_in_zebra(self) -> int:
        """How many BGP routes zebra has on node1 (its summary: cheap at any size)."""
        data = self.lab.frr[NODE].show("show ip route summary json")
        return sum(
            int(r.get("rib", 0))
            for r in data.get("routes", ())
            if r.get("type") in ("bgp", "ebgp", "ibgp")
        )

    def _rejoin(self, name: str) -> None:
        """Start a killed member again; wait until every member is in the cluster."""
        ovn = self.lab.ovn
        assert ovn is not None
        ovn.start_member(name)
        wait_for(lambda: "down" not in ovn.roles().values(), timeout=60,
                 what=f"{name} back in its cluster")  # fmt: skip

    def nb_leader_kill_import(self, n: int, e: int, timeout: float = 300) -> Figures:
        """kill -9 of NB's cluster leader in the middle of an import of n + e (ECMP)."""
        fig = Figures("NB leader kill -9 mid-import", n, e)
        single, ecmp = prefixes(n), prefixes(e, start=n)
        assert self.lab.ovn is not None
        counter = BulkWriter(self.lab.ovn.nb, NODE)
        first, rest = single[: n // 5], single[n // 5 :]
        try:
            counter.count_owned()  # connected to the leader before the clock starts
            self.lab.announcer("tor2").announce(ecmp)
            self.lab.announcer("tor1").announce(first)
            # zebra has a part of them: the agent is planning or writing its first writes
            wait_for(lambda: self._bgp_in_zebra() >= min(len(first) // 2, 200),
                     timeout=timeout, interval=0.01, what="the import under way")  # fmt: skip
            at_kill = counter.count_owned()
        finally:
            counter.close()
        # the rest of the import goes out, and the leader dies while it travels: the kill is
        # in the middle whatever the speed of the first part (a small import is written in a
        # second; a kill after a fixed count could come when it was all written)
        self.lab.announcer("tor1").announce(rest + ecmp)
        started = time.monotonic()
        killed = self._kill_leader("nb")
        before = self.rows()  # what the cluster committed (the new leader's view)
        fig.notes.append(f"{killed} killed with {at_kill} of {n + 2 * e} rows in NB "
                         f"({len(before)} once another led)")  # fmt: skip
        fig.mid = at_kill < n + 2 * e
        wait_for(lambda: len(self.zebra()) == n + 2 * e, timeout=timeout, interval=0.5,
                 what=f"{n + 2 * e} routes in zebra")  # fmt: skip
        after = self.wait_converged(timeout, "NB = zebra after the NB leader died")
        fig.converge_s = time.monotonic() - started
        self._score(fig, before, after)
        self._rejoin(killed)
        self.clear(single, ecmp, timeout)
        return fig

    def nb_leader_kill_churn(self, n: int, churn: int, timeout: float = 300) -> Figures:
        """kill -9 of NB's cluster leader in the middle of churn (adds, withdrawals and
        next-hop changes of ``churn`` prefixes each round) over n stable prefixes."""
        fig = Figures("NB leader kill -9 during churn", n, 0)
        stable, moving = prefixes(n), prefixes(churn, start=n)
        extra = prefixes(churn, start=n + churn)
        before = self.load(stable + moving, [], timeout)
        killed = ""
        started = 0.0
        for rounds in range(1, 9):
            self._churn(moving, extra, moved=bool(rounds % 2))
            time.sleep(0.5)
            if rounds == 3:
                started = time.monotonic()
                killed = self._kill_leader("nb")
        after = self.wait_converged(timeout, "NB = zebra after the NB leader died")
        fig.converge_s = time.monotonic() - started
        fig.notes.append(f"{killed} killed in round 3 of 8 churn rounds of {churn} prefixes")
        self._score(fig, [r for r in before if r[1] in set(stable)], after)
        self._rejoin(killed)
        self.clear(stable + moving, [], timeout)
        return fig

    def sb_leader_kill(self, timeout: float = 120) -> Figures:
        """kill -9 of SB's cluster leader while node1 announces a Neutron router whose gateway
        port is active on node1 (what it announces depends on SB's port bindings): the
        prefixes stay at tor1 throughout, and tor1 receives no UPDATE from node1."""
        lab = self.lab
        assert lab.ovn is not None
        stack = openstack_router(lab, gateway_chassis=(NODE,))
        lab.ovn.nbctl("set", "Logical_Router", stack.router, "options:dynamic-routing=true",
                      "options:dynamic-routing-redistribute=connected,nat,lb")  # fmt: skip
        # node1's gateway binding, as its ovn-controller would claim it (this lab runs none)
        sb = lab.ovn.sbctl
        sb("--may-exist", "chassis-add", NODE, "geneve", "127.0.0.1")
        cr = f"cr-{stack.gateway_port}"
        find = ("--bare", "--columns=_uuid", "find", "Port_Binding", f"logical_port={cr}")
        wait_for(lambda: sb(*find), timeout=30, what=f"northd made {cr}")
        sb("lsp-bind", cr, NODE)
        want = {"172.24.4.0/24", stack.tenant_subnet, *(f"{ip}/32" for ip in stack.fips),
                f"{stack.lb_fip}/32"}  # fmt: skip
        tor1 = lab.frr["tor1"]
        wait_for(lambda: want <= set(tor1.bgp_prefixes()), timeout=timeout,
                 what="the Neutron router's prefixes at tor1")  # fmt: skip
        fig = Figures("SB leader kill -9 (announcements)", len(want), 0)
        link = lab.link("tor1", NODE)
        node1 = (str(link.peer_v4), str(link.peer_v6))

        def updates() -> int:
            data = tor1.show("show bgp neighbors json")
            return sum(int(data.get(a, {}).get("messageStats", {}).get("updatesRecv", 0))
                       for a in node1)  # fmt: skip

        # every UPDATE of the announcements sent: the count holds still for a second
        seen = [updates()]

        def quiet() -> bool:
            time.sleep(1)
            seen.append(updates())
            return seen[-1] == seen[-2]

        wait_for(quiet, timeout=timeout, what="tor1 receiving no more UPDATEs from node1")

        missing: list[int] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.2):
                missing.append(len(want - set(tor1.bgp_prefixes())))

        sampler = threading.Thread(target=sample, daemon=True)
        received = updates()
        sampler.start()
        try:
            started = time.monotonic()
            killed = self._kill_leader("sb")
            fig.converge_s = time.monotonic() - started  # here: the election
            self._rejoin(killed)
            time.sleep(5)  # the agent's SB IDL on the new leader, ovn-controller too
        finally:
            stop.set()
            sampler.join()
        fig.readded = updates() - received
        fig.ecmp_gaps = sum(1 for m in missing if m)
        fig.rows = len(want)
        fig.notes.append(f"{killed} killed; tor1 sampled {len(missing)} times")
        # the agent reads the new leader: the gateway leaving node1 takes its share away
        sb("lsp-unbind", cr)
        wait_for(lambda: not want & set(tor1.bgp_prefixes()), timeout=timeout,
                 what="the gateway's share withdrawn after the SB failover")  # fmt: skip
        lab.ovn.nbctl("lr-del", stack.router)
        return fig

    @staticmethod
    def _score(fig: Figures, kept: list[Row], after: list[Row]) -> None:
        """``kept``: rows of prefixes that did not change (their next hops included)."""
        fig.rows = len(after)
        fig.duplicates = len(after) - len({(p, nh) for _u, p, nh in after})
        now = {(p, nh): u for u, p, nh in after}
        fig.readded = sum(1 for u, p, nh in kept if (p, nh) in now and now[(p, nh)] != u)


@contextmanager
def chaos_lab(agent_config: str = "", members: int = 1) -> Iterator[Chaos]:
    """The lab with the agent running (its default replay hold: FRR restarts are part of it);
    ``members``: NB and SB as RAFT clusters of that many members."""
    with Lab(replace(SPEC, ovn_members=members)) as lab:
        chaos = Chaos(lab, openshift_node(lab), agent_config)
        try:
            lab.wait_bgp_up()
            wait_for(lambda: "fpm_replay_complete" in chaos.agent.output(), timeout=60,
                     what="agent synced")  # fmt: skip
            yield chaos
        finally:
            chaos.agent.stop()
