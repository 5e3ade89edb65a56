"""Several chassis write into one NB: each touches only the rows carrying its own marker."""

from __future__ import annotations

from collections.abc import Callable

from ovn_frr.core.importer import diff_routes
from ovn_frr.core.model import DesiredRoute
from ovn_frr.lab import Lab, LabSpec, wait_for
from ovn_frr.lab.nbwatch import StaticRouteCount
from ovn_frr.ovn.bulk import BulkWriter


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
        assert a.write(created_a, (), router) == (1, 0)
        assert b.write(created_b, (), router) == (2, 0)
        wait_for(lambda: count.total() == 4, timeout=10, what="4 routes seen by the observer")

        # adoption: each sees exactly its own rows, by the UUIDs it created
        assert set(a.owned()) == {r.uuid for r in created_a}
        assert set(b.owned()) == {r.uuid for r in created_b}
        assert not diff_routes(want_a, a.owned().values())  # nothing to change
        db = lab.ovn.rundir / "nb.db"
        size = db.stat().st_size
        assert (a.count_owned(), b.count_owned()) == (1, 2)
        assert db.stat().st_size == size  # counting committed nothing

        # chassis A withdraws everything it has: B's rows and the operator's row stay
        removed = diff_routes(frozenset(), a.owned().values()).delete
        assert {r.uuid for r in removed} == {r.uuid for r in created_a}
        assert a.write((), removed, router) == (0, 1)
        assert a.owned() == {}
        assert (a.count_owned(), b.count_owned()) == (0, 2)
        assert set(b.owned()) == {r.uuid for r in created_b}
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
