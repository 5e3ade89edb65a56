"""One OVSDB connection: the ovs IDL driven by ovsdbapp's connection thread.

The IDL thread (and the SB monitor's, :mod:`ovn_frr.ovn.sbmonitor`) are the only threads in
ovn-frr besides the asyncio loop and the workers that wait on blocking I/O. Reads take the
connection lock so that they never see a half-applied update. Each instance has its own
connection (no class-level singleton), so several databases, or several labs in one test
process, coexist. Writes of owned routes go through :mod:`ovn_frr.ovn.bulk`.
"""

from __future__ import annotations

import contextlib
import logging
import queue
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ovs import stream as ovs_stream
from ovsdbapp.backend.ovs_idl import connection, idlutils

from ovn_frr.ovn.changes import Changes
from ovn_frr.ovn.errors import OvnError
from ovn_frr.ovn.jsonrpc import fetch_schema

__all__ = ["OvnError", "OvsdbConnection", "set_ssl"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class _Idl(connection.OvsdbIdl):  # type: ignore[misc]
    """The IDL with a change hook (called in the IDL thread): on row changes, and when
    ovsdb-server acks a condition change (which may change no row)."""

    on_change: Callable[[], None] | None = None
    #: bytes received on earlier connections, the current one's, and its counter
    _bytes_before = 0
    _bytes_now = 0
    _rpc: Any = None
    #: row updates received (each row inserted, changed or deleted)
    updates = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the UUIDs of the rows inserted, changed or deleted since :meth:`take_changed`,
        #: recorded once someone takes them (an IDL nobody asks would keep every UUID)
        self._changed: set[Any] | None = None

    def notify(self, event: str, row: Any, updates: Any = None) -> None:
        self.updates += 1
        if self._changed is not None:
            self._changed.add(row.uuid)

    def take_changed(self) -> set[Any]:
        """The UUIDs of the rows inserted, changed or deleted since the last call (call with
        the IDL quiescent; ``ovn.views.RowViews`` does). The first call returns nothing and
        starts the recording: a view made before it was made from the row as it is."""
        out, self._changed = self._changed or set(), set()
        return out

    def cooperative_yield(self) -> None:
        """No yield per row update: ovsdbapp's ``time.sleep(0)`` (for eventlet) hands the
        GIL to any busy thread of the agent at every row, and a 10k-row update then waits
        up to the interpreter's switch interval (5 ms) 10k times. This thread parses, the
        others get the GIL at the switch interval as usual."""

    def run(self) -> bool:
        """One IDL run; ``on_change`` once for all the rows it brought (10k row updates are
        one wake-up of the event loop, not 10k of them contending for the GIL with this
        thread's parsing), and once when a condition change was acknowledged."""
        acked = self.cond_seqno
        before = self.updates
        changed: bool = super().run()
        rpc = getattr(self._session, "rpc", None)
        if rpc is not self._rpc:
            self._bytes_before += self._bytes_now
            self._rpc, self._bytes_now = rpc, 0
        if rpc is not None:
            self._bytes_now = rpc.get_received_bytes()
        if (self.cond_seqno != acked or self.updates != before) and self.on_change is not None:
            self.on_change()
        return changed

    @property
    def received_bytes(self) -> int:
        return self._bytes_before + self._bytes_now


class _Wake:
    """A no-op in ovsdbapp's transaction queue: the IDL thread wakes up and sends the
    condition changes set meanwhile (its poll loop does not watch them)."""

    def __init__(self) -> None:
        self.results: queue.Queue[None] = queue.Queue()

    def do_commit(self) -> None:
        return None


def set_ssl(key: str | None, cert: str | None, ca: str | None) -> None:
    """Process-wide SSL files of the ovs library (used by ssl: remotes)."""
    if key and cert and ca:
        ovs_stream.Stream.ssl_set_private_key_file(key)
        ovs_stream.Stream.ssl_set_certificate_file(cert)
        ovs_stream.Stream.ssl_set_ca_cert_file(ca)


class OvsdbConnection:
    def __init__(
        self,
        remote: str,
        schema: str,
        tables: Mapping[str, Sequence[str]],
        conditions: Mapping[str, list[list[Any]]] | None = None,
        timeout: float = 15.0,
    ) -> None:
        self.remote = remote
        self.schema = schema
        self._tables = tables
        self._conditions = dict(conditions or {})
        self._timeout = timeout
        self._conn: connection.Connection | None = None
        self._idl: _Idl | None = None
        self.on_change: Callable[[], None] | None = None
        #: bumped with every change (a reader waits on it: :class:`ovn_frr.ovn.reader.OvnReader`)
        self.changes = Changes()

    def start(self) -> None:
        """Connect and wait for the initial contents (blocking: call from a worker thread).
        ``remote`` may list several members (a cluster): the schema comes from the first that
        answers, and the IDL follows the cluster's leader. After a failure, call again."""
        try:
            helper = idlutils.create_schema_helper(fetch_schema(self.remote, self.schema))
        except OvnError as exc:
            raise OvnError(f"{self.schema} at {self.remote}: {exc}") from None
        for table, columns in self._tables.items():
            helper.register_columns(table, list(columns))
        idl = _Idl(self.remote, helper)
        idl.on_change = self._changed
        for table, cond in self._conditions.items():
            idl.cond_change(table, cond)
        conn = connection.Connection(idl, self._timeout)
        try:
            conn.start()
        except Exception as exc:
            idl.close()
            raise OvnError(f"{self.schema} at {self.remote}: {exc or type(exc).__name__}") from None
        self._idl, self._conn = idl, conn
        log.info("ovsdb_connected db=%s remote=%s", self.schema, self.remote)

    @property
    def started(self) -> bool:
        return self._conn is not None

    def _changed(self) -> None:
        self.changes.bump()
        if self.on_change is not None:
            self.on_change()

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.stop(timeout=5)
            self._conn = None

    @property
    def received(self) -> tuple[int, int]:
        """Bytes and row updates received from ovsdb-server since start (what this chassis
        costs the database: the monitors' conditions keep both to this chassis' share)."""
        idl = self._idl
        return (idl.received_bytes, idl.updates) if idl is not None else (0, 0)

    @property
    def connected(self) -> bool:
        # the ovs IDL has no public "connected now" (has_ever_connected() is sticky); its
        # jsonrpc session knows
        session = getattr(self._idl, "_session", None)
        return session is not None and bool(session.is_connected())

    def set_conditions(self, conditions: Mapping[str, list[Any]]) -> bool:
        """Monitor each table with its condition (only those that differ are sent). Returns
        whether the IDL is still waiting for a condition to take effect: False once all are
        acked by ovsdb-server and ``conditions`` asked for nothing new (the rows are those
        that match them)."""
        assert self._conn is not None and self._idl is not None, "not started"
        changed = False
        with self._conn.lock:
            for table, cond in conditions.items():
                if self._idl.tables[table].condition_state.latest != (cond or [False]):
                    self._idl.cond_change(table, cond)
                    changed = True
            pending = changed or any(
                t.condition_state.new is not None or t.condition_state.requested is not None
                for t in self._idl.tables.values()
            )
        if changed:
            with contextlib.suppress(queue.Full):  # a wake-up already queued is enough
                self._conn.txns.put_nowait(_Wake())
        return pending

    def read(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(idl)`` with the IDL quiescent (blocking)."""
        assert self._conn is not None and self._idl is not None, "not started"
        with self._conn.lock:
            return fn(self._idl)
