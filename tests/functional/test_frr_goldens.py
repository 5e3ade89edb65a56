"""Every golden FRR config loads into a real FRR without a rejected line and shows up in its
running-config (the renderer and FRR agree on syntax, for the FRR version on this machine)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ovn_frr.lab import Lab, LabSpec, NodeSpec
from tests.golden_cases import GOLDEN, cases

CHECKED = ("ip prefix-list", "ipv6 prefix-list", "route-map", "neighbor", "network", "router bgp")


@pytest.fixture(scope="module")
def frr_lab() -> Iterator[Callable[[], Lab]]:
    labs: list[Lab] = []

    def get() -> Lab:
        if not labs:
            lab = Lab(LabSpec(nodes=(NodeSpec("node1", bgp=False),), ovn=False))
            lab.up()
            labs.append(lab)
        return labs[0]

    yield get
    for lab in labs:
        lab.down()


@pytest.mark.parametrize("name", sorted(cases()))
def test_golden_loads_into_frr(name: str, frr_lab: Callable[[], Lab]) -> None:
    frr = frr_lab().frr["node1"]
    frr.restart()  # a fresh FRR for each golden
    text = (GOLDEN / f"{name}.conf").read_text()
    frr.apply(text)  # raises with every line FRR rejected
    running = {line.strip() for line in frr.vtysh.running_config().splitlines()}
    expected = {line.strip() for line in text.splitlines() if line.strip().startswith(CHECKED)}
    assert len(expected) > 10
    assert expected - running == set()
