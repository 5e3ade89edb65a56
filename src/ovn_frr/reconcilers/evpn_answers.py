"""The ARP/ND answers of EVPN L2: the remote IPs zebra installed (type-2 MAC+IP, as
``extern_learn`` neighbours on a VNI's bridge) -> the responder flows of that VNI's OVS bridge,
so that OVN's ports are answered on this chassis (docs/evpn.md).

A pipeline of its own beside the EVPN pass (:mod:`ovn_frr.reconcilers.evpn`), on a thread of
its own: its inputs are the VNIs the pass has wired (:class:`Wiring`, published by the pass)
and the kernel's neighbours, whose changes wake it alone. The pass's FDB dump (20k entries with
10k remote MACs, up to 0.6 s while zebra is installing them) never holds back an answer.

Each step reads the neighbours of every wired VNI and sends what differs from the flows it last
sent (one OpenFlow bundle). A step with nothing to send asks for the table's flow count (at
most every ``check_s`` / 2; the periodic step every ``check_s`` is one), a step that sent a
change only once the last count is ``2 * check_s`` old (one more ``ovs-ofctl`` run would be a
third of an answer's time at 1k remote IPs; remote IPs that change all the time still have
their table checked). A table whose count differs (flows changed behind ovn-frr's back, OVS
restarted), a bridge the pass made again, and every table once a minute are replaced in full
(``ovs-ofctl replace-flows``: OVS compares, only the differences are sent).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ovn_frr.core.evpn import ANSWER_COOKIE, is_answer, responder_flows
from ovn_frr.core.model import Address, Network
from ovn_frr.kernel.evpn import KernelEvpn
from ovn_frr.reconcilers.base import Cell, Sample, Signal, TracePart, Worker
from ovn_frr.vswitch.bridges import LocalOvs

log = logging.getLogger(__name__)

#: answers that only go are held back at most this long while the kernel keeps changing
HOLD_MAX_S = 1.0
#: the flow table of a VNI's OVS bridge is replaced in full (compared with what OVS holds,
#: only differences sent) at least this often; in between only what changed is sent
FLOWS_FULL_S = 60.0


@dataclass(frozen=True, slots=True)
class Wiring:
    """One VNI whose OVS bridge ovn-controller has patched to the integration bridge."""

    vni: int
    #: the kernel bridge (its neighbours are the remote IPs)
    bridge: str
    ovs_bridge: str
    #: OpenFlow ports of the OVS bridge: toward br-int, toward the kernel bridge
    patch: int
    port: int
    #: how often the pass made (or repaired) this OVS bridge: a new one is sent in full
    epoch: int = 0


@dataclass(frozen=True, slots=True)
class Answered:
    """One VNI as the last step left it."""

    flows: int
    remote_ips: int


class _Asked:
    """What the monitor asks while a step reads the neighbours: the IPs answered before the
    step count as answered (one of them gone wakes the answers, and tells the step that zebra
    is still removing: :meth:`EvpnAnswers._held_back`), no other (a deletion of a local IP
    ovn-frr writes must not wake them, 10k of them in a withdrawal); each one asked is kept:
    one of them among the IPs the step found wakes the answers again once it is done (it may
    have gone after the read)."""

    def __init__(self, before: frozenset[str]) -> None:
        self.before = before
        self.ips: set[str] = set()

    def __contains__(self, item: object) -> bool:
        self.ips.add(str(item))
        return item in self.before


@dataclass
class _Sent:
    flows: frozenset[str]
    #: when the table was last replaced in full, and for which epoch of the bridge
    full_at: float
    epoch: int
    #: when its flow count was last found right
    checked_at: float
    #: what the flows were made of: the wiring and the remote IPs
    wiring: Wiring
    remote: Mapping[Address, str]


class EvpnAnswers:
    name = "evpn-answers"

    def __init__(
        self,
        wiring: Cell[tuple[Wiring, ...]],
        kernel: KernelEvpn,
        ovs: LocalOvs,
        check_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.wiring = wiring
        self.kernel = kernel
        self.ovs = ovs
        self.check_s = check_s
        self.clock = clock
        #: the kernel's neighbours changed on a watched bridge
        self.neigh_changed = Signal("kernel-neigh")
        self.watches: tuple[Signal, ...] = (wiring, self.neigh_changed)
        self.io = Worker(self.name)
        #: VNI -> what its table holds after the last step
        self.last: Mapping[int, Answered] = {}
        #: the remote IPs answered (as ``ip monitor`` shows them): one of them gone wakes this
        #: pipeline, a local IP ovn-frr deletes does not (:meth:`KernelMonitor.neighbour`)
        self._answered: frozenset[str] = frozenset()
        self._reading: _Asked | None = None
        self._problems: tuple[str, ...] = ()
        #: OVS bridge -> the flows last sent to it
        self._sent: dict[str, _Sent] = {}
        #: remote neighbour changes the kernel monitor has seen (:meth:`touch`), and their
        #: count when the running step began
        self.touched = 0
        self._touched_before = 0
        #: OVS bridge -> since when its deletions have been held back (:meth:`_held_back`)
        self._holding: dict[str, float] = {}

    async def step(self) -> float | None:
        wiring = self.wiring.value
        if not wiring and not self._sent:
            self.last, self._problems, self._answered = {}, (), frozenset()
            return None
        self._reading = asked = _Asked(self._answered)
        self._touched_before = self.touched
        try:
            self.last, self._problems = await self.io(self._pass, wiring)
        finally:
            self._reading = None
        if asked.ips & self._answered:
            self.neigh_changed.notify()
        if not wiring:
            return None
        # held-back deletions go at the latest when their hold ends, whatever wakes this
        return min([self.clock() + self.check_s,
                    *(t + HOLD_MAX_S for t in self._holding.values())])  # fmt: skip

    def touch(self) -> None:
        """The kernel monitor saw a change of remote neighbours (at once, on the event loop)."""
        self.touched += 1

    def answered(self) -> Container[str]:
        """The remote IPs answered (while a step reads: see :class:`_Asked`)."""
        return self._answered if self._reading is None else self._reading

    def _pass(self, wiring: tuple[Wiring, ...]) -> tuple[dict[int, Answered], tuple[str, ...]]:
        for gone in set(self._sent) - {w.ovs_bridge for w in wiring}:
            del self._sent[gone]  # its VNI went: the pass removed the bridge
            self._holding.pop(gone, None)
        out: dict[int, Answered] = {}
        problems: list[str] = []
        answered: set[str] = set()
        for w in wiring:
            # one VNI's failure is its own
            try:
                t0 = self.clock()
                _, remote = self.kernel.read_neighbours(w.bridge, remote_only=True)
                t1 = self.clock()
                answered.update(map(str, remote))
                out[w.vni] = Answered(self._send(w, remote), len(remote))
                log.debug("evpn_answers vni=%d remote_ips=%d neigh=%.0f flows=%.0f ms", w.vni,
                          len(remote), (t1 - t0) * 1e3, (self.clock() - t1) * 1e3)  # fmt: skip
            except (OSError, ValueError) as exc:  # ValueError: output that is not JSON
                log.error("evpn_answers_failed vni=%d error=%s", w.vni, exc)
                problems.append(f"VNI {w.vni}: ARP/ND answers not sent to {w.ovs_bridge}: {exc}")
        self._answered = frozenset(answered)
        return out, tuple(problems)

    def _send(self, w: Wiring, remote: Mapping[Address, str]) -> int:
        """Make ``w``'s table answer ``remote``; returns its flow count."""
        sent = self._sent.get(w.ovs_bridge)
        now = self.clock()
        delta = sent is not None and sent.epoch == w.epoch and now - sent.full_at <= FLOWS_FULL_S
        if (delta and sent is not None and sent.wiring == w
                and remote.items() < sent.remote.items()
                and self._held_back(w.ovs_bridge, now)):  # fmt: skip
            # (before the flows are made: 10k of them are ~0.1 s of CPU while zebra works)
            log.debug("evpn_answers_held vni=%d going=%d (the kernel is still changing)",
                      w.vni, len(sent.remote) - len(remote))  # fmt: skip
            return len(sent.flows)
        self._holding.pop(w.ovs_bridge, None)
        flows = responder_flows(str(w.patch), str(w.port), remote)
        want = frozenset(flows)
        if delta and sent is not None:
            due = self.check_s / 2
            if want != sent.flows:  # what changed, at once
                self._change(w.ovs_bridge, want, sent.flows)
                sent.flows = want
                due = 2 * self.check_s
            sent.wiring, sent.remote = w, remote
            if now - sent.checked_at < due:
                return len(flows)
            if self.ovs.flow_count(w.ovs_bridge) == len(want):
                sent.checked_at = now
                return len(flows)
        # the table as OVS holds it (new, changed behind ovn-frr's back, or due for its
        # periodic replacement), made exactly the desired one
        self.ovs.replace_flows(w.ovs_bridge, flows)
        self._sent[w.ovs_bridge] = _Sent(want, now, w.epoch, now, w, remote)
        return len(flows)

    def _held_back(self, bridge: str, now: float) -> bool:
        """Whether answers that only go wait for the next step: the kernel's remote neighbours
        changed again while this step read them, so zebra is still removing a VTEP's hosts
        (10k: 0.5 s) and the next step, woken once it is done, deletes them all at once. A
        step sent in the middle of it re-added the thousands that stay, on a CPU zebra needed
        (0.35 s instead of 0.03 s). Never for longer than :data:`HOLD_MAX_S`."""
        if self.touched == self._touched_before:
            return False
        return now - self._holding.setdefault(bridge, now) < HOLD_MAX_S

    def _change(self, bridge: str, want: frozenset[str], has: frozenset[str]) -> None:
        add, delete = want - has, has - want
        kept = {f for f in want & has if is_answer(f)}
        if sum(map(is_answer, delete)) <= len(kept):
            self.ovs.change_flows(bridge, sorted(add), sorted(delete))
            return
        # more answers go than stay (a VTEP withdrew its hosts): one request deletes every
        # answer and those that stay are added back, in the same bundle (OVN's ports never
        # see them gone)
        self.ovs.change_flows(bridge, sorted(add | kept),
                              sorted(f for f in delete if not is_answer(f)),
                              clear=ANSWER_COOKIE)  # fmt: skip

    # --- status, metrics, trace: the EVPN pipeline's (it shows these counts per VNI) -------

    def status(self, now: float) -> dict[str, Any]:
        return {}

    def problems(self, now: float) -> list[str]:
        return list(self._problems)

    def samples(self) -> Iterable[Sample]:
        for vni, a in sorted(self.last.items()):
            yield Sample(
                "ovnfrr_evpn_answer_flows",
                "gauge",
                "Flows of the VNI's OVS bridge (ARP/ND answers for remote IPs, and its wiring)",
                a.flows,
                (("vni", str(vni)),),
            )

    async def trace(self, prefix: Network) -> TracePart:
        return TracePart()

    async def close(self) -> None:
        self.io.close()
