"""This chassis' port bindings from the SB database, by a plain OVSDB monitor (no IDL).

What ovn-frr needs from SB is small: its own Chassis row (by name) and the logical ports of
the Port_Binding rows whose ``chassis`` is that row. The ovs Python IDL made a Row, a Datum
per column and an Atom per value for each binding, at about 50 µs a row: 10k ports bound at
once (a rack's VMs after a host boots, bench/evpn) kept it busy 0.5 s before the first of
them could be announced. Here the monitor's JSON is parsed in C and each binding is held as
two strings (10k in a few tens of milliseconds).

The monitor (``monitor_cond``) has the IDL's conditions: Chassis ``name == <chassis>``,
Port_Binding ``chassis == <its UUID>`` (nothing until the Chassis row is known), changed
with ``monitor_cond_change`` when the Chassis row does. A remote may list the members of a
clustered SB: like ovn-controller's SB connection, any member connected to its cluster
serves (reads need no leader); the member's own ``_Server`` row is watched, and a member cut
off from its cluster is left for the next. ``tcp:``/``ssl:`` sessions are probed with echo
requests (ovs' jsonrpc session), and reconnect with back-off; after a reconnect the monitor
is asked again and its reply replaces what was held (until then the last bindings hold and
:meth:`SbMonitor.bindings` says they are not settled).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import ovs.jsonrpc
import ovs.poller

from ovn_frr.ovn.changes import Changes
from ovn_frr.ovn.conditions import NOTHING
from ovn_frr.ovn.errors import OvnError
from ovn_frr.ovn.jsonrpc import atoms, members

log = logging.getLogger(__name__)

SB = "OVN_Southbound"
#: monitor ids on the connection
_SERVER, _BINDINGS = "ovn-frr-server", "ovn-frr-sb"


@dataclass(frozen=True, slots=True)
class Bindings:
    #: logical ports bound on this chassis
    ports: frozenset[str]
    #: False while the monitor's conditions are not yet in force (or it is not connected):
    #: ports may be missing
    settled: bool


# --- the pure part: update2 notifications -> rows ------------------------------------------


def uuids(datum: Any) -> frozenset[str]:
    """The UUIDs of a reference column's JSON value."""
    return frozenset(a[1] for a in atoms(datum) if isinstance(a, list) and a[:1] == ["uuid"])


def _new_row(u: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The row of an ``initial`` or ``insert`` update (columns at their default are left out
    by ovsdb-server), None for ``modify``/``delete``."""
    for key in ("initial", "insert"):
        if key in u:
            return u[key] or {}
    return None


@dataclass(slots=True)
class Tables:
    """What the monitor holds: this chassis' Chassis rows (UUID -> name) and the bindings on
    them (UUID -> logical port, chassis UUIDs)."""

    chassis: dict[str, str]
    bindings: dict[str, tuple[str, frozenset[str]]]

    @classmethod
    def empty(cls) -> Tables:
        return cls({}, {})

    def apply(self, updates: Mapping[str, Any]) -> int:
        """Apply one ``table-updates2`` object (a monitor reply or an ``update2``); returns
        the number of row updates. ``modify`` carries the changed columns only, each with its
        new value: ``chassis`` holds at most one reference, and for such a column
        ovsdb-server sends the value, not a difference (as the ovs IDL's ``Datum.diff``
        takes it)."""
        n = 0
        for uuid, u in updates.get("Chassis", {}).items():
            n += 1
            new = _new_row(u)
            if "delete" in u:
                self.chassis.pop(uuid, None)
            elif new is not None:
                self.chassis[uuid] = str(new.get("name", ""))
            elif uuid in self.chassis and "name" in u.get("modify", {}):
                self.chassis[uuid] = str(u["modify"]["name"])
        for uuid, u in updates.get("Port_Binding", {}).items():
            n += 1
            new = _new_row(u)
            if "delete" in u:
                self.bindings.pop(uuid, None)
            elif new is not None:
                self.bindings[uuid] = (str(new.get("logical_port", "")),
                                       uuids(new.get("chassis", ["set", []])))  # fmt: skip
            elif uuid in self.bindings and "modify" in u:
                port, chassis = self.bindings[uuid]
                m = u["modify"]
                self.bindings[uuid] = (
                    str(m.get("logical_port", port)),
                    uuids(m["chassis"]) if "chassis" in m else chassis,
                )
        return n

    def chassis_uuids(self, name: str) -> tuple[str, ...]:
        return tuple(sorted(u for u, n in self.chassis.items() if n == name))

    def ports(self, chassis: tuple[str, ...]) -> frozenset[str]:
        here = set(chassis)
        return frozenset(p for p, c in self.bindings.values() if p and not here.isdisjoint(c))


def condition(chassis: tuple[str, ...]) -> list[Any]:
    """The Port_Binding condition for these Chassis rows."""
    return [["chassis", "==", ["uuid", u]] for u in chassis] or NOTHING


def requests(chassis_name: str, chassis: tuple[str, ...]) -> dict[str, Any]:
    """The monitor requests of a new connection (``chassis``: the Chassis UUIDs known)."""
    return {
        "Chassis": {"columns": ["name"], "where": [["name", "==", chassis_name]]},
        "Port_Binding": {"columns": ["logical_port", "chassis"], "where": condition(chassis)},
    }


#: what is asked of the member's ``_Server`` row
SERVER_REQUEST = {"Database": {"columns": ["name", "model", "connected", "index"],
                               "where": [["name", "==", SB]]}}  # fmt: skip


def _optional_int(datum: Any) -> int | None:
    values = [a for a in atoms(datum) if isinstance(a, int)]
    return values[0] if values else None


@dataclass(slots=True)
class Member:
    """The member's own ``_Server`` row for SB: whether it may be read (as the ovs IDL judges
    a member: a clustered or relay one must be connected, and not behind what was read
    before; a standalone server always may)."""

    model: str = ""
    connected: bool = False
    #: the member's RAFT index (clustered only)
    index: int | None = None
    known: bool = False

    def apply(self, updates: Mapping[str, Any]) -> int:
        """Apply a ``_Server`` monitor reply or update; returns its number of row updates."""
        rows = updates.get("Database", {})
        for u in rows.values():
            new = _new_row(u)
            if "delete" in u:
                self.known = False
            elif new is not None:  # columns left out are at their default (false, empty)
                self.known = True
                self.model = str(new.get("model", ""))
                self.connected = new.get("connected", False) is True
                self.index = _optional_int(new.get("index", ["set", []]))
            elif self.known and "modify" in u:
                m = u["modify"]
                self.model = str(m.get("model", self.model))
                if "connected" in m:
                    self.connected = m["connected"] is True
                if "index" in m:
                    self.index = _optional_int(m["index"])
        return len(rows)

    def unfit(self, min_index: int) -> str | None:
        """Why this member may not be read (None: it may)."""
        if not self.known or self.model not in ("clustered", "relay"):
            return None
        if not self.connected:
            return f"a {self.model} member not connected to its cluster"
        if self.index is not None and self.index < min_index:
            return f"behind what was read before (index {self.index} < {min_index})"
        return None


# --- the connection ---------------------------------------------------------------------------


class SbMonitor:
    """The SB monitor on its own thread (the OVSDB boundary); :meth:`bindings` from any
    thread, ``on_change`` called (in the monitor's thread) after rows changed or a condition
    took effect."""

    def __init__(self, remote: str, chassis: str, timeout: float = 15.0) -> None:
        self.remote = remote
        self.chassis = chassis
        self._timeout = timeout
        self.on_change: Callable[[], None] | None = None
        #: bumped with every change (as OvsdbConnection.changes)
        self.changes = Changes()
        self._lock = threading.Lock()
        self._tables = Tables.empty()
        #: the Chassis UUIDs of the Port_Binding condition asked for, and whether ovsdb-server
        #: acknowledged it (with the reply to the monitor or to monitor_cond_change)
        self._cond: tuple[str, ...] = ()
        self._acked = False
        #: the held rows are those of the live connection's monitor
        self._synced = False
        #: the live connection's member may be read (its _Server row says so)
        self._cleared = False
        self._member = Member()
        #: the highest RAFT index read so far: a member behind it is left
        self._min_index = 0
        self._updates = 0
        self._bytes_before = 0
        self._rpc: Any = None
        #: the connection being left (force_reconnect takes effect at the session's next run)
        self._left: Any = None
        self._session: ovs.jsonrpc.Session | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._wake_r, self._wake_w = -1, -1
        self._ready = threading.Event()
        self._error = ""
        self._ids = 0

    # --- what others ask ----------------------------------------------------------------------

    def start(self) -> None:
        """Connect and wait for the initial contents (blocking: call from a worker thread).
        After a failure, call again."""
        self.stop()
        self._stopping = False
        self._ready.clear()
        self._error = ""
        self._synced = self._cleared = self._acked = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._session = ovs.jsonrpc.Session.open_multiple(members(self.remote))
        self._thread = threading.Thread(target=self._run, name="ovn-frr-sb", daemon=True)
        self._thread.start()
        if not self._ready.wait(self._timeout) or self._error:
            why = self._error or f"no initial contents within {self._timeout:.0f} s"
            self.stop()
            raise OvnError(f"{SB} at {self.remote}: {why}")
        log.info("ovsdb_connected db=%s remote=%s", SB, self._session.get_name())

    @property
    def started(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping = True
        self._wake()
        thread.join(timeout=5)
        if thread.is_alive():  # a daemon thread: it goes with the process
            log.warning("ovsdb_monitor_stop_timeout db=%s", SB)
            return
        self._account(None)
        if self._session is not None:
            self._session.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self._wake_r = self._wake_w = -1
        self._synced = False

    @property
    def connected(self) -> bool:
        s = self._session
        return s is not None and bool(s.is_connected()) and self._synced

    @property
    def received(self) -> tuple[int, int]:
        """Bytes and row updates received from ovsdb-server since the first start."""
        rpc = self._rpc
        now = rpc.get_received_bytes() if rpc is not None else 0
        return self._bytes_before + now, self._updates

    def bindings(self) -> Bindings:
        with self._lock:
            here = self._tables.chassis_uuids(self.chassis)
            settled = self._synced and self._acked and here == self._cond
            return Bindings(self._tables.ports(here), settled)

    def held(self) -> tuple[frozenset[str], frozenset[str]]:
        """The Chassis names and the logical ports of the bindings the monitor holds (its
        conditions' rows: this chassis' share of SB)."""
        with self._lock:
            t = self._tables
            return frozenset(t.chassis.values()), frozenset(p for p, _ in t.bindings.values())

    # --- the monitor's thread -----------------------------------------------------------------

    def _wake(self) -> None:
        if self._wake_w >= 0:
            with contextlib.suppress(BlockingIOError):
                os.write(self._wake_w, b"x")

    def _account(self, rpc: Any) -> None:
        """A new connection (or none): what the old one received still counts."""
        if self._rpc is not None:
            self._bytes_before += self._rpc.get_received_bytes()
        self._rpc = rpc

    def _run(self) -> None:
        s = self._session
        assert s is not None
        while not self._stopping:
            try:
                self._step(s)
            except Exception:  # a malformed message, an SSL failure: the next connection
                log.exception("ovsdb_monitor_failed db=%s remote=%s", SB, s.get_name())
                self._leave(s, "failed")
            poller = ovs.poller.Poller()
            s.wait(poller)
            s.recv_wait(poller)
            poller.fd_wait(self._wake_r, select.POLLIN)
            poller.block()
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake_r, 4096)

    def _step(self, s: ovs.jsonrpc.Session) -> None:
        s.run()
        if s.rpc is not self._rpc:  # connected, or the connection lost
            self._account(s.rpc)
            self._synced = self._cleared = False
            if s.rpc is not None:
                self._member = Member()
                self._request(s, "monitor_cond", ["_Server", _SERVER, SERVER_REQUEST], "server")
        changed = False
        for _ in range(50):
            if s.rpc is None or s.rpc is self._left:
                break  # nothing more is taken from a connection being left
            msg = s.recv()
            if msg is None:
                break
            changed |= self._handle(s, msg)
        if changed:
            self.changes.bump()
        if changed and self.on_change is not None:
            self.on_change()

    def _request(self, s: ovs.jsonrpc.Session, method: str, params: list[Any], tag: str) -> None:
        self._ids += 1
        msg = ovs.jsonrpc.Message.create_request(method, params)
        msg.id = f"{tag}-{self._ids}"
        error = s.send(msg)
        if error and error != errno.EAGAIN:
            log.warning("ovsdb_send_failed db=%s method=%s error=%s", SB, method,
                        os.strerror(error))  # fmt: skip

    def _leave(self, s: ovs.jsonrpc.Session, why: str) -> None:
        """Drop this connection (the session reconnects, to the next member, with back-off);
        nothing more it sends is taken."""
        log.warning("ovsdb_member_left db=%s remote=%s reason=%s", SB, s.get_name(), why)
        self._synced = self._cleared = False
        self._left = s.rpc
        s.force_reconnect()

    def _subscribe(self, s: ovs.jsonrpc.Session) -> None:
        """The member may be read: this chassis' rows (with the condition last known: the
        reply replaces every row held)."""
        self._cleared = True
        with self._lock:
            cond = self._cond
            self._acked = False
        self._request(s, "monitor_cond", [SB, _BINDINGS, requests(self.chassis, cond)], "monitor")

    def _check_member(self, s: ovs.jsonrpc.Session, updates: Mapping[str, Any]) -> None:
        self._updates += self._member.apply(updates)  # received like any other row
        why = self._member.unfit(self._min_index)
        if why is not None:
            self._leave(s, why)
            return
        self._min_index = max(self._min_index, self._member.index or 0)
        if not self._cleared:
            self._subscribe(s)

    def _handle(self, s: ovs.jsonrpc.Session, msg: ovs.jsonrpc.Message) -> bool:
        """One message; returns whether what :meth:`bindings` answers may have changed."""
        tag = str(msg.id).split("-", 1)[0] if msg.id is not None else ""
        if msg.type == ovs.jsonrpc.Message.T_ERROR:
            if tag == "server":  # a server without _Server (not clustered)
                self._subscribe(s)
                return False
            if not self._cleared:
                return False  # from a connection being left
            why = f"{tag or 'request'} refused: {msg.error}"
            log.error("ovsdb_monitor_error db=%s %s", SB, why)
            if not self._ready.is_set():  # start() reports it
                self._error = why
                self._ready.set()
            self._leave(s, why)  # the next connection asks again
            return False
        if msg.type == ovs.jsonrpc.Message.T_REPLY:
            if tag == "server":
                self._check_member(s, msg.result or {})
                return False
            if not self._cleared:
                return False
            if tag == "monitor":
                with self._lock:
                    self._tables = Tables.empty()
                    self._updates += self._tables.apply(msg.result or {})
                    self._acked = True
                    self._synced = True
                self._ready.set()
                self._follow_chassis(s)
                return True
            if tag == "cond":
                with self._lock:
                    self._acked = True
                self._follow_chassis(s)
                return True
            return False
        if msg.type == ovs.jsonrpc.Message.T_NOTIFY and msg.method == "update2":
            mon, updates = (msg.params or [None, {}])[:2]
            if not isinstance(updates, dict):
                raise ValueError(f"update2 of {mon!r} is not an object")
            if mon == _SERVER:
                self._check_member(s, updates)
                return False
            if mon == _BINDINGS and self._cleared:
                with self._lock:
                    rows = self._tables.apply(updates)
                    self._updates += rows
                log.debug("sb_update rows=%d", rows)
                self._follow_chassis(s)
                return True
        return False

    def _follow_chassis(self, s: ovs.jsonrpc.Session) -> None:
        """Narrow the Port_Binding condition to the Chassis rows now held (one change in
        flight at a time: the next is sent once it is acknowledged)."""
        with self._lock:
            here = self._tables.chassis_uuids(self.chassis)
            if not self._acked or here == self._cond:
                return
            self._cond, self._acked = here, False
        self._request(s, "monitor_cond_change",
                      [_BINDINGS, _BINDINGS, {"Port_Binding": [{"where": condition(here)}]}],
                      "cond")  # fmt: skip
