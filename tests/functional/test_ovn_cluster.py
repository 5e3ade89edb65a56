"""OVN NB and SB as 3-member RAFT clusters in the lab: every client gets the member list, one
leader each, and a kill -9 of the NB leader leaves a cluster that elects another and takes
writes (through the same member list, as the agent's writer and IDL use it)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from ovn_frr.core.model import DesiredRoute
from ovn_frr.lab import Lab, LabSpec, wait_for
from ovn_frr.lab.proc import run
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


#: what the agent does with its [ovn] section, in the OVN namespace (SSL on 127.0.0.1 there):
#: SSL files set process-wide, routes written and read back, NB and SB read by the reader
CLIENT = """
import json, sys, time
from ovn_frr.core.model import DesiredRoute
from ovn_frr.ovn.bulk import BulkWriter
from ovn_frr.ovn.db import set_ssl
from ovn_frr.ovn.reader import OvnReader, nb_connection, sb_connection
nb, sb, key, cert, ca, prefix, router = sys.argv[1:]
set_ssl(key, cert, ca)
writer = BulkWriter(nb, "node1")
writer.write(writer.new_rows([DesiredRoute("r1", prefix, "10.0.0.1", "")]), (), {"r1": router})
# idle past ovsdb-server's inactivity probe (5 s, then dropped): the next write must not be
# sent on a connection the server is closing (it would count as lost, and guard the next)
time.sleep(11)
assert writer.count_owned() >= 1 and not writer.unsure
rows = sorted(r.prefix for r in writer.owned()[0].values())
reader = OvnReader(nb_connection(nb, "node1"), sb_connection(sb, "node1"), "node1")
deadline = time.monotonic() + 30
while (state := reader.read()) is None and time.monotonic() < deadline:
    time.sleep(0.1)
print(json.dumps({"rows": rows, "routers": [r.name for r in state.routers] if state else None}))
reader.close()
writer.close()
"""


def test_a_clustered_nb_and_sb_over_ssl(make_lab: Callable[[LabSpec], Lab]) -> None:
    """The [ovn] section as docs/configuration.md shows it for a cluster with SSL: member lists
    of ssl: remotes and the three files. Reads and writes go through; after a kill -9 of the
    NB leader they go through the members left."""
    lab = make_lab(LabSpec(ovn_members=3, ovn_ssl=True))
    ovn = lab.ovn
    assert ovn is not None
    ovn.nbctl("lr-add", "r1", "--", "set", "Logical_Router", "r1", "options:chassis=node1")
    router = ovn.nbctl("--bare", "--columns=_uuid", "find", "Logical_Router", "name=r1")

    def client(prefix: str) -> dict[str, Any]:
        out = run([sys.executable, "-c", CLIENT, ovn.ssl_remote("nb"), ovn.ssl_remote("sb"),
                   *ovn.ssl_files(), prefix, router], netns=ovn.netns, timeout=90)  # fmt: skip
        got: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return got

    assert client("198.51.100.0/24") == {"rows": ["198.51.100.0/24"], "routers": ["r1"]}
    old = ovn.leader("nb")
    assert old is not None
    ovn.stop_member(old, crash=True)
    wait_for(lambda: ovn.leader("nb") not in (None, old), timeout=30, what="a new NB leader")
    assert client("203.0.113.0/24") == {"rows": ["198.51.100.0/24", "203.0.113.0/24"],
                                        "routers": ["r1"]}  # fmt: skip
