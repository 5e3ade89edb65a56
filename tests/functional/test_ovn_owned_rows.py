"""Several chassis write into one NB: each touches only the rows carrying its own marker."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ovn_frr.core.importer import diff_routes
from ovn_frr.core.model import DesiredRoute
from ovn_frr.lab import Lab, LabSpec, wait_for
from ovn_frr.lab.nbwatch import RouteMonitor, StaticRouteCount
from ovn_frr.ovn.bulk import BulkWriter, EarlierWriteLanded, WriteResult


def test_each_chassis_sweeps_only_its_own_rows(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(LabSpec())
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    nb("lr-add", "r1")
    nb("lr-route-add", "r1", "192.0.2.0/24", "10.0.0.254")  # the operator's own route
    router = {"r1": nb("--bare", "--columns=_uuid", "find", "Logical_Router", "name=r1")}
    a, b = BulkWriter(lab.ovn.nb, "chassis-a"), BulkWriter(lab.ovn.nb, "chassis-b")
    count = StaticRouteCount(lab.ovn.nb)  # the benchmarks' observer, checked on the way
    try:
        want_a = frozenset({DesiredRoute("r1", "198.51.100.0/24", "10.0.0.1", "p1")})
        want_b = frozenset({DesiredRoute("r1", "198.51.100.0/24", "10.0.0.2", "p2"),
                            DesiredRoute("r1", "203.0.113.0/24", "10.0.0.2", "p2")})  # fmt: skip
        created_a = a.new_rows(diff_routes(want_a, ()).add)
        created_b = b.new_rows(diff_routes(want_b, ()).add)
        assert a.write(created_a, (), router) == WriteResult(1, 0)
        assert b.write(created_b, (), router) == WriteResult(2, 0)
        wait_for(lambda: count.total() == 4, timeout=10, what="4 routes seen by the observer")

        # adoption: each sees exactly its own rows, by the UUIDs it created
        assert set(a.owned()[0]) == {r.uuid for r in created_a}
        assert set(b.owned()[0]) == {r.uuid for r in created_b}
        assert not diff_routes(want_a, a.owned()[0].values())  # nothing to change
        db = lab.ovn.rundir / "nb.db"
        size = db.stat().st_size
        assert (a.count_owned(), b.count_owned()) == (1, 2)
        assert db.stat().st_size == size  # counting committed nothing

        # chassis A withdraws everything it has: B's rows and the operator's row stay
        removed = diff_routes(frozenset(), a.owned()[0].values()).delete
        assert {r.uuid for r in removed} == {r.uuid for r in created_a}
        assert a.write((), removed, router) == WriteResult(0, 1)
        assert a.owned()[0] == {}
        assert (a.count_owned(), b.count_owned()) == (0, 2)
        assert set(b.owned()[0]) == {r.uuid for r in created_b}
        wait_for(lambda: count.total() == 3, timeout=10, what="3 routes seen by the observer")
        rows = {tuple(line.split()[:2]) for line in nb("lr-route-list", "r1").splitlines()[2:]}
        assert rows == {
            ("192.0.2.0/24", "10.0.0.254"),
            ("198.51.100.0/24", "10.0.0.2"),
            ("203.0.113.0/24", "10.0.0.2"),
        }
    finally:
        count.close()
        a.close()
        b.close()


def test_a_next_hop_change_is_one_transaction(make_lab: Callable[[LabSpec], Lab]) -> None:
    """NB (and so ovn-northd) never sees the prefix without a row while its next hop swaps;
    a router deleted and created again under its name is not written through its old UUID."""
    lab = make_lab(LabSpec())
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    nb("lr-add", "r1")
    router = {"r1": nb("--bare", "--columns=_uuid", "find", "Logical_Router", "name=r1")}
    writer = BulkWriter(lab.ovn.nb, "chassis-a", chunk=4)  # small chunks: several per write
    prefixes = [f"198.51.100.{4 * i}/30" for i in range(6)]
    with RouteMonitor(lab.ovn.nb) as monitor:
        try:
            rows = writer.new_rows([DesiredRoute("r1", p, "10.0.0.1", "") for p in prefixes])
            writer.write(rows, (), router)
            for p in prefixes:
                monitor.arm(p, 1)
            for i in range(30):
                new = writer.new_rows(
                    [DesiredRoute("r1", p, f"10.0.0.{2 + i % 2}", "") for p in prefixes]
                )
                assert writer.write(new, rows, router) == WriteResult(len(new), len(rows))
                rows = new
            wait_for(lambda: monitor.nexthops(prefixes[-1]) == {"10.0.0.3"}, timeout=10,
                     what="the last swap seen")  # fmt: skip
            assert all(monitor.min_after_armed[p] == 1 for p in prefixes), monitor.min_after_armed

            nb("lr-del", "r1")
            nb("lr-add", "r1")
            more = writer.new_rows([DesiredRoute("r1", "203.0.113.0/24", "10.0.0.1", "")])
            assert writer.write(more, (), router) == WriteResult(0, 0, frozenset(router.values()))
            assert writer.owned() == ({}, {})  # nothing landed anywhere
            router = {"r1": nb("--bare", "--columns=_uuid", "find", "Logical_Router", "name=r1")}
            assert writer.write(more, (), router) == WriteResult(1, 0)
            assert writer.owned()[1] == {"r1": frozenset(router.values())}
        finally:
            writer.close()


def test_a_write_whose_answer_was_lost_is_never_doubled(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    """A write whose answer never came (leader killed, connection cut) guards every later
    write: one planned without its rows aborts (the caller reads them back), one after it
    never landed commits and drops the guard."""
    lab = make_lab(LabSpec())
    assert lab.ovn is not None
    lab.ovn.nbctl("lr-add", "r1")
    router = {"r1": lab.ovn.nbctl("--bare", "--columns=_uuid", "find", "Logical_Router",
                                  "name=r1")}  # fmt: skip
    w = BulkWriter(lab.ovn.nb, "node1")
    try:
        route = DesiredRoute("r1", "198.51.100.0/24", "10.0.0.1", "")
        landed = w.new_rows([route])
        w.write(landed, (), router)
        w.unsure.append(landed[0].uuid)  # as if its answer had been lost
        again = w.new_rows([route])  # planned from a read that did not show it yet
        with pytest.raises(EarlierWriteLanded):
            w.write(again, (), router)
        assert w.unsure == [landed[0].uuid]
        assert set(w.owned()[0]) == {landed[0].uuid}  # read back: known, no longer a guard
        assert w.unsure == []

        lost = w.new_rows([DesiredRoute("r1", "203.0.113.0/24", "10.0.0.1", "")])
        w.unsure.append(lost[0].uuid)  # lost for real: never written
        retry = w.new_rows([DesiredRoute("r1", "203.0.113.0/24", "10.0.0.1", "")])
        assert w.write(retry, (), router) == WriteResult(1, 0)
        assert w.unsure == []
        assert {r.prefix for r in w.owned()[0].values()} == {"198.51.100.0/24",
                                                             "203.0.113.0/24"}  # fmt: skip
        assert w.count_owned() == 2
    finally:
        w.close()


def test_rows_in_two_routers_of_one_name_are_read_and_unlinked_from_both(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    lab = make_lab(LabSpec())
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    first = nb("create", "Logical_Router", "name=r1")
    second = nb("create", "Logical_Router", "name=r1")  # NB allows it; ovn-nbctl names do not
    w = BulkWriter(lab.ovn.nb, "node1")
    try:
        for uuid, prefix in ((first, "198.51.100.0/24"), (second, "203.0.113.0/24")):
            w.write(w.new_rows([DesiredRoute("r1", prefix, "10.0.0.1", "")]), (), {"r1": uuid})
        rows, homes = w.owned()
        assert homes == {"r1": frozenset({first, second})}
        assert w.write((), list(rows.values()), {}, homes) == WriteResult(0, 2)
        assert w.owned() == ({}, {})
    finally:
        w.close()
