"""Plain OVSDB JSON-RPC (``transact``) on one connection, for the requests that do not go
through the IDL: the owned route rows (:mod:`ovn_frr.ovn.bulk`) and the routers of static
routes (:mod:`ovn_frr.ovn.reader`).

A remote may be a comma list (the members of a clustered database, as ovn-controller takes
them). A connection goes to the cluster's leader, as the IDL's and ovn-nbctl's do by default:
a member is asked (``_Server``) whether it is the leader and connected to the cluster, and
left otherwise. A follower would forward writes, but it answers reads from its own copy, which
may lag behind what the leader committed: the rows read back after a failed write must
include every write that landed. The search starts after the member that failed last, so a
dead member costs one failed connect, not every request.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

import ovs.jsonrpc
import ovs.poller
import ovs.stream

from ovn_frr.ovn.errors import OvnError

log = logging.getLogger(__name__)

#: how long one member may take to accept a connection
CONNECT_TIMEOUT_MS = 5000
#: how long a transaction may wait for its reply (a 20k-row chunk takes about 2 s here)
REPLY_TIMEOUT_S = 120.0
#: a connection idle this long is opened again before use: ovsdb-server probes an idle
#: tcp/ssl client after 5 s by default and drops it 5 s later (unix sockets are not probed)
IDLE_S = 4.0


def members(remote: str) -> list[str]:
    """The members of a remote: ``unix:A,tcp:B:6641`` -> [``unix:A``, ``tcp:B:6641``]."""
    return [r.strip() for r in remote.split(",") if r.strip()]


def connect(
    remote: str, start: int = 0, leader_of: str | None = None
) -> tuple[ovs.jsonrpc.Connection, int]:
    """A connection to the first member that accepts, trying from ``start`` (with
    ``leader_of``: the first that is that database's leader); returns it and that member's
    index (blocking)."""
    parts = members(remote)
    errors = []
    for i in range(len(parts)):
        k = (start + i) % len(parts)
        error, stream = ovs.stream.Stream.open_block(
            ovs.stream.Stream.open(parts[k]), CONNECT_TIMEOUT_MS
        )
        if error:
            errors.append(f"{parts[k]}: {os.strerror(error)}")
            continue
        conn = ovs.jsonrpc.Connection(stream)
        why = _not_leader(conn, leader_of) if leader_of else None
        if why is None:
            return conn, k
        conn.close()
        errors.append(f"{parts[k]}: {why}")
    raise OvnError(f"cannot connect to {'; '.join(errors) or 'no remote'}")


def _not_leader(conn: ovs.jsonrpc.Connection, db: str) -> str | None:
    """Why this server may not serve ``db``'s reads and writes (None: it may): a clustered
    member that is not the leader or not connected to its cluster."""
    request = ovs.jsonrpc.Message.create_request("transact", ["_Server", {
        "op": "select", "table": "Database", "where": [["name", "==", db]],
        "columns": ["model", "leader", "connected"]}])  # fmt: skip
    error, reply = _exchange(conn, request, CONNECT_TIMEOUT_MS / 1000)
    if error:
        return f"no answer on _Server ({os.strerror(error)})"
    if reply.error or not reply.result or "rows" not in reply.result[0]:
        return None  # a server without _Server (not clustered)
    rows = reply.result[0]["rows"]
    if not rows:
        return f"does not serve {db}"
    row = rows[0]
    if row.get("model") != "clustered":
        return None
    if not row.get("connected"):
        return "a cluster member cut off from its cluster"
    if not row.get("leader"):
        return "not the cluster leader"
    return None


def _exchange(
    conn: ovs.jsonrpc.Connection, request: ovs.jsonrpc.Message, timeout_s: float
) -> tuple[int, Any]:
    """Send ``request`` and wait at most ``timeout_s`` for its reply (ovs' own
    ``transact_block`` waits for ever: a leader whose host vanished without a reset would
    hold the writer for good), answering the server's echo requests meanwhile."""
    deadline = time.monotonic() + timeout_s
    error = conn.send(request)
    while not error:
        error, msg = conn.recv()
        if msg is not None:
            if msg.type == ovs.jsonrpc.Message.T_REQUEST and msg.method == "echo":
                conn.send(ovs.jsonrpc.Message.create_reply(msg.params, msg.id))
            elif msg.type in (ovs.jsonrpc.Message.T_REPLY, ovs.jsonrpc.Message.T_ERROR) and (
                msg.id == request.id
            ):
                return 0, msg
            continue
        if error != errno.EAGAIN:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            return errno.ETIMEDOUT, None
        poller = ovs.poller.Poller()
        conn.run()
        conn.wait(poller)
        conn.recv_wait(poller)
        poller.timer_wait(int(left * 1000) + 1)
        poller.block()
        error = 0
    return error or errno.EPROTO, None


def transact(
    conn: ovs.jsonrpc.Connection, ops: Sequence[dict[str, Any]], db: str = "OVN_Northbound"
) -> list[Any]:
    """One OVSDB ``transact``; raises :class:`OvnError` for the connection, the transaction
    or any of its operations. An error on the connection closes it."""
    request = ovs.jsonrpc.Message.create_request("transact", [db, *ops])
    error, reply = _exchange(conn, request, REPLY_TIMEOUT_S)
    if error:
        conn.close()
        raise OvnError(f"{db} transact: {os.strerror(error)}")
    if reply.error:
        raise OvnError(f"{db} transact: {reply.error}")
    results: list[Any] = reply.result or []
    for i, result in enumerate(results):
        if isinstance(result, dict) and "error" in result:
            exc = OvnError(f"{db} transact op {i}: {result['error']}: {result.get('details')}")
            exc.op = i
            raise exc
    return results


def fetch_schema(remote: str, db: str) -> dict[str, Any]:
    """The schema of ``db`` from the first member of ``remote`` that answers, each connect
    bounded (ovsdbapp's own fetch waits on a member that drops packets as long as TCP does)."""
    parts = members(remote)
    errors = []
    start = 0
    while start < len(parts):
        try:
            conn, k = connect(",".join(parts[start:]))
        except OvnError as exc:
            errors.append(str(exc))
            break
        try:
            request = ovs.jsonrpc.Message.create_request("get_schema", [db])
            error, reply = _exchange(conn, request, CONNECT_TIMEOUT_MS / 1000)
        finally:
            conn.close()
        if not error and not reply.error:
            schema: dict[str, Any] = reply.result
            return schema
        errors.append(f"{parts[start + k]}: {os.strerror(error) if error else reply.error}")
        start += k + 1
    raise OvnError(f"cannot fetch the {db} schema: {'; '.join(errors)}")


class Client:
    """One JSON-RPC connection to a database, opened on first use and again (on the next
    member) after it failed. Blocking; not shared between threads."""

    def __init__(self, remote: str, db: str = "OVN_Northbound") -> None:
        self.remote = remote
        self.db = db
        self._conn: ovs.jsonrpc.Connection | None = None
        self._member = 0
        #: the member the connection is to ("" none)
        self.connected_to = ""
        self._used = 0.0

    def call(self, ops: Sequence[dict[str, Any]], fresh: bool = False) -> list[Any]:
        """One transaction; with ``fresh``, on the leader as of now (a leader may have
        stepped down since the connection was made: it is asked again first)."""
        idle = time.monotonic() - self._used > IDLE_S
        if self._conn is not None and idle and not self.connected_to.startswith("unix:"):
            self.close()  # the server may be dropping it: a write sent now would be "lost"
        if self._conn is not None and fresh and (why := _not_leader(self._conn, self.db)):
            log.info("ovsdb_jsonrpc_reconnect db=%s remote=%s reason=%s", self.db,
                     self.connected_to, why)  # fmt: skip
            self.close()
            self._member += 1
        if self._conn is None:
            self._conn, self._member = connect(self.remote, self._member, self.db)
            self.connected_to = members(self.remote)[self._member]
            log.info("ovsdb_jsonrpc_connected db=%s remote=%s", self.db, self.connected_to)
        try:
            results = transact(self._conn, ops, self.db)
        except OvnError:
            if self._conn.status or self._conn.stream is None:  # it failed: the next member
                self._conn = None
                self.connected_to = ""
                self._member += 1
            raise
        self._used = time.monotonic()
        return results

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            self.connected_to = ""


def atoms(datum: Any) -> list[Any]:
    """An OVSDB set in JSON: a bare atom, or ["set", [...]]."""
    if isinstance(datum, list) and len(datum) == 2 and datum[0] == "set":
        return list(datum[1])
    return [datum]
