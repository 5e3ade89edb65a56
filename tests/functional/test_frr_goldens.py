"""Every golden FRR config loads into a real FRR without a rejected line, and FRR shows every
line of it exactly as rendered: ovn-frr compares its config with FRR's running config line by
line, so the renderer and FRR must agree on syntax and on the defaults FRR hides (for the FRR
version on this machine)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ovn_frr.frr.diff import parse, paths
from ovn_frr.frr.plan import plan
from ovn_frr.lab import Lab, LabSpec, NodeSpec
from tests.golden_cases import GOLDEN, cases


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
    running = frr.vtysh.running_config()
    assert set(paths(parse(text))) - set(paths(parse(running))) == set()
    # nothing FRR adds or changes looks like ovn-frr's to the next check
    assert plan(running, text).batch.text == ""
