"""FRR config rendering: golden files (``pytest --update-goldens`` rewrites them)."""

from __future__ import annotations

import pytest

from ovn_frr.frr.render import render
from tests.golden_cases import GOLDEN, cases


@pytest.mark.parametrize("name", sorted(cases()))
def test_golden(name: str, request: pytest.FixtureRequest) -> None:
    text = render(cases()[name])
    path = GOLDEN / f"{name}.conf"
    if request.config.getoption("--update-goldens"):
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs; rerun with --update-goldens if intended"


def test_a_neighbor_is_sent_only_what_ovn_frr_originated() -> None:
    text = render(cases()["example-with-intent"])
    assert "bgp large-community-list standard ovnfrr-origin seq 5 permit 64512:4242:1" in text
    assert "network 10.128.0.0/23 route-map ovnfrr-origin" in text
    assert (
        "route-map ovnfrr-out-10_255_1_2 permit 10\n"
        " match ip address prefix-list ovnfrr-out-10_255_1_2-ipv4\n"
        " match large-community ovnfrr-origin\n"
        " set large-comm-list ovnfrr-origin delete\n"
    ) in text
    # the neighbor's own export filter, not the intent, is the prefix-list
    assert (
        "ip prefix-list ovnfrr-out-10_255_1_2-ipv4 seq 5 permit 10.128.0.0/14 ge 23 le 32" in text
    )
