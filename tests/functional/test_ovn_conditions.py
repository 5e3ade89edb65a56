"""The reader's conditional monitors on a real NB/SB: a chassis receives the rows that concern
it (its gateway router, a local-only distributed router, the ports bound on it, a gateway port
that moves to it) and nothing of another chassis; changes there do not wake it."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import pytest

from ovn_frr.core.advertise import announcements
from ovn_frr.core.ovn import OvnState
from ovn_frr.lab import Lab, LabSpec, wait_for
from ovn_frr.lab.ovn import OvnCentral
from ovn_frr.ovn.reader import OvnReader, nb_connection, sb_connection

ON = ["options:dynamic-routing=true"]


def bind(ovn: OvnCentral, port: str, chassis: str) -> None:
    """Bind ``port`` (once ovn-northd made its binding) to ``chassis``, as its ovn-controller
    would."""
    find = ("--bare", "--columns=_uuid", "find", "Port_Binding", f"logical_port={port}")
    wait_for(lambda: ovn.sbctl(*find), timeout=20, what=f"binding {port}")
    ovn.sbctl("lsp-unbind", port)
    ovn.sbctl("lsp-bind", port, chassis)


def _node(ovn: OvnCentral, i: int, ports: int) -> None:
    """An ovn-kubernetes-shaped node: GR_ch<i> pinned to ch<i> (uplink ext<i>) and a pod
    switch behind the cluster router, with ``ports`` pods bound on ch<i>."""
    nb, sb = ovn.nbctl, ovn.sbctl
    sb("chassis-add", f"ch{i}", "geneve", f"127.0.0.{i}")
    nb(
        "lr-add",
        f"GR_ch{i}",
        "--",
        "set",
        "Logical_Router",
        f"GR_ch{i}",
        f"options:chassis=ch{i}",
        *ON,
        "options:dynamic-routing-redistribute=connected",
    )
    nb("lrp-add", f"GR_ch{i}", f"rtoe-GR_ch{i}", f"0a:00:00:00:{i:02x}:01", f"172.18.{i}.2/24")
    nb("ls-add", f"ext{i}")
    nb(
        "lsp-add",
        f"ext{i}",
        f"etor-GR_ch{i}",
        "--",
        "lsp-set-type",
        f"etor-GR_ch{i}",
        "router",
        "--",
        "lsp-set-options",
        f"etor-GR_ch{i}",
        f"router-port=rtoe-GR_ch{i}",
        "--",
        "lsp-set-addresses",
        f"etor-GR_ch{i}",
        "router",
    )
    nb("ls-add", f"pods{i}")
    nb("lrp-add", "cluster", f"rtos-pods{i}", f"0a:00:00:01:{i:02x}:01", f"10.244.{i}.1/24")
    nb("lsp-add", f"pods{i}", f"stor-pods{i}", "--", "lsp-set-type", f"stor-pods{i}", "router",
       "--", "lsp-set-options", f"stor-pods{i}", f"router-port=rtos-pods{i}")  # fmt: skip
    for p in range(ports):
        nb("lsp-add", f"pods{i}", f"pod{i}-{p}", "--", "lsp-set-addresses", f"pod{i}-{p}",
           f"0a:58:0a:f4:{i:02x}:{p + 2:02x} 10.244.{i}.{p + 2}")  # fmt: skip
    for p in range(ports):
        bind(ovn, f"pod{i}-{p}", f"ch{i}")


@pytest.fixture
def central(make_lab: Callable[[LabSpec], Lab]) -> OvnCentral:
    lab = make_lab(LabSpec())
    assert lab.ovn is not None
    lab.ovn.nbctl("lr-add", "cluster")
    for i in (1, 2, 3):
        _node(lab.ovn, i, ports=3)
    # an OpenStack-shaped router: a gateway port (active on ch2) and a tenant network with
    # one VM on ch1 and one on ch3; local-only, connected-as-host
    nb = lab.ovn.nbctl
    nb("lr-add", "neutron", "--", "set", "Logical_Router", "neutron", *ON,
       "options:dynamic-routing-redistribute=connected-as-host",
       "options:dynamic-routing-redistribute-local-only=true")  # fmt: skip
    nb("lrp-add", "neutron", "lrp-gw", "0a:00:00:02:00:01", "172.24.4.10/24")
    nb("lrp-set-gateway-chassis", "lrp-gw", "ch2", "20")
    nb("lrp-set-gateway-chassis", "lrp-gw", "ch3", "10")
    nb("lrp-add", "neutron", "lrp-t", "0a:00:00:02:00:02", "10.100.0.1/24")
    nb("ls-add", "tenant")
    nb(
        "lsp-add",
        "tenant",
        "t-r",
        "--",
        "lsp-set-type",
        "t-r",
        "router",
        "--",
        "lsp-set-options",
        "t-r",
        "router-port=lrp-t",
        "--",
        "lsp-set-addresses",
        "t-r",
        "router",
    )
    for vm, ch in (("vm1", "ch1"), ("vm3", "ch3")):
        nb("lsp-add", "tenant", vm, "--", "lsp-set-addresses", vm,
           f"0a:00:00:03:00:0{vm[-1]} 10.100.0.1{vm[-1]}")  # fmt: skip
        bind(lab.ovn, vm, ch)
    bind(lab.ovn, "cr-lrp-gw", "ch2")
    return lab.ovn


class Watched:
    """A reader for one chassis, counting the IDLs' wake-ups."""

    def __init__(self, ovn: OvnCentral, chassis: str) -> None:
        self.wakes = 0
        nb, sb = nb_connection(ovn.nb, chassis), sb_connection(ovn.sb, chassis)
        nb.on_change = sb.on_change = self._wake
        self.reader = OvnReader(nb, sb, chassis)

    def _wake(self) -> None:
        self.wakes += 1

    def state(self, check: Callable[[OvnState], bool] = lambda s: True) -> OvnState:
        def settled() -> OvnState | None:
            s = self.reader.read()
            return s if s is not None and check(s) else None

        got: OvnState = wait_for(settled, timeout=20, what="a settled state")
        return got

    def rows(self, db: str, table: str) -> set[str]:
        if db == "sb":
            chassis, ports = self.reader.sb.held()
            return set(chassis if table == "Chassis" else ports)
        conn = self.reader.nb

        def names(idl: Any) -> set[str]:
            rows = idl.tables[table].rows.values()
            return {str(getattr(r, "name", None) or r.logical_port) for r in rows}

        return conn.read(names)


def test_a_chassis_receives_only_its_own_rows(central: OvnCentral) -> None:
    w = Watched(central, "ch1")
    local = {"pod1-0", "pod1-1", "pod1-2", "stor-pods1", "vm1", "vm3", "t-r", "etor-GR_ch1"}
    try:
        s = w.state()
        assert w.reader.settling > 0  # it took a few rounds to follow the references
        # pinned here; behind a switch with a port bound here (the cluster router has no
        # dynamic routing: its row, nothing of it)
        assert {r.name for r in s.routers} == {"GR_ch1", "neutron", "cluster"}
        assert w.rows("nb", "Logical_Router") == {"GR_ch1", "neutron", "cluster"}
        # the routers' ports (of the cluster router too: the hijack guard keeps imports off
        # every node's pod subnet)
        assert w.rows("nb", "Logical_Router_Port") == {"rtoe-GR_ch1", "lrp-gw", "lrp-t",
                                                       "rtos-pods1", "rtos-pods2",
                                                       "rtos-pods3"}  # fmt: skip
        # the switches with ports bound here, and the one behind the gateway router
        assert w.rows("nb", "Logical_Switch") == {"pods1", "tenant", "ext1"}
        assert w.rows("nb", "Logical_Switch_Port") == local
        assert w.rows("sb", "Port_Binding") == {"pod1-0", "pod1-1", "pod1-2", "vm1"}
        assert w.rows("sb", "Chassis") == {"ch1"}
        neutron = next(r for r in s.routers if r.name == "neutron")
        assert not neutron.gateway_here and not neutron.distributed  # its gateway is on ch2

        # other chassis' changes: nothing arrives, nothing wakes this one
        wakes = w.wakes
        central.nbctl("lsp-add", "pods2", "pod2-9")
        bind(central, "pod2-9", "ch2")
        central.nbctl("set", "Logical_Router", "GR_ch2", "options:dynamic-routing-redistribute=nat")
        central.nbctl("--wait=sb", "sync")
        assert w.wakes == wakes, w.wakes - wakes
        assert w.rows("nb", "Logical_Switch_Port") == local
        # a node more: the cluster router (reached here) has a port more, and the guard its
        # network; nothing of the new node's switch
        central.nbctl("lrp-add", "cluster", "rtos-pods9", "0a:00:00:01:09:01", "10.244.9.1/24")
        central.nbctl("ls-add", "pods9")
        w.state(lambda s: "rtos-pods9" in w.rows("nb", "Logical_Router_Port"))
        assert "pods9" not in w.rows("nb", "Logical_Switch")
        # a port on a switch that is local here (a VM on ch3): its switch row changed
        central.nbctl("lsp-add", "tenant", "vm9")
        bind(central, "vm9", "ch3")
        s = w.state(lambda s: "vm9" in w.rows("nb", "Logical_Switch_Port"))
        assert w.rows("sb", "Port_Binding") == {"pod1-0", "pod1-1", "pod1-2", "vm1"}

        # the gateway port moves here
        bind(central, "cr-lrp-gw", "ch1")  # a failover
        s = w.state(lambda s: any(p.bound_here for r in s.routers for p in r.ports))
        neutron = next(r for r in s.routers if r.name == "neutron")
        assert neutron.gateway_here
        # a port bound here later comes with its row
        bind(central, "vm9", "ch1")
        s = w.state(lambda s: any(p.name == "vm9" and p.bound_here
                                  for ls in s.switches.values() for p in ls.ports))  # fmt: skip
        assert "vm9" in w.rows("sb", "Port_Binding")
    finally:
        w.reader.close()


def test_a_chassis_that_may_host_a_gateway_has_its_router_before_the_failover(
    central: OvnCentral,
) -> None:
    """ch4, a standby gateway chassis of lrp-gw, and ch5, in the HA group of another router's
    gateway port (neither has anything else), have the router, its gateway port and the
    switches behind it before any failover."""
    central.sbctl("chassis-add", "ch4", "geneve", "127.0.0.4")
    central.sbctl("chassis-add", "ch5", "geneve", "127.0.0.5")
    central.nbctl("lrp-set-gateway-chassis", "lrp-gw", "ch4", "5")
    central.nbctl("lr-add", "neutron2", "--", "lrp-add", "neutron2", "lrp2-gw",
                  "0a:00:00:04:00:01", "172.24.5.10/24", "--", "ha-chassis-group-add", "hag",
                  "--", "ha-chassis-group-add-chassis", "hag", "ch5", "10")  # fmt: skip
    group = central.nbctl("--bare", "--columns=_uuid", "find", "HA_Chassis_Group", "name=hag")
    central.nbctl("set", "Logical_Router_Port", "lrp2-gw", f"ha_chassis_group={group}")
    for chassis, router, port, switches in (("ch4", "neutron", "lrp-gw", {"tenant"}),
                                            ("ch5", "neutron2", "lrp2-gw", set())):  # fmt: skip
        standby = Watched(central, chassis)
        try:
            got = standby.state()
            assert {r.name for r in got.routers} == {router}, chassis
            assert port in standby.rows("nb", "Logical_Router_Port")
            assert standby.rows("nb", "Logical_Switch") == switches
        finally:
            standby.reader.close()


def test_the_load_balancers_of_a_group_are_read_where_it_is_attached(
    central: OvnCentral,
) -> None:
    """ovn-kubernetes' services: one load balancer group on every gateway router. Its VIPs are
    GR_ch1's on ch1; a group attached to GR_ch2 alone reaches no other chassis."""
    nb = central.nbctl
    nb("lb-add", "svc", "172.30.0.10:80", "10.244.1.2:8080", "tcp")
    nb("lb-add", "svc2", "172.30.0.20:80", "10.244.2.2:8080", "tcp")

    def lb(name: str) -> str:
        return nb("--bare", "--columns=_uuid", "find", "Load_Balancer", f"name={name}").strip()

    cluster = nb("create", "Load_Balancer_Group", "name=clusterLBGroup",
                 f"load_balancer={lb('svc')}").strip()  # fmt: skip
    only2 = nb("create", "Load_Balancer_Group", "name=ch2Group",
               f"load_balancer={lb('svc2')}").strip()  # fmt: skip
    for i in (1, 2, 3):
        nb("add", "Logical_Router", f"GR_ch{i}", "load_balancer_group", cluster)
    nb("add", "Logical_Router", "GR_ch2", "load_balancer_group", only2)
    w = Watched(central, "ch1")
    try:
        s = w.state(lambda s: any(r.vips for r in s.routers if r.name == "GR_ch1"))
        gr1 = next(r for r in s.routers if r.name == "GR_ch1")
        assert {(v.lb, str(v.address)) for v in gr1.vips} == {("svc", "172.30.0.10")}
        assert w.rows("nb", "Load_Balancer_Group") == {"clusterLBGroup"}
        assert w.rows("nb", "Load_Balancer") == {"svc"}
    finally:
        w.reader.close()


def test_a_changed_port_is_read_anew(central: OvnCentral) -> None:
    """The reader keeps what it made of each switch port row until the IDL reports that row
    changed: new addresses are read, a deleted port goes, and a port made again under the
    same name is read as it is now."""
    w = Watched(central, "ch1")

    def pod(s: OvnState, name: str) -> tuple[str, ...] | None:
        ports = [p for ls in s.switches.values() for p in ls.ports if p.name == name]
        return tuple(str(a) for a in ports[0].addresses) if ports else None

    try:
        w.state(lambda s: pod(s, "pod1-2") is not None)
        central.nbctl("lsp-set-addresses", "pod1-2", "0a:58:0a:f4:01:63 10.244.1.99")
        w.state(lambda s: pod(s, "pod1-2") == ("10.244.1.99",))
        central.nbctl("lsp-del", "pod1-2")
        w.state(lambda s: pod(s, "pod1-2") is None)
        central.nbctl("lsp-add", "pods1", "pod1-2", "--", "lsp-set-addresses", "pod1-2",
                      "0a:58:0a:f4:01:64 10.244.1.100")  # fmt: skip
        bind(central, "pod1-2", "ch1")
        s = w.state(lambda s: pod(s, "pod1-2") == ("10.244.1.100",))
        assert [p.bound_here for ls in s.switches.values() for p in ls.ports
                if p.name == "pod1-2"] == [True]  # fmt: skip
    finally:
        w.reader.close()


def test_a_distributed_router_goes_with_its_last_local_port(central: OvnCentral) -> None:
    """A distributed router is announced where its gateway port is active (as OVN 26.03):
    then it brings the switches behind it. Reached only through a local port, it brings
    nothing; once its gateway moved away and no port is bound here any more, nothing roots it
    here: the router and its switches go (they kept each other reached before: its switch
    was there because the router was)."""
    nb = central.nbctl
    nb("lr-add", "dist", "--", "set", "Logical_Router", "dist", *ON,
       "options:dynamic-routing-redistribute=connected")  # fmt: skip
    for i, sw in enumerate(("a", "b"), start=1):
        nb("lrp-add", "dist", f"dist-{sw}", f"0a:00:00:05:00:0{i}", f"10.55.{i}.1/24", "--",
           "ls-add", f"sw-{sw}", "--", "lsp-add", f"sw-{sw}", f"sw-{sw}-r", "--",
           "lsp-set-type", f"sw-{sw}-r", "router", "--", "lsp-set-addresses", f"sw-{sw}-r",
           "router", "--", "lsp-set-options", f"sw-{sw}-r", f"router-port=dist-{sw}")  # fmt: skip
    nb("lrp-set-gateway-chassis", "dist-b", "ch2", "10")
    nb("lsp-add", "sw-a", "vm-a", "--", "lsp-set-addresses", "vm-a", "0a:00:00:05:01:01 10.55.1.5")
    bind(central, "vm-a", "ch1")
    bind(central, "cr-dist-b", "ch2")
    w = Watched(central, "ch1")
    try:
        w.state(lambda s: "dist" in {r.name for r in s.routers})
        assert "sw-a" in w.rows("nb", "Logical_Switch")
        assert "sw-b" not in w.rows("nb", "Logical_Switch")  # announced on ch2, not here
        central.sbctl("lsp-unbind", "cr-dist-b")
        central.sbctl("lsp-bind", "cr-dist-b", "ch1")  # a failover to this chassis
        w.state(lambda s: "sw-b" in {ls.name for ls in s.switches.values()})
        central.sbctl("lsp-unbind", "vm-a")
        central.sbctl("lsp-unbind", "cr-dist-b")
        central.sbctl("lsp-bind", "cr-dist-b", "ch2")
        s = w.state(lambda s: "dist" not in {r.name for r in s.routers})
        assert not {"sw-a", "sw-b"} & w.rows("nb", "Logical_Switch")
        assert not {"dist-a", "dist-b"} & {p.name for r in s.routers for p in r.ports}
    finally:
        w.reader.close()


def test_a_change_that_needs_a_condition_round_trip_is_read_in_one_call(
    central: OvnCentral,
) -> None:
    """A NAT added to a router here arrives in two steps (the router's row, then the NAT row
    the new condition asks for): one read waits for the second instead of returning None."""
    w = Watched(central, "ch1")
    try:
        w.state()

        def nats() -> int:  # the NATs GR_ch1's row refers to, as this IDL has it
            return int(w.reader.nb.read(lambda idl: sum(
                len(r._data["nat"].values) for r in idl.tables["Logical_Router"].rows.values()
                if r.name == "GR_ch1")))  # fmt: skip

        before = nats()
        central.nbctl("lr-nat-add", "GR_ch1", "dnat_and_snat", "172.18.1.50", "10.244.1.2")
        wait_for(lambda: nats() > before, timeout=10, what="GR_ch1's row with the new NAT")
        settling = w.reader.settling
        s = w.reader.read(wait_s=5)
        assert s is not None
        gr = next(r for r in s.routers if r.name == "GR_ch1")
        assert "172.18.1.50" in {str(n.external_ip) for n in gr.nats}
        assert w.reader.settling > settling  # it did wait for the NAT's row
    finally:
        w.reader.close()


def test_a_neighbours_floating_ip_follows_the_switch_behind_its_gateway(
    central: OvnCentral,
) -> None:
    """A router announced here (GR_ch1) peered with a distributed router whose FIP's VM is
    bound here: OVN routes that FIP on the gateway chassis while the switch behind the only
    gateway port has no localnet port, at the VM once it has one (OVN 26.03's
    lr_nat_entry_set_dgw_port). So the reader learns whether that switch has a localnet port,
    reading nothing else of it (found by the differential against OVN 26.03, seed 35 case
    78)."""
    nb = central.nbctl
    nb("lr-add", "fip")
    nb("lrp-add", "fip", "fip-gw", "0a:00:00:06:00:01", "172.30.0.1/24", "--",
       "ls-add", "ovl", "--", "lsp-add", "ovl", "ovl-r", "--", "lsp-set-type", "ovl-r", "router",
       "--", "lsp-set-addresses", "ovl-r", "router", "--",
       "lsp-set-options", "ovl-r", "router-port=fip-gw")  # fmt: skip
    nb("lrp-set-gateway-chassis", "fip-gw", "ch2", "10")
    nb("lsp-add", "ovl", "ovl-vm", "--",
       "lsp-set-addresses", "ovl-vm", "0a:00:00:06:02:01 172.30.0.7")  # fmt: skip
    nb("lrp-add", "fip", "fip-t", "0a:00:00:06:00:02", "10.66.0.1/24", "--",
       "ls-add", "fipnet", "--", "lsp-add", "fipnet", "fipnet-r", "--",
       "lsp-set-type", "fipnet-r", "router", "--", "lsp-set-addresses", "fipnet-r", "router",
       "--", "lsp-set-options", "fipnet-r", "router-port=fip-t", "--",
       "lsp-add", "fipnet", "fvm", "--", "lsp-set-addresses", "fvm",
       "0a:00:00:06:01:01 10.66.0.5")  # fmt: skip
    nb("lr-nat-add", "fip", "dnat_and_snat", "172.30.0.10", "10.66.0.5", "fvm",
       "0a:00:00:06:01:02")  # fmt: skip
    nb("lrp-add", "fip", "fip-p", "0a:00:00:06:00:03", "169.254.60.1/30", "peer=gr-p")
    nb("lrp-add", "GR_ch1", "gr-p", "0a:00:00:06:00:04", "169.254.60.2/30", "peer=fip-p", "--",
       "set", "Logical_Router_Port", "gr-p", "options:dynamic-routing-redistribute=nat",
       "options:dynamic-routing-redistribute-local-only=true")  # fmt: skip
    bind(central, "fvm", "ch1")
    bind(central, "cr-fip-gw", "ch2")
    fip = ipaddress.ip_network("172.30.0.10/32")
    w = Watched(central, "ch1")
    try:
        s = w.state(lambda s: "fip-gw" in s.gateway_localnet)
        assert fip not in {a.prefix for a in announcements(s)}  # routed on ch2
        assert "ovl" not in {ls.name for ls in s.switches.values()}  # not this chassis' share
        assert "ovl-vm" not in w.rows("nb", "Logical_Switch_Port")
        nb("lsp-add", "ovl", "ovl-ln", "--", "lsp-set-type", "ovl-ln", "localnet", "--",
           "lsp-set-addresses", "ovl-ln", "unknown", "--",
           "lsp-set-options", "ovl-ln", "network_name=phys")  # fmt: skip
        w.state(lambda s: fip in {a.prefix for a in announcements(s)})  # at its VM: here
        assert "fipnet" in w.rows("nb", "Logical_Switch")  # bound here anyway
    finally:
        w.reader.close()
