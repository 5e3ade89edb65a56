"""ovn-frr's announcements beside OVN 26.03's own, for the same NB (the differential test).

The same ovn-nbctl commands (:mod:`ovn_frr.lab.nbgen`, or any fixed shape) build the lab's NB
(this machine's OVN, its schema given the columns OVN-native CMSs write) and OVN 26.03's
(:class:`~ovn_frr.lab.native.NativeOvn`); the same ports are bound to the same chassis in both
SBs. For a chassis, ovn-frr's answer is what its reader makes of the lab's NB and SB (with this
chassis' conditional monitors) and its advertise core announces; OVN's is the Advertised_Route
rows its ovn-northd made that its ovn-controller would write on that chassis. Every difference
is explained by :func:`explain` (a difference docs/intent.md keeps on purpose) or reported.
"""

from __future__ import annotations

import collections
import contextlib
import ipaddress
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ovn_frr.core.advertise import announcements
from ovn_frr.lab import oracle
from ovn_frr.lab.lab import Lab
from ovn_frr.lab.native import NativeOvn, sid_root
from ovn_frr.lab.nbgen import CHASSIS, Case
from ovn_frr.lab.proc import LabError, wait_for
from ovn_frr.lab.spec import LabSpec, LinkSpec, NodeSpec, PeerSpec
from ovn_frr.ovn.reader import OvnReader, nb_connection, sb_connection

#: (VRF, prefix) as both sides are compared
Route = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Difference:
    route: Route
    #: "ovn" (only OVN 26.03 announces it) or "ovn-frr"
    only: str
    #: the documented reason it is kept, "" none (a failure)
    reason: str


def _norm(prefix: str) -> str:
    return str(ipaddress.ip_network(prefix, strict=False))


@contextlib.contextmanager
def differential_lab() -> Iterator[Differential]:
    """A lab (OVN central with the NB columns OVN-native CMSs write; FRR of node1 and node2,
    linked to tor1, only for the links the fixed shapes use) and OVN 26.03 beside it."""
    spec = LabSpec(
        nodes=(NodeSpec("node1", bgp=False), NodeSpec("node2", bgp=False)),
        peers=(PeerSpec("tor1", 65001, bgp=False),),
        links=(LinkSpec("node1", "tor1"), LinkSpec("node2", "tor1")),
        nb_bgp_columns=True,
    )
    with Lab(spec) as lab:
        native = NativeOvn(sid_root(), lab.rundir / "native", lab.netns("ovn"))
        native.start()
        try:
            yield Differential(lab, native)
        finally:
            native.stop()


class Differential:
    def __init__(self, lab: Lab, native: NativeOvn) -> None:
        assert lab.ovn is not None
        self.lab = lab
        self.ovn = lab.ovn
        self.native = native
        for i, ch in enumerate(CHASSIS, start=1):
            self.ovn.sbctl("--may-exist", "chassis-add", ch, "geneve", f"127.0.0.{i}")
            native.sbctl("--may-exist", "chassis-add", ch, "geneve", f"127.0.0.{i}")

    def load(self, cases: Sequence[Case]) -> None:
        """Every case's commands in both NBs (one ovn-nbctl run per case and NB), then the
        bindings in both SBs once each northd made them (one transaction each)."""
        for case in cases:
            self.apply([cmd for case in [case] for cmd in case.commands])
        self.bind([b for case in cases for b in case.bindings])

    def apply(self, commands: Sequence[Sequence[str]]) -> None:
        """ovn-nbctl commands, in one run on each NB."""
        args: list[str] = []
        for cmd in commands:
            args += ["--", *cmd]
        if args:
            self.ovn.nbctl(*args[1:])
            self.native.nbctl(*args[1:])

    def nbctl(self, *args: str) -> str:
        """One ovn-nbctl run on both NBs (what the lab's gave)."""
        self.native.nbctl(*args)
        return self.ovn.nbctl(*args)

    def bind(self, bindings: Sequence[tuple[str, str]]) -> None:
        """Bind logical ports to chassis in both SBs (as their ovn-controllers would)."""
        self.native.sync()
        self.ovn.nbctl("--wait=sb", "sync")
        for transact in (lambda ops: self.ovn.transact(ops, db="OVN_Southbound"),
                         self.native.transact):  # fmt: skip
            _bind(transact, bindings)

    def clear(self) -> None:
        """Every router, switch, NAT, LB and group of both NBs (SB follows)."""
        for nbctl in (self.ovn.nbctl, self.native.nbctl):
            args: list[str] = []
            for table in ("Logical_Router", "Logical_Switch", "Load_Balancer_Group",
                          "Load_Balancer"):  # fmt: skip
                for uuid in nbctl("--bare", "--columns=_uuid", "list", table).split():
                    args += ["--", "destroy", table, uuid]
            if args:
                nbctl(*args[1:])

    def ovn_frr(self, chassis: str) -> set[Route]:
        """What ovn-frr announces from ``chassis``: its reader's state (this chassis' share),
        its advertise core."""
        reader = OvnReader(nb_connection(self.ovn.nb, chassis),
                           sb_connection(self.ovn.sb, chassis), chassis)  # fmt: skip
        try:
            state = wait_for(lambda: reader.read(wait_s=2.0), timeout=30,
                             what=f"ovn-frr's state of {chassis}")  # fmt: skip
        except LabError:
            raise
        finally:
            reader.close()
        return {(a.vrf, _norm(str(a.prefix))) for a in announcements(state)}

    def oracle_answer(self, chassis: str) -> set[Route]:
        """What the soak's oracle (docs/intent.md, written apart from the agent) says."""
        nb = oracle.read_nb(self.ovn.transact)
        bound = oracle.read_bindings(lambda ops: self.ovn.transact(ops, db="OVN_Southbound"))
        return {(vrf, _norm(str(p))) for vrf, ps in oracle.announcements(nb, bound, chassis).items()
                for p in ps}  # fmt: skip

    def native_answer(self, chassis: str) -> set[Route]:
        return {(vrf, _norm(p)) for vrf, ps in self.native.installed(chassis).items() for p in ps}

    def unexplained(self) -> dict[str, list[Difference]]:
        """Per chassis: the differences neither side explains, ovn-frr's and the soak
        oracle's (which must mean what OVN means as well)."""
        out: dict[str, list[Difference]] = {}
        for ch in CHASSIS:
            diffs = [d for d in self.compare(ch) if not d.reason]
            theirs = self.compare(ch, self.oracle_answer(ch))
            diffs += [replace(d, only=f"oracle/{d.only}") for d in theirs if not d.reason]
            out[ch] = diffs
        return out

    def report(self) -> tuple[dict[str, list[Difference]], collections.Counter[str]]:
        """The unexplained differences per chassis (:meth:`unexplained`), and ovn-frr's
        explained ones counted by reason."""
        kept: collections.Counter[str] = collections.Counter()
        for ch in CHASSIS:
            kept.update(x.reason.split(" (")[0] for x in self.compare(ch) if x.reason)
        return self.unexplained(), kept

    def compare(self, chassis: str, ours: set[Route] | None = None) -> list[Difference]:
        """``ours``: what ovn-frr announces (default: :meth:`ovn_frr`)."""
        ours = self.ovn_frr(chassis) if ours is None else ours
        theirs = self.native_answer(chassis)
        kinds = self.sources()
        out = [Difference(r, "ovn", explain(r, "ovn", kinds)) for r in sorted(theirs - ours)]
        out += [Difference(r, "ovn-frr", explain(r, "ovn-frr", kinds))
                for r in sorted(ours - theirs)]  # fmt: skip
        return out

    def sources(self) -> Mapping[str, set[str]]:
        """Prefix -> the kinds of NB objects it comes from (for :func:`explain`)."""
        out: dict[str, set[str]] = {}
        rows = self.ovn.transact(
            [
                {
                    "op": "select",
                    "table": "Logical_Router_Static_Route",
                    "where": [],
                    "columns": ["ip_prefix", "policy", "nexthop"],
                }
            ]
        )
        for r in rows[0]["rows"]:
            policy = r["policy"] if isinstance(r["policy"], str) else "dst-ip"
            kind = "src-ip" if policy == "src-ip" else ("discard" if r["nexthop"] == "discard"
                                                         else "static")  # fmt: skip
            out.setdefault(_norm(r["ip_prefix"]), set()).add(kind)
        return out


def _bind(transact: Callable[[list[dict[str, Any]]], list[Any]],
          bindings: Sequence[tuple[str, str]]) -> None:  # fmt: skip
    ports = {p for p, _c in bindings}

    def present() -> bool:
        (rows,) = transact([{"op": "select", "table": "Port_Binding", "where": [],
                             "columns": ["logical_port"]}])  # fmt: skip
        return ports <= {r["logical_port"] for r in rows["rows"]}

    wait_for(present, timeout=30, what=f"the bindings of {len(ports)} ports")
    (chassis,) = transact([{"op": "select", "table": "Chassis", "where": [],
                            "columns": ["_uuid", "name"]}])  # fmt: skip
    uuid = {r["name"]: r["_uuid"] for r in chassis["rows"]}
    transact([{"op": "update", "table": "Port_Binding",
               "where": [["logical_port", "==", port]], "row": {"chassis": uuid[ch]}}
              for port, ch in bindings])  # fmt: skip


#: the differences docs/intent.md keeps, by what the prefix is
KEPT = {
    "default": "a default route is never announced (it would draw the fabric's traffic to "
    "the node; docs/intent.md)",
    "src-ip": "a source route says where traffic from a prefix goes, not that the prefix is "
    "reachable: not announced (OVN 26.03 announces it as a destination; docs/intent.md)",
}


def explain(route: Route, only: str, sources: Mapping[str, Iterable[str]]) -> str:
    """The documented reason for a difference, or ""."""
    _vrf, prefix = route
    kinds = set(sources.get(prefix, ()))
    if only == "ovn" and prefix in ("0.0.0.0/0", "::/0"):
        return KEPT["default"]
    if only == "ovn" and kinds == {"src-ip"}:
        return KEPT["src-ip"]
    return ""
