"""Chaos tier: crashes and outages against the whole agent, real FRR, real OVN (the scenarios
are in ovn_frr.lab.chaos; bench/chaos_bench.py runs them with the full counts). After each,
NB equals zebra with no duplicate, no row of an unchanged prefix deleted and written again,
and no moment an ECMP prefix missed a leg it kept in BGP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovn_frr.lab.chaos import Chaos, Figures, chaos_lab

# CI's counts; the bench takes 50k routes and 2k ECMP prefixes
N, E = 5_000, 200


@pytest.fixture(scope="module")
def chaos() -> Iterator[Chaos]:
    with chaos_lab() as c:
        yield c


def check(fig: Figures) -> None:
    print(fig)
    assert fig.clean, fig
    assert all("still in NB" not in n for n in fig.notes), fig.notes


def test_agent_killed_in_the_middle_of_an_import(chaos: Chaos) -> None:
    fig = chaos.agent_kill(N, E)
    check(fig)
    assert fig.mid, fig.notes  # killed with part of the import still to write


def test_zebra_and_bgpd_killed_with_ecmp_routes(chaos: Chaos) -> None:
    fig = chaos.frr_crash(N, E, w=N // 10)
    check(fig)
    assert fig.rows == (N - N // 10) + 2 * E


def test_nb_stopped_during_churn(chaos: Chaos) -> None:
    check(chaos.nb_outage(N, churn=500, outage_s=10))
