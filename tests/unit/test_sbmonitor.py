"""The SB monitor's pure part: update2 notifications applied to this chassis' rows."""

from __future__ import annotations

from ovn_frr.ovn.sbmonitor import Member, Tables, condition, requests, uuids

CH, OTHER = "c0ffee00-0000-0000-0000-000000000001", "c0ffee00-0000-0000-0000-000000000002"
PB = "0b000000-0000-0000-0000-00000000000"


def test_initial_rows_and_ports_of_this_chassis() -> None:
    t = Tables.empty()
    n = t.apply({
        "Chassis": {CH: {"initial": {"name": "node1"}}},
        "Port_Binding": {
            PB + "1": {"initial": {"logical_port": "vm1", "chassis": ["uuid", CH]}},
            PB + "2": {"initial": {"logical_port": "vm2", "chassis": ["set", []]}},
            PB + "3": {"initial": {"logical_port": "vm3"}},
        },
    })  # fmt: skip
    assert n == 4
    assert t.chassis_uuids("node1") == (CH,)
    assert t.ports((CH,)) == {"vm1"}
    assert t.ports(()) == frozenset()


def test_modify_carries_the_new_value_of_the_optional_chassis() -> None:
    """A column of at most one value comes as its new value in ``modify`` (ovsdb-server's
    update2; the ovs IDL's Datum.diff), not as a difference."""
    t = Tables.empty()
    t.apply({"Port_Binding": {PB + "1": {"insert": {"logical_port": "vm1"}}}})
    assert t.ports((CH,)) == frozenset()
    t.apply({"Port_Binding": {PB + "1": {"modify": {"chassis": ["uuid", CH]}}}})  # bound
    assert t.ports((CH,)) == {"vm1"}
    t.apply({"Port_Binding": {PB + "1": {"modify": {"chassis": ["uuid", OTHER]}}}})  # moved
    assert t.bindings[PB + "1"] == ("vm1", frozenset({OTHER}))
    assert t.ports((CH,)) == frozenset()
    t.apply({"Port_Binding": {PB + "1": {"modify": {"chassis": ["set", []]}}}})  # unbound
    assert t.bindings[PB + "1"] == ("vm1", frozenset())
    # a renamed port keeps its chassis
    t.apply({"Port_Binding": {PB + "1": {"modify": {"chassis": ["uuid", CH]}}}})
    t.apply({"Port_Binding": {PB + "1": {"modify": {"logical_port": "vm1b"}}}})
    assert t.ports((CH,)) == {"vm1b"}
    # a modify of a row never received is no row; an empty insert is a row
    t.apply({"Port_Binding": {PB + "2": {"modify": {"chassis": ["uuid", CH]}}}})
    assert PB + "2" not in t.bindings
    t.apply({"Port_Binding": {PB + "3": {"insert": {}}}})
    assert t.bindings[PB + "3"] == ("", frozenset())


def test_delete_and_chassis_rows() -> None:
    t = Tables.empty()
    t.apply({"Chassis": {CH: {"insert": {"name": "node1"}}},
             "Port_Binding": {PB + "1": {"insert": {"logical_port": "vm1",
                                                    "chassis": ["uuid", CH]}}}})  # fmt: skip
    t.apply({"Port_Binding": {PB + "1": {"delete": None}}})
    assert t.ports((CH,)) == frozenset()
    t.apply({"Chassis": {CH: {"modify": {"name": "node9"}}}})
    assert t.chassis_uuids("node1") == ()
    t.apply({"Chassis": {CH: {"delete": None}}})
    assert t.chassis == {}


def test_uuids_of_a_reference_value() -> None:
    assert uuids(["uuid", CH]) == {CH}
    assert uuids(["set", []]) == frozenset()
    assert uuids(["set", [["uuid", CH], ["uuid", OTHER]]]) == {CH, OTHER}


def test_condition_and_requests() -> None:
    assert condition(()) == [False]
    assert condition((CH,)) == [["chassis", "==", ["uuid", CH]]]
    r = requests("node1", ())
    assert r["Chassis"]["where"] == [["name", "==", "node1"]]
    assert r["Port_Binding"] == {"columns": ["logical_port", "chassis"], "where": [False]}


def test_which_member_may_be_read() -> None:
    row = "d0000000-0000-0000-0000-000000000001"

    def member(*updates: dict[str, object]) -> Member:
        m = Member()
        for u in updates:
            m.apply({"Database": {row: u}})
        return m

    # columns at their default are left out of an initial row: connected false, no index
    cut = member({"initial": {"name": "OVN_Southbound", "model": "clustered"}})
    assert cut.unfit(0) == "a clustered member not connected to its cluster"
    live = member({"initial": {"name": "OVN_Southbound", "model": "clustered",
                               "connected": True, "index": 40}})  # fmt: skip
    assert live.unfit(0) is None and live.index == 40
    assert live.unfit(41) == "behind what was read before (index 40 < 41)"
    # a standalone server may always be read
    assert member({"initial": {"name": "OVN_Southbound", "model": "standalone"}}).unfit(99) is None
    # later changes
    lost = member({"initial": {"name": "OVN_Southbound", "model": "clustered",
                               "connected": True}}, {"modify": {"connected": False}})  # fmt: skip
    assert lost.unfit(0) is not None
    moved = member({"initial": {"name": "OVN_Southbound", "model": "clustered",
                                "connected": True, "index": 5}},
                   {"modify": {"index": 9}})  # fmt: skip
    assert moved.index == 9 and moved.unfit(9) is None
    relay = member({"initial": {"name": "OVN_Southbound", "model": "relay"}})
    assert relay.unfit(0) == "a relay member not connected to its cluster"
    assert member().unfit(0) is None  # nothing said (the SB monitor's answer decides)
