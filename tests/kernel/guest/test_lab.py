"""The lab runs inside the guest as on the host: FRR and OVN in namespaces, the agent importing a
route learned from a ToR into OVN."""

from __future__ import annotations

from ovn_frr.lab import wait_for
from tests.e2e.conftest import import_lab


def test_a_learned_route_reaches_ovn_in_the_guest() -> None:
    with import_lab() as imp:
        p = "203.0.113.0/24"
        imp.lab.announcer("tor1").announce([p])
        wait_for(lambda: p in imp.routes(), timeout=120, what=f"{p} in NB")
        imp.lab.announcer("tor1").withdraw([p])
        wait_for(lambda: p not in imp.routes(), timeout=120, what=f"{p} gone from NB")
