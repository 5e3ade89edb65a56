"""The FPM RIB reducer: coalescing, next-hop groups, replay mark-and-sweep."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from ovn_frr.core.model import Hop, RibSnapshot
from ovn_frr.fpm import FpmFramer, NexthopMessage, RouteMessage, decode
from ovn_frr.fpm.netlink import NextHop
from ovn_frr.fpm.rib import Rib

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fpm"
P = ipaddress.ip_network("198.51.100.0/24")
GW1 = ipaddress.ip_address("10.255.0.2")
GW2 = ipaddress.ip_address("10.255.1.2")


def add(prefix: str = "198.51.100.0/24", *gws: str, nh_id: int | None = None) -> RouteMessage:
    hops = tuple(NextHop(ipaddress.ip_address(g), 2) for g in gws)
    return RouteMessage(True, False, str(ipaddress.ip_network(prefix)), 254, 186, "unicast", hops,
                        nh_id, 20)  # fmt: skip


def delete(prefix: str = "198.51.100.0/24") -> RouteMessage:
    net = str(ipaddress.ip_network(prefix))
    return RouteMessage(False, False, net, 254, 186, "unspec", (), None, None)


def gws(snap: RibSnapshot, prefix: str = "198.51.100.0/24") -> set[str]:
    route = snap.table(254).get(str(ipaddress.ip_network(prefix)))
    return set() if route is None else {str(h.gateway) for h in route.hops}


def test_delete_followed_by_add_never_leaves_the_snapshot() -> None:
    rib = Rib(coalesce=0.05)
    rib.apply([add(str(P), str(GW1))], now=0.0)
    rib.apply([delete()], now=1.0)
    assert gws(rib.snapshot()) == {"10.255.0.2"}  # held, not gone
    rib.apply([add(str(P), str(GW1), str(GW2))], now=1.001)
    rib.tick(now=2.0)
    assert gws(rib.snapshot()) == {"10.255.0.2", "10.255.1.2"}


def test_a_real_delete_commits_after_the_window() -> None:
    rib = Rib(coalesce=0.05)
    rib.apply([add(str(P), str(GW1))], now=0.0)
    rib.apply([delete()], now=1.0)
    assert rib.tick(now=1.01) == 1.05  # next deadline for the caller's timer
    assert gws(rib.snapshot())
    assert rib.tick(now=1.05) is None
    assert gws(rib.snapshot()) == set()


def test_group_before_members_resolves_when_complete() -> None:
    rib = Rib()
    group = NexthopMessage(True, 21, group=((13, 1), (22, 1)))
    rib.apply([group, add(str(P), nh_id=21)], now=0.0)
    assert gws(rib.snapshot()) == set()  # unresolved, not dropped
    rib.apply([NexthopMessage(True, 13, GW1, 2)], now=0.1)
    assert gws(rib.snapshot()) == set()
    rib.apply([NexthopMessage(True, 22, GW2, 3)], now=0.2)
    assert gws(rib.snapshot()) == {"10.255.0.2", "10.255.1.2"}


def test_update_waiting_for_next_hops_keeps_the_previous_resolution() -> None:
    rib = Rib()
    rib.apply([NexthopMessage(True, 13, GW1, 2), add(str(P), nh_id=13)], now=0.0)
    rib.apply([delete(), add(str(P), nh_id=30)], now=1.0)  # group 30 not yet known
    rib.tick(now=5.0)
    assert gws(rib.snapshot()) == {"10.255.0.2"}
    rib.apply([NexthopMessage(True, 30, GW2, 3)], now=5.1)
    assert gws(rib.snapshot()) == {"10.255.1.2"}


def test_group_changed_in_place_re_resolves_its_routes() -> None:
    rib = Rib()
    rib.apply([NexthopMessage(True, 13, GW1, 2), NexthopMessage(True, 22, GW2, 3)], now=0)
    rib.apply([NexthopMessage(True, 21, group=((13, 1), (22, 1))), add(str(P), nh_id=21)], now=0)
    rib.apply([NexthopMessage(True, 21, group=((13, 1),))], now=1)
    assert gws(rib.snapshot()) == {"10.255.0.2"}


def test_a_member_changed_in_place_re_resolves_the_routes_of_its_groups() -> None:
    """zebra redefines a next hop under its id: the routes on it, directly or through a group,
    follow; the others are not touched."""
    gw3 = ipaddress.ip_address("10.255.2.2")
    rib = Rib()
    rib.apply([NexthopMessage(True, 13, GW1, 2), NexthopMessage(True, 22, GW2, 3),
               NexthopMessage(True, 21, group=((13, 1), (22, 1))), add(str(P), nh_id=21),
               add("10.1.0.0/16", nh_id=13), add("10.2.0.0/16", nh_id=22)], now=0)  # fmt: skip
    rib.snapshot()
    rib.apply([NexthopMessage(True, 13, gw3, 4)], now=1)
    snap = rib.snapshot()
    assert gws(snap) == {"10.255.2.2", "10.255.1.2"} and gws(snap, "10.1.0.0/16") == {"10.255.2.2"}
    assert snap.changed == {254: frozenset({str(P), "10.1.0.0/16"})}


def test_a_new_zebra_reusing_an_id_does_not_re_resolve_a_route_it_has_not_replayed() -> None:
    """Next-hop ids belong to one zebra run: until the new zebra replays a route, the route
    keeps its last resolution even if an id of the new run has its old id's number."""
    rib = Rib(replay_quiet=1.0)
    rib.apply([NexthopMessage(True, 13, GW1, 2), add(str(P), nh_id=13)], now=0)
    rib.connected(now=10.0, restarted=False)  # (no ECMP legs held: see the test below)
    rib.apply([NexthopMessage(True, 13, GW2, 3), add("10.1.0.0/16", nh_id=13)], now=10.1)
    snap = rib.snapshot()
    assert gws(snap) == {"10.255.0.2"} and gws(snap, "10.1.0.0/16") == {"10.255.1.2"}
    rib.apply([add(str(P), nh_id=13)], now=10.2)  # replayed: now on the new run's 13
    assert gws(rib.snapshot()) == {"10.255.1.2"}


def test_the_rib_does_not_depend_on_where_the_stream_is_split() -> None:
    """One read or two: a next hop changed then deleted, a route's id added then deleted, a
    group completed before the route moves to an unknown id end in the same RIB."""
    gw3 = ipaddress.ip_address("10.255.2.2")
    streams: list[list[list[NexthopMessage | RouteMessage]]] = [
        [[NexthopMessage(True, 1, GW1, 2), add(str(P), nh_id=1)],
         [NexthopMessage(True, 1, GW2, 2), NexthopMessage(False, 1)]],
        [[add(str(P), nh_id=6)], [NexthopMessage(True, 6, gw3, 2), NexthopMessage(False, 6)]],
        [[NexthopMessage(True, 5, group=((4, 2),)), add(str(P), nh_id=5)],
         [NexthopMessage(True, 4, GW2, 2), add(str(P), nh_id=3)]],
    ]  # fmt: skip
    for stream in streams:
        whole, split = Rib(), Rib()
        for batch in stream:
            whole.apply(batch, 0)
            for m in batch:
                split.apply([m], 0)
        assert gws(whole.snapshot()) == gws(split.snapshot()) != set()


def test_a_second_restart_after_every_held_route_went_holds_the_routes_of_the_first() -> None:
    rib = Rib(replay_quiet=1.0, replay_hold=0.5)
    rib.apply([add("10.1.0.0/16", str(GW1))], 0)
    rib.connected(10.0)
    rib.apply([delete("10.1.0.0/16")], 10.1)
    rib.tick(10.2)  # deleted during the replay: nothing held any more
    rib.apply([add("10.3.0.0/16", str(GW1), str(GW2))], 10.3)
    rib.connected(10.4)  # zebra restarts again before the sweep
    rib.apply([add("10.3.0.0/16", str(GW1))], 10.5)  # one leg re-learned so far
    assert gws(rib.snapshot(), "10.3.0.0/16") == {"10.255.0.2", "10.255.1.2"}


def test_replay_sweeps_only_what_was_not_refreshed() -> None:
    rib = Rib(replay_quiet=1.0)
    rib.apply([add("10.1.0.0/16", str(GW1)), add("10.2.0.0/16", str(GW1))], now=0.0)
    rib.connected(now=10.0)
    rib.apply([add("10.1.0.0/16", str(GW1))], now=10.2)
    snap = rib.snapshot()
    assert snap.replaying
    assert gws(snap, "10.2.0.0/16") == {"10.255.0.2"}  # stale but kept during the replay
    assert rib.tick(now=10.9) == 11.2
    rib.tick(now=11.2)
    snap = rib.snapshot()
    assert not snap.replaying
    assert gws(snap, "10.1.0.0/16") == {"10.255.0.2"}
    assert gws(snap, "10.2.0.0/16") == set()


def test_version_changes_only_on_real_changes() -> None:
    rib = Rib()
    rib.apply([add(str(P), str(GW1))], now=0)
    v = rib.version
    rib.apply([delete(), add(str(P), str(GW1))], now=1)
    rib.tick(now=2)
    assert rib.version == v


def _replay_fixture(name: str) -> RibSnapshot:
    rib = Rib()
    framer = FpmFramer()
    rib.connected(now=0.0)
    for payload in framer.feed((FIXTURES / name).read_bytes()):
        rib.apply(decode(payload), now=0.0)
    rib.tick(now=100.0)
    return rib.snapshot()


def test_captured_streams_end_in_the_same_rib() -> None:
    """With and without next-hop groups, zebra's stream leaves the same selected routes."""
    a, b = _replay_fixture("ecmp-nhg.bin"), _replay_fixture("ecmp-inline.bin")
    bgp_a = {p: r.hops for p, r in a.table(254).items() if r.protocol == 186}
    bgp_b = {p: r.hops for p, r in b.table(254).items() if r.protocol == 186}
    assert set(bgp_a) == {str(P), "2001:db8:100::/48"}
    assert set(bgp_a) == set(bgp_b)
    assert bgp_a[str(P)] == bgp_b[str(P)] == frozenset({Hop(GW1, 2)})


def test_replay_hold_keeps_stale_routes_until_frr_relearned_them() -> None:
    """FRR restart: zebra replays connected routes at once, BGP routes come seconds later."""
    rib = Rib(replay_quiet=1.0, replay_hold=15.0)
    rib.apply([add("10.1.0.0/16", str(GW1))], now=0.0)
    rib.connected(now=100.0)
    assert rib.tick(now=101.5) == 115.0  # quiet, but the hold has not passed
    assert gws(rib.snapshot(), "10.1.0.0/16")
    rib.apply([add("10.1.0.0/16", str(GW2))], now=108.0)  # bgpd is back, new next hop
    rib.tick(now=115.0)
    snap = rib.snapshot()
    assert not snap.replaying
    assert gws(snap, "10.1.0.0/16") == {"10.255.1.2"}


def test_replay_keeps_ecmp_legs_until_the_sweep() -> None:
    """FRR restart: bgpd re-learns an ECMP route one session at a time; the legs it has not
    re-learned yet stay until the sweep, then only what zebra has is left."""
    rib = Rib(replay_quiet=1.0, replay_hold=15.0)
    rib.apply([NexthopMessage(True, 13, GW1, 2), NexthopMessage(True, 22, GW2, 3),
               NexthopMessage(True, 21, group=((13, 1), (22, 1))),
               add("10.1.0.0/16", nh_id=21), add("10.2.0.0/16", str(GW1), str(GW2))],
              now=0.0)  # fmt: skip
    both = {"10.255.0.2", "10.255.1.2"}
    rib.snapshot()
    rib.connected(now=100.0)
    # the restarted zebra: new ids; one session up so far
    rib.apply([NexthopMessage(True, 7, GW1, 2), add("10.1.0.0/16", nh_id=7),
               add("10.2.0.0/16", str(GW1))], now=101.0)  # fmt: skip
    snap = rib.snapshot()
    assert gws(snap, "10.1.0.0/16") == both and gws(snap, "10.2.0.0/16") == both
    assert not snap.changed  # nothing the importer must look at
    # the second session is back for 10.1 only
    rib.apply([NexthopMessage(True, 8, GW2, 3), NexthopMessage(True, 9, group=((7, 1), (8, 1))),
               add("10.1.0.0/16", nh_id=9)], now=105.0)  # fmt: skip
    rib.tick(now=115.0)  # the sweep
    snap = rib.snapshot()
    assert gws(snap, "10.1.0.0/16") == both
    assert gws(snap, "10.2.0.0/16") == {"10.255.0.2"}  # never re-learned: gone now
    assert snap.changed is not None and set(snap.changed[254]) == {"10.2.0.0/16"}


def test_next_hop_churn_leaves_no_references_behind() -> None:
    """1000 next-hop changes over 10 routes (new ids each time, as zebra allocates them):
    the RIB's indexes stay the size of what is in use."""
    rib = Rib()
    prefixes = [f"10.{i}.0.0/16" for i in range(10)]
    next_id = 1
    for rnd in range(100):
        msgs: list[NexthopMessage | RouteMessage] = []
        for prefix in prefixes:
            a, b, g = next_id, next_id + 1, next_id + 2
            next_id += 3
            gw = ipaddress.ip_address(f"10.255.{rnd % 7}.2")
            msgs += [
                NexthopMessage(True, a, GW1, 2),
                NexthopMessage(True, b, gw, 3),
                NexthopMessage(True, g, group=((a, 1), (b, 1))),
                add(prefix, nh_id=g),
            ]
        rib.apply(msgs, now=float(rnd))
        # zebra frees the ids no route uses any more
        rib.apply([NexthopMessage(False, i) for i in range(next_id - 60, next_id - 30)
                   if i > 0], now=float(rnd))  # fmt: skip
    assert len(rib) == 10
    assert len(rib._nh_count) <= 10  # one group id per route
    assert len(rib._group_users) <= 20 and len(rib._nexthops) <= 60


def test_a_reconnect_of_the_same_zebra_or_a_delete_is_not_widened() -> None:
    """Only a restarted zebra's replay holds next hops; an explicit delete ends the hold."""
    rib = Rib(replay_quiet=1.0, replay_hold=15.0)
    rib.apply([add("10.1.0.0/16", str(GW1), str(GW2)), add("10.2.0.0/16", str(GW1), str(GW2))],
              now=0.0)  # fmt: skip
    rib.connected(now=100.0, restarted=False)  # the same zebra: FPM reset and replay
    rib.apply([add("10.1.0.0/16", str(GW1))], now=101.0)  # BFD took a leg meanwhile
    assert gws(rib.snapshot(), "10.1.0.0/16") == {"10.255.0.2"}
    rib.tick(now=120.0)
    rib.connected(now=200.0)  # a restarted zebra
    rib.apply([delete("10.2.0.0/16")], now=201.0)
    rib.tick(now=201.1)  # deleted for real
    rib.apply([add("10.2.0.0/16", str(GW1))], now=202.0)
    assert gws(rib.snapshot(), "10.2.0.0/16") == {"10.255.0.2"}
