"""NB and SB as 3-member RAFT clusters; the leader killed (kill -9) in the middle of the
agent's work. After convergence NB equals zebra, with no duplicate row and no row of an
unchanged prefix deleted and written again; an SB leader's death leaves the announcements at
the ToR untouched (no UPDATE at all). bench/cluster_failover.py times the failover itself."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovn_frr.lab.chaos import Chaos, chaos_lab
from tests.chaos.test_chaos import E, N, check


@pytest.fixture(scope="module")
def cluster() -> Iterator[Chaos]:
    with chaos_lab(members=3) as c:
        yield c


def test_nb_leader_killed_in_the_middle_of_an_import(cluster: Chaos) -> None:
    fig = cluster.nb_leader_kill_import(N, E)
    check(fig)
    assert fig.mid, fig.notes
    assert fig.rows == N + 2 * E


def test_nb_leader_killed_during_churn(cluster: Chaos) -> None:
    check(cluster.nb_leader_kill_churn(N, churn=500))


def test_sb_leader_killed_announcements_stay(cluster: Chaos) -> None:
    fig = cluster.sb_leader_kill()
    print(fig)
    assert fig.readded == 0, fig  # no UPDATE from node1: nothing withdrawn or re-announced
    assert fig.ecmp_gaps == 0, fig  # every sample had every prefix
