"""OVN in the lab: central (NB + SB ovsdb-server, ovn-northd) and per-node chassis
(ovsdb-server + ovs-vswitchd with the userspace datapath + ovn-controller)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ovn_frr.lab.proc import LabError, kill_pids, read_pid, run, wait_for
from ovn_frr.ovn import bulk, jsonrpc
from ovn_frr.ovn.db import OvnError

OVN_SCHEMAS = Path("/usr/share/ovn")
OVS_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")


def _env(rundir: Path) -> dict[str, str]:
    # Keep every OVS/OVN default path (pid files, control sockets, logs) inside the lab.
    d = str(rundir)
    return {"OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVN_RUNDIR": d, "OVN_LOGDIR": d,
            "OVN_DBDIR": d, "OVS_SYSCONFDIR": d}  # fmt: skip


def _ovsdb_server(netns: str, rundir: Path, name: str, schema: Path | None) -> None:
    """Start ovsdb-server for ``name``; with a ``schema``, on a new database."""
    db = rundir / f"{name}.db"
    if schema is not None:
        run(["ovsdb-tool", "create", str(db), str(schema)])
    run(
        [
            "ovsdb-server", "--detach", "--no-chdir",
            f"--pidfile={rundir / name}.pid",
            f"--log-file={rundir / name}.log",
            f"--unixctl={rundir / name}.ctl",
            f"--remote=punix:{rundir / name}.sock",
            str(db),
        ],
        netns=netns,
        env=_env(rundir),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class OvnCentral:
    netns: str
    rundir: Path

    @property
    def nb(self) -> str:
        return f"unix:{self.rundir / 'nb.sock'}"

    @property
    def sb(self) -> str:
        return f"unix:{self.rundir / 'sb.sock'}"

    def start(self) -> None:
        self.rundir.mkdir(parents=True, exist_ok=True)
        _ovsdb_server(self.netns, self.rundir, "nb", OVN_SCHEMAS / "ovn-nb.ovsschema")
        _ovsdb_server(self.netns, self.rundir, "sb", OVN_SCHEMAS / "ovn-sb.ovsschema")
        run(
            [
                "ovn-northd", "--detach", "--no-chdir",
                f"--pidfile={self.rundir / 'northd.pid'}",
                f"--log-file={self.rundir / 'northd.log'}",
                f"--unixctl={self.rundir / 'northd.ctl'}",
                f"--ovnnb-db={self.nb}", f"--ovnsb-db={self.sb}",
            ],
            netns=self.netns,
            env=_env(self.rundir),
        )  # fmt: skip
        wait_for(self.northd_active, timeout=20, what="ovn-northd active")

    def stop_nb(self) -> None:
        """Stop the NB ovsdb-server (its database file stays): an outage of NB."""
        pid = read_pid(self.rundir / "nb.pid")
        if pid is not None:
            kill_pids([pid])

    def start_nb(self) -> None:
        """Start the NB ovsdb-server again on the database it had."""
        _ovsdb_server(self.netns, self.rundir, "nb", None)

    def northd_active(self) -> bool:
        out = run(["ovn-appctl", "-t", str(self.rundir / "northd.ctl"), "status"], check=False)
        return "active" in out

    def nbctl(self, *args: str) -> str:
        return run(["ovn-nbctl", "--no-leader-only", f"--db={self.nb}", *args]).strip()

    def transact(self, ops: list[dict[str, Any]], db: str = "OVN_Northbound") -> list[Any]:
        """One OVSDB transaction (for changes too large for a command line)."""
        remote = self.nb if db == "OVN_Northbound" else self.sb
        try:
            client = jsonrpc.Client(remote, db)
            try:
                return client.call(ops)
            finally:
                client.close()
        except OvnError as exc:
            raise LabError(f"{remote}: {exc}") from None

    def owned_rows(self, router: str, chassis: str) -> list[tuple[str, str, str]]:
        """(prefix, next hop, output port) of the static routes on ``router`` that ovn-frr
        wrote for ``chassis``, read as the agent reads them (one transaction: the agent may be
        writing meanwhile)."""
        writer = bulk.BulkWriter(self.nb, chassis)
        try:
            rows = writer.owned()[0].values()
        except OvnError as exc:
            raise LabError(f"{self.nb}: {exc}") from None
        finally:
            writer.close()
        return [(r.prefix, r.nexthop, r.output_port or "") for r in rows if r.router == router]

    def owned_routes(self, router: str, chassis: str) -> dict[str, set[str]]:
        """prefix -> next hops of :meth:`owned_rows`."""
        out: dict[str, set[str]] = {}
        for prefix, nexthop, _port in self.owned_rows(router, chassis):
            out.setdefault(prefix, set()).add(nexthop)
        return out

    def sbctl(self, *args: str) -> str:
        return run(["ovn-sbctl", "--no-leader-only", f"--db={self.sb}", *args]).strip()

    def pids(self) -> list[int]:
        return [p for n in ("nb", "sb", "northd") if (p := read_pid(self.rundir / f"{n}.pid"))]


@dataclass(frozen=True, slots=True)
class Chassis:
    """Open vSwitch (userspace datapath) and ovn-controller in a node's namespace."""

    name: str
    netns: str
    rundir: Path
    sb: str
    encap_ip: str

    @property
    def db(self) -> str:
        return f"unix:{self.rundir / 'conf.sock'}"

    def vsctl(self, *args: str) -> str:
        return run(["ovs-vsctl", f"--db={self.db}", *args], env=_env(self.rundir)).strip()

    def start(self) -> None:
        self.rundir.mkdir(parents=True, exist_ok=True)
        _ovsdb_server(self.netns, self.rundir, "conf", OVS_SCHEMA)
        self.vsctl("--no-wait", "init")
        self.vsctl(
            "--no-wait", "set", "Open_vSwitch", ".",
            f"external_ids:system-id={self.name}",
            f"external_ids:hostname={self.name}",
            f"external_ids:ovn-remote={self.sb}",
            "external_ids:ovn-encap-type=geneve",
            f"external_ids:ovn-encap-ip={self.encap_ip}",
            "external_ids:ovn-bridge-datapath-type=netdev",
        )  # fmt: skip
        env = _env(self.rundir)
        run(
            [
                "ovs-vswitchd", self.db, "--detach", "--no-chdir",
                f"--pidfile={self.rundir / 'ovs-vswitchd.pid'}",
                f"--log-file={self.rundir / 'ovs-vswitchd.log'}",
                f"--unixctl={self.rundir / 'ovs-vswitchd.ctl'}",
            ],
            netns=self.netns,
            env=env,
        )  # fmt: skip
        self.vsctl("--may-exist", "add-br", "br-int", "--", "set", "Bridge", "br-int",
                   "datapath_type=netdev", "fail-mode=secure")  # fmt: skip
        run(
            [
                "ovn-controller", self.db, "--detach", "--no-chdir",
                f"--pidfile={self.rundir / 'ovn-controller.pid'}",
                f"--log-file={self.rundir / 'ovn-controller.log'}",
            ],
            netns=self.netns,
            env=env,
        )  # fmt: skip

    def pids(self) -> list[int]:
        names = ("conf", "ovs-vswitchd", "ovn-controller")
        return [p for n in names if (p := read_pid(self.rundir / f"{n}.pid"))]
