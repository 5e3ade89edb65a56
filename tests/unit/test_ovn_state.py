"""The one OVN state: dynamic-routing* options parsed once, every problem named once."""

from __future__ import annotations

import ipaddress

import pytest

from ovn_frr.core.ovn import (
    LogicalRouter,
    LogicalSwitch,
    Nat,
    OvnState,
    PortRouting,
    RouterPort,
    RouterRouting,
    SwitchPort,
    Vip,
    map_vrfs,
    owned_prefixes_by_vrf,
    parse_port_mapping,
)

ip = ipaddress.ip_address
iface = ipaddress.ip_interface
net = ipaddress.ip_network


def test_router_options() -> None:
    r = RouterRouting.parse("r", {
        "dynamic-routing": "TRUE", "dynamic-routing-redistribute": "nat,lb",
        "dynamic-routing-redistribute-local-only": "true", "dynamic-routing-vrf-name": "blue",
        "dynamic-routing-vrf-id": "1007", "dynamic-routing-no-learning": "false",
    })  # fmt: skip
    assert r == RouterRouting(True, frozenset({"nat", "lb"}), True, "blue", 1007, True)
    assert r.advertises and r.learns and r.problems == ()
    assert not RouterRouting.parse("r", {}).enabled
    assert not RouterRouting.parse("r", {"dynamic-routing": "false"}).advertises


@pytest.mark.parametrize(
    ("options", "problem", "advertises", "learns"),
    [
        ({"dynamic-routing": "maybe"},
         "router r: dynamic-routing='maybe' is not true or false", False, False),
        ({"dynamic-routing-redistribute": "nat,bgp"},
         "router r: dynamic-routing-redistribute='nat,bgp' has unknown class(es) 'bgp'", True,
         True),
        # as OVN's ovn-northd: split at commas only, a flag with no blanks around it
        ({"dynamic-routing-redistribute": "nat, lb"},
         "router r: dynamic-routing-redistribute='nat, lb' has unknown class(es) ' lb'", True,
         True),
        ({"dynamic-routing": " true"},
         "router r: dynamic-routing=' true' is not true or false", False, False),
        ({"dynamic-routing-redistribute-local-only": "yes"},
         "router r: dynamic-routing-redistribute-local-only='yes' is not true or false", True,
         True),
        ({"dynamic-routing-vrf-name": "a" * 16},
         "router r: dynamic-routing-vrf-name='aaaaaaaaaaaaaaaa' is not a VRF name", False, False),
        ({"dynamic-routing-vrf-id": "254"},
         "router r: dynamic-routing-vrf-id='254' is not a usable kernel table id", True, False),
        ({"dynamic-routing-no-learning": "1"},
         "router r: dynamic-routing-no-learning='1' is not true or false", True, False),
    ],
)  # fmt: skip
def test_router_option_problems(
    options: dict[str, str], problem: str, advertises: bool, learns: bool
) -> None:
    r = RouterRouting.parse("r", {"dynamic-routing": "true", **options})
    assert len(r.problems) == 1 and r.problems[0].startswith(problem)
    assert (r.advertises, r.learns) == (advertises, learns)


def test_long_values_are_cut_in_problem_lines() -> None:
    (line,) = RouterRouting.parse("r", {"dynamic-routing": "x" * 500}).problems
    assert len(line) < 120 and "..." in line


def test_port_options() -> None:
    p = PortRouting.parse("lrp", {"dynamic-routing-redistribute": "connected",
                                  "dynamic-routing-port-name": "eth1",
                                  "dynamic-routing-no-learning": "true"})  # fmt: skip
    assert p == PortRouting(frozenset({"connected"}), "eth1", False)
    bad = PortRouting.parse("lrp", {"dynamic-routing-port-name": "eth 1"})
    assert bad.learn_problems and not bad.advertise_problems


def test_object_opt_out_and_its_problem() -> None:
    assert not SwitchPort.of("p", (), {"dynamic-routing-advertise": "false"}).advertise
    assert SwitchPort.of("p", (), {"dynamic-routing-advertise": "true"}).advertise
    bad = Nat.of("r", ip("192.0.2.1"), {"dynamic-routing-advertise": "nope"})
    assert not bad.advertise
    assert (
        bad.problem == "NAT 192.0.2.1 on r: dynamic-routing-advertise='nope' is not true or false"
    )


def test_state_problems_once_each_and_only_for_routers_that_are_on() -> None:
    lsp = SwitchPort.of("p", (), {"dynamic-routing-advertise": "nope"})
    port = RouterPort.of("lrp", (), {"dynamic-routing-no-learning": "x"})
    off = LogicalRouter.of("off", {}, (port,))
    on = LogicalRouter.of("on", {"dynamic-routing": "true"}, (port,))
    sw = LogicalSwitch("u", "ls", (lsp, lsp))
    assert OvnState((off,), {"u": sw}).problems() == (lsp.problem,)
    assert OvnState((on,), {"u": sw}).problems() == (*port.routing.problems, lsp.problem)


def test_owned_prefixes_cover_every_owner() -> None:
    sw = LogicalSwitch("u", "ls", (SwitchPort.of("pod", (ip("10.244.1.5"),)),),
                       (Vip.of("svc", ip("10.96.0.1")),))  # fmt: skip
    r = LogicalRouter.of(
        "r",
        {},
        (RouterPort.of("lrp", (iface("10.244.1.1/24"),)),),
        (Nat.of("r", ip("172.20.0.10")),),
        (Vip.of("lb", ip("203.0.113.5")),),
    )
    assert owned_prefixes_by_vrf(OvnState((r,), {"u": sw})) == {
        "": {
            net("10.244.1.0/24"): "port lrp",
            net("172.20.0.10/32"): "NAT 172.20.0.10 on r",
            net("203.0.113.5/32"): "LB lb VIP 203.0.113.5",
            net("10.96.0.1/32"): "LB svc VIP 10.96.0.1",
            net("10.244.1.5/32"): "LSP pod",
        }
    }


def test_the_node_config_maps_ovn_vrfs_onto_frr_vrfs() -> None:
    """bgp.vrf_map: OVN's VRF name (-vrf-name, else ovnvrf<N> of -vrf-id) -> the FRR VRF."""
    by_id = LogicalRouter.of("main", {"dynamic-routing": "true", "dynamic-routing-vrf-id": "42"})
    named = LogicalRouter.of("red", {"dynamic-routing": "true", "dynamic-routing-vrf-name": "red"})
    plain = LogicalRouter.of("plain", {"dynamic-routing": "true"})
    assert by_id.routing.vrf == "ovnvrf42"
    state = OvnState((by_id, named, plain))
    mapped = map_vrfs(state, {"ovnvrf42": "default", "red": "blue"})
    assert [r.routing.vrf for r in mapped.routers] == ["", "blue", ""]
    assert map_vrfs(state, {}) is state


def test_port_mapping_is_parsed_as_ovs_parses_key_value_lists() -> None:
    assert parse_port_mapping("br-bgp=eth1,b2:eth2 b3(eth3)") == (
        {"br-bgp": "eth1", "b2": "eth2", "b3": "eth3"}, ""
    )  # fmt: skip
    mapping, problem = parse_port_mapping("a=x, bad ,c=d")
    assert mapping == {"a": "x"}
    assert problem.startswith("dynamic-routing-port-mapping='a=x, bad ,c=d': entry 'bad'")
    assert parse_port_mapping("") == ({}, "")
