"""The advertise pipeline: the OVN state -> what this chassis announces, per VRF.

A pure step (:func:`~ovn_frr.core.advertise.announcements`); its result is published for the
FRR pipeline, the only writer of FRR, which turns it into ``network`` lines. Until the first OVN
state has been read nothing is published, and FRR keeps the ``network`` lines it has (an agent
restarted while NB is down withdraws nothing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ovn_frr.core.advertise import (
    Announcement,
    announcement_order,
    announcements,
    prefixes_by_vrf,
)
from ovn_frr.core.model import Network
from ovn_frr.core.native_routing import native_vrfs
from ovn_frr.core.ovn import OvnState
from ovn_frr.reconcilers.base import LIST_LIMIT, Cell, Sample, Signal, TracePart, Worker

#: VRF name ("" default) -> prefixes to announce; None: not known yet
#: VRF name -> prefixes: a mapping prefix -> next hop (None: FRR's own address) from OVN, any
#: collection of prefixes where none has a next hop
Networks = Mapping[str, Collection[Network]] | None


class AdvertiseReconciler:
    name = "advertise"

    def __init__(
        self,
        ovn: Cell[OvnState | None],
        out: Cell[Networks],
        redistribute: Cell[frozenset[str]] | None = None,
    ) -> None:
        self.ovn = ovn
        self.out = out
        #: the VRFs whose instance announces OVN's own routes (routers OVN 25.03+ serves
        #: natively: core.native_routing)
        self.redistribute: Cell[frozenset[str]] = redistribute or Cell("redistribute", frozenset())
        self.native: tuple[str, ...] = ()
        self.watches: tuple[Signal, ...] = (ovn,)
        self.cpu = Worker(self.name)
        self.items: frozenset[Announcement] = frozenset()

    async def step(self) -> float | None:
        state = self.ovn.value
        if state is None:
            return None
        # on a thread of its own: 10k VIPs must not hold up the event loop
        self.items, nets = await self.cpu(_announce, state)
        self.native = tuple(sorted(f"router {r.name} (VRF {r.routing.vrf}): {r.routing.native}"
                                   for r in state.routers if r.routing.native))  # fmt: skip
        self.redistribute.publish(native_vrfs(state))
        self.out.publish(nets)
        return None

    def status(self, now: float) -> dict[str, Any]:
        ordered = sorted(self.items, key=announcement_order)
        return {
            "advertised": [{"vrf": x.vrf or "default", "prefix": str(x.prefix),
                            "source": x.source, **_hop(x)} for x in ordered[:LIST_LIMIT]],
            "advertised_total": len(self.items),
            "advertised_by_vrf": self._by_vrf(),
            # routers OVN serves itself: their VRFs redistribute OVN's own kernel routes
            "native_routers": list(self.native),
            "redistribute_kernel": sorted(self.redistribute.value),
        }  # fmt: skip

    def _by_vrf(self) -> dict[str, int]:
        return dict(sorted(Counter(x.vrf or "default" for x in self.items).items()))

    def problems(self, now: float) -> list[str]:
        return []

    def samples(self) -> Iterable[Sample]:
        yield Sample("ovnfrr_routes_advertised", "gauge", "Prefixes announced from OVN intent",
                     len(self.items))  # fmt: skip
        for vrf, n in self._by_vrf().items():
            yield Sample("ovnfrr_vrf_routes_advertised", "gauge",
                         "Prefixes announced from OVN intent, by VRF", n,
                         (("vrf", vrf),))  # fmt: skip

    async def trace(self, prefix: Network) -> TracePart:
        ours = sorted((x for x in self.items if x.prefix == prefix), key=announcement_order)
        return TracePart(
            {"advertise": [{"vrf": x.vrf or "default", "source": x.source, **_hop(x)}
                           for x in ours]},
            tuple(f"OVN {x.source} -> announce {prefix} in VRF {x.vrf or 'default'}"
                  + (f" with next hop {x.next_hop}" if x.next_hop else "") for x in ours),
        )  # fmt: skip

    async def close(self) -> None:
        self.cpu.close()


def _hop(a: Announcement) -> dict[str, str]:
    """The next hop of an announcement, where it has one (status and trace)."""
    return {"next_hop": str(a.next_hop)} if a.next_hop else {}


def _announce(state: OvnState) -> tuple[frozenset[Announcement], Networks]:
    items = announcements(state)
    return items, prefixes_by_vrf(items)
