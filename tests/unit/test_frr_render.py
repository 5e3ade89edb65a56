"""FRR config rendering: golden files (``pytest --update-goldens`` rewrites them)."""

from __future__ import annotations

import ipaddress

import pytest

from ovn_frr.config.schema import PrefixFilter
from ovn_frr.core.frr_model import permitted
from ovn_frr.frr.render import render
from tests.golden_cases import GOLDEN, cases


@pytest.mark.parametrize("name", sorted(cases()))
def test_golden(name: str, request: pytest.FixtureRequest) -> None:
    text = render(cases()[name])
    path = GOLDEN / f"{name}.conf"
    if request.config.getoption("--update-goldens"):
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs; rerun with --update-goldens if intended"


def test_a_neighbor_is_sent_only_what_the_intent_produced() -> None:
    text = render(cases()["example-with-intent"])
    # no intent for IPv6: the shared export list denies everything explicitly
    assert "ipv6 prefix-list ovnfrr-export-ipv6 seq 5 deny ::/0 le 128" in text
    # neighbor 1's export filter (10.128.0.0/14 ge 23 le 32) narrows the intent
    assert "ip prefix-list ovnfrr-out-10_255_1_2-ipv4 seq 5 permit 10.128.0.0/23" in text
    assert "ip prefix-list ovnfrr-out-10_255_1_2-ipv4 seq 10 permit 10.128.2.5/32" in text
    assert "ovnfrr-out-10_255_1_2-ipv4 seq 15" not in text  # 172.20.0.10, 10.9.0.0/16 are not sent


def f(
    prefix: str, ge: int | None = None, le: int | None = None, action: str = "permit"
) -> PrefixFilter:
    return PrefixFilter.model_validate({"prefix": prefix, "ge": ge, "le": le, "action": action})


@pytest.mark.parametrize(
    ("prefix", "filters", "expected"),
    [
        ("10.1.0.0/16", [f("10.0.0.0/8")], False),  # exact match only without ge/le
        ("10.0.0.0/8", [f("10.0.0.0/8")], True),
        ("10.1.0.0/16", [f("10.0.0.0/8", le=16)], True),
        ("10.1.1.0/24", [f("10.0.0.0/8", le=16)], False),
        ("10.1.1.0/24", [f("10.0.0.0/8", ge=24)], True),
        ("10.1.1.0/24", [f("10.1.0.0/16", le=32, action="deny"), f("0.0.0.0/0", le=32)], False),
        ("192.0.2.0/24", [f("10.1.0.0/16", le=32, action="deny"), f("0.0.0.0/0", le=32)], True),
        ("2001:db8::/48", [f("10.0.0.0/8", le=32)], False),  # other family: no match, denied
    ],
)
def test_prefix_list_semantics(prefix: str, filters: list[PrefixFilter], expected: bool) -> None:
    assert permitted(ipaddress.ip_network(prefix), filters) is expected
