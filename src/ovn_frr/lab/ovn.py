"""OVN in the lab: central (NB + SB ovsdb-server, ovn-northd) and per-node chassis
(ovsdb-server + ovs-vswitchd with the userspace datapath + ovn-controller)."""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ovn_frr.core.model import OwnedRoute
from ovn_frr.lab.proc import LabError, kill_pids, read_pid, run, wait_for
from ovn_frr.lab.schema import patched_nb_schema
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
    _serve(netns, rundir, name)


DB_NAMES = {"nb": "OVN_Northbound", "sb": "OVN_Southbound"}


def _create_cluster(rundir: Path, db: str, members: int) -> None:
    """The database files of a RAFT cluster of ``members`` (``nb1.db`` ...), each member
    speaking RAFT on its own unix socket (``nb1.raft`` ...)."""
    first = f"unix:{rundir / db}1.raft"
    run(["ovsdb-tool", "create-cluster", f"{rundir / db}1.db",
         str(OVN_SCHEMAS / f"ovn-{db}.ovsschema"), first])  # fmt: skip
    for i in range(2, members + 1):
        run(["ovsdb-tool", "join-cluster", f"{rundir / db}{i}.db", DB_NAMES[db],
             f"unix:{rundir / db}{i}.raft", first])  # fmt: skip


def cluster_roles(rundir: Path) -> dict[str, str]:
    """Member (``nb1``, ``sb2`` ...) -> its RAFT role, for the members whose control socket is
    in ``rundir`` ("down" when it does not answer)."""
    roles = {}
    for ctl in sorted(rundir.glob("[ns]b[0-9].ctl")):
        member = ctl.stem
        out = run(["ovs-appctl", "-t", str(ctl), "cluster/status", DB_NAMES[member[:2]]],
                  check=False)  # fmt: skip
        role = next((line.split(":", 1)[1].strip() for line in out.splitlines()
                     if line.startswith("Role:")), "down")  # fmt: skip
        roles[member] = role
    return roles


#: SSL ports (on 127.0.0.1 in the OVN namespace): NB member i at 16640 + i, SB at 16650 + i
SSL_PORT = {"nb": 16640, "sb": 16650}


def ssl_port(name: str) -> int:
    """``nb`` -> 16640, ``nb2`` -> 16642, ``sb3`` -> 16653."""
    return SSL_PORT[name[:2]] + int(name[2:] or 0)


def make_pki(rundir: Path) -> None:
    """A CA and two certificates signed by it (``server`` for ovsdb-server, ``client``),
    as ``ovs-pki`` makes them: ``pki/switchca/cacert.pem``, ``NAME-privkey.pem``,
    ``NAME-cert.pem`` in ``rundir``."""
    run(["ovs-pki", f"--dir={rundir / 'pki'}", f"--log={rundir / 'pki.log'}", "init"])
    for name in ("server", "client"):
        run(["sh", "-c", f"cd {rundir} && ovs-pki --dir=pki --log=pki.log req+sign {name} switch"])


def _serve(netns: str, rundir: Path, name: str) -> None:
    ssl = []
    if (rundir / "server-cert.pem").exists():
        ssl = [f"--private-key={rundir / 'server-privkey.pem'}",
               f"--certificate={rundir / 'server-cert.pem'}",
               f"--ca-cert={rundir / 'pki/switchca/cacert.pem'}",
               f"--remote=pssl:{ssl_port(name)}:127.0.0.1"]  # fmt: skip
    run(
        [
            "ovsdb-server", "--detach", "--no-chdir",
            f"--pidfile={rundir / name}.pid",
            f"--log-file={rundir / name}.log",
            f"--unixctl={rundir / name}.ctl",
            f"--remote=punix:{rundir / name}.sock",
            *ssl,
            str(rundir / f"{name}.db"),
        ],
        netns=netns,
        env=_env(rundir),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class OvnCentral:
    netns: str
    rundir: Path
    #: 1: a standalone ovsdb-server per database; 3 or 5: RAFT clusters (nb1..nbN, sb1..sbN)
    members: int = 1
    #: each member also on SSL (:func:`ssl_port`); the lab's own clients keep the sockets
    ssl: bool = False
    #: see LabSpec.nb_bgp_columns
    bgp_columns: bool = False

    def names(self, db: str) -> list[str]:
        """The ovsdb-server names of ``db`` ("nb" or "sb")."""
        if self.members == 1:
            return [db]
        return [f"{db}{i}" for i in range(1, self.members + 1)]

    def _remote(self, db: str) -> str:
        return ",".join(f"unix:{self.rundir / n}.sock" for n in self.names(db))

    def ssl_remote(self, db: str) -> str:
        """``db``'s members on SSL, as the agent's config lists them (reachable in the OVN
        namespace only)."""
        return ",".join(f"ssl:127.0.0.1:{ssl_port(n)}" for n in self.names(db))

    def ssl_files(self) -> tuple[str, str, str]:
        """The client's private key, certificate and the CA certificate."""
        d = self.rundir
        return (str(d / "client-privkey.pem"), str(d / "client-cert.pem"),
                str(d / "pki/switchca/cacert.pem"))  # fmt: skip

    @property
    def nb(self) -> str:
        """NB's remote: one socket, or the comma list of the cluster's members."""
        return self._remote("nb")

    @property
    def sb(self) -> str:
        return self._remote("sb")

    def start(self) -> None:
        self.rundir.mkdir(parents=True, exist_ok=True)
        if self.ssl:
            make_pki(self.rundir)
        nb_schema = OVN_SCHEMAS / "ovn-nb.ovsschema"
        if self.bgp_columns:
            nb_schema = patched_nb_schema(nb_schema, self.rundir / "ovn-nb.ovsschema")
        if self.members == 1:
            _ovsdb_server(self.netns, self.rundir, "nb", nb_schema)
            _ovsdb_server(self.netns, self.rundir, "sb", OVN_SCHEMAS / "ovn-sb.ovsschema")
        else:
            for db in ("nb", "sb"):
                _create_cluster(self.rundir, db, self.members)
                for name in self.names(db):
                    _serve(self.netns, self.rundir, name)
            wait_for(lambda: self.leader("nb") and self.leader("sb"), timeout=30,
                     what="a leader in each cluster")  # fmt: skip
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
        for name in self.names("nb"):
            self.stop_member(name)

    def start_nb(self) -> None:
        """Start the NB ovsdb-server again on the database it had."""
        for name in self.names("nb"):
            _serve(self.netns, self.rundir, name)

    def roles(self) -> dict[str, str]:
        """Each cluster member's RAFT role ({} for standalone servers)."""
        return cluster_roles(self.rundir) if self.members > 1 else {}

    def leader(self, db: str) -> str | None:
        return next((m for m, r in self.roles().items() if m.startswith(db) and r == "leader"),
                    None)  # fmt: skip

    def stop_member(self, name: str, crash: bool = False) -> None:
        """Stop one ovsdb-server (``nb``, ``nb2`` ...); with ``crash``, kill -9."""
        pid = read_pid(self.rundir / f"{name}.pid")
        if pid is None:
            return
        if crash:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        kill_pids([pid])
        (self.rundir / f"{name}.pid").unlink(missing_ok=True)

    def start_member(self, name: str) -> None:
        _serve(self.netns, self.rundir, name)

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

    def owned(self, chassis: str) -> dict[str, OwnedRoute]:
        """Row UUID -> every static route ovn-frr wrote for ``chassis``, read as the agent
        reads them (one transaction: the agent may be writing meanwhile)."""
        writer = bulk.BulkWriter(self.nb, chassis)
        try:
            return writer.owned()[0]
        except OvnError as exc:
            raise LabError(f"{self.nb}: {exc}") from None
        finally:
            writer.close()

    def owned_rows(self, router: str, chassis: str) -> list[tuple[str, str, str]]:
        """(prefix, next hop, output port) of :meth:`owned` on ``router``."""
        rows = self.owned(chassis).values()
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
        names = [*self.names("nb"), *self.names("sb"), "northd"]
        return [p for n in names if (p := read_pid(self.rundir / f"{n}.pid"))]


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
