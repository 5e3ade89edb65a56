"""bench/evpn: EVPN L2 at scale, each direction beside FRR's own floor in the same run.

The lab is lab.evpn's (node1 with OVN + FRR + ovn-frr, tor1 as route reflector, vtep1 a
plain FRR VTEP); node2 takes no part.

(a) OVN -> fabric. ``N`` ports of an EVPN switch (``fdb,ip``: a MAC and an IP each) are bound
    on node1 in one SB transaction, while one port of the switch is bound already (the VNI's
    devices exist and zebra knows the VNI). Timed until vtep1's kernel holds all N MACs with
    node1's VTEP and all N IPs; then the N ports are unbound, timed until all are gone there.
    Floor: on a second VNI whose devices were made by hand, the same N MACs and IPs written by
    hand (``bridge -batch``, ``ip -batch``) and deleted again: zebra, BGP and vtep1's zebra
    alone.
(b) fabric -> OVN. vtep1 writes N MACs and IPs by hand (its host port, its bridge). Floor:
    until node1's zebra has installed all N neighbours in node1's kernel. ovn-frr: until
    node1's OVS bridge answers ARP for all N (N responder flows). Both from the same start,
    in the same run; then vtep1 deletes them, timed the same way.

    sudo .venv/bin/python bench/evpn.py [--counts 1000,10000]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from ovn_frr.lab.evpn import BRIDGE, SWITCH, VM1, VNI, EvpnLab
from ovn_frr.lab.proc import run, wait_for
from ovn_frr.ovn.jsonrpc import Client

FLOOR_VNI = 200
NODE1 = "192.0.2.1"


def mac(i: int, tag: int) -> str:
    return f"0a:{tag:02x}:00:{(i >> 16) & 255:02x}:{(i >> 8) & 255:02x}:{i & 255:02x}"


def ip(i: int, tag: int) -> str:
    """Distinct for i < 65535 per tag."""
    return f"10.{64 + tag}.{((i + 1) >> 8) & 255}.{(i + 1) & 255}"


def timed(start: float, done: Callable[[], bool], what: str, timeout: float = 600) -> float:
    wait_for(done, timeout=timeout, interval=0.05, max_interval=0.1, what=what)
    return time.monotonic() - start


def race(start: float, done: dict[str, Callable[[], bool]], what: str) -> dict[str, float]:
    """Seconds from ``start`` until each condition of ``done`` first held (polled together)."""
    marks: dict[str, float] = {}

    def all_done() -> bool:
        now = time.monotonic()
        for name, cond in done.items():
            if name not in marks and cond():
                marks[name] = now - start
        return len(marks) == len(done)

    wait_for(all_done, timeout=600, interval=0.05, max_interval=0.1, what=what)
    return marks


def write_entries(ns: str, n: int, tag: int, port: str, bridge: str, delete: bool) -> None:
    """N MACs (static FDB on ``port``) and their IPs (permanent neighbours on ``bridge``)
    written, or deleted, by hand: two iproute2 batches (neighbours first on delete)."""
    if delete:
        batches = [
            ("ip", "".join(f"neigh del {ip(i, tag)} dev {bridge}\n" for i in range(n))),
            ("bridge", "".join(f"fdb del {mac(i, tag)} dev {port} master static\n"
                               for i in range(n))),
        ]  # fmt: skip
    else:
        batches = [
            ("bridge", "".join(f"fdb replace {mac(i, tag)} dev {port} master static\n"
                               for i in range(n))),
            ("ip", "".join(f"neigh replace {ip(i, tag)} lladdr {mac(i, tag)} dev {bridge} "
                           "nud permanent\n" for i in range(n))),
        ]  # fmt: skip
    for tool, text in batches:
        run([tool, "-force", "-batch", "-"], netns=ns, input_text=text)


class Bench:
    def __init__(self, ev: EvpnLab) -> None:
        self.ev = ev
        #: how long the last SB (un)binding transaction took (part of every ovn-frr figure)
        self.bind_s = 0.0
        self.lab = ev.lab
        assert self.lab.ovn is not None
        self.ovn = self.lab.ovn

    def count_remote(self, member: str, vni: int, vtep: str) -> tuple[int, int]:
        """(MACs via ``vtep``, extern_learn neighbours) in ``member``'s kernel for ``vni``."""
        ns = self.lab.netns(member)
        fdb = json.loads(run(["bridge", "-j", "fdb", "show", "dev", f"vxlan-{vni}"], netns=ns))
        macs = sum(1 for e in fdb if e.get("dst") == vtep and e.get("mac") != "00:00:00:00:00:00")
        neigh = json.loads(run(["ip", "-j", "neigh", "show", "dev", f"br-{vni}"], netns=ns))
        return macs, sum(1 for n in neigh if "extern_learn" in n)

    def flows(self, match: str = "arp_tpa=") -> int:
        ch = self.lab.chassis["node1"]
        out = run(
            ["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", f"unix:{ch.rundir}/br-ev{VNI}.mgmt"]
        )
        return sum(1 for line in out.splitlines() if match in line)

    # --- (a) ------------------------------------------------------------------------------

    def ports(self, n: int, tag: int) -> None:
        for lo in range(0, n, 2000):
            cmds: list[str] = []
            for i in range(lo, min(n, lo + 2000)):
                cmds += ["--", "lsp-add", SWITCH, f"p{tag}-{i}", "--", "lsp-set-addresses",
                         f"p{tag}-{i}", f"{mac(i, tag)} {ip(i, tag)}"]  # fmt: skip
            self.ovn.nbctl(*cmds[1:])

    def bind(self, n: int, tag: int, chassis: str | None) -> float:
        """Bind (or unbind) the ports in one SB transaction (``ovn-sbctl lsp-bind`` looks
        each name up in turn: minutes for 10k)."""
        ref: list[object] = ["set", []]
        if chassis:
            uuid = self.ovn.sbctl("--bare", "--columns=_uuid", "find", "Chassis", f"name={chassis}")
            ref = ["uuid", uuid]
        client = Client(self.ovn.sb, "OVN_Southbound")
        try:
            # by UUID: ovsdb-server scans the table for a where on another column (10k of
            # those in one transaction took 12 s), an _uuid lookup is indexed
            rows = client.call([{"op": "select", "table": "Port_Binding", "where": [],
                                 "columns": ["_uuid", "logical_port"]}])[0]["rows"]  # fmt: skip
            uuids = {r["logical_port"]: r["_uuid"][1] for r in rows}
            ops = [{"op": "update", "table": "Port_Binding",
                    "where": [["_uuid", "==", ["uuid", uuids[f"p{tag}-{i}"]]]],
                    "row": {"chassis": ref}} for i in range(n)]  # fmt: skip
            t0 = time.monotonic()
            client.call(ops)
            self.bind_s = time.monotonic() - t0
        finally:
            client.close()
        return t0

    def stop_ovn_controller(self) -> None:
        """Ports bound with ``ovn-sbctl lsp-bind`` stay bound only without node1's
        ovn-controller (it releases bindings it has no interface for)."""
        pid = (self.lab.chassis["node1"].rundir / "ovn-controller.pid").read_text().strip()
        run(["kill", pid])
        time.sleep(1)

    def ovn_frr_out(self, n: int, tag: int) -> tuple[float, float]:
        self.ports(n, tag)
        last = f"p{tag}-{n - 1}"
        wait_for(lambda: self.ovn.sbctl("--bare", "--columns=logical_port", "find",
                                        "Port_Binding", f"logical_port={last}") == last,
                 timeout=300, what="ovn-northd's port bindings")  # fmt: skip
        base = self.count_remote("vtep1", VNI, NODE1)
        want = (base[0] + n, base[1] + n)
        t0 = self.bind(n, tag, "node1")
        add = timed(t0, lambda: self.count_remote("vtep1", VNI, NODE1) == want,
                    f"{n} ports at vtep1")  # fmt: skip
        t0 = self.bind(n, tag, None)
        rem = timed(t0, lambda: self.count_remote("vtep1", VNI, NODE1) == base,
                    f"{n} ports withdrawn at vtep1")  # fmt: skip
        return add, rem

    def floor_out(self, n: int, tag: int) -> tuple[float, float]:
        ns = self.lab.netns("node1")
        br, vx, port = f"br-{FLOOR_VNI}", f"vxlan-{FLOOR_VNI}", f"lo-{FLOOR_VNI}"
        for argv in (
            ["ip", "link", "add", br, "type", "bridge"],
            ["ip", "link", "set", br, "addrgenmode", "none"],
            ["ip", "link", "add", vx, "type", "vxlan", "id", str(FLOOR_VNI), "local", NODE1,
             "dstport", "4789", "nolearning"],
            ["ip", "link", "set", vx, "master", br],
            ["bridge", "link", "set", "dev", vx, "learning", "off", "neigh_suppress", "on"],
            ["ip", "link", "add", port, "type", "veth", "peer", "name", f"ovs-{FLOOR_VNI}"],
            ["ip", "link", "set", port, "master", br],
            ["bridge", "link", "set", "dev", port, "learning", "off"],
            ["ip", "link", "set", vx, "up"], ["ip", "link", "set", port, "up"],
            ["ip", "link", "set", f"ovs-{FLOOR_VNI}", "up"], ["ip", "link", "set", br, "up"],
        ):  # fmt: skip
            run(argv, netns=ns)
        floor_dev = f"vxlan-{FLOOR_VNI}"
        wait_for(lambda: any(e.get("dst") == NODE1 for e in self.ev.fdb("vtep1", floor_dev)),
                 timeout=60, what="floor VNI known at vtep1")  # fmt: skip
        t0 = time.monotonic()
        write_entries(ns, n, tag, port, br, delete=False)
        add = timed(t0, lambda: self.count_remote("vtep1", FLOOR_VNI, NODE1) == (n, n),
                    f"{n} hand-written entries at vtep1")  # fmt: skip
        t0 = time.monotonic()
        write_entries(ns, n, tag, port, br, delete=True)
        rem = timed(t0, lambda: self.count_remote("vtep1", FLOOR_VNI, NODE1) == (0, 0),
                    f"{n} hand-written entries withdrawn at vtep1")  # fmt: skip
        return add, rem

    # --- (b) ------------------------------------------------------------------------------

    def fabric_in(self, n: int, tag: int) -> tuple[float, float, float, float]:
        """(zebra add, ovn-frr add, zebra delete, ovn-frr delete) in seconds."""
        ns = self.lab.netns("vtep1")
        vtep1 = "192.0.2.102"
        base_flows = self.flows()
        base = self.count_remote("node1", VNI, vtep1)
        tag += 100

        def ips() -> int:
            return self.count_remote("node1", VNI, vtep1)[1]

        t0 = time.monotonic()
        write_entries(ns, n, tag, "h-host1", BRIDGE, delete=False)
        marks = race(t0, {"zebra": lambda: ips() >= base[1] + n,
                          "ovn": lambda: self.flows() >= base_flows + n},
                     f"{n} remote IPs")  # fmt: skip
        t0 = time.monotonic()
        write_entries(ns, n, tag, "h-host1", BRIDGE, delete=True)
        gone = race(t0, {"zebra": lambda: ips() <= base[1],
                         "ovn": lambda: self.flows() <= base_flows}, "withdrawn")  # fmt: skip
        return marks["zebra"], marks["ovn"], gone["zebra"], gone["ovn"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", default="1000,10000")
    args = ap.parse_args()
    counts = [int(x) for x in args.counts.split(",")]
    ev = EvpnLab(name="evbench")
    try:
        ev.up(agents=False, vms=False)
        ev.vm(VM1, "node1")  # a real port: the VNI's devices and the localnet patch exist
        vns = ev.lab.netns("vtep1")
        for argv in (
            ["ip", "link", "add", f"br-{FLOOR_VNI}", "type", "bridge"],
            ["ip", "link", "add", f"vxlan-{FLOOR_VNI}", "type", "vxlan", "id", str(FLOOR_VNI),
             "local", "192.0.2.102", "dstport", "4789", "nolearning"],
            ["ip", "link", "set", f"vxlan-{FLOOR_VNI}", "master", f"br-{FLOOR_VNI}"],
            ["ip", "link", "set", f"vxlan-{FLOOR_VNI}", "up"],
            ["ip", "link", "set", f"br-{FLOOR_VNI}", "up"],
        ):  # fmt: skip
            run(argv, netns=vns)
        ev.start_agent("node1")
        b = Bench(ev)
        wait_for(lambda: ev.remote_vtep_of("vtep1", VM1.mac) == NODE1, timeout=60,
                 what="vm1 at vtep1")  # fmt: skip
        wait_for(lambda: b.flows("priority=10,") == 2, timeout=60, what="node1 wired")
        rows_a = []
        rows_b = []
        for tag, n in enumerate(counts, 1):
            za, oa2, zr, or2 = b.fabric_in(n, tag)
            rows_b.append((n, za, oa2, zr, or2))
            fa, fr = b.floor_out(n, tag)
            for dev in (f"br-{FLOOR_VNI}", f"vxlan-{FLOOR_VNI}", f"lo-{FLOOR_VNI}"):
                run(["ip", "link", "del", dev], netns=ev.lab.netns("node1"))
            if tag == 1:
                b.stop_ovn_controller()
            oa, orm = b.ovn_frr_out(n, tag)
            rows_a.append((n, fa, oa, fr, orm))
        print("\n(a) OVN ports bound on node1 -> type-2 at vtep1 (MAC and MAC+IP each)\n")
        print(
            "| ports | floor add | ovn-frr add | ratio | floor withdraw | ovn-frr withdraw "
            "| ratio |"
        )
        print("|---|---|---|---|---|---|---|")
        for n, fa, oa, fr, orm in rows_a:
            print(
                f"| {n} | {fa:.2f} s | {oa:.2f} s | {oa / fa:.2f} | {fr:.2f} s | {orm:.2f} s "
                f"| {orm / fr:.2f} |"
            )
        print(
            "\n(b) vtep1 announces MAC+IPs -> node1: zebra's kernel install vs ovn-frr's ARP "
            "answers in OVS\n"
        )
        print(
            "| entries | zebra add | ovn-frr add | ratio | zebra withdraw | ovn-frr withdraw "
            "| ratio |"
        )
        print("|---|---|---|---|---|---|---|")
        for n, za, oa2, zr, or2 in rows_b:
            print(
                f"| {n} | {za:.2f} s | {oa2:.2f} s | {oa2 / za:.2f} | {zr:.2f} s | {or2:.2f} s "
                f"| {or2 / zr:.2f} |"
            )
    finally:
        ev.down()


if __name__ == "__main__":
    main()
