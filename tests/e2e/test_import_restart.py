"""Nothing lost on restart: the agent adopts its rows; an FRR restart does not flap them."""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Iterator

import pytest

from ovn_frr.lab import wait_for
from ovn_frr.lab.nbwatch import RouteMonitor
from tests.e2e.conftest import ImportLab, import_lab

N = 10_000


@pytest.fixture(scope="module")
def imp() -> Iterator[ImportLab]:
    """The agent with its default replay hold: an FRR restart must not flap routes."""
    with import_lab(agent_config="") as state:
        yield state


def bulk(n: int) -> list[str]:
    """n distinct /29s from the benchmarking range 198.18.0.0/15."""
    subnets = ipaddress.ip_network("198.18.0.0/15").subnets(new_prefix=29)
    return [str(s) for s in itertools.islice(subnets, n)]


def owned_rows(imp: ImportLab) -> set[tuple[str, str, str]]:
    """(uuid, prefix, nexthop) of every row ovn-frr owns in NB."""
    assert imp.lab.ovn is not None
    out = imp.lab.ovn.nbctl(
        "--format=csv", "--data=bare", "--no-headings", "--columns=_uuid,ip_prefix,nexthop",
        "find", "Logical_Router_Static_Route", 'external_ids:"ovn-frr:chassis"=node1',
    )  # fmt: skip
    return {tuple(line.split(",")) for line in out.splitlines()}  # type: ignore[misc]


def frr_bgp_prefixes(imp: ImportLab) -> set[str]:
    rib = imp.lab.frr["node1"].rib()
    return {p for p, entries in rib.items() if any(e.get("protocol") == "bgp" for e in entries)}


def test_agent_and_zebra_restart_keep_every_row(imp: ImportLab) -> None:
    prefixes = bulk(N)
    imp.lab.announcer("tor1").announce(prefixes)
    wait_for(lambda: len(owned_rows(imp)) == N, timeout=180, what=f"{N} rows in NB")
    before = owned_rows(imp)
    assert {p for _u, p, _nh in before} == set(prefixes)
    assert imp.lab.ovn is not None

    # agent restart: rows adopted, none deleted or re-created
    with RouteMonitor(imp.lab.ovn.nb) as mon:
        imp.restart_agent()
        wait_for(lambda: "fpm_replay_complete" in imp.agent.output(), timeout=60,
                 what="the new agent saw zebra's whole replay")  # fmt: skip
        assert owned_rows(imp) == before
        assert mon.deleted == []
        assert frr_bgp_prefixes(imp) == {p for _u, p, _nh in before}

    # zebra restart (with the daemons that depend on it, as watchfrr does): FPM reconnects and
    # replays before bgpd has re-learned anything; no prefix that FRR has again leaves NB
    with RouteMonitor(imp.lab.ovn.nb) as mon:
        replays = imp.agent.output().count("fpm_replay_complete")
        imp.lab.frr["node1"].restart()
        wait_for(lambda: imp.agent.output().count("fpm_replay_complete") > replays,
                 timeout=90, what="replay after the zebra restart")  # fmt: skip
        wait_for(lambda: frr_bgp_prefixes(imp) == set(prefixes), timeout=60,
                 what="bgpd re-installed its routes in the new zebra")  # fmt: skip
        assert owned_rows(imp) == before
        left = {p for _u, p, _nh in mon.deleted}
        assert not left & frr_bgp_prefixes(imp), f"{len(left)} prefixes left NB meanwhile"

    imp.lab.announcer("tor1").withdraw(prefixes)
    wait_for(lambda: not owned_rows(imp), timeout=180, what="all withdrawn")


def test_nb_outage_during_an_import_loses_nothing(imp: ImportLab) -> None:
    """NB goes away while the agent writes (its next write may be planned on top of the one in
    flight): once NB is back, the agent reads its rows again and NB ends equal to FRR, each
    route exactly once, the rows committed before the outage untouched."""
    assert imp.lab.ovn is not None
    first, second = bulk(2 * N)[N : N + N // 2], bulk(2 * N)[N + N // 2 :]
    imp.lab.announcer("tor1").announce(first)
    wait_for(lambda: owned_rows(imp), timeout=60, what="the first rows in NB")
    imp.lab.ovn.stop_nb()
    imp.lab.announcer("tor1").announce(second)  # to be written into an absent NB: fails
    wait_for(lambda: "ovn_write_failed" in imp.agent.output()
             or "reconciler_failed" in imp.agent.output(), timeout=60,
             what="a failed write")  # fmt: skip
    imp.lab.ovn.start_nb()
    committed = owned_rows(imp)  # what NB kept across the outage
    want = set(first) | set(second)
    wait_for(lambda: {p for _u, p, _nh in owned_rows(imp)} >= want, timeout=120,
             what="every prefix in NB after the outage")  # fmt: skip
    rows = owned_rows(imp)
    assert len(rows) == len({p for _u, p, _nh in rows})  # no route written twice
    assert committed <= rows  # no row NB kept was re-created
    assert {p for _u, p, _nh in rows} == want and want <= frr_bgp_prefixes(imp)
    imp.lab.announcer("tor1").withdraw(first + second)
    wait_for(lambda: not owned_rows(imp), timeout=120, what="the withdrawal in NB")
