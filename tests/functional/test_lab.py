"""The lab itself: real FRR in namespaces, routes through BGP into zebra and out over FPM."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from ovn_frr.lab import Lab, LabError, LabSpec, LinkSpec, NodeSpec, PeerSpec, minimal_spec, wait_for
from ovn_frr.lab.fpm_listener import FpmListener
from ovn_frr.lab.proc import netns_list, netns_pids

PREFIX_V4 = "203.0.113.0/24"
PREFIX_V6 = "2001:db8:77::/48"


FRR_TMP = Path("/var/tmp/frr")


def frr_tmp() -> set[str]:
    return {d.name for d in FRR_TMP.iterdir()} if FRR_TMP.is_dir() else set()


def leftovers(lab: Lab, pids: list[int], tmp_before: set[str]) -> list[str]:
    """Anything of the lab still on the machine."""
    found = [f"netns {ns}" for ns in netns_list() if ns.startswith(f"{lab.name}-")]
    found += [f"pid {p}" for p in pids if os.path.exists(f"/proc/{p}") and not _zombie(p)]
    if lab.rundir.exists():
        found.append(f"dir {lab.rundir}")
    found += [f"frr tmp {d}" for d in frr_tmp() - tmp_before]
    return found


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_route_from_tor_reaches_zebra_and_fpm(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(minimal_spec())
    node = lab.frr["node1"]
    with FpmListener(lab.netns("node1"), 2620) as fpm:
        lab.wait_bgp_up()
        lab.announcer("tor1").announce([PREFIX_V4, PREFIX_V6])

        rib = wait_for(
            lambda: node.rib().get(PREFIX_V4), timeout=15, what=f"{PREFIX_V4} in node1 zebra"
        )
        assert rib[0]["protocol"] == "bgp"
        nexthop = rib[0]["nexthops"][0]
        assert nexthop["ip"] == str(lab.link("node1", "tor1").peer_v4)
        wait_for(lambda: node.rib("ipv6").get(PREFIX_V6), timeout=15, what=f"{PREFIX_V6} in zebra")

        # zebra connects to the FPM listener by itself and replays its RIB.
        wait_for(lambda: {PREFIX_V4, PREFIX_V6} <= fpm.prefixes(), timeout=30, what="FPM routes")
        route = next(r for r in fpm.routes if str(r.prefix) == PREFIX_V4)
        assert route.protocol == 186  # RTPROT_BGP
        assert route.table == 254

        lab.announcer("tor1").withdraw([PREFIX_V4])
        wait_for(lambda: PREFIX_V4 not in fpm.prefixes(), timeout=15, what="FPM delete")
        assert PREFIX_V4 not in node.rib()


def test_teardown_leaves_nothing(make_lab: Callable[[LabSpec], Lab]) -> None:
    spec = LabSpec(
        nodes=(NodeSpec("node1", chassis=True),),
        peers=(PeerSpec("tor1", 65001),),
        links=(LinkSpec("node1", "tor1"),),
    )
    tmp_before = frr_tmp()
    lab = make_lab(spec)
    assert "node1" in lab.sb_chassis()
    pids = [p for ns in netns_list() if ns.startswith(f"{lab.name}-") for p in netns_pids(ns)]
    assert len(pids) >= 10  # 3 OVN central, 4+ FRR on node1, 3+ on tor1, OVS, ovn-controller
    # a daemon that dies hard keeps its /var/tmp/frr directory: teardown must remove it too
    zebra = lab.frr["tor1"].pids()[0]
    os.kill(zebra, signal.SIGKILL)
    wait_for(lambda: _zombie(zebra), timeout=10, what="zebra killed")
    lab.down()
    assert leftovers(lab, pids, tmp_before) == []
    lab.down()  # idempotent


def test_a_peer_runs_the_frr_of_another_root(
    make_lab: Callable[[LabSpec], Lab], newer_frr_root: str
) -> None:
    """tor1 runs FRR 10.7 from a Debian forky root (PeerSpec.frr_root), node1 this machine's:
    the session comes up, a route crosses it, and teardown leaves nothing, mounts included
    (they live in the daemons' own mount namespaces)."""
    spec = minimal_spec()
    spec = LabSpec(nodes=spec.nodes, peers=(PeerSpec("tor1", 65001, frr_root=newer_frr_root),),
                   links=spec.links)  # fmt: skip
    tmp_before = frr_tmp()
    lab = make_lab(spec)
    version = re.search(r"FRRouting (\d+)\.(\d+)", lab.frr["tor1"].vtysh.command("show version"))
    assert version is not None and (int(version[1]), int(version[2])) >= (10, 6), version
    lab.wait_bgp_up()
    lab.announcer("tor1").announce([PREFIX_V4])
    wait_for(lambda: lab.frr["node1"].rib().get(PREFIX_V4), timeout=15, what="route at node1")
    pids = [p for ns in netns_list() if ns.startswith(f"{lab.name}-") for p in netns_pids(ns)]
    lab.down()
    assert leftovers(lab, pids, tmp_before) == []
    # (scripts/deb13.sh mounts the root itself into its own: only mounts inside it count)
    assert f"{newer_frr_root}/" not in Path("/proc/self/mountinfo").read_text()


def test_failed_up_removes_what_it_made(lab_base: Path) -> None:
    # FRR rejects "router bgp 0" on tor1, after OVN central and node1 are already running.
    spec = LabSpec(
        nodes=(NodeSpec("node1"),), peers=(PeerSpec("tor1", 0),), links=(LinkSpec("node1", "tor1"),)
    )
    tmp_before = frr_tmp()
    lab = Lab(spec, base=lab_base)
    with pytest.raises(LabError, match="tor1"):
        lab.up()
    assert leftovers(lab, [], tmp_before) == []


def test_same_name_refused_and_first_lab_kept(
    make_lab: Callable[[LabSpec], Lab], lab_base: Path
) -> None:
    lab = make_lab(minimal_spec())
    with pytest.raises(LabError, match="exists"):
        Lab(minimal_spec(), name=lab.name, base=lab_base).up()
    assert lab.frr["node1"].bgp_neighbors()  # the first lab still answers


def test_two_labs_side_by_side(make_lab: Callable[[LabSpec], Lab]) -> None:
    a = make_lab(minimal_spec())
    b = make_lab(minimal_spec())
    assert a.name != b.name
    a.wait_bgp_up()
    b.wait_bgp_up()
    a.announcer("tor1").announce([PREFIX_V4])
    wait_for(lambda: PREFIX_V4 in a.frr["node1"].rib(), timeout=15, what="route in lab a")
    assert PREFIX_V4 not in b.frr["node1"].rib()


def test_cut_and_restore_link(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(minimal_spec())
    lab.wait_bgp_up()
    lab.announcer("tor1").announce([PREFIX_V4])
    node = lab.frr["node1"]
    wait_for(lambda: PREFIX_V4 in node.rib(), timeout=15, what="route before cut")
    lab.cut("node1", "tor1")
    # hold time 3 s: the session drops although the carrier stays up
    wait_for(lambda: PREFIX_V4 not in node.rib(), timeout=15, what="route gone after cut")
    lab.restore("node1", "tor1")
    wait_for(lambda: PREFIX_V4 in node.rib(), timeout=30, what="route back after restore")
