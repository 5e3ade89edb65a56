"""The NB churn soak, short and seeded (ovn_frr.lab.soak; bench/soak_bench.py runs it for 30
minutes): random changes of every kind the intent reads, ToR route churn, agent restarts
(SIGTERM and kill -9) and an FRR restart; at every quiet point FRR's announcements per VRF,
tor1's routes from node1 and NB's owned static routes equal what the oracle computes from NB
by docs/intent.md. A failure names the seed (OVN_FRR_SOAK_SEED replays it) and what differed."""

from __future__ import annotations

import json
import os

import pytest

from ovn_frr.lab.soak import soak_lab

SEED = int(os.environ.get("OVN_FRR_SOAK_SEED", "2712"))
OPERATIONS = int(os.environ.get("OVN_FRR_SOAK_OPERATIONS", "400"))
# a slower stack (the Debian roots, a loaded machine) ends the run by time, not by count
DURATION_S = float(os.environ.get("OVN_FRR_SOAK_DURATION_S", "150"))


@pytest.mark.timeout(DURATION_S + 300)
def test_nb_churn_soak_agrees_with_the_oracle_at_every_quiet_point() -> None:
    with soak_lab(SEED) as soak:
        fig = soak.run(operations=OPERATIONS, duration_s=DURATION_S)
        print(json.dumps(fig.summary()))
        assert not fig.mismatches, json.dumps(fig.details[:1], default=str)[:20000]
        assert fig.quiet_points >= fig.total // 8
        assert all(fig.operations[op] for op in ("agent_stop", "agent_kill", "frr_restart"))
