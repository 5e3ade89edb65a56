"""OVN NB and SB as 3-member RAFT clusters in the lab: every client gets the member list, one
leader each, and a kill -9 of the NB leader leaves a cluster that elects another and takes
writes (through the same member list, as the agent's writer and IDL use it)."""

from __future__ import annotations

from collections.abc import Callable

from ovn_frr.core.model import DesiredRoute
from ovn_frr.lab import Lab, LabSpec, wait_for
from ovn_frr.ovn.bulk import BulkWriter


def test_a_clustered_nb_survives_its_leader(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(LabSpec(ovn_members=3))
    ovn = lab.ovn
    assert ovn is not None
    assert ovn.nb.count(",") == 2 and ovn.sb.count(",") == 2
    roles = ovn.roles()
    assert sorted(roles) == ["nb1", "nb2", "nb3", "sb1", "sb2", "sb3"]
    assert [r for m, r in roles.items() if m.startswith("nb")].count("leader") == 1
    wait_for(ovn.northd_active, timeout=20, what="ovn-northd on the clusters")
    ovn.nbctl("lr-add", "r1")
    router = {"r1": ovn.nbctl("--bare", "--columns=_uuid", "find", "Logical_Router", "name=r1")}
    writer = BulkWriter(ovn.nb, "node1")
    try:
        writer.write(writer.new_rows([DesiredRoute("r1", "198.51.100.0/24", "10.0.0.1", "")]),
                     (), router)  # fmt: skip
        old = ovn.leader("nb")
        assert old is not None
        ovn.stop_member(old, crash=True)
        new = wait_for(lambda: (lead := ovn.leader("nb")) != old and lead, timeout=30,
                       what="a new NB leader")  # fmt: skip
        assert ovn.roles()[old] == "down"

        def written() -> bool:  # the writer finds a live member and writes through the leader
            try:
                writer.write(writer.new_rows([DesiredRoute("r1", "203.0.113.0/24", "10.0.0.1",
                                                           "")]), (), router)  # fmt: skip
            except Exception:
                return False
            return True

        wait_for(written, timeout=30, what=f"a write after {old} died ({new} leads)")
        assert {r.prefix for r in writer.owned()[0].values()} == {
            "198.51.100.0/24",
            "203.0.113.0/24",
        }
        assert "203.0.113.0/24" in ovn.nbctl("lr-route-list", "r1")
    finally:
        writer.close()
