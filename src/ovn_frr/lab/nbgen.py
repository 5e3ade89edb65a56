"""Random NBs with dynamic routing, as ovn-nbctl commands any OVN since 23.03 takes.

:func:`random_case` makes one small, self-contained NB shape from a seed: routers (gateway
routers pinned to a chassis, routers with one or two distributed gateway ports, purely
distributed ones), their ``dynamic-routing*`` options (every redistribute class, combined,
overridden per port, local-only, VRF names and ids), switches shared by routers, VMs bound on
either chassis or nowhere, unnumbered router ports, routers peered directly, NATs (SNAT,
centralized and distributed floating IPs), load balancers on routers and switches and through
groups, static routes (default, source and discard routes among them). The same commands are
given to two NBs (an old OVN's and OVN 26.03's), whose answers are compared
(``tests/functional/test_native_semantics.py``). Each case has an address space of its own
(``10.<case>.x.x``, ``fd<case>::``), so that many cases share one NB.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

CHASSIS = ("node1", "node2")
CLASSES = ("connected", "connected-as-host", "static", "nat", "lb")


@dataclass
class Case:
    index: int
    #: ovn-nbctl commands (each an argument list), in order
    commands: list[list[str]] = field(default_factory=list)
    #: (logical port, chassis) for ``ovn-sbctl lsp-bind`` once northd made the binding
    bindings: list[tuple[str, str]] = field(default_factory=list)
    #: names of the routers, switches and their ports (for the report)
    routers: list[str] = field(default_factory=list)


class _Gen:
    def __init__(self, rng: random.Random, index: int) -> None:
        self.rng = rng
        self.case = Case(index)
        self.i = index
        self.n = 0
        self.subnets = 0

    def c(self, *args: str) -> None:
        self.case.commands.append(list(args))

    def name(self, kind: str) -> str:
        self.n += 1
        return f"c{self.i}{kind}{self.n}"

    def mac(self) -> str:
        self.n += 1
        return f"0a:{self.i % 256:02x}:00:00:{self.n // 256 % 256:02x}:{self.n % 256:02x}"

    def subnet(self) -> tuple[str, str]:
        """A fresh /24 and /64 of this case: (v4 prefix "10.i.k", v6 prefix "fdi:k")."""
        self.subnets += 1
        k = self.subnets
        return f"10.{self.i}.{k}", f"fd{self.i:02x}:{k:x}"

    def options(self, router: str) -> None:
        rng = self.rng
        opts = {"dynamic-routing": rng.choices(["true", "false"], [9, 1])[0]}
        classes = rng.sample(CLASSES, rng.randint(0, len(CLASSES)))
        if rng.random() < 0.3:
            classes = ["connected", "connected-as-host", *rng.sample(CLASSES[2:], 1)]
        if classes or rng.random() < 0.5:
            opts["dynamic-routing-redistribute"] = ",".join(classes)
        if rng.random() < 0.25:
            opts["dynamic-routing-redistribute-local-only"] = "true"
        if rng.random() < 0.15:
            opts["dynamic-routing-vrf-name"] = "red"
        if rng.random() < 0.1:
            # one table per router (OVN installs one router per table id)
            opts["dynamic-routing-vrf-id"] = str(10000 + 100 * self.i + self.n)
        self.c("set", "Logical_Router", router, *(f'options:{k}="{v}"' for k, v in opts.items()))

    def router(self) -> tuple[str, str]:
        """A router and its kind: gw (pinned), dgp (distributed gateway ports), dist."""
        rng = self.rng
        kind = rng.choice(["gw", "dgp", "dgp", "dist"])
        r = self.name("r")
        self.c("lr-add", r)
        if kind == "gw":
            self.c("set", "Logical_Router", r, f"options:chassis={rng.choice(CHASSIS)}")
        self.options(r)
        self.case.routers.append(r)
        return r, kind

    def port(self, router: str, switch: str | None, net: tuple[str, str] | None = None,
             numbered: bool = True) -> str:  # fmt: skip
        """A router port (on ``switch`` through a router-type port) with ``.1`` of ``net``
        (default: a fresh one; IPv6 too, sometimes), or none (``numbered=False``)."""
        lrp = self.name("p")
        v4, v6 = net or self.subnet()
        nets = [f"{v4}.1/24"] + ([f"{v6}::1/64"] if self.rng.random() < 0.4 else [])
        if numbered:
            self.c("lrp-add", router, lrp, self.mac(), *nets)
        else:  # unnumbered: a row without networks (OVN >= 25.03 takes it; the lab's NB too)
            ref = f"@{lrp}"
            self.c(f"--id={ref}", "create", "Logical_Router_Port", f"name={lrp}",
                   f'mac="{self.mac()}"', "--", "add", "Logical_Router", router, "ports",
                   ref)  # fmt: skip
        if self.rng.random() < 0.2:
            classes = ",".join(self.rng.sample(CLASSES, self.rng.randint(0, 2)))
            self.c("set", "Logical_Router_Port", lrp,
                   f'options:dynamic-routing-redistribute="{classes}"')  # fmt: skip
        if switch is not None:
            lsp = f"{lrp}-lsp"
            self.c("lsp-add", switch, lsp, "--", "lsp-set-type", lsp, "router", "--",
                   "lsp-set-addresses", lsp, "router", "--", "lsp-set-options", lsp,
                   f"router-port={lrp}")  # fmt: skip
        return lrp

    def vm(self, switch: str, v4: str, v6: str) -> str:
        vm = self.name("vm")
        host = 10 + self.n % 200
        addrs = f"{self.mac()} {v4}.{host}" + (
            f" {v6}::{host:x}" if self.rng.random() < 0.4 else ""
        )
        self.c("lsp-add", switch, vm, "--", "lsp-set-addresses", vm, addrs)
        where = self.rng.choices([*CHASSIS, ""], [3, 2, 1])[0]
        if where:
            self.case.bindings.append((vm, where))
        return vm


def random_case(seed: int, index: int) -> Case:
    """One random NB shape (see the module docstring), numbered ``index`` (1..250)."""
    rng = random.Random(seed * 1000 + index)
    g = _Gen(rng, index)
    routers = [g.router() for _ in range(rng.randint(1, 3))]
    switches: list[tuple[str, str, str]] = []  # (name, v4, v6)
    vms: dict[str, list[str]] = {}
    for r, kind in routers:
        # an uplink: a switch of its own with a localnet port, or one another router has
        if switches and rng.random() < 0.4:
            ls, v4, v6 = rng.choice(switches)
        else:
            ls = g.name("ls")
            g.c("ls-add", ls)
            if rng.random() < 0.5:
                ln = f"{ls}-ln"
                g.c("lsp-add", ls, ln, "--", "lsp-set-type", ln, "localnet", "--",
                    "lsp-set-addresses", ln, "unknown", "--", "lsp-set-options", ln,
                    "network_name=phys")  # fmt: skip
            v4, v6 = g.subnet()
            switches.append((ls, v4, v6))
        up = g.port(r, ls, (v4, v6), numbered=rng.random() < 0.85)
        if kind == "dgp":
            for prio, ch in enumerate(rng.sample(CHASSIS, rng.randint(1, 2))):
                g.c("lrp-set-gateway-chassis", up, ch, str(10 - prio))
            bound = rng.choices([*CHASSIS, ""], [3, 2, 1])[0]
            if bound:
                g.case.bindings.append((f"cr-{up}", bound))
            if rng.random() < 0.2:  # a second gateway port
                up2 = g.port(r, None)
                g.c("lrp-set-gateway-chassis", up2, rng.choice(CHASSIS), "5")
        # tenant switches behind it
        for _ in range(rng.randint(0, 2)):
            ls = g.name("ls")
            g.c("ls-add", ls)
            v4, v6 = g.subnet()
            g.port(r, ls, (v4, v6), numbered=rng.random() < 0.9)
            switches.append((ls, v4, v6))
            vms[r] = vms.get(r, []) + [g.vm(ls, v4, v6) for _ in range(rng.randint(0, 3))]
    # routers peered directly
    if len(routers) > 1 and rng.random() < 0.2:
        (a, _), (b, _) = rng.sample(routers, 2)
        pa, pb = g.name("p"), g.name("p")
        v4, _v6 = g.subnet()
        g.c("lrp-add", a, pa, g.mac(), f"{v4}.1/30", f"peer={pb}")
        g.c("lrp-add", b, pb, g.mac(), f"{v4}.2/30", f"peer={pa}")
    for r, _kind in routers:
        _nats(g, r, vms.get(r, []))
        _lbs(g, r, [s for s, _, _ in switches])
        _statics(g, r)
    return g.case


def _nats(g: _Gen, r: str, vms: list[str]) -> None:
    rng = g.rng
    for _ in range(rng.randint(0, 3)):
        g.n += 1
        ext = f"10.{g.i}.200.{g.n % 250 + 1}"
        kind = rng.choice(["snat", "dnat_and_snat", "distributed"])
        if kind == "snat":
            cols = [f"external_ip={ext}", f"logical_ip=10.{g.i}.{g.n % 200}.0/24", "type=snat"]
        elif kind == "distributed" and vms:
            vm = rng.choice(vms)
            cols = [
                f"external_ip={ext}",
                f"logical_ip=10.{g.i}.99.{g.n % 250}",
                "type=dnat_and_snat",
                f"logical_port={vm}",
                f'external_mac="{g.mac()}"',
            ]
        else:
            cols = [
                f"external_ip={ext}",
                f"logical_ip=10.{g.i}.98.{g.n % 250}",
                "type=dnat_and_snat",
            ]
        ref = f"@nat{g.n}"
        g.c(f"--id={ref}", "create", "NAT", *cols, "--", "add", "Logical_Router", r, "nat", ref)


def _lbs(g: _Gen, r: str, switches: list[str]) -> None:
    rng = g.rng
    for _ in range(rng.randint(0, 2)):
        lb = g.name("lb")
        g.n += 1
        v6 = rng.random() < 0.2
        vip = f"[fd{g.i:02x}:ff::{g.n:x}]:80" if v6 else f"10.{g.i}.201.{g.n % 250 + 1}:80"
        backend = f"[fd{g.i:02x}:1::10]:8080" if v6 else f"10.{g.i}.1.10:8080"
        where = rng.choice(["router", "switch", "group"])
        if where == "group":  # the LB, its group and the group on the router in one go
            group = g.name("lbg")
            g.c(f"--id=@{lb}", "create", "Load_Balancer", f"name={lb}", "protocol=tcp",
                f'vips:"{vip}"="{backend}"', "--", f"--id=@{group}", "create",
                "Load_Balancer_Group", f"name={group}", f"load_balancer=@{lb}", "--", "add",
                "Logical_Router", r, "load_balancer_group", f"@{group}")  # fmt: skip
            continue
        g.c("lb-add", lb, vip, backend, "tcp")
        if where == "router" or not switches:
            g.c("lr-lb-add", r, lb)
        else:
            g.c("ls-lb-add", rng.choice(switches), lb)


def _statics(g: _Gen, r: str) -> None:
    rng = g.rng
    for _ in range(rng.randint(0, 3)):
        g.n += 1
        kind = rng.choices(["dst", "src", "default", "discard"], [5, 1, 1, 1])[0]
        prefix = {"default": "0.0.0.0/0"}.get(kind, f"10.{g.i}.{150 + g.n % 50}.0/24")
        nexthop = "discard" if kind == "discard" else f"10.{g.i}.1.254"
        policy = ["--policy=src-ip"] if kind == "src" else []
        g.c("--may-exist", *policy, "lr-route-add", r, prefix, nexthop)
