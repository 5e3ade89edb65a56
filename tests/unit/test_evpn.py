"""EVPN L2 intent and the changes toward it (pure)."""

from __future__ import annotations

import ipaddress

import pytest

from ovn_frr import config
from ovn_frr.config.convert import evpn_settings
from ovn_frr.core.evpn import (
    KernelVni,
    entry_change,
    evpn_intent,
    is_answer,
    localnet_name,
    responder_flows,
)
from ovn_frr.core.ovn import LogicalSwitch, OvnState, SwitchPort
from ovn_frr.reconcilers.evpn import KernelRead, still_current

IP = ipaddress.ip_address


def port(name: str, mac: str, *ips: str, here: bool = True, type: str = "") -> SwitchPort:
    return SwitchPort.of(name, tuple(IP(i) for i in ips), {}, here, type, mac)


def switch(name: str, other: dict[str, str], *ports: SwitchPort) -> LogicalSwitch:
    return LogicalSwitch(f"uuid-{name}", name, ports, (), other)


def state(*switches: LogicalSwitch) -> OvnState:
    return OvnState(switches={s.uuid: s for s in switches})


def test_switch_in_evpn_announces_ports_bound_here() -> None:
    sw = switch("ls1", {"dynamic-routing-vni": "100"},
                port("vm1", "0a:00:00:00:01:01", "10.100.0.11"),
                port("vm2", "0a:00:00:00:01:02", "10.100.0.12", here=False),
                port("rp", "", type="router"))  # fmt: skip
    intent = evpn_intent(state(sw, switch("plain", {}, port("x", "0a:00:00:00:09:09"))))
    assert intent.problems == ()
    (e,) = intent.switches
    assert (e.vni, e.switch, e.ip) == (100, "ls1", False)
    assert dict(e.local) == {"0a:00:00:00:01:01": ()}  # fdb only: no IPs
    assert e.devices.kernel() == ("br-100", "vxlan-100", "lo-100")
    assert e.network == "ovnfrr-evpn-100" and not e.localnet_present


def test_ip_class_announces_addresses_and_device_names_are_taken() -> None:
    sw = switch("ls1", {"dynamic-routing-vni": "7", "dynamic-routing-redistribute": "fdb,ip",
                        "dynamic-routing-bridge-ifname": "brx",
                        "dynamic-routing-vxlan-ifname": "vxx"},
                port("vm1", "0a:00:00:00:01:01", "10.1.0.5", "fd00::5"),
                port(localnet_name(7), "", type="localnet"))  # fmt: skip
    (e,) = evpn_intent(state(sw)).switches
    assert e.ip and e.local["0a:00:00:00:01:01"] == (IP("10.1.0.5"), IP("fd00::5"))
    assert (e.devices.bridge, e.devices.vxlan, e.devices.advertise) == ("brx", "vxx", "lo-7")
    assert e.localnet_present
    # OVN 26.03 names no device itself: the option the switch leaves out is known
    assert e.unnamed == ("dynamic-routing-advertise-ifname",)


@pytest.mark.parametrize(
    ("other", "needle"),
    [
        ({"dynamic-routing-vni": "0"}, "is not a VNI"),
        ({"dynamic-routing-vni": "16777216"}, "is not a VNI"),
        ({"dynamic-routing-vni": "abc"}, "is not a VNI"),
        ({"dynamic-routing-vni": "5", "dynamic-routing-redistribute": "ip"}, "lacks fdb"),
        ({"dynamic-routing-vni": "5", "dynamic-routing-redistribute": "fdb,nat"}, "unknown"),
        ({"dynamic-routing-vni": "5", "dynamic-routing-bridge-ifname": "a b"}, "interface"),
        ({"dynamic-routing-vni": "5", "dynamic-routing-bridge-ifname": "vxlan-5"}, "three"),
    ],
)
def test_bad_intent_names_the_switch_and_skips_it_alone(other: dict[str, str], needle: str) -> None:
    good = switch("good", {"dynamic-routing-vni": "9"}, port("a", "0a:00:00:00:00:0a"))
    intent = evpn_intent(state(switch("bad", other), good))
    assert [s.switch for s in intent.switches] == ["good"]
    (p,) = intent.problems
    assert p.startswith("switch bad") and needle in p


def test_one_vni_on_two_switches_leaves_both_out() -> None:
    a = switch("a", {"dynamic-routing-vni": "5"})
    b = switch("b", {"dynamic-routing-vni": "5"})
    intent = evpn_intent(state(a, b))
    assert intent.switches == () and "a, b" in intent.problems[0]


def test_localnet_of_a_switch_that_left_evpn_is_stale() -> None:
    sw = switch("ls1", {}, port(localnet_name(100), "", type="localnet"))
    ln = port(localnet_name(100), "", type="localnet")
    moved = switch("ls2", {"dynamic-routing-vni": "200"}, ln)
    intent = evpn_intent(state(sw, moved))
    assert sorted(s.switch_uuid for s in intent.stale) == ["uuid-ls1", "uuid-ls2"]


def test_entry_change_is_the_difference_only() -> None:
    sw = switch("ls1", {"dynamic-routing-vni": "1", "dynamic-routing-redistribute": "fdb,ip"},
                port("vm1", "0a:00:00:00:01:01", "10.0.0.1"),
                port("vm2", "0a:00:00:00:01:02", "10.0.0.2"))  # fmt: skip
    (e,) = evpn_intent(state(sw)).switches
    seen = KernelVni(
        local_macs=frozenset({"0a:00:00:00:01:01", "0a:00:00:00:09:99"}),
        local_ips={IP("10.0.0.1"): "0a:00:00:00:01:01", IP("10.0.0.9"): "0a:00:00:00:09:99"},
    )
    ch = entry_change(e, seen)
    assert ch.add_macs == ("0a:00:00:00:01:02",) and ch.del_macs == ("0a:00:00:00:09:99",)
    assert ch.add_ips == ((IP("10.0.0.2"), "0a:00:00:00:01:02"),)
    assert ch.del_ips == (IP("10.0.0.9"),)
    done = KernelVni(frozenset(e.local), {IP("10.0.0.1"): "0a:00:00:00:01:01",
                                          IP("10.0.0.2"): "0a:00:00:00:01:02"})  # fmt: skip
    assert not entry_change(e, done)


def test_responder_flows_wire_and_answer() -> None:
    mac = "0a:00:00:00:02:20"
    flows = responder_flows("patch-x", "ovs-100", {IP("10.100.0.20"): mac, IP("fd00::20"): mac})
    assert "priority=10,in_port=patch-x actions=output:ovs-100" in flows
    # one flow per IP: its MAC, then the tail all IPs share
    arp = next(f for f in flows if "arp_tpa=10.100.0.20" in f)
    assert arp.endswith(f"set_field:{mac}->eth_src,resubmit(,2)") and is_answer(arp)
    nd = next(f for f in flows if "nd_target=fd00::20" in f)
    assert "icmpv6_type=135" in nd and nd.endswith("resubmit(,3)") and is_answer(nd)
    tails = [f for f in flows if f.startswith("table=")]
    assert [t.split(",", 1)[0] for t in tails] == ["table=2", "table=3", "table=4"]
    assert "set_field:2->arp_op" in tails[0] and tails[0].endswith("IN_PORT")
    assert "set_field:136->icmpv6_type" in tails[1] and "move:eth_src->nd_tll" in tails[2]
    assert [is_answer(f) for f in flows] == [False] * 6 + [True] * 2


def test_node_config_evpn() -> None:
    cfg = config.parse(
        '[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n'
        '[[bgp.neighbors]]\naddress = "10.0.0.2"\nremote_as = "internal"\n'
        'address_families = ["ipv4-unicast", "l2vpn-evpn"]\n'
        '[evpn.vnis.100]\nroute_targets_import = ["64512:100"]\nrd = "192.0.2.1:100"\n'
    )
    ev = evpn_settings(cfg)
    assert ev is not None and str(ev.vtep) == "192.0.2.1/32"  # local_ip defaults to router_id
    (v,) = ev.vnis
    assert (v.vni, v.rd, v.rt_import) == (100, "192.0.2.1:100", ())  # the auto RT: no line


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('[evpn.vnis.100]\nrd = "100"\n', "evpn.vnis.100.rd"),
        (
            '[evpn.vnis.100]\nroute_targets_export = ["1.2.3.4:70000"]\n',
            "evpn.vnis.100.route_targets_export",
        ),
        ("[evpn]\nudp_port = 0\n", "evpn.udp_port"),
        ('[evpn]\nlocal_ip = "fd00::1"\n', "evpn.local_ip"),
    ],
)
def test_bad_evpn_config_names_the_key(text: str, path: str) -> None:
    with pytest.raises(config.ConfigError) as err:
        config.parse('[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n' + text)
    assert path in str(err.value)


def test_evpn_neighbor_in_a_vrf_is_refused() -> None:
    with pytest.raises(config.ConfigError, match="default VRF only"):
        config.parse('[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n'
                     '[[bgp.neighbors]]\naddress = "10.0.0.2"\nremote_as = 1\nvrf = "red"\n'
                     'address_families = ["l2vpn-evpn"]\n')  # fmt: skip


def test_a_vni_being_moved_stays_with_the_switch_that_has_its_localnet() -> None:
    old = switch("old", {"dynamic-routing-vni": "5"}, port(localnet_name(5), "", type="localnet"))
    new = switch("new", {"dynamic-routing-vni": "5"})
    intent = evpn_intent(state(old, new))
    assert [s.switch for s in intent.switches] == ["old"]
    assert "old keeps it" in intent.problems[0]


def test_a_switch_with_its_own_localnet_is_left_out() -> None:
    sw = switch("provider", {"dynamic-routing-vni": "5"}, port("physnet", "", type="localnet"))
    intent = evpn_intent(state(sw))
    assert intent.switches == () and "localnet port physnet" in intent.problems[0]


def test_rd_and_rt_are_kept_as_frr_shows_them() -> None:
    cfg = config.parse('[bgp]\nasn = 64512\nrouter_id = "192.0.2.1"\n'
                       '[evpn.vnis.7]\nrd = "065000:0100"\n')  # fmt: skip
    assert cfg.evpn.vnis["7"].rd == "65000:100"


def test_a_port_with_two_address_entries_pairs_each_mac_with_its_own_ips() -> None:
    two = SwitchPort.of("vm", (IP("10.0.0.1"), IP("10.0.0.2")), {}, True, "", "0a:00:00:00:00:01",
                        (("0a:00:00:00:00:01", (IP("10.0.0.1"),)),
                         ("0a:00:00:00:00:02", (IP("10.0.0.2"),))))  # fmt: skip
    sw = switch("ls", {"dynamic-routing-vni": "3", "dynamic-routing-redistribute": "fdb,ip"}, two)
    (e,) = evpn_intent(state(sw)).switches
    assert dict(e.local) == {"0a:00:00:00:00:01": (IP("10.0.0.1"),),
                             "0a:00:00:00:00:02": (IP("10.0.0.2"),)}  # fmt: skip


def test_a_read_is_current_while_the_monitor_saw_nothing_and_it_is_young() -> None:
    last = KernelRead(KernelVni(), events=7, at=100.0)
    assert still_current(last, 7, 101.0, max_age=2.0)
    assert not still_current(last, 8, 101.0, max_age=2.0)  # a change (or a loss) since
    assert not still_current(last, 7, 102.0, max_age=2.0)  # the periodic pass reads
    assert not still_current(last, None, 101.0, max_age=2.0)  # the monitor does not run
    assert not still_current(None, 7, 101.0, max_age=2.0)
