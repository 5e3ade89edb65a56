"""NB churn soak: the whole agent under random, seeded changes, checked by an oracle.

:class:`Soak` runs :class:`~ovn_frr.lab.churn.Churn`'s operations, and also stops (SIGTERM)
or kills (kill -9) the agent and starts it again, and restarts FRR, each picked at random with
a seed (a failing run is replayed with its seed). After each few operations comes a quiet
point: within ``settle_s`` FRR must announce, per VRF, exactly what :mod:`ovn_frr.lab.oracle`
computes from NB and SB (docs/intent.md), tor1 must have received exactly the IPv4 ones of the
default VRF, and NB must hold exactly the owned static routes the oracle derives from zebra's
routes; else a mismatch is recorded with what differs, the seed and the operation it followed
(and what the agent's ``trace`` says of the first prefix that differs).
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ovn_frr.frr.diff import parse, paths
from ovn_frr.lab import oracle
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.churn import Churn
from ovn_frr.lab.lab import Lab
from ovn_frr.lab.proc import LabError, wait_for
from ovn_frr.lab.spec import LabSpec, LinkSpec, NodeSpec, PeerSpec

log = logging.getLogger(__name__)

NODE = "node1"
SPEC = LabSpec(
    nodes=(NodeSpec(NODE, bgp=False),),
    peers=(PeerSpec("tor1", 65001), PeerSpec("tor2", 65002)),
    links=(LinkSpec(NODE, "tor1"), LinkSpec(NODE, "tor2")),
)
AGENT_CONFIG = "[import]\nreplay_hold_ms = 2000\n"


@dataclass
class Figures:
    seed: int
    operations: Counter[str] = field(default_factory=Counter)
    quiet_points: int = 0
    #: operations NB refused (e.g. a NAT already there): counted, nothing changed
    refused: int = 0
    mismatches: list[str] = field(default_factory=list)
    #: for each mismatch, what the agent and NB said then (see Soak._explain)
    details: list[dict[str, Any]] = field(default_factory=list)
    #: seconds from each quiet point's start to agreement
    settle: list[float] = field(default_factory=list)
    #: the agent's resident set (kB) at each quiet point, and its pid then
    rss: list[tuple[int, int]] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.operations.values())

    def rss_ratio(self) -> float | None:
        """The median RSS of the last third of the quiet points over that of the first third,
        of the agent process that lived through the most of them (restarts start it anew)."""
        pids = [pid for pid, _kb in self.rss]
        if not pids:
            return None
        longest = max(set(pids), key=pids.count)
        same = [kb for pid, kb in self.rss if pid == longest]
        if len(same) < 6:
            return None
        third = len(same) // 3
        first, last = sorted(same[:third]), sorted(same[-third:])
        return last[len(last) // 2] / first[len(first) // 2]

    def summary(self) -> dict[str, Any]:
        settle = sorted(self.settle)
        return {
            "seed": self.seed,
            "operations": self.total,
            "by_kind": dict(sorted(self.operations.items())),
            "refused": self.refused,
            "quiet_points": self.quiet_points,
            "mismatches": len(self.mismatches),
            "settle_p50_s": round(settle[len(settle) // 2], 2) if settle else None,
            "settle_max_s": round(settle[-1], 2) if settle else None,
            "rss_kb_max": max((kb for _p, kb in self.rss), default=None),
            "rss_last_over_first": (round(r, 3) if (r := self.rss_ratio()) else None),
            "duration_s": round(self.duration_s, 1),
        }


class Soak:
    """Drives one lab (node1 with the agent, tor1 and tor2, OVN central; node2 a chassis in SB
    only) with a seeded random sequence of operations."""

    OPS: ClassVar[dict[str, float]] = {
        **Churn.OPS, "agent_stop": 0.2, "agent_kill": 0.2, "frr_restart": 0.1,
    }  # fmt: skip
    #: each made at least once per run, at a random point of it
    ENSURED = ("agent_stop", "agent_kill", "frr_restart")

    def __init__(self, lab: Lab, seed: int, settle_s: float = 30.0,
                 frr_restarts: int = 1) -> None:  # fmt: skip
        assert lab.ovn is not None
        self.lab = lab
        self.ovn = lab.ovn
        self.rng = random.Random(seed)
        self.churn = Churn(lab, self.rng)
        self.fig = Figures(seed)
        self.settle_s = settle_s
        self.frr_restarts = frr_restarts
        self.agent: AgentProcess | None = None
        self.last_op = ""

    def _sb(self, ops: list[dict[str, Any]]) -> list[Any]:
        return self.ovn.transact(ops, db="OVN_Southbound")

    def start_agent(self) -> None:
        self.agent = AgentProcess.start(
            self.lab, NODE, neighbors_config(self.lab, NODE, keepalive=1, hold=3) + AGENT_CONFIG
        )

    def agent_stop(self) -> None:
        """SIGTERM, and the agent started again."""
        assert self.agent is not None
        self.agent.stop()
        self.start_agent()

    def agent_kill(self) -> None:
        """kill -9, and the agent started again."""
        assert self.agent is not None
        self.agent.kill()
        self.start_agent()

    def frr_restart(self) -> None:
        """Every FRR daemon of node1 (at most ``frr_restarts`` times a run)."""
        if self.frr_restarts <= 0:
            return
        self.frr_restarts -= 1
        self.lab.frr[NODE].restart()

    def step(self, name: str | None = None) -> None:
        ops = {k: w for k, w in self.OPS.items() if k != "frr_restart" or self.frr_restarts > 0}
        name = name or self.rng.choices(list(ops), list(ops.values()))[0]
        self.last_op = name
        try:
            getattr(self if name not in Churn.OPS else self.churn, name)()
        except LabError as exc:  # NB refused it (a constraint of its own): nothing changed
            log.info("soak_refused op=%s error=%s", name, exc)
            self.fig.refused += 1
        self.fig.operations[name] += 1

    def expected(self) -> tuple[dict[str, dict[str, str]], set[oracle.Imported]]:
        nb = oracle.read_nb(self.ovn.transact)
        bound = oracle.read_bindings(self._sb)
        ann = oracle.announcements(nb, bound, NODE)
        frr = self.lab.frr[NODE]
        rib: dict[str, list[str]] = {}
        for afi in ("ipv4", "ipv6"):
            for prefix, entries in frr.rib(afi).items():
                for e in entries:
                    if e.get("protocol") == "bgp" and e.get("selected"):
                        rib[prefix] = [h["ip"] for h in e.get("nexthops", [])
                                       if h.get("active") and "ip" in h]  # fmt: skip
        announced = {vrf: {str(p): str(h) if h else "" for p, h in nets.items()}
                     for vrf, nets in ann.items() if nets}  # fmt: skip
        return announced, oracle.imports(nb, bound, NODE, rib)

    def observed(self) -> tuple[dict[str, dict[str, str]], set[str], set[oracle.Imported]]:
        """FRR's ``network`` lines per VRF (prefix -> next hop set by its route-map), what
        tor1 received from node1, and the owned static routes in NB."""
        frr = self.lab.frr[NODE]
        config = frr.vtysh.running_config()
        hops: dict[str, str] = {}
        nets: dict[str, dict[str, str]] = {}
        for path in paths(parse(config)):
            if path[0].startswith("route-map ") and len(path) > 1:
                words = path[1].split()
                if words[:1] == ["set"] and "next-hop" in words:
                    hops[path[0].split()[1]] = words[-1]
            if path[0].startswith("router bgp ") and len(path) > 2:
                words = path[2].split()
                if words[:1] == ["network"]:
                    vrf = path[0].split(" vrf ")[1] if " vrf " in path[0] else ""
                    rmap = words[3] if len(words) > 3 else ""
                    nets.setdefault(vrf, {})[words[1]] = rmap
        out = {vrf: {p: hops.get(m, "") for p, m in d.items()} for vrf, d in nets.items()}
        node1 = str(self.lab.link("tor1", NODE).peer_v4)
        routes = self.lab.frr["tor1"].show(f"show bgp ipv4 unicast neighbors {node1} routes json")
        tor = set(routes.get("routes", {}))
        owned = {(r.router, r.prefix, r.nexthop, r.output_port or "")
                 for r in self.ovn.owned(NODE).values()}  # fmt: skip
        return out, tor, owned

    def check(self) -> str | None:
        """What differs between the agent's results and the oracle's, or None."""
        want_ann, want_imp = self.expected()
        ann, tor, imp = self.observed()
        problems = []
        if ann != want_ann:
            problems.append(_diff("FRR networks", _flat(ann), _flat(want_ann)))
        want_tor = {p for p in want_ann.get("", {}) if ":" not in p}
        if tor != want_tor:
            problems.append(_diff("tor1 from node1", tor, want_tor))
        if imp != want_imp:
            problems.append(_diff("NB owned routes", {str(x) for x in imp},
                                  {str(x) for x in want_imp}))  # fmt: skip
        return "; ".join(problems) or None

    def quiet_point(self) -> None:
        started = time.monotonic()
        found: list[str | None] = [None]

        def agrees() -> bool:
            try:
                found[0] = self.check()
            except LabError as exc:  # FRR restarting, say
                found[0] = f"not readable: {exc}"
            return found[0] is None

        try:
            wait_for(agrees, timeout=self.settle_s, interval=0.25, what="agreement")
            self.fig.settle.append(time.monotonic() - started)
        except LabError:
            msg = (f"seed {self.fig.seed} after operation {self.fig.total} ({self.last_op}): "
                   f"{found[0]}")  # fmt: skip
            log.error("soak_mismatch %s", msg)
            self.fig.mismatches.append(msg)
            self.fig.details.append(self._explain(found[0] or ""))
        self.fig.quiet_points += 1
        if self.agent is not None:
            self.fig.rss.append((self.agent.proc.pid, _rss_kb(self.agent.proc.pid)))

    def _explain(self, mismatch: str) -> dict[str, Any]:
        """What the agent says of the first prefix a mismatch names (``trace``), and the
        NB and SB rows behind it, for the report."""
        m = re.search(r"'(?:default |\w+ )?([0-9a-f.:]+/\d+)", mismatch)
        out: dict[str, Any] = {"mismatch": mismatch}
        if m and self.agent is not None:
            try:
                out["trace"] = self.agent.trace(m[1])
            except (OSError, ValueError) as exc:
                out["trace"] = str(exc)
        try:
            out["nb"] = oracle.read_nb(self.ovn.transact).tables
            out["bindings"] = oracle.read_bindings(self._sb)
        except LabError as exc:
            out["nb"] = str(exc)
        return out

    def run(self, operations: int | None = None, duration_s: float | None = None,
            burst: tuple[int, int] = (2, 8)) -> Figures:  # fmt: skip
        """Operations in bursts of ``burst``, each followed by a quiet point, until
        ``operations`` were made or ``duration_s`` passed."""
        started = time.monotonic()
        if self.agent is None:
            self.start_agent()
        self.lab.frr["tor1"].wait_established([str(self.lab.link("tor1", NODE).peer_v4)], 60)
        self.quiet_point()
        # the ensured operations, each at a random point of the run (a fraction of it)
        due = sorted((self.rng.uniform(0.2, 0.8), name) for name in self.ENSURED)

        def progress() -> float:
            by_ops = self.fig.total / operations if operations else 0.0
            by_time = (time.monotonic() - started) / duration_s if duration_s else 0.0
            return max(by_ops, by_time)

        while progress() < 1.0:
            for _ in range(self.rng.randint(*burst)):
                if due and progress() >= due[0][0]:
                    self.step(due.pop(0)[1])
                else:
                    self.step()
            self.quiet_point()
        self.fig.duration_s = time.monotonic() - started
        return self.fig

    def close(self) -> None:
        if self.agent is not None:
            self.agent.stop()
            self.agent = None


def _flat(d: dict[str, dict[str, str]]) -> set[str]:
    return {f"{vrf or 'default'} {p}" + (f" via {h}" if h else "")
            for vrf, nets in d.items() for p, h in nets.items()}  # fmt: skip


def _diff(what: str, have: set[str], want: set[str]) -> str:
    extra, missing = sorted(have - want), sorted(want - have)
    return f"{what}: {len(extra)} extra {extra[:5]}, {len(missing)} missing {missing[:5]}"


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@contextmanager
def soak_lab(seed: int, settle_s: float = 30.0, frr_restarts: int = 1,
             on_mismatch: Callable[[Soak], None] | None = None) -> Iterator[Soak]:  # fmt: skip
    """A lab with the soak's topology; the agent runs while the block does."""
    with Lab(SPEC) as lab:
        soak = Soak(lab, seed, settle_s, frr_restarts)
        try:
            yield soak
        finally:
            if soak.fig.mismatches and on_mismatch is not None:
                on_mismatch(soak)
            soak.close()
