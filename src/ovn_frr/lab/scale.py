"""A cloud-sized NB/SB for the scale bench: C chassis, each with its gateway router and P pods
bound on it, close to how ovn-kubernetes lays out one central NB: a cluster router with a port
per node switch, per node a gateway router pinned to it with its external switch, and a node
switch with its pods. One difference: each gateway router reaches the cluster router through a
join switch of its own (``join_<chassis>``), not one join switch shared by all: with a shared
one, the flows ovn-northd 23.03 computes grow with C squared (measured here at C = 1000: SB's
ovsdb-server past 15 GB before northd was done), which is ovn-kubernetes' own reason for its
interconnect mode. Written with a few large transactions (``ovn-nbctl`` per object would take
minutes at C = 1000); the chassis are registered and the pods bound in SB as
``ovn-sbctl chassis-add`` and ``lsp-bind`` do.

Dynamic routing: each gateway router announces its networks (``connected``); the cluster
router announces the pods (``connected-as-host``), local-only, so each chassis announces its
own pods: the layout meant to cost each agent its own chassis only.

:class:`Changes` makes a stream of changes on chosen chassis (a pod added, unbound, bound again,
deleted: one transaction each), and :func:`probe` is a stand-in for another chassis' agent (its
OVN reader only, in a process of its own) for the server-side figures.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

from ovn_frr.lab.ovn import OvnCentral
from ovn_frr.lab.proc import wait_for
from ovn_frr.ovn.jsonrpc import Client

NB, SB = "OVN_Northbound", "OVN_Southbound"


def chassis_names(c: int, first: str = "node1") -> list[str]:
    """``first`` (the lab node whose agent is measured) and ch2 .. chC."""
    return [first, *(f"ch{k}" for k in range(2, c + 1))]


def _mac(kind: int, k: int, p: int) -> str:
    return f"0a:{kind:02x}:{k >> 8:02x}:{k & 255:02x}:{p >> 8:02x}:{p & 255:02x}"


def _node_subnet(k: int) -> tuple[str, str]:
    """The k-th node's pod subnet prefix (``10.X.Y``) and its router port address."""
    base = f"10.{128 + k // 256}.{k % 256}"
    return base, f"{base}.1/24"


def _set(refs: list[str]) -> list[Any]:
    return ["set", [["named-uuid", r] for r in refs]]


def _map(items: dict[str, str]) -> list[Any]:
    return ["map", [[k, v] for k, v in items.items()]]


def pod_name(chassis: str, p: int) -> str:
    return f"pod-{chassis}-{p}"


def _node_ops(k: int, chassis: str, pods: int, cluster_ports: list[str]) -> list[dict[str, Any]]:
    """The NB rows of the k-th node (its cluster router port is appended to cluster_ports)."""
    ops: list[dict[str, Any]] = []
    base, gw = _node_subnet(k)
    gr = f"GR_{chassis}"

    def lsp(uname: str, name: str, **row: Any) -> None:
        ops.append({"op": "insert", "table": "Logical_Switch_Port", "uuid-name": uname,
                    "row": {"name": name, **row}})  # fmt: skip

    def lrp(uname: str, name: str, mac: str, net: str) -> None:
        ops.append({"op": "insert", "table": "Logical_Router_Port", "uuid-name": uname,
                    "row": {"name": name, "mac": mac, "networks": net}})  # fmt: skip

    def router_lsp(uname: str, name: str, peer: str) -> None:
        lsp(uname, name, type="router", addresses="router",
            options=_map({"router-port": peer}))  # fmt: skip

    # the node switch: its pods, and the cluster router's port
    lrp(f"rtos{k}", f"rtos-{chassis}", _mac(1, k, 0), gw)
    cluster_ports.append(f"rtos{k}")
    router_lsp(f"stor{k}", f"stor-{chassis}", f"rtos-{chassis}")
    names = [f"stor{k}"]
    for p in range(pods):
        lsp(f"pod{k}_{p}", pod_name(chassis, p),
            addresses=f"{_mac(2, k, p)} {base}.{p + 2}")  # fmt: skip
        names.append(f"pod{k}_{p}")
    ops.append({"op": "insert", "table": "Logical_Switch",
                "row": {"name": chassis, "ports": _set(names)}})  # fmt: skip
    # the gateway router: to its join switch (and through it the cluster router) and to its
    # external switch
    a, b = divmod(4 * k, 256)  # a /30 per node: .1 the cluster router, .2 the GR
    lrp(f"rtoj{k}", f"rtoj-{gr}", _mac(3, k, 0), f"100.64.{a}.{b + 2}/30")
    router_lsp(f"jtor{k}", f"jtor-{gr}", f"rtoj-{gr}")
    lrp(f"crtoj{k}", f"rtoj-cluster-{chassis}", _mac(6, k, 0), f"100.64.{a}.{b + 1}/30")
    cluster_ports.append(f"crtoj{k}")
    router_lsp(f"jtocr{k}", f"jtor-cluster-{chassis}", f"rtoj-cluster-{chassis}")
    ops.append(
        {
            "op": "insert",
            "table": "Logical_Switch",
            "row": {"name": f"join_{chassis}", "ports": _set([f"jtor{k}", f"jtocr{k}"])},
        }
    )
    lrp(f"rtoe{k}", f"rtoe-{gr}", _mac(4, k, 0), f"172.{16 + k // 256}.{k % 256}.2/24")
    router_lsp(f"etor{k}", f"etor-{gr}", f"rtoe-{gr}")
    lsp(f"brex{k}", f"breth0_{chassis}", type="localnet", addresses="unknown",
        options=_map({"network_name": "physnet"}))  # fmt: skip
    ops.append(
        {
            "op": "insert",
            "table": "Logical_Switch",
            "row": {"name": f"ext_{chassis}", "ports": _set([f"etor{k}", f"brex{k}"])},
        }
    )
    ops.append(
        {
            "op": "insert",
            "table": "Logical_Router",
            "row": {
                "name": gr,
                "ports": _set([f"rtoj{k}", f"rtoe{k}"]),
                "options": _map(
                    {
                        "chassis": chassis,
                        "dynamic-routing": "true",
                        "dynamic-routing-redistribute": "connected",
                    }
                ),
            },
        }
    )
    return ops  # fmt: skip


@dataclass
class ScaleTopology:
    ovn: OvnCentral
    chassis: list[str]
    pods: int
    #: chassis name -> SB Chassis UUID
    sb_uuid: dict[str, str] = field(default_factory=dict)

    def build(self, batch: int = 100) -> None:
        """NB (in transactions of ``batch`` nodes), SB chassis, and the pods bound."""
        nb = Client(self.ovn.nb, NB)
        sb = Client(self.ovn.sb, SB)
        try:
            self._build_nb(nb, batch)
            self._register(sb, batch)
            last = pod_name(self.chassis[-1], self.pods - 1)
            wait_for(
                lambda: sb.call(
                    [
                        {
                            "op": "select",
                            "table": "Port_Binding",
                            "columns": [],
                            "where": [["logical_port", "==", last]],
                        }
                    ]
                )[0]["rows"],
                timeout=900,
                interval=0.5,
                what="ovn-northd made every port binding",
            )
            for i in range(0, len(self.chassis), batch):
                sb.call([self.bind_op(ch, p, ch) for ch in self.chassis[i : i + batch]
                         for p in range(self.pods)])  # fmt: skip
        finally:
            nb.close()
            sb.close()

    def _build_nb(self, nb: Client, batch: int) -> None:
        cluster_ports: list[str] = []
        # the first batch creates the cluster router, later ones add to it (named UUIDs live
        # in one transaction: the rest mutate by name)
        for i in range(0, len(self.chassis), batch):
            ops: list[dict[str, Any]] = []
            names = self.chassis[i : i + batch]
            ports_before = len(cluster_ports)
            for k, ch in enumerate(names, start=i):
                ops += _node_ops(k, ch, self.pods, cluster_ports)
            new_ports = _set(cluster_ports[ports_before:])
            if i == 0:
                options = _map(
                    {
                        "dynamic-routing": "true",
                        "dynamic-routing-redistribute": "connected-as-host",
                        "dynamic-routing-redistribute-local-only": "true",
                    }
                )
                ops.append(
                    {
                        "op": "insert",
                        "table": "Logical_Router",
                        "row": {
                            "name": "ovn_cluster_router",
                            "ports": new_ports,
                            "options": options,
                        },
                    }
                )
            else:
                ops.append(
                    {
                        "op": "mutate",
                        "table": "Logical_Router",
                        "where": [["name", "==", "ovn_cluster_router"]],
                        "mutations": [["ports", "insert", new_ports]],
                    }
                )
            nb.call(ops)  # fmt: skip

    def _register(self, sb: Client, batch: int) -> None:
        for i in range(0, len(self.chassis), batch):
            ops: list[dict[str, Any]] = []
            names = self.chassis[i : i + batch]
            for k, ch in enumerate(names, start=i):
                ip = f"10.{200 + k // 65536}.{k // 256 % 256}.{k % 256}"
                ops.append(
                    {
                        "op": "insert",
                        "table": "Encap",
                        "uuid-name": f"e{k}",
                        "row": {
                            "type": "geneve",
                            "ip": ip,
                            "chassis_name": ch,
                            "options": _map({"csum": "true"}),
                        },
                    }
                )
                ops.append(
                    {
                        "op": "insert",
                        "table": "Chassis",
                        "uuid-name": f"c{k}",
                        "row": {"name": ch, "hostname": ch, "encaps": _set([f"e{k}"])},
                    }
                )
            results = sb.call(ops)  # fmt: skip
            for j, ch in enumerate(names):
                self.sb_uuid[ch] = results[2 * j + 1]["uuid"][1]

    def bind_op(self, chassis: str, p: int, to: str | None) -> dict[str, Any]:
        value: Any = ["uuid", self.sb_uuid[to]] if to else ["set", []]
        return {"op": "update", "table": "Port_Binding",
                "where": [["logical_port", "==", pod_name(chassis, p)]],
                "row": {"chassis": value}}  # fmt: skip


class Changes:
    """A stream of changes on the given chassis, one transaction each, in turn: a pod added
    to its node switch (NB), an existing pod unbound (SB), bound again (SB), the added pod
    deleted (NB)."""

    def __init__(self, topo: ScaleTopology) -> None:
        self.topo = topo
        self.nb = Client(topo.ovn.nb, NB)
        self.sb = Client(topo.ovn.sb, SB)
        self._n = 0

    def run(self, chassis: list[str], count: int) -> None:
        self._n += -self._n % 4  # each chassis' turn starts with an add
        for _ in range(count):
            self.one(chassis[self._n // 4 % len(chassis)])

    def one(self, chassis: str) -> None:
        step, n = self._n % 4, self._n // 4
        self._n += 1
        name = f"x-{chassis}-{n}"
        if step == 0:
            base, _gw = _node_subnet(self.topo.chassis.index(chassis))
            self.nb.call([
                {"op": "insert", "table": "Logical_Switch_Port", "uuid-name": "x",
                 "row": {"name": name, "addresses": f"{_mac(5, n >> 8, n & 255)} {base}.250"}},
                {"op": "mutate", "table": "Logical_Switch", "where": [["name", "==", chassis]],
                 "mutations": [["ports", "insert", _set(["x"])]]}])  # fmt: skip
        elif step in (1, 2):
            self.sb.call([self.topo.bind_op(chassis, n % self.topo.pods,
                                          None if step == 1 else chassis)])  # fmt: skip
        else:
            (row,) = self.nb.call(
                [
                    {
                        "op": "select",
                        "table": "Logical_Switch_Port",
                        "where": [["name", "==", name]],
                        "columns": ["_uuid"],
                    }
                ]
            )
            for r in row["rows"]:
                self.nb.call(
                    [
                        {
                            "op": "mutate",
                            "table": "Logical_Switch",
                            "where": [["name", "==", chassis]],
                            "mutations": [["ports", "delete", ["uuid", r["_uuid"][1]]]],
                        }
                    ]
                )

    def close(self) -> None:
        self.nb.close()
        self.sb.close()


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime, stime in clock ticks (100 Hz)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def probe(nb: str, sb: str, chassis: str, monitor_all: bool) -> None:
    """Another chassis' agent, its OVN side only: read on every change (runs until killed;
    a line on stdin makes it print the bytes and updates it received so far).
    ``monitor_all``: monitors without conditions, as ovn-frr did before conditional
    monitoring (the baseline)."""
    import functools  # noqa: PLC0415 - the probe runs in its own process
    import threading  # noqa: PLC0415

    from ovn_frr.ovn.bulk import LRSR  # noqa: PLC0415
    from ovn_frr.ovn.conditions import NOT_OURS, initial_nb  # noqa: PLC0415
    from ovn_frr.ovn.db import OvsdbConnection  # noqa: PLC0415
    from ovn_frr.ovn.reader import (  # noqa: PLC0415
        NB_TABLES,
        SB_TABLES,
        OvnReader,
        bound_ports,
        read_nb,
    )
    from ovn_frr.ovn.sbmonitor import SbMonitor  # noqa: PLC0415

    woken = threading.Event()
    # 50 of them starting at once on a small machine: more than the agent's 15 s to sync
    sbc: OvsdbConnection | SbMonitor
    if monitor_all:  # what ovn-frr monitored before: every row but its own routes' and
        # other chassis' Chassis rows (SB through the IDL, as then)
        nbc = OvsdbConnection(nb, NB, NB_TABLES, {LRSR: NOT_OURS}, timeout=600)
        sbc = OvsdbConnection(sb, SB, SB_TABLES, {"Chassis": [["name", "==", chassis]]},
                              timeout=600)  # fmt: skip
        nbc.on_change = sbc.on_change = woken.set
        nbc.start()
        sbc.start()
    else:
        nbc = OvsdbConnection(nb, NB, NB_TABLES, initial_nb(chassis), timeout=600)
        sbc = SbMonitor(sb, chassis, timeout=600)
        nbc.on_change = sbc.on_change = woken.set
        reader = OvnReader(nbc, sbc, chassis)
        reader.start()
        while reader.read() is None:  # settled: its whole share is in
            time.sleep(0.1)

    def answer() -> None:  # each line on stdin: what this reader received so far
        for _line in sys.stdin:
            (nb_bytes, nb_updates), (sb_bytes, sb_updates) = nbc.received, sbc.received
            print(f"{nb_bytes + sb_bytes} {nb_updates + sb_updates}", flush=True)

    threading.Thread(target=answer, daemon=True).start()
    print("ready", flush=True)
    while True:
        woken.wait()
        woken.clear()
        if isinstance(sbc, OvsdbConnection):  # monitor_all
            bound: frozenset[str] = sbc.read(bound_ports)
            nbc.read(functools.partial(read_nb, chassis=chassis, bound=bound))
        else:
            reader.read()
        time.sleep(0.01)


def _main(argv: list[str]) -> None:
    nb, sb, chassis, mode = argv
    probe(nb, sb, chassis, mode == "all")


if __name__ == "__main__":
    _main(sys.argv[1:])
