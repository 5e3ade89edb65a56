"""bench/evpn: EVPN L2 at scale, each direction beside FRR's own floor in the same run.

The lab is lab.evpn's (node1 with OVN + FRR + ovn-frr, tor1 as route reflector, vtep1 a
plain FRR VTEP); node2 takes no part.

(a) OVN -> fabric. ``N`` ports of an EVPN switch (``fdb,ip``: a MAC and an IP each) are bound
    on node1 in one SB transaction, while one port of the switch is bound already (the VNI's
    devices exist and zebra knows the VNI). Timed until vtep1's kernel holds all N MACs with
    node1's VTEP and all N IPs; then the N ports are unbound, timed until all are gone there.
    ovn-frr's figure starts when SB has published the change: the update complete on a monitor
    of the bench's own (the agent's condition, opened before the agent), the moment any
    consumer of SB (ovn-controller, ovn-frr) can act on the binding. Before it, ovsdb-server
    commits the 10k-row transaction, composes its monitors' updates and sends them (a 1 MiB
    update goes out a socket buffer at a time, between its other work): OVN's time, the same
    whoever consumes it, reported in a column of its own (end to end = both).
    Floor: on a second VNI whose devices were made by hand, the same N MACs and IPs written by
    hand (``bridge -batch``, ``ip -batch``) and deleted again: zebra, BGP and vtep1's zebra
    alone.
(b) fabric -> OVN. vtep1 writes N MACs and IPs by hand (its host port, its bridge). Floor:
    until node1's zebra has installed all N neighbours in node1's kernel. ovn-frr: until
    node1's OVS bridge answers ARP for all N (N responder flows). Both from the same start,
    in the same run; then vtep1 deletes them, timed the same way.

Each figure is the median of ``--rounds`` rounds (5): one round's floor on this 2-core machine
varies by up to 2x (zebra, BGP and three FRR/OVN daemons share the cores).

On OVN 25.09+ (the sid root's 26.03) OVN carries EVPN itself and ovn-frr is its host side
(docs/evpn.md): the same floors, beside OVN's own path. (a) ovn-controller writes the local
entries itself, for ports it has bound: the N ports are OVS internal ports of br-int (with
``iface-id``), timed from the moment SB holds all N bound (ovn-controller's claims, the
start ovn-frr's figure has too) until vtep1 holds all N, then the same for their removal.
(b) until ovn-controller's ``evpn/vtep-arp-list`` holds all N IPs (the remote IPs OVN answers
ARP/ND for itself).

    sudo bash scripts/root.sh sid /opt/ovn-frr-venv/bin/python bench/evpn.py --counts 1000

    sudo .venv/bin/python bench/evpn.py [--counts 1000,10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import queue
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ovn_frr.core.evpn_native import parse_arp
from ovn_frr.lab.evpn import BRIDGE, SWITCH, VM1, VNI, EvpnLab
from ovn_frr.lab.proc import run, wait_for
from ovn_frr.ovn.jsonrpc import Client
from ovn_frr.vswitch.controller import OvnController

FLOOR_VNI = 200
NODE1 = "192.0.2.1"
#: print each figure's start and end (wall clock) beside the agent's log (--agent-log)
MARKS = threading.Event()


def wall(mono: float) -> str:
    """A monotonic time as the agent's log shows it."""
    t = time.time() - time.monotonic() + mono
    return time.strftime("%H:%M:%S", time.localtime(t)) + f",{int(t * 1000) % 1000:03d}"


def mac(i: int, tag: int) -> str:
    return f"0a:{tag:02x}:00:{(i >> 16) & 255:02x}:{(i >> 8) & 255:02x}:{i & 255:02x}"


def ip(i: int, tag: int) -> str:
    """Distinct for i < 65535 per tag."""
    return f"10.{64 + tag}.{((i + 1) >> 8) & 255}.{(i + 1) & 255}"


def timed(start: float, done: Callable[[], bool], what: str, timeout: float = 600) -> float:
    wait_for(done, timeout=timeout, interval=0.02, max_interval=0.05, what=what)
    return time.monotonic() - start


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


class Publication:
    """When SB has published a change of node1's bindings: the read that completes each update
    on a monitor like ovn-frr's (Port_Binding rows whose chassis is node1's row), opened
    before the agent starts.

    Not its first byte: ovsdb-server writes an update of 10k rows (1.1 MiB) a socket buffer
    (214 KiB) at a time and does its other work in between. Here the first 214 KiB reached
    this monitor 0.2-0.3 s before the rest, and ovn-frr's copy began arriving with that rest;
    no consumer can act on a part of an update. The complete update reached ovn-frr 10-50 ms
    after this monitor (2026-12-05)."""

    def __init__(self, remote: str, chassis_uuid: str) -> None:
        path = remote.split(",", maxsplit=1)[0].removeprefix("unix:")
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        where = [["chassis", "==", ["uuid", chassis_uuid]]]
        table = {"columns": ["logical_port", "chassis"], "where": where}
        request = {"id": 1, "method": "monitor_cond",
                   "params": ["OVN_Southbound", None, {"Port_Binding": [table]}]}  # fmt: skip
        self.sock.sendall(json.dumps(request).encode())
        self._buf = ""
        self._decoder = json.JSONDecoder()
        self.marks: queue.Queue[float] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        self.marks.get(timeout=60)  # the monitor's reply

    def _read(self) -> None:
        while data := self.sock.recv(1 << 20):
            at = time.monotonic()
            self._buf += data.decode()
            # a message ends in "}": only then is the buffer parsed (a 1 MiB update arrives
            # in a few reads)
            while self._buf.rstrip().endswith("}"):
                try:
                    _, end = self._decoder.raw_decode(self._buf.lstrip())
                except ValueError:
                    break  # the rest is on its way
                self._buf = self._buf.lstrip()[end:]
                self.marks.put(at)  # the read that completed a message

    def drain(self) -> None:
        while not self.marks.empty():
            self.marks.get_nowait()

    def next(self) -> float:
        """When the next update was complete (monotonic)."""
        return self.marks.get(timeout=600)

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # the reader sees the end, then the socket goes
        self._thread.join(timeout=5)
        self.sock.close()


class Events:
    """Monitor processes' lines -> when the n-th distinct bench entry came (or went): the
    common part of :class:`Watch` and :class:`FlowWatch`. Events, not polls: a dump of 20k
    entries every few ms took CPU from the daemons being measured."""

    def __init__(
        self,
        argvs: list[list[str]],
        deleted: bool,
        env: dict[str, str] | None = None,
        merged: bool = False,
        nice: bool = True,
    ) -> None:
        self.deleted = deleted
        self.macs: set[str] = set()
        self.ips: set[str] = set()
        self.last = 0.0
        self._cv = threading.Condition()
        #: the kernel dropped events for a monitor (ENOBUFS: it could not keep up), and why
        self.lost = False
        self.why = ""
        self._procs = []
        for argv in argvs:
            # at a higher priority: a monitor not scheduled in time loses events (ENOBUFS)
            proc = subprocess.Popen(
                ["nice", "-n", "-10", *argv] if nice else argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merged else subprocess.PIPE,
                text=True,
                env=env,
            )
            assert proc.stdout is not None  # 1 MiB of lines may wait: the monitor never does
            fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
            self._procs.append(proc)
            threading.Thread(target=self._read, args=(proc,), daemon=True).start()
            if not merged:
                threading.Thread(target=self._errors, args=(proc,), daemon=True).start()
        time.sleep(0.3)  # subscribed before anything is written

    def _errors(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:  # "netlink receive error No buffer space available"
            with self._cv:
                self.lost = True
                self.why = line.strip()
                self._cv.notify_all()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.line(line)

    def line(self, line: str) -> None:
        raise NotImplementedError

    def _add(self, keys: set[str], key: str) -> None:
        with self._cv:
            if key not in keys:
                keys.add(key)
                self.last = time.monotonic()
                self._cv.notify_all()

    def wait(self, n: int, macs: bool = True, timeout: float = 600) -> float | None:
        """When the last of ``n`` IPs (and, with ``macs``, ``n`` MACs) arrived (monotonic);
        None if events were lost (or none came for 3 s): the caller polls instead."""

        def done() -> bool:
            return len(self.ips) >= n and (not macs or len(self.macs) >= n)

        deadline = time.monotonic() + timeout
        with self._cv:
            seen = -1
            while not done():
                if self.lost or time.monotonic() > deadline:
                    return None
                if seen == len(self.ips) + len(self.macs):
                    return None  # 3 s without one more: some went unseen
                seen = len(self.ips) + len(self.macs)
                self._cv.wait_for(lambda: done() or self.lost, 3.0)
            return self.last

    def close(self) -> None:
        for proc in self._procs:
            proc.kill()
            proc.wait()


class Watch(Events):
    """The bench's entries in (or leaving) a member's kernel (``bridge monitor fdb``, ``ip
    monitor neigh`` in its namespace): MACs with ``vtep`` on ``vxlan-<vni>``, IPs on
    ``br-<vni>``."""

    def __init__(self, ns: str, vni: int, vtep: str, tag: int, deleted: bool) -> None:
        self.vni, self.vtep = vni, vtep
        self.mac_prefix, self.ip_prefix = f"0a:{tag:02x}:", f"10.{64 + tag}."
        netns = ["ip", "netns", "exec", ns]
        super().__init__([[*netns, "bridge", "monitor", "fdb"],
                          [*netns, "ip", "-rcvbuf", "4194304", "monitor", "neigh"]],
                         deleted)  # fmt: skip

    def line(self, line: str) -> None:
        words = line.split()
        gone = bool(words) and words[0] == "Deleted"
        if gone:
            words = words[1:]
        if gone != self.deleted or len(words) < 3 or words[1] != "dev":
            return
        key = words[0]
        if words[2] == f"vxlan-{self.vni}" and key.startswith(self.mac_prefix):
            if "dst" in words and words[words.index("dst") + 1] == self.vtep:
                self._add(self.macs, key)
        elif words[2] == f"br-{self.vni}" and key.startswith(self.ip_prefix):
            self._add(self.ips, key)


class FlowWatch(Events):
    """The ARP answers of the bench's IPs arriving in (or leaving) an OVS bridge's flow
    table, from the switch's own flow monitor (``ovs-ofctl monitor BRIDGE watch:``, which
    prints on stderr; line-buffered: its output is a pipe here). Without the flows' actions
    (a third of the text) and at the normal priority: an OpenFlow monitor loses nothing
    (OVS pauses it and sends what changed meanwhile), and this CPU is taken from ovn-frr's
    side of the measurement alone."""

    def __init__(self, mgmt: str, rundir: str, tag: int, deleted: bool) -> None:
        self.event = "event=DELETED" if deleted else "event=ADDED"
        self.ip_prefix = f"arp_tpa=10.{64 + tag}."
        super().__init__([["stdbuf", "-oL", "ovs-ofctl", "monitor", mgmt, "watch:!actions"]],
                         deleted, env={**os.environ, "OVS_RUNDIR": rundir}, merged=True,
                         nice=False)  # fmt: skip
        with self._cv:
            self.ips.clear()  # the table as it was comes first: not counted

    def line(self, line: str) -> None:
        if self.event in line and self.ip_prefix in line:
            ip = line.split("arp_tpa=", 1)[1].split(",", 1)[0]
            self._add(self.ips, ip.split(maxsplit=1)[0])


class Bench:
    def __init__(self, ev: EvpnLab, published: Publication) -> None:
        self.ev = ev
        self.published = published
        #: from the last SB (un)binding request to SB's publication of it (OVN's time)
        self.sb_s = 0.0
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

    def flow_total(self) -> int:
        """All flows of node1's VNI bridge (``dump-aggregate``: one small reply, where a
        dump of 10k flows is CPU taken from the daemons being measured)."""
        ch = self.lab.chassis["node1"]
        out = run(["ovs-ofctl", "-O", "OpenFlow13", "dump-aggregate",
                   f"unix:{ch.rundir}/br-ev{VNI}.mgmt"])  # fmt: skip
        return int(out.split("flow_count=", 1)[1].split()[0])

    # --- OVN 25.09+'s own EVPN -----------------------------------------------------------

    def ovn_arps(self) -> int:
        """The remote IPs node1's ovn-controller answers for (``evpn/vtep-arp-list``)."""
        target = OvnController(str(self.lab.chassis["node1"].rundir)).target()
        return len(parse_arp(run(["ovn-appctl", "-t", target, "evpn/vtep-arp-list"])))

    def claimed(self, client: Client, chassis: str) -> int:
        """Port_Binding rows SB has bound to ``chassis``."""
        rows = client.call([{"op": "select", "table": "Port_Binding",
                             "where": [["chassis", "==", ["uuid", chassis]]],
                             "columns": ["_uuid"]}])[0]["rows"]  # fmt: skip
        return len(rows)

    def native_out(self, n: int, tag: int) -> tuple[float, float, float, float]:
        """(add, claim, withdraw, release): N OVS ports bound on node1 by ovn-controller ->
        vtep1. ``add``/``withdraw`` from the moment SB has all N (un)bound (ovn-controller's
        claims: the equivalent of ovn-frr's start), ``claim``/``release`` the time from the
        OVS transaction to it."""
        base = self.count_remote("vtep1", VNI, NODE1)
        want = (base[0] + n, base[1] + n)
        ch = self.lab.chassis["node1"]
        chassis = self.ovn.sbctl("--bare", "--columns=_uuid", "find", "Chassis",
                                 "name=node1").strip()  # fmt: skip
        client = Client(self.ovn.sb, "OVN_Southbound")
        bound0 = self.claimed(client, chassis)
        out: list[float] = []
        for delete in (False, True):
            t0 = time.monotonic()
            for lo in range(0, n, 500):
                cmds: list[str] = []
                for i in range(lo, min(n, lo + 500)):
                    port = f"e{tag}-{i}"
                    cmds += (["--", "del-port", "br-int", port] if delete else
                             ["--", "add-port", "br-int", port, "--", "set", "Interface", port,
                              "type=internal", f"external_ids:iface-id=p{tag}-{i}"])  # fmt: skip
                ch.vsctl(*cmds[1:])
            goal = base if delete else want
            bound = bound0 if delete else bound0 + n
            claim = timed(t0, lambda b=bound: self.claimed(client, chassis) == b, "claims")  # type: ignore[misc]
            t1 = t0 + claim
            done = timed(t1, lambda g=goal: self.count_remote("vtep1", VNI, NODE1) == g,  # type: ignore[misc]
                         f"(a) {n} OVN {'withdraw' if delete else 'add'}")  # fmt: skip
            out += [done, claim]
        client.close()
        return out[0], out[1], out[2], out[3]

    def native_in(self, n: int, tag: int) -> tuple[float, float, float, float]:
        """(zebra add, OVN add, zebra delete, OVN delete): vtep1's N MAC+IPs -> node1's
        kernel (zebra) and ovn-controller's ARP list (OVN)."""
        ns = self.lab.netns("vtep1")
        node1 = self.lab.netns("node1")
        vtep1 = "192.0.2.102"
        base = self.count_remote("node1", VNI, vtep1)
        base_arps = self.ovn_arps()
        tag += 100
        out: list[float] = []
        for delete in (False, True):
            watch = Watch(node1, VNI, vtep1, tag, deleted=delete)
            t0 = time.monotonic()
            write_entries(ns, n, tag, "h-host1", BRIDGE, delete=delete)
            ips = base[1] if delete else base[1] + n
            zebra = self.arrived(watch, t0, n,
                                 lambda i=ips: self.count_remote("node1", VNI, vtep1)[1] == i,  # type: ignore[misc]
                                 macs=False, what=f"(b) {n} zebra")  # fmt: skip
            arps = base_arps if delete else base_arps + n
            ovn = timed(t0, lambda a=arps: self.ovn_arps() == a, f"(b) {n} OVN")  # type: ignore[misc]
            out += [zebra, ovn]
        return out[0], out[1], out[2], out[3]

    # --- (a) ------------------------------------------------------------------------------

    def ports(self, n: int, tag: int) -> None:
        for lo in range(0, n, 500):
            cmds: list[str] = []
            for i in range(lo, min(n, lo + 500)):
                cmds += ["--", "lsp-add", SWITCH, f"p{tag}-{i}", "--", "lsp-set-addresses",
                         f"p{tag}-{i}", f"{mac(i, tag)} {ip(i, tag)}"]  # fmt: skip
            self.ovn.nbctl(*cmds[1:])

    def bind(self, n: int, tag: int, chassis: str | None) -> float:
        """Bind (or unbind) the ports in one SB transaction (``ovn-sbctl lsp-bind`` looks
        each name up in turn: minutes for 10k); returns when SB published it."""
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
            self.published.drain()
            t0 = time.monotonic()
            client.call(ops)
            at = self.published.next()
            self.sb_s = at - t0
        finally:
            client.close()
        return at

    def stop_ovn_controller(self) -> None:
        """Ports bound with ``ovn-sbctl lsp-bind`` stay bound only without node1's
        ovn-controller (it releases bindings it has no interface for)."""
        pid = (self.lab.chassis["node1"].rundir / "ovn-controller.pid").read_text().strip()
        run(["kill", pid])
        time.sleep(1)

    def make_ports(self, n: int, tag: int) -> None:
        self.ports(n, tag)
        last = f"p{tag}-{n - 1}"
        wait_for(lambda: self.ovn.sbctl("--bare", "--columns=logical_port", "find",
                                        "Port_Binding", f"logical_port={last}") == last,
                 timeout=300, what="ovn-northd's port bindings")  # fmt: skip

    def ovn_frr_out(self, n: int, tag: int) -> tuple[float, float, float, float]:
        """(add, SB's time of the binding, withdraw, SB's time of the unbinding) of the
        ports of :meth:`make_ports`."""
        base = self.count_remote("vtep1", VNI, NODE1)
        want = (base[0] + n, base[1] + n)
        ns = self.lab.netns("vtep1")
        watch = Watch(ns, VNI, NODE1, tag, deleted=False)
        t0 = self.bind(n, tag, "node1")
        sb_add = self.sb_s
        add = self.arrived(watch, t0, n, lambda: self.count_remote("vtep1", VNI, NODE1) == want,
                           what=f"(a) {n} ovn-frr add")  # fmt: skip
        watch = Watch(ns, VNI, NODE1, tag, deleted=True)
        t0 = self.bind(n, tag, None)
        rem = self.arrived(watch, t0, n, lambda: self.count_remote("vtep1", VNI, NODE1) == base,
                           what=f"(a) {n} ovn-frr withdraw")  # fmt: skip
        return add, sb_add, rem, self.sb_s

    @staticmethod
    def arrived(watch: Events, t0: float, n: int, check: Callable[[], bool],
                macs: bool = True, what: str = "") -> float:  # fmt: skip
        """Seconds from ``t0`` until ``watch`` saw all ``n`` entries, confirmed by ``check``
        (the kernel's tables, read once)."""
        try:
            at = watch.wait(n, macs)
        finally:
            watch.close()
        if at is None:  # events lost: the tables, polled (the time is later than it was)
            why = watch.why or "none for 3 s"
            print(f"# {what}: events lost ({why}), polled", flush=True)
            took = timed(t0, check, "the kernel's tables")
            if MARKS.is_set():
                print(f"# {what}: {wall(t0)} -> {wall(t0 + took)} ({took:.2f} s)", flush=True)
            return took
        wait_for(check, timeout=30, interval=0.1, what="the kernel's tables agree")
        if MARKS.is_set():
            print(f"# {what}: {wall(t0)} -> {wall(at)} ({at - t0:.2f} s)", flush=True)
        return at - t0

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
        vns = self.lab.netns("vtep1")
        watch = Watch(vns, FLOOR_VNI, NODE1, tag, deleted=False)
        t0 = time.monotonic()
        write_entries(ns, n, tag, port, br, delete=False)
        add = self.arrived(watch, t0, n,
                           lambda: self.count_remote("vtep1", FLOOR_VNI, NODE1) == (n, n),
                           what=f"(a) {n} floor add")  # fmt: skip
        watch = Watch(vns, FLOOR_VNI, NODE1, tag, deleted=True)
        t0 = time.monotonic()
        write_entries(ns, n, tag, port, br, delete=True)
        rem = self.arrived(watch, t0, n,
                           lambda: self.count_remote("vtep1", FLOOR_VNI, NODE1) == (0, 0),
                           what=f"(a) {n} floor withdraw")  # fmt: skip
        return add, rem

    # --- (b) ------------------------------------------------------------------------------

    def fabric_in(self, n: int, tag: int) -> tuple[float, float, float, float]:
        """(zebra add, ovn-frr add, zebra delete, ovn-frr delete) in seconds."""
        ns = self.lab.netns("vtep1")
        node1 = self.lab.netns("node1")
        vtep1 = "192.0.2.102"
        base_flows = self.flow_total()
        base = self.count_remote("node1", VNI, vtep1)
        tag += 100
        out: list[float] = []
        ch = self.lab.chassis["node1"]
        for delete in (False, True):
            watch = Watch(node1, VNI, vtep1, tag, deleted=delete)
            answers = FlowWatch(f"unix:{ch.rundir}/br-ev{VNI}.mgmt", str(ch.rundir), tag, delete)
            flows = base_flows if delete else base_flows + n
            t0 = time.monotonic()
            write_entries(ns, n, tag, "h-host1", BRIDGE, delete=delete)
            # zebra's first: if its events were lost, its poll starts at once; ovn-frr's
            # would start later (a late figure against ovn-frr, not in its favour)
            ips = base[1] if delete else base[1] + n
            zebra = self.arrived(
                watch,
                t0,
                n,
                lambda: self.count_remote("node1", VNI, vtep1)[1] == ips,  # noqa: B023
                macs=False,
                what=f"(b) {n} zebra {'withdraw' if delete else 'add'}",
            )
            ovn = self.arrived(answers, t0, n, lambda: self.flow_total() == flows,  # noqa: B023
                               macs=False, what=f"(b) {n} ovn-frr")  # fmt: skip
            out += [zebra, ovn]
        return out[0], out[1], out[2], out[3]


def median(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


def medians(rows: list[tuple[float, ...]]) -> tuple[float, ...]:
    """Each column's median over the rounds."""
    return tuple(median([r[i] for r in rows]) for i in range(len(rows[0])))


def report(rows_a: list[tuple[int, tuple[float, ...]]],
           rows_b: list[tuple[int, tuple[float, ...]]], who: str = "ovn-frr") -> None:  # fmt: skip
    since = ("ovn-frr from SB's complete update of the (un)binding, SB: the request to it"
             if who == "ovn-frr" else
             f"{who} from SB holding all N (un)bound, SB: from the OVS transaction of the "
             "ports to it (ovn-controller's claims)")  # fmt: skip
    print(f"\n(a) OVN ports bound on node1 -> type-2 at vtep1 (MAC and MAC+IP each); {since}\n")
    print(
        f"| ports | floor add | {who} add | ratio | SB | floor withdraw | {who} withdraw "
        "| ratio | SB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n, (fa, oa, sa, fr, orm, sr) in rows_a:
        print(
            f"| {n} | {fa:.2f} s | {oa:.2f} s | {oa / fa:.2f} | {sa:.2f} s | {fr:.2f} s "
            f"| {orm:.2f} s | {orm / fr:.2f} | {sr:.2f} s |"
        )
    print(
        f"\n(b) vtep1 announces MAC+IPs -> node1: zebra's kernel install vs {who}'s ARP "
        "answers in OVS\n"
    )
    print(f"| entries | zebra add | {who} add | ratio | zebra withdraw | {who} withdraw | ratio |")
    print("|---|---|---|---|---|---|---|")
    for n, (za, oa2, zr, or2) in rows_b:
        print(
            f"| {n} | {za:.2f} s | {oa2:.2f} s | {oa2 / za:.2f} | {zr:.2f} s | {or2:.2f} s "
            f"| {or2 / zr:.2f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", default="1000,10000")
    ap.add_argument("--rounds", type=int, default=5,
                    help="each figure is the median of this many rounds (both sides)")  # fmt: skip
    ap.add_argument("--agent-log", help="copy node1's agent log (run with -vv) here at the end")
    args = ap.parse_args()
    if args.agent_log:
        MARKS.set()
    counts = [int(x) for x in args.counts.split(",")]
    ev = EvpnLab(name="evbench")
    published: Publication | None = None
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
        assert ev.lab.ovn is not None
        node1 = ev.lab.ovn.sbctl("--bare", "--columns=_uuid", "find", "Chassis", "name=node1")
        published = Publication(ev.lab.ovn.sb, node1.strip())
        ev.start_agent("node1", verbose=2 if args.agent_log else 1)
        b = Bench(ev, published)
        wait_for(lambda: ev.remote_vtep_of("vtep1", VM1.mac) == NODE1, timeout=60,
                 what="vm1 at vtep1")  # fmt: skip
        if not ev.native:
            wait_for(lambda: b.flows("priority=10,") == 2, timeout=60, what="node1 wired")
        rows_a: list[tuple[int, tuple[float, ...]]] = []
        rows_b: list[tuple[int, tuple[float, ...]]] = []
        for tag, n in enumerate(counts, 1):
            a: list[tuple[float, ...]] = []
            bb: list[tuple[float, ...]] = []
            b.make_ports(n, tag)
            for r in range(args.rounds):
                bb.append(b.native_in(n, tag) if ev.native else b.fabric_in(n, tag))
                fa, fr = b.floor_out(n, tag)
                for dev in (f"br-{FLOOR_VNI}", f"vxlan-{FLOOR_VNI}", f"lo-{FLOOR_VNI}"):
                    run(["ip", "link", "del", dev], netns=ev.lab.netns("node1"))
                if tag == 1 and r == 0 and not ev.native:
                    b.stop_ovn_controller()
                out = b.native_out if ev.native else b.ovn_frr_out
                oa, sa, orm, sr = out(n, tag)
                a.append((fa, oa, sa, fr, orm, sr))
                print(f"# {n} round {r + 1}: (a) " + " ".join(f"{x:.2f}" for x in a[-1])
                      + " (b) " + " ".join(f"{x:.2f}" for x in bb[-1]), flush=True)  # fmt: skip
            rows_a.append((n, medians(a)))
            rows_b.append((n, medians(bb)))
        report(rows_a, rows_b, "OVN 26.03" if ev.native else "ovn-frr")
    finally:
        if published is not None:
            published.close()
        try:
            if args.agent_log and ev.agents.get("node1") is not None:
                Path(args.agent_log).write_text(ev.agents["node1"].output())
        finally:
            ev.down()


if __name__ == "__main__":
    main()
