"""Routes of an earlier bgpd that zebra keeps for good, found and reported (part of import).

After an unclean FRR restart zebra reads its own routes back from the kernel, marks them
(``ZEBRA_FLAG_SELFROUTE``) and sweeps those no client gave again ``-K`` seconds after it
started; started without ``-K`` (FRR < 10.7) it sweeps before it has read them all, and the
rest stay for good (docs/frr.md). They are BGP routes to FPM, so they reach OVN like any other,
though no peer announces them any more. :class:`SelfRoutes` reads zebra's routes
(:class:`SelfRouteCheck`) ``after_s`` after each FPM replay of a zebra that does not sweep
later, and reports the ones still marked (status, problems, a log line) until none is left.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ovn_frr.fpm.peer import Zebra
from ovn_frr.frr.show import self_routes

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SelfRouteCheck:
    """How to read zebra's routes: ``read`` gives the JSON of ``show ip route vrf all json``
    and its IPv6 twin; ``after_s`` after a replay (bgpd has re-learned what it will); a RIB
    over ``max_routes`` is not read (the JSON of 200k routes is ~200 MB)."""

    read: Callable[[], Iterable[Any]]
    after_s: float = 60.0
    max_routes: int = 200_000


class SelfRoutes:
    def __init__(
        self,
        check: SelfRouteCheck | None,
        clock: Callable[[], float],
        again_s: float,
        found_some: Callable[[], None] = lambda: None,
    ) -> None:
        self.check = check
        self.clock = clock
        #: while some are found, they are looked for again this often
        self.again_s = again_s
        self._found_some = found_some
        #: the prefixes found at the last read (in a VRF: "VRF:prefix")
        self.found: tuple[str, ...] = ()
        #: why the last read did not happen or failed ("" it did)
        self.note = ""
        #: when the next read is due (None: none is)
        self.due: float | None = None
        self._task: asyncio.Future[None] | None = None

    def replayed(self, zebra: Zebra | None) -> None:
        """zebra replayed its RIB: a read is due ``after_s`` later, unless zebra sweeps itself
        (started with ``-K``)."""
        if self.check is not None and (zebra is None or zebra.sweep_option is None):
            self.due = self.clock() + self.check.after_s

    def poll(self, rib_routes: int) -> None:
        """Start the read when due (in a thread; not awaited: the import goes on)."""
        check = self.check
        if check is None or self.due is None or self.clock() < self.due:
            return
        if self._task is not None and not self._task.done():
            return
        self.due = None
        if rib_routes > check.max_routes:
            self.note = f"not checked: {rib_routes} routes (more than {check.max_routes})"
            return
        self._task = asyncio.ensure_future(self._read(check))

    async def _read(self, check: SelfRouteCheck) -> None:
        try:
            docs = await asyncio.to_thread(lambda: list(check.read()))
        except Exception as exc:  # FRR restarting, say: again after the next replay
            self.note = f"not checked: {exc}"
            return
        found = tuple(sorted({p for doc in docs for p in self_routes(doc)}))
        if found and found != self.found:
            log.warning("zebra_stale_routes count=%d sample=%s: routes of an earlier bgpd that "
                        "zebra read back from the kernel and kept (an unclean FRR restart, "
                        "zebra without -K); they are imported like any BGP route (docs/frr.md)",
                        len(found), ",".join(found[:3]))  # fmt: skip
        elif not found:  # once per replay: the check ran and found none (again)
            log.info("zebra_stale_routes count=0%s", " (gone)" if self.found else "")
        self.found, self.note = found, ""
        if found:  # until they are gone
            self.due = self.clock() + self.again_s
            self._found_some()

    def status(self) -> dict[str, Any]:
        return {"stale_self_routes": len(self.found),
                "stale_self_routes_sample": list(self.found[:10]),
                "stale_check": self.note}  # fmt: skip

    def problems(self) -> list[str]:
        if not self.found:
            return []
        return [f"zebra keeps {len(self.found)} route(s) of an earlier bgpd (e.g. "
                f"{self.found[0]}) that no peer announces now: an unclean FRR restart with "
                "zebra started without -K; restart FRR with zebra's --graceful_restart "
                "(docs/frr.md)"]  # fmt: skip

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
