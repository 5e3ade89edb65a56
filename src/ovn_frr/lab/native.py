"""What OVN 26.03 itself announces from a chassis, as the tests' oracle of what OVN means.

OVN's own dynamic routing (25.03 on) answers the question ovn-frr answers for older OVN:
ovn-northd turns an NB with ``dynamic-routing*`` options into SB ``Advertised_Route`` rows, and
ovn-controller writes the rows local to its chassis into the router's kernel table, where FRR
picks them up. :class:`NativeOvn` runs the ovn-northd of a Debian sid root (OVN 26.03; built by
``scripts/root.sh sid``) on an NB and an SB of its own (this machine's ovsdb-server with the
root's schemas), the binaries run through the root's dynamic loader (no chroot). The NB is
built with the root's ``ovn-nbctl`` from the same commands a test gives the lab's own NB.

Which rows a chassis installs is ovn-controller's choice (``controller/route.c``,
``route_run``, OVN 26.03.2), reproduced by :func:`installed` from SB alone (no OVS needed):

- a router counts on the chassis when one of its ports is a gateway router's port of that
  chassis (``l3gateway-chassis``) or the chassisredirect port of one of its distributed gateway
  ports is bound there, with ``dynamic-routing`` set by northd on it;
- a row is written when its ``logical_port`` is local: bound there, or a distributed gateway
  port whose chassisredirect port is bound there, or a plain router port (local everywhere);
- a row with a ``tracked_port`` that is not local is left out when the row's port (else its
  router) has ``dynamic-routing-redistribute-local-only``; otherwise it is written (with
  metric 1000 instead of 100: ovn-frr does not express metrics).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ovn_frr.lab.proc import LabError, kill_pids, read_pid, run, wait_for
from ovn_frr.ovn import jsonrpc
from ovn_frr.ovn.errors import OvnError

ROOT_SH = Path(__file__).resolve().parents[3] / "scripts" / "root.sh"


def sid_root() -> Path:
    """The Debian sid root (built once, cached: ``scripts/root.sh sid --path``); inside a root
    of ``scripts/root.sh``, the one it mounted (``OVN_FRR_SID_ROOT``: ``/`` in sid's own)."""
    if given := os.environ.get("OVN_FRR_SID_ROOT"):
        return Path(given)
    res = subprocess.run(["bash", str(ROOT_SH), "sid", "--path"], capture_output=True,
                         text=True, check=False)  # fmt: skip
    if res.returncode != 0:
        raise LabError(f"scripts/root.sh sid --path: {res.stderr.strip()[-1500:]}")
    return Path(res.stdout.strip().splitlines()[-1])


@dataclass(frozen=True, slots=True)
class NativeOvn:
    """OVN 26.03's NB, SB and ovn-northd (see the module docstring); ``netns``: where they run
    (the lab's OVN namespace: they go with the lab)."""

    root: Path
    rundir: Path
    netns: str

    def _bin(self, name: str) -> list[str]:
        r = self.root
        libs = f"{r}/usr/lib/x86_64-linux-gnu:{r}/lib/x86_64-linux-gnu"
        return [f"{r}/lib64/ld-linux-x86-64.so.2", "--library-path", libs, f"{r}/usr/bin/{name}"]

    @property
    def nb(self) -> str:
        return f"unix:{self.rundir / 'nb.sock'}"

    @property
    def sb(self) -> str:
        return f"unix:{self.rundir / 'sb.sock'}"

    def start(self) -> None:
        d = self.rundir
        d.mkdir(parents=True, exist_ok=True)
        for db in ("nb", "sb"):
            run(["ovsdb-tool", "create", str(d / f"{db}.db"),
                 str(self.root / f"usr/share/ovn/ovn-{db}.ovsschema")])  # fmt: skip
            run(["ovsdb-server", "--detach", "--no-chdir", f"--pidfile={d / db}.pid",
                 f"--log-file={d / db}.log", f"--unixctl={d / db}.ctl",
                 f"--remote=punix:{d / db}.sock", str(d / f"{db}.db")],
                netns=self.netns)  # fmt: skip
        # --monitor: OVN 26.03.1's ovn-northd can abort on datapaths destroyed and made again
        # in bulk (northd.c:916, ods_assign_array_index), as the differential does between
        # batches; its monitor starts it again, and it recomputes everything
        run([*self._bin("ovn-northd"), "--detach", "--monitor", "--no-chdir",
             f"--pidfile={d}/northd.pid",
             f"--log-file={d}/northd.log", f"--unixctl={d}/northd.ctl",
             f"--ovnnb-db={self.nb}", f"--ovnsb-db={self.sb}"], netns=self.netns)  # fmt: skip
        self.nbctl("init")
        wait_for(lambda: "active" in run([*self._bin("ovn-appctl"), "-t",
                                          str(d / "northd.ctl"), "status"], check=False),
                 timeout=20, what="OVN 26.03's ovn-northd active")  # fmt: skip

    def stop(self) -> None:
        kill_pids([p for n in ("northd", "nb", "sb") if (p := read_pid(self.rundir / f"{n}.pid"))])

    def nbctl(self, *args: str) -> str:
        return run([*self._bin("ovn-nbctl"), f"--db={self.nb}", *args]).strip()

    def sbctl(self, *args: str) -> str:
        return run([*self._bin("ovn-sbctl"), f"--db={self.sb}", *args]).strip()

    def sync(self) -> None:
        """Wait until ovn-northd has brought SB to NB's last change."""
        self.nbctl("--wait=sb", "sync")

    def transact(self, ops: list[dict[str, Any]], db: str = "OVN_Southbound") -> list[Any]:
        remote = self.sb if db == "OVN_Southbound" else self.nb
        try:
            client = jsonrpc.Client(remote, db)
            try:
                return client.call(ops)
            finally:
                client.close()
        except OvnError as exc:
            raise LabError(f"{remote}: {exc}") from None

    def installed(self, chassis: str) -> dict[str, set[str]]:
        """VRF ("" the default) -> the prefixes ``chassis`` would write into the kernel."""
        select: list[dict[str, Any]] = [
            {"op": "select", "table": t, "where": []}
            for t in ("Advertised_Route", "Port_Binding", "Datapath_Binding", "Chassis")
        ]
        routes, bindings, datapaths, chassis_rows = self.transact(select)  # fmt: skip
        lr_select = [{"op": "select", "table": "Logical_Router", "where": [],
                      "columns": ["name", "options"]}]  # fmt: skip
        (routers,) = self.transact(lr_select, db="OVN_Northbound")
        return installed(chassis, routes["rows"], bindings["rows"], datapaths["rows"],
                         chassis_rows["rows"], routers["rows"])  # fmt: skip


# --- ovn-controller's choice, from SB rows (OVSDB JSON) -------------------------------------


def _v(datum: Any) -> Any:
    if isinstance(datum, list) and len(datum) == 2 and isinstance(datum[0], str):
        kind, inner = datum
        if kind == "uuid":
            return inner
        if kind == "set":
            return [_v(x) for x in inner]
        if kind == "map":
            return {_v(k): _v(v) for k, v in inner}
    return datum


def _one(datum: Any) -> Any:
    value = _v(datum)
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _true(options: Mapping[str, str], key: str) -> bool:
    return options.get(key, "").lower() == "true"


def installed(
    chassis: str,
    routes: Sequence[Mapping[str, Any]],
    bindings: Sequence[Mapping[str, Any]],
    datapaths: Sequence[Mapping[str, Any]],
    chassis_rows: Sequence[Mapping[str, Any]],
    routers: Sequence[Mapping[str, Any]],
) -> dict[str, set[str]]:
    """See the module docstring; rows as OVSDB's JSON ``select`` gives them."""
    here = {_v(c["_uuid"]) for c in chassis_rows if c["name"] == chassis}
    pbs = {_v(p["_uuid"]): p for p in bindings}
    by_name = {p["logical_port"]: p for p in bindings}

    def opts(pb: Mapping[str, Any]) -> dict[str, str]:
        return dict(_v(pb["options"]))

    def bound_here(pb: Mapping[str, Any]) -> bool:
        # a gateway router's ports are its chassis' (unclaimed in a lab without
        # ovn-controller: their l3gateway-chassis says where)
        if pb["type"] == "l3gateway":
            return opts(pb).get("l3gateway-chassis") == chassis
        return bool(_one(pb["chassis"]) in here)

    def local(pb: Mapping[str, Any]) -> bool:
        cr = opts(pb).get("chassis-redirect-port")
        if bound_here(pb):
            return True
        if cr:
            return cr in by_name and bound_here(by_name[cr])
        return bool(pb["type"] == "patch")

    active: set[str] = set()
    for pb in bindings:
        o = opts(pb)
        dp = _one(pb["datapath"])
        if pb["type"] == "l3gateway" and _true(o, "dynamic-routing") and bound_here(pb):
            active.add(dp)
        cr = o.get("chassis-redirect-port")
        if cr and cr in by_name:
            crpb = by_name[cr]
            if bound_here(crpb) and _true(opts(crpb), "dynamic-routing"):
                active.add(dp)
    names = {_v(d["_uuid"]): dict(_v(d["external_ids"])).get("name", "") for d in datapaths}
    vrf_of = {}
    for lr in routers:
        o = dict(_v(lr["options"]))
        vrf = o.get("dynamic-routing-vrf-name", "")
        if not vrf and o.get("dynamic-routing-vrf-id", "").isdigit():
            vrf = f"ovnvrf{o['dynamic-routing-vrf-id']}"
        vrf_of[lr["name"]] = vrf
    out: dict[str, set[str]] = {}
    for row in routes:
        dp = _one(row["datapath"])
        if dp not in active:
            continue
        lp = pbs.get(_one(row["logical_port"]))
        if lp is None or not local(lp):
            continue
        tracked = pbs.get(_one(row["tracked_port"])) if _one(row["tracked_port"]) else None
        local_only = _true(opts(lp), "dynamic-routing-redistribute-local-only")
        if tracked is not None and not local(tracked) and local_only:
            continue
        prefix = row["ip_prefix"]
        if "/" not in prefix:
            prefix += "/128" if ":" in prefix else "/32"
        out.setdefault(vrf_of.get(names.get(dp, ""), ""), set()).add(prefix)
    return out


def dump(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, default=sorted)
