"""The host side of OVN's own EVPN (25.09+): chassis settings and ovn-controller's lists."""

from __future__ import annotations

from ovn_frr.core.evpn_native import (
    CHASSIS_OWNER,
    LOCAL_IP,
    VXLAN_PORTS,
    OvnEvpn,
    chassis_change,
    chassis_settings,
    parse_arp,
    parse_fdb,
    parse_remote_vteps,
    port_problem,
)

WANT = chassis_settings("192.0.2.1", 4789)


BOTH = f"{LOCAL_IP},{VXLAN_PORTS}"


def after(current: dict[str, str], want: dict[str, str] | None) -> dict[str, str]:
    """``current`` once the change is made (the next pass reads this)."""
    change = chassis_change(current, want)
    out = {**current, **change.set}
    return {k: v for k, v in out.items() if k not in change.remove}


def test_settings_are_set_and_marked_on_a_fresh_chassis() -> None:
    change = chassis_change({"system-id": "node1"}, WANT)
    assert dict(change.set) == {LOCAL_IP: "192.0.2.1", VXLAN_PORTS: "4789", CHASSIS_OWNER: BOTH}
    assert not change.remove and not change.problems


def test_nothing_changes_when_in_place() -> None:
    assert not chassis_change({**WANT, CHASSIS_OWNER: BOTH}, WANT)
    # an operator's identical keys are used as they are, and not taken over
    assert not chassis_change(dict(WANT), WANT)
    assert not chassis_change(dict(WANT), None).remove


def test_an_operators_other_value_is_never_taken_over() -> None:
    first = {LOCAL_IP: "198.51.100.9"}
    change = chassis_change(first, WANT)
    assert dict(change.set) == {VXLAN_PORTS: "4789", CHASSIS_OWNER: VXLAN_PORTS}
    assert len(change.problems) == 1 and "ovn-evpn-local-ip=198.51.100.9" in change.problems[0]
    # the next pass, and the one after: still the operator's, still reported
    second = after(first, WANT)
    assert second[LOCAL_IP] == "198.51.100.9" and chassis_change(second, WANT).problems
    assert after(second, WANT) == second
    # EVPN off: only what ovn-frr wrote goes
    assert after(second, None) == {LOCAL_IP: "198.51.100.9"}


def test_an_operators_equal_value_stays_the_operators() -> None:
    first = {LOCAL_IP: "192.0.2.1"}
    second = after(first, WANT)
    assert second[CHASSIS_OWNER] == VXLAN_PORTS
    assert after(second, None) == first


def test_ovn_frrs_own_keys_follow_the_config_and_go_with_evpn() -> None:
    mine = {LOCAL_IP: "198.51.100.9", VXLAN_PORTS: "4789", CHASSIS_OWNER: BOTH, "x": "y"}
    assert dict(chassis_change(mine, WANT).set) == {LOCAL_IP: "192.0.2.1"}
    assert chassis_change(mine, None).remove == (LOCAL_IP, VXLAN_PORTS, CHASSIS_OWNER)


def test_only_4789_reaches_zebras_vteps() -> None:
    assert port_problem(4789) is None
    assert "4789" in (port_problem(8472) or "")


# the lines as OVN 26.03.1 prints them (controller/neighbor-exchange.c, evpn-fdb.c, evpn-arp.c)
VTEPS = "IP: 169.0.0.10, port: 4789, vni: 10\nIP: fd00::10, port: 4789, vni: 20\n"
FDB = (
    "UUID: 5e0d0b4f-2b55-4f8e-9a4e-1d2f0c3b4a5d, MAC: F0:00:0F:16:10:50, vni: 10, "
    "binding_key: 0x80000001, dp_key: 1\n"
)
ARP = (
    "UUID: 5e0d0b4f-2b55-4f8e-9a4e-1d2f0c3b4a5d, VNI: 10, MAC: f0:00:0f:16:10:50, "
    "IP: 172.16.1.50, dp_key: 1\n"
)


def test_controller_lists_parse() -> None:
    assert parse_remote_vteps(VTEPS) == (("169.0.0.10", 4789, 10), ("fd00::10", 4789, 20))
    assert parse_fdb(FDB) == (("f0:00:0f:16:10:50", 10),)
    assert parse_arp(ARP) == (("172.16.1.50", "f0:00:0f:16:10:50", 10),)
    assert parse_remote_vteps("") == ()
    ovn = OvnEvpn(parse_remote_vteps(VTEPS), parse_fdb(FDB), parse_arp(ARP))
    assert ovn.for_vni(10) == {"remote_vteps": ["169.0.0.10:4789"], "remote_macs": 1,
                               "remote_ips": 1}  # fmt: skip
    assert ovn.for_vni(30) == {"remote_vteps": [], "remote_macs": 0, "remote_ips": 0}
