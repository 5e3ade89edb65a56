from __future__ import annotations

from collections.abc import Sequence

import pytest

from ovn_frr.versions import Version, Versions, detect, parse_frr, parse_ovn, parse_ovs


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("zebra version 8.4.4\nCopyright 1996-2005 Kunihiro Ishiguro, et al.", Version(8, 4, 4)),
        ("zebra version 10.3\n", Version(10, 3, 0)),
        ("FRRouting 10.3.1 (node1) on Linux(6.12.0).", Version(10, 3, 1)),
    ],
)
def test_parse_frr(text: str, expected: Version) -> None:
    assert parse_frr(text) == expected


def test_parse_ovn_and_ovs_keep_printed_form() -> None:
    v = parse_ovn("ovn-northd 23.03.1\nSB DB Schema 20.27.0")
    assert v == Version(23, 3, 1)
    assert str(v) == "23.03.1"
    assert parse_ovn("ovn-northd 25.03.0") >= Version(25, 3)
    assert parse_ovs("ovsdb-server (Open vSwitch) 3.5.0\n") == Version(3, 5, 0)


def test_parse_rejects_other_output() -> None:
    with pytest.raises(ValueError, match="not FRR"):
        parse_frr("bash: zebra: command not found")


def test_capabilities_by_release() -> None:
    deb12 = Versions(frr=Version(8, 4, 4), ovn=Version(23, 3, 1), ovs=Version(3, 1, 0))
    deb13 = Versions(frr=Version(10, 3, 0), ovn=Version(25, 3, 0), ovs=Version(3, 5, 0))
    assert not deb12.frr_has_mgmtd and deb13.frr_has_mgmtd
    assert not deb12.frr_fpm_route_replace and deb13.frr_fpm_route_replace
    assert not deb12.ovn_native_dynamic_routing and deb13.ovn_native_dynamic_routing


def test_detect_uses_the_injected_runner() -> None:
    seen: list[str] = []

    def fake(argv: Sequence[str]) -> str:
        seen.append(argv[0])
        return {
            "ovn-northd": "ovn-northd 25.03.0",
            "ovsdb-server": "ovsdb-server (Open vSwitch) 3.5.0",
        }.get(argv[0], "zebra version 10.3.1")

    v = detect(fake)
    # binaries that are not installed are reported as None without calling the runner
    for name, ver in (("ovn-northd", v.ovn), ("ovsdb-server", v.ovs)):
        assert (ver is None) == (name not in seen)
