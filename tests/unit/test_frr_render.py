"""FRR config rendering: golden files (``pytest --update-goldens`` rewrites them)."""

from __future__ import annotations

import ipaddress

import pytest

from ovn_frr.core.frr_model import FrrSettings, Neighbor, PrefixFilter, desired_frr
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


def test_each_neighbor_has_filters_of_its_own() -> None:
    """Addresses (and VRF names) whose characters differ only in order or punctuation must not
    share route-maps or prefix-lists: one would silently get the other's export filter."""
    only = (PrefixFilter(ipaddress.ip_network("2001:db8::/32")),)
    neighbors = tuple(
        Neighbor(ipaddress.ip_address(a), "65001", export_filters=only, vrf=vrf)
        for a, vrf in [("fd00::255:2", ""), ("fd00:255::2", ""), ("fd00:2::55", ""),
                       ("10.0.0.1", "a-b"), ("10.0.0.1", "a_b"), ("10.0.0.1", "")]
    )  # fmt: skip
    model = desired_frr(FrrSettings(64512, "192.0.2.1", neighbors))
    maps = [n.route_map_out for inst in model.bgp for n in inst.neighbors]
    assert len(set(maps)) == len(neighbors)
    lists = [pl.name for pl in model.prefix_lists if pl.name.startswith("ovnfrr-out-")]
    assert len(set(lists)) == len(neighbors)
