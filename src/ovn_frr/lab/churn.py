"""Random, seeded changes of every kind ovn-frr's intent reads, on a lab's OVN and ToRs.

:class:`Churn` keeps a small model of what it made (to pick what to change next; the checks
never read it) and makes one operation at a time: routers (added, removed, their
``dynamic-routing*`` options set and removed, pinned to a chassis), router ports (tenant
switches, uplinks on the ToRs' links, distributed gateway ports whose chassisredirect binding
moves between chassis), switch ports added, bound and unbound on either chassis, removed,
opted out; NATs (SNAT, centralized and distributed floating IPs); load balancers on routers
and switches, directly and through groups; static routes (default and source routes among
them); EVPN options on switches; VRF names; the ToRs announcing and withdrawing prefixes (ECMP
across both, a default route, an address OVN owns). Addresses are chosen so that the ToRs'
prefixes never lie in OVN's own space unless they are meant to (see :mod:`ovn_frr.lab.oracle`).
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ovn_frr.lab.lab import Lab
from ovn_frr.lab.proc import wait_for

CHASSIS = ("node1", "node2")
#: the ToRs' prefixes: /24s of the benchmarking range, never an address of NB
TOR_POOL = [str(n) for n in list(ipaddress.ip_network("198.18.0.0/16").subnets(new_prefix=24))[:48]]
VRFS = ("red", "blue")
CLASSES = ("connected", "connected-as-host", "static", "nat", "lb")


@dataclass
class _Router:
    name: str
    ports: list[str] = field(default_factory=list)
    nats: list[str] = field(default_factory=list)  # external IPs
    statics: list[str] = field(default_factory=list)  # prefixes
    #: uplink port -> the index of the ToR link it is on (one per link at most)
    uplinks: dict[str, int] = field(default_factory=dict)


@dataclass
class _Switch:
    name: str
    index: int
    ports: list[str] = field(default_factory=list)  # VM ports
    router_port: str = ""


class Churn:
    """The operations, on ``lab`` (its OVN central and the ToRs tor1 and tor2, whose links are
    10.255.0.0/24 and 10.255.1.0/24); chassis node1 and node2 exist in SB only."""

    #: operation -> its weight
    OPS: ClassVar[dict[str, float]] = {
        "router_add": 4, "router_del": 1, "router_option": 4, "port_add": 3, "port_del": 1,
        "port_option": 1, "gateway_move": 2, "vm_add": 4, "vm_del": 1.5, "vm_bind": 3,
        "vm_opt_out": 1, "nat_add": 3, "nat_del": 2.5, "nat_opt_out": 1, "lb_add": 2,
        "lb_del": 1, "static_add": 2, "static_del": 1, "evpn_option": 1, "tor_churn": 4,
    }  # fmt: skip

    def __init__(self, lab: Lab, rng: random.Random) -> None:
        assert lab.ovn is not None
        self.lab = lab
        self.ovn = lab.ovn
        self.rng = rng
        self.routers: dict[str, _Router] = {}
        self.switches: dict[str, _Switch] = {}
        self.lbs: list[str] = []
        self.groups: list[str] = []
        self.announced: dict[str, set[str]] = {"tor1": set(), "tor2": set()}
        self._n = 0
        for i, chassis in enumerate(CHASSIS, start=1):
            self.ovn.sbctl("--may-exist", "chassis-add", chassis, "geneve", f"127.0.0.{i}")
        for link in range(2):  # one provider switch per ToR link
            self.nb("ls-add", f"ext{link}", "--", "lsp-add", f"ext{link}", f"ext{link}-ln", "--",
                    "lsp-set-type", f"ext{link}-ln", "localnet", "--",
                    "lsp-set-addresses", f"ext{link}-ln", "unknown", "--",
                    "lsp-set-options", f"ext{link}-ln", f"network_name=physnet{link}")  # fmt: skip

    def nb(self, *args: str) -> str:
        return self.ovn.nbctl(*args)

    def _sb(self, ops: list[dict[str, Any]]) -> list[Any]:
        return self.ovn.transact(ops, db="OVN_Southbound")

    def _name(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def _binding(self, port: str) -> None:
        wait_for(lambda: bool(self.ovn.sbctl("--bare", "--columns=_uuid", "find",
                                             "Port_Binding", f"logical_port={port}")),
                 timeout=20, what=f"northd's binding of {port}")  # fmt: skip

    def _bind(self, port: str, chassis: str | None) -> None:
        self._binding(port)
        self.ovn.sbctl("lsp-unbind", port)
        if chassis:
            self.ovn.sbctl("lsp-bind", port, chassis)

    # --- operations ---------------------------------------------------------------------------

    def router_add(self) -> None:
        name = self._name("r")
        opts = self._router_options()
        pin = self.rng.choices([None, "node1", "node2"], [6, 3, 1])[0]
        if pin:
            opts.append(f"options:chassis={pin}")
        self.nb("lr-add", name, *(["--", "set", "Logical_Router", name, *opts] if opts else []))
        self.routers[name] = _Router(name)
        for _ in range(self.rng.randint(1, 2)):
            self.port_add(name)

    def _router_options(self) -> list[str]:
        rng = self.rng
        opts = [
            f"options:dynamic-routing={rng.choices(['true', 'false', 'maybe'], [8, 1, 0.3])[0]}"
        ]
        classes = rng.sample(CLASSES, rng.randint(0, len(CLASSES)))
        if rng.random() < 0.05:
            classes.append("bogus")
        if classes:
            opts.append(f'options:dynamic-routing-redistribute="{",".join(classes)}"')
        if rng.random() < 0.3:
            opts.append("options:dynamic-routing-redistribute-local-only=true")
        if rng.random() < 0.2:
            opts.append(f"options:dynamic-routing-vrf-name={rng.choice(VRFS)}")
        if rng.random() < 0.1:
            opts.append("options:dynamic-routing-no-learning=true")
        if rng.random() < 0.1:
            opts.append(f"options:dynamic-routing-v4-prefix-nexthop=10.255.0.{rng.randint(10, 99)}")
        return opts

    def router_del(self) -> None:
        r = self._pick(self.routers)
        if r is None:
            return
        for port in self.routers[r].ports:
            for s in self.switches.values():
                if s.router_port == port:
                    s.router_port = ""
        lsps = [f"{p}-lsp" for p in self.routers[r].ports]
        args: list[str] = ["lr-del", r]
        for lsp in lsps:
            args += ["--", "--if-exists", "lsp-del", lsp]
        self.nb(*args)
        del self.routers[r]

    def router_option(self) -> None:
        r = self._pick(self.routers)
        if r is None:
            return
        if self.rng.random() < 0.3:
            keys = ["dynamic-routing", "dynamic-routing-redistribute", "chassis",
                    "dynamic-routing-redistribute-local-only", "dynamic-routing-vrf-name",
                    "dynamic-routing-no-learning", "dynamic-routing-v4-prefix-nexthop"]  # fmt: skip
            self.nb("remove", "Logical_Router", r, "options", self.rng.choice(keys))
        else:
            self.nb("set", "Logical_Router", r, self.rng.choice(self._router_options()))

    def port_add(self, router: str | None = None) -> None:
        r = router or self._pick(self.routers)
        if r is None:
            return
        lr = self.routers[r]
        lrp = self._name(f"lrp-{r}-")
        mac = (
            f"0a:00:00:{self._n // 65536 % 256:02x}:{self._n // 256 % 256:02x}:{self._n % 256:02x}"
        )
        free = [i for i in (0, 1) if i not in lr.uplinks.values()]
        if free and self.rng.random() < 0.4:  # an uplink on a ToR's link
            link = self.rng.choice(free)
            ip = f"10.255.{link}.{10 + self._n % 200}/24"
            self.nb("lrp-add", r, lrp, mac, ip, "--", "lsp-add", f"ext{link}", f"{lrp}-lsp",
                    "--", "lsp-set-type", f"{lrp}-lsp", "router", "--",
                    "lsp-set-addresses", f"{lrp}-lsp", "router", "--",
                    "lsp-set-options", f"{lrp}-lsp", f"router-port={lrp}")  # fmt: skip
            lr.uplinks[lrp] = link
            lr.ports.append(lrp)
            if self.rng.random() < 0.5 and not self._pinned(r):  # a distributed gateway port
                self.nb("lrp-set-gateway-chassis", lrp, "node1", "2", "--",
                        "lrp-set-gateway-chassis", lrp, "node2", "1")  # fmt: skip
                self._bind(f"cr-{lrp}", self.rng.choice(["node1", "node1", "node2", None]))
            return
        # a tenant switch behind the router
        k = len(self.switches) + self._n
        sw = _Switch(self._name("ls"), k)
        net4 = f"10.{100 + k // 250 % 100}.{k % 250}"
        self.nb("ls-add", sw.name, "--", "lrp-add", r, lrp, mac, f"{net4}.1/24",
                f"fd00:{100 + k}::1/64", "--", "lsp-add", sw.name, f"{lrp}-lsp", "--",
                "lsp-set-type", f"{lrp}-lsp", "router", "--", "lsp-set-addresses",
                f"{lrp}-lsp", "router", "--", "lsp-set-options", f"{lrp}-lsp",
                f"router-port={lrp}")  # fmt: skip
        sw.router_port = lrp
        self.switches[sw.name] = sw
        lr.ports.append(lrp)
        for _ in range(self.rng.randint(0, 3)):
            self.vm_add(sw.name)

    def _pinned(self, router: str) -> bool:
        return bool(self.nb("--if-exists", "get", "Logical_Router", router, "options:chassis")
                    .strip('"'))  # fmt: skip

    def port_del(self) -> None:
        r = self._pick({k: v for k, v in self.routers.items() if v.ports})
        if r is None:
            return
        lrp = self.rng.choice(self.routers[r].ports)
        self.routers[r].ports.remove(lrp)
        for s in self.switches.values():
            if s.router_port == lrp:
                s.router_port = ""
        self.nb("lrp-del", lrp, "--", "--if-exists", "lsp-del", f"{lrp}-lsp")
        self.routers[r].uplinks.pop(lrp, None)

    def port_option(self) -> None:
        r = self._pick({k: v for k, v in self.routers.items() if v.ports})
        if r is None:
            return
        lrp = self.rng.choice(self.routers[r].ports)
        choice = self.rng.randint(0, 3)
        if choice == 0:
            classes = ",".join(self.rng.sample(CLASSES, self.rng.randint(1, 3)))
            self.nb("set", "Logical_Router_Port", lrp,
                    f'options:dynamic-routing-redistribute="{classes}"')  # fmt: skip
        elif choice == 1:
            self.nb("set", "Logical_Router_Port", lrp, "options:dynamic-routing-no-learning=true")
        else:
            self.nb("remove", "Logical_Router_Port", lrp, "options",
                    self.rng.choice(["dynamic-routing-redistribute",
                                     "dynamic-routing-no-learning"]))  # fmt: skip

    def gateway_move(self) -> None:
        """A distributed gateway port's chassisredirect binding moves (or goes)."""
        crs = self.ovn.sbctl("--bare", "--columns=logical_port", "find", "Port_Binding",
                             "type=chassisredirect").split()  # fmt: skip
        if not crs:
            return
        self._bind(self.rng.choice(crs), self.rng.choice(["node1", "node2", None]))

    def vm_add(self, switch: str | None = None) -> None:
        s = switch or self._pick(self.switches)
        if s is None:
            return
        sw = self.switches[s]
        name = self._name("vm")
        host = 10 + len(sw.ports) + self._n % 200
        net4 = f"10.{100 + sw.index // 250 % 100}.{sw.index % 250}"
        mac = (
            f"0a:01:00:{self._n // 65536 % 256:02x}:{self._n // 256 % 256:02x}:{self._n % 256:02x}"
        )
        self.nb("lsp-add", s, name, "--", "lsp-set-addresses", name,
                f"{mac} {net4}.{host % 250 + 2} fd00:{100 + sw.index}::{host:x}")  # fmt: skip
        sw.ports.append(name)
        if self.rng.random() < 0.7:
            self._bind(name, self.rng.choice(["node1", "node2"]))

    def vm_del(self) -> None:
        s = self._pick({k: v for k, v in self.switches.items() if v.ports})
        if s is None:
            return
        port = self.rng.choice(self.switches[s].ports)
        self.switches[s].ports.remove(port)
        self.nb("lsp-del", port)

    def vm_bind(self) -> None:
        ports = [p for s in self.switches.values() for p in s.ports]
        if ports:
            self._bind(self.rng.choice(ports), self.rng.choice(["node1", "node2", None]))

    def vm_opt_out(self) -> None:
        ports = [p for s in self.switches.values() for p in s.ports]
        if ports:
            port = self.rng.choice(ports)
            if self.rng.random() < 0.5:
                self.nb(
                    "set", "Logical_Switch_Port", port, "options:dynamic-routing-advertise=false"
                )
            else:
                self.nb(
                    "remove", "Logical_Switch_Port", port, "options", "dynamic-routing-advertise"
                )

    def nat_add(self) -> None:
        """A NAT written as a row (ovn-nbctl's lr-nat-add refuses some, e.g. on a router with
        two gateway ports, which NB itself takes)."""
        r = self._pick(self.routers)
        if r is None:
            return
        n = self._n
        ext = f"172.16.{n // 250 % 250}.{n % 250 + 1}"
        kind = self.rng.choice(["snat", "dnat_and_snat", "distributed"])
        vms = [p for s in self.switches.values() if s.router_port in self.routers[r].ports
               for p in s.ports]  # fmt: skip
        cols = [f"external_ip={ext}", f"logical_ip=10.98.{n // 250 % 250}.{n % 250 + 1}",
                "type=dnat_and_snat"]  # fmt: skip
        if kind == "snat":
            cols = [f"external_ip={ext}", f"logical_ip=10.97.{n % 250}.0/24", "type=snat"]
        elif kind == "distributed" and vms:
            port = self.rng.choice(vms)
            ip = self.nb("get", "Logical_Switch_Port", port, "addresses").strip('"[]').split()[1]
            mac = f"0a:02:00:00:{n // 256 % 256:02x}:{n % 256:02x}"
            cols = [f"external_ip={ext}", f"logical_ip={ip}", "type=dnat_and_snat",
                    f"logical_port={port}", f'external_mac="{mac}"']  # fmt: skip
        self.nb("--id=@n", "create", "NAT", *cols, "--", "add", "Logical_Router", r, "nat", "@n")
        self.routers[r].nats.append(ext)

    def _nat(self, ext: str) -> str | None:
        found = self.nb("--bare", "--columns=_uuid", "find", "NAT", f"external_ip={ext}").split()
        return found[0] if found else None

    def nat_del(self) -> None:
        r = self._pick({k: v for k, v in self.routers.items() if v.nats})
        if r is None:
            return
        ext = self.rng.choice(self.routers[r].nats)
        self.routers[r].nats.remove(ext)
        if (nat := self._nat(ext)) is not None:
            self.nb("remove", "Logical_Router", r, "nat", nat)

    def nat_opt_out(self) -> None:
        r = self._pick({k: v for k, v in self.routers.items() if v.nats})
        if r is None:
            return
        nat = self._nat(self.rng.choice(self.routers[r].nats))
        if nat is not None:
            value = self.rng.choice(["false", "true"])
            self.nb("set", "NAT", nat, f"options:dynamic-routing-advertise={value}")

    def lb_add(self) -> None:
        name = self._name("lb")
        vip = f"172.31.{self._n // 250 % 250}.{self._n % 250 + 1}"
        self.nb("lb-add", name, f"{vip}:80", "10.99.0.1:8080", "tcp")
        self.lbs.append(name)
        where = self.rng.choice(["router", "switch", "group"])
        if where == "router" and (r := self._pick(self.routers)):
            self.nb("lr-lb-add", r, name)
        elif where == "switch" and (s := self._pick(self.switches)):
            self.nb("ls-lb-add", s, name)
        elif where == "group":
            if not self.groups or self.rng.random() < 0.3:
                group = self._name("lbg")
                self.nb("create", "Load_Balancer_Group", f"name={group}")
                self.groups.append(group)
                target = self._pick(self.routers) if self.rng.random() < 0.5 else None
                table = "Logical_Router"
                if target is None:
                    target, table = self._pick(self.switches), "Logical_Switch"
                if target:
                    uuid = self._uuid("Load_Balancer_Group", group)
                    self.nb("add", table, target, "load_balancer_group", uuid)
            group = self.rng.choice(self.groups)
            self.nb("add", "Load_Balancer_Group", group, "load_balancer",
                    self._uuid("Load_Balancer", name))  # fmt: skip

    def _uuid(self, table: str, name: str) -> str:
        return self.nb("--bare", "--columns=_uuid", "find", table, f"name={name}").split()[0]

    def lb_del(self) -> None:
        if self.lbs:
            name = self.rng.choice(self.lbs)
            self.lbs.remove(name)
            self.nb("lb-del", name)

    def static_add(self) -> None:
        r = self._pick(self.routers)
        if r is None:
            return
        kind = self.rng.choices(["dst", "src", "default"], [6, 1, 1])[0]
        hop = f"10.255.0.{self.rng.randint(2, 9)}"
        if kind == "default":
            self.nb("--may-exist", "lr-route-add", r, "0.0.0.0/0", hop)
            prefix = "0.0.0.0/0"
        else:
            prefix = f"172.20.{self._n % 250}.0/24"
            policy = ["--policy=src-ip"] if kind == "src" else []
            self.nb("--may-exist", *policy, "lr-route-add", r, prefix, hop)
        self.routers[r].statics.append(prefix)

    def static_del(self) -> None:
        r = self._pick({k: v for k, v in self.routers.items() if v.statics})
        if r is None:
            return
        prefix = self.rng.choice(self.routers[r].statics)
        self.routers[r].statics.remove(prefix)
        self.nb("--if-exists", "lr-route-del", r, prefix)

    def evpn_option(self) -> None:
        s = self._pick(self.switches)
        if s is None:
            return
        if self.rng.random() < 0.6:
            self.nb("set", "Logical_Switch", s,
                    f"other_config:dynamic-routing-vni={self.rng.randint(100, 110)}",
                    "other_config:dynamic-routing-redistribute=fdb,ip")  # fmt: skip
        else:
            self.nb("remove", "Logical_Switch", s, "other_config", "dynamic-routing-vni")

    def tor_churn(self) -> None:
        tor = self.rng.choice(["tor1", "tor2"])
        have = self.announced[tor]
        rng = self.rng
        kind = rng.choices(
            ["announce", "withdraw", "ecmp", "hijack", "default"], [5, 4, 2, 1, 0.5]
        )[0]
        if kind == "announce" or (kind == "withdraw" and not have):
            new = rng.sample([p for p in TOR_POOL if p not in have], rng.randint(1, 4))
        elif kind == "withdraw":
            gone = rng.sample(sorted(have), rng.randint(1, len(have)))
            self.lab.announcer(tor).withdraw(gone)
            have.difference_update(gone)
            return
        elif kind == "ecmp":  # what the other ToR has: both paths
            other = self.announced["tor2" if tor == "tor1" else "tor1"]
            new = rng.sample(sorted(other - have), min(2, len(other - have)))
        elif kind == "hijack":  # an address OVN owns: the guard keeps it out
            nats = [ext for r in self.routers.values() for ext in r.nats]
            new = [f"{rng.choice(nats)}/32"] if nats else []
        else:
            new = ["0.0.0.0/0"]
        if new:
            self.lab.announcer(tor).announce(new)
            have.update(new)

    def _pick(self, d: dict[str, Any]) -> str | None:
        return self.rng.choice(sorted(d)) if d else None
