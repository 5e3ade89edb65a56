"""Routes of an earlier bgpd that zebra keeps: found in zebra's JSON, read after a replay of a
zebra that does not sweep later, reported until gone."""

from __future__ import annotations

import asyncio
from typing import Any

from ovn_frr.fpm.peer import Zebra
from ovn_frr.frr.show import self_routes
from ovn_frr.reconcilers.selfroutes import SelfRouteCheck, SelfRoutes


def entry(protocol: str, flags: int) -> dict[str, Any]:
    # as FRR 8.4.4 shows a route (show ip route json), trimmed
    return {"protocol": protocol, "selected": True, "internalStatus": 16,
            "internalFlags": flags, "nexthops": [{"ip": "10.255.0.2", "active": True}]}  # fmt: skip


def test_the_bgp_routes_marked_as_read_back_are_found_in_one_vrf_or_several() -> None:
    flat = {"198.18.0.0/31": [entry("bgp", 10)],  # selected | self route: an earlier bgpd's
            "198.18.0.2/31": [entry("bgp", 8)],  # selected, given by bgpd
            "10.255.0.0/24": [entry("connected", 10)],
            "198.18.0.4/31": [entry("bgp", 8), entry("bgp", 2)]}  # fmt: skip
    assert self_routes(flat) == ["198.18.0.0/31", "198.18.0.4/31"]
    nested = {"default": flat, "red": {"198.18.9.0/31": [entry("bgp", 10)]}}
    assert self_routes(nested) == ["198.18.0.0/31", "198.18.0.4/31", "red:198.18.9.0/31"]
    assert self_routes({}) == [] and self_routes([]) == []


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_read_after_a_replay_of_a_zebra_without_k_reported_until_gone() -> None:
    clock = Clock()
    docs: list[Any] = [{"198.18.0.0/31": [entry("bgp", 10)]}, {}]
    found: list[None] = []
    check = SelfRoutes(SelfRouteCheck(lambda: docs, after_s=60), clock, again_s=120,
                       found_some=lambda: found.append(None))  # fmt: skip

    async def scenario() -> None:
        check.replayed(Zebra(1, ("/usr/lib/frr/zebra", "-d", "-K60")))
        assert check.due is None  # it sweeps itself
        check.replayed(Zebra(2, ("/usr/lib/frr/zebra", "-d")))
        assert check.due == 160.0
        check.poll(10)
        assert check._task is None  # not yet
        clock.now = 160.0
        check.poll(10)
        assert check._task is not None
        await check._task
        assert check.found == ("198.18.0.0/31",) and found
        assert "earlier bgpd" in check.problems()[0]
        assert check.due == 280.0  # looked for again while any is left
        docs[0] = {"198.18.0.0/31": [entry("bgp", 8)]}  # bgpd learned it again
        clock.now = 280.0
        check.poll(10)
        assert check._task is not None
        await check._task
        assert check.found == () and check.problems() == [] and check.due is None

    asyncio.run(scenario())


def test_a_rib_too_large_to_read_is_said_so() -> None:
    clock = Clock()
    check = SelfRoutes(SelfRouteCheck(lambda: [], after_s=0, max_routes=1000), clock, 120)
    check.replayed(None)
    check.poll(1001)
    assert check.status()["stale_check"].startswith("not checked: 1001 routes")
