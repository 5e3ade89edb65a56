"""Who is on the other end of an FPM connection: only zebra may feed routes into OVN.

Any local process may connect to a TCP port, and on a host-network DaemonSet that is any
host-network pod. So a connection is taken only when the socket at its other end belongs to
a process named ``zebra`` (and, when zebra's pid file is readable, to that very process):
the peer socket's inode is looked up in this network namespace's ``/proc/net/tcp{,6}`` (local
and remote address swapped), then in the open files of the zebra processes. In a pod, FRR's
container and ovn-frr's must share the process namespace (``shareProcessNamespace: true``).

The table parsing is pure (:func:`peer_inode`); :class:`ZebraCheck` does the reading, with
``proc`` a parameter (a directory laid out like ``/proc``).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path

Endpoint = tuple[str, int]


def _hex_addr(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address as ``/proc/net/tcp`` prints it: 32-bit words in host (little-endian) order."""
    raw = bytes.fromhex(text)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    addr = ipaddress.ip_address(words)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def _endpoint(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    addr, _, port = text.partition(":")
    return _hex_addr(addr), int(port, 16)


def _norm(ep: Endpoint) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    addr = ipaddress.ip_address(ep[0].split("%")[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped, ep[1]
    return addr, ep[1]


def peer_inode(tables: Iterable[str], peer: Endpoint, local: Endpoint) -> int | None:
    """The inode of the socket whose local end is ``peer`` and remote end ``local`` (the
    other side of our connection), from ``/proc/net/tcp`` and ``tcp6`` texts; None: none."""
    want = (_norm(peer), _norm(local))
    for table in tables:
        for line in table.splitlines()[1:]:
            fields = line.split()
            if len(fields) < 10:
                continue
            try:
                here, there = _endpoint(fields[1]), _endpoint(fields[2])
            except ValueError:
                continue
            if (here, there) == want:
                return int(fields[9])
    return None


class ZebraCheck:
    """``check(peer, local)``: None when the peer is this node's zebra, else the reason."""

    def __init__(self, pidfile: str | Path | None = None, proc: str | Path = "/proc") -> None:
        self.pidfile = Path(pidfile) if pidfile else None
        self.proc = Path(proc)

    def __call__(self, peer: Endpoint, local: Endpoint) -> str | None:
        tables = []
        for name in ("tcp", "tcp6"):
            try:
                tables.append((self.proc / "self" / "net" / name).read_text())
            except OSError:
                continue
        inode = peer_inode(tables, peer, local)
        if inode is None:
            return "its socket is not in this network namespace (not a local process)"
        pid = self._owner(inode)
        if pid is None:
            return "no zebra process holds its socket"
        expected = self._pidfile_pid()
        if expected is not None and pid != expected:
            return f"zebra pid {pid} is not this node's zebra (pid {expected}, {self.pidfile})"
        return None

    def _pidfile_pid(self) -> int | None:
        if self.pidfile is None:
            return None
        try:
            return int(self.pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _owner(self, inode: int) -> int | None:
        """The pid of a process named zebra that has socket ``inode`` open."""
        target = f"socket:[{inode}]"
        for entry in os.scandir(self.proc):
            if not entry.name.isdigit():
                continue
            try:
                if (Path(entry.path) / "comm").read_text().strip() != "zebra":
                    continue
                fds = os.scandir(Path(entry.path) / "fd")
            except OSError:
                continue
            with fds:
                for fd in fds:
                    try:
                        if os.readlink(fd.path) == target:
                            return int(entry.name)
                    except OSError:
                        continue
        return None
