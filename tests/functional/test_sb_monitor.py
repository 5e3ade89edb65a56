"""The SB monitor against a real ovsdb-server: this chassis' bindings as they are bound,
moved and unbound, a Chassis row registered again under a new UUID, and a server restart
(the monitor reconnects, asks again and holds what the new connection says)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ovn_frr.lab import wait_for
from ovn_frr.lab.ovn import OVN_SCHEMAS
from ovn_frr.lab.proc import run
from ovn_frr.ovn.jsonrpc import Client
from ovn_frr.ovn.sbmonitor import SbMonitor


class Sb:
    """A standalone SB ovsdb-server in ``d`` and a client to write it."""

    def __init__(self, d: Path) -> None:
        self.d = d
        self.remote = f"unix:{d}/sb.sock"
        run(["ovsdb-tool", "create", str(d / "sb.db"), str(OVN_SCHEMAS / "ovn-sb.ovsschema")])
        self.start()
        self.client = Client(self.remote, "OVN_Southbound")
        dp = self.call({"op": "insert", "table": "Datapath_Binding", "row": {"tunnel_key": 1}})
        self.datapath = dp[0]["uuid"][1]
        self.ports: dict[str, str] = {}
        self.keys = 0

    def start(self) -> None:
        d = self.d
        run(["ovsdb-server", "--detach", "--no-chdir", f"--pidfile={d}/sb.pid",
             f"--log-file={d}/sb.log", f"--unixctl={d}/sb.ctl", f"--remote=punix:{d}/sb.sock",
             str(d / "sb.db")])  # fmt: skip

    def stop(self) -> None:
        os.kill(int((self.d / "sb.pid").read_text()), signal.SIGTERM)
        wait_for(lambda: not (self.d / "sb.pid").exists(), timeout=10, what="ovsdb-server gone")
        self.client.close()

    def call(self, *ops: dict[str, object]) -> list[Any]:
        return self.client.call(list(ops))

    def chassis(self, name: str) -> str:
        self.keys += 1
        got = self.call(
            {"op": "insert", "table": "Encap", "uuid-name": "e",
             "row": {"type": "geneve", "ip": f"127.0.0.{self.keys + 100}", "chassis_name": name}},
            {"op": "insert", "table": "Chassis",
             "row": {"name": name, "hostname": name, "encaps": ["named-uuid", "e"]}},
        )  # fmt: skip
        return str(got[1]["uuid"][1])

    def drop_chassis(self, uuid: str) -> None:
        self.call({"op": "delete", "table": "Chassis", "where": [["_uuid", "==", ["uuid", uuid]]]})

    def port(self, name: str, chassis: str | None) -> None:
        self.keys += 1
        got = self.call({"op": "insert", "table": "Port_Binding", "row": {
            "logical_port": name, "tunnel_key": self.keys,
            "datapath": ["uuid", self.datapath], "chassis": _ref(chassis)}})  # fmt: skip
        self.ports[name] = str(got[0]["uuid"][1])

    def bind(self, name: str, chassis: str | None) -> None:
        self.call({"op": "update", "table": "Port_Binding",
                   "where": [["_uuid", "==", ["uuid", self.ports[name]]]],
                   "row": {"chassis": _ref(chassis)}})  # fmt: skip


def _ref(uuid: str | None) -> object:
    return ["uuid", uuid] if uuid else ["set", []]


@pytest.fixture
def sb(tmp_path: Path) -> Iterator[Sb]:
    s = Sb(tmp_path)
    yield s
    s.client.close()
    if (tmp_path / "sb.pid").exists():
        s.stop()


def ports(m: SbMonitor, want: set[str]) -> None:
    def there() -> bool:
        b = m.bindings()
        return b.settled and b.ports == want

    wait_for(there, timeout=10, what=f"bindings {sorted(want)} (have {m.bindings()})")


def test_bindings_follow_the_chassis_and_the_server(sb: Sb) -> None:
    node1, node2 = sb.chassis("node1"), sb.chassis("node2")
    sb.port("p1", node1)
    sb.port("p2", node2)
    sb.port("p3", None)
    m = SbMonitor(sb.remote, "node1", timeout=10)
    woken = []
    m.on_change = lambda: woken.append(1)
    m.start()
    try:
        ports(m, {"p1"})
        assert m.held() == (frozenset({"node1"}), frozenset({"p1"}))  # nothing of node2's
        assert m.connected
        sb.bind("p2", node1)  # moved here in one step
        sb.bind("p1", None)
        ports(m, {"p2"})
        assert woken
        sb.bind("p3", node1)
        ports(m, {"p2", "p3"})
        assert m.held()[1] == {"p2", "p3"}  # p1's row left with its binding

        # node1 registered again: its bindings go with the old row (a weak reference) and
        # come back on the new one; the condition follows the new UUID
        sb.drop_chassis(node1)
        ports(m, set())
        node1 = sb.chassis("node1")
        sb.bind("p3", node1)
        ports(m, {"p3"})

        # the server restarts: the monitor reconnects and holds what it is told then
        before = m.received
        sb.stop()
        wait_for(lambda: not m.connected, timeout=10, what="the monitor sees the server gone")
        assert not m.bindings().settled
        assert m.bindings().ports == {"p3"}  # the last bindings hold meanwhile
        sb.start()
        sb.client = Client(sb.remote, "OVN_Southbound")
        sb.bind("p2", node1)
        ports(m, {"p2", "p3"})
        assert m.connected
        after = m.received
        assert after[0] > before[0] and after[1] > before[1]
    finally:
        m.stop()
    assert not m.started


def test_a_server_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    m = SbMonitor(f"unix:{tmp_path}/none.sock", "node1", timeout=1)
    with pytest.raises(Exception, match=r"OVN_Southbound at unix:.*none\.sock"):
        m.start()
    assert not m.started
