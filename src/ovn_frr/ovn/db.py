"""One OVSDB connection: the ovs IDL driven by ovsdbapp's connection thread.

The IDL thread is the only thread in ovn-frr besides the asyncio loop (and the workers that wait
for it). Reads take the connection lock so that they never see a half-applied update; writes are
queued to the IDL thread as ovsdbapp transactions. Each instance has its own connection (no
class-level singleton), so several databases, or several labs in one test process, coexist.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ovs import stream as ovs_stream
from ovsdbapp.backend.ovs_idl import connection, idlutils
from ovsdbapp.backend.ovs_idl import transaction as ovsdbapp_txn

log = logging.getLogger(__name__)
T = TypeVar("T")


class OvnError(Exception):
    """An OVSDB operation failed (connection, schema or transaction)."""


class _Idl(connection.OvsdbIdl):  # type: ignore[misc]
    """The IDL with a change hook (called in the IDL thread)."""

    on_change: Callable[[], None] | None = None

    def notify(self, event: str, row: Any, updates: Any = None) -> None:
        if self.on_change is not None:
            self.on_change()


class _Call:
    """An ovsdbapp command that runs a function against the IDL inside a transaction."""

    def __init__(self, fn: Callable[[Any, Any], Any]) -> None:
        self.fn = fn
        self.result: Any = None

    def run_idl(self, txn: Any) -> None:
        self.result = self.fn(txn.idl, txn)

    def post_commit(self, txn: Any) -> None:
        pass

    def __str__(self) -> str:
        return getattr(self.fn, "__name__", "ovn-frr call")


class _Api:
    """What ovsdbapp's Transaction needs of an API object: the IDL."""

    def __init__(self, idl: Any) -> None:
        self.idl = idl


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
        timeout: float = 60.0,
    ) -> None:
        self.remote = remote
        self.schema = schema
        self._tables = tables
        self._conditions = dict(conditions or {})
        self._timeout = timeout
        self._conn: connection.Connection | None = None
        self._idl: _Idl | None = None
        self.on_change: Callable[[], None] | None = None

    def start(self) -> None:
        """Connect and wait for the initial contents (blocking: call from a worker thread)."""
        try:
            helper = idlutils.get_schema_helper(self.remote, self.schema)
        except Exception as exc:
            raise OvnError(f"{self.schema} at {self.remote}: {exc}") from None
        for table, columns in self._tables.items():
            helper.register_columns(table, list(columns))
        idl = _Idl(self.remote, helper)
        idl.on_change = self._changed
        for table, cond in self._conditions.items():
            idl.cond_change(table, cond)
        self._idl = idl
        self._conn = connection.Connection(idl, self._timeout)
        try:
            self._conn.start()
        except Exception as exc:
            raise OvnError(f"{self.schema} at {self.remote}: {exc}") from None
        log.info("ovsdb_connected db=%s remote=%s", self.schema, self.remote)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.stop(timeout=5)
            self._conn = None

    @property
    def connected(self) -> bool:
        return self._idl is not None and bool(self._idl.is_connected())

    def read(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(idl)`` with the IDL quiescent (blocking)."""
        assert self._conn is not None and self._idl is not None, "not started"
        with self._conn.lock:
            return fn(self._idl)

    def transact(self, fn: Callable[[Any, Any], T]) -> T:
        """Run ``fn(idl, txn)`` in the IDL thread and commit (blocking); raise OvnError."""
        assert self._conn is not None and self._idl is not None, "not started"
        txn = ovsdbapp_txn.Transaction(_Api(self._idl), self._conn, self._timeout,
                                       check_error=True, log_errors=False)  # fmt: skip
        call = _Call(fn)
        txn.add(call)
        try:
            txn.commit()
        except Exception as exc:
            raise OvnError(f"{self.schema} transaction failed: {exc}") from None
        return call.result  # type: ignore[no-any-return]
