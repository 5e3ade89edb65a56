"""Who is on the other end of an FPM connection: only zebra may feed routes into OVN.

Any local process may connect to a TCP port, and on a host-network DaemonSet that is any
host-network pod. So a connection is taken only when the socket at its other end belongs to
the process of zebra's pid file (``vty_socket_dir/zebra.pid``, written by zebra in a
directory only FRR and root may write), whose name and executable are ``zebra``: the peer
socket's inode is looked up in this network namespace's ``/proc/net/tcp{,6}`` (local and
remote address swapped), then among that process' open files. No readable pid file: refused
(anyone can name a process zebra). In a pod, FRR's container and ovn-frr's must share the
process namespace (``shareProcessNamespace: true``) and ``/run/frr``.

The table parsing is pure (:func:`peer_inode`); :class:`ZebraCheck` does the reading, with
``proc`` a parameter (a directory laid out like ``/proc``).
"""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

Endpoint = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Zebra:
    """The zebra process at the other end of an accepted connection."""

    pid: int
    argv: tuple[str, ...]

    @property
    def sweep_option(self) -> str | None:
        """zebra's ``-K``/``--graceful_restart`` as given, None without one (see docs/frr.md:
        without it, routes withdrawn while FRR was down can stay after an unclean restart)."""
        return sweep_option(self.argv)


def sweep_option(argv: Sequence[str]) -> str | None:
    """``-K``/``--graceful_restart`` as written; ``-K N`` (apart) is named as it is read by
    FRR >= 9 (``-K`` alone: 500 s; N is a stray argument), FRR 8 reads N seconds."""
    for i, arg in enumerate(argv):
        if arg.startswith("--graceful_restart"):
            return arg
        if arg.startswith("-K"):
            apart = arg == "-K" and i + 1 < len(argv) and argv[i + 1].isdigit()
            return f"-K {argv[i + 1]} (FRR >= 9: 500 s, write -K{argv[i + 1]})" if apart else arg
    return None


def _hex_addr(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address as ``/proc/net/tcp`` prints it: 32-bit words in host order."""
    raw = bytes.fromhex(text)
    if sys.byteorder == "big":
        words = raw
    else:
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
            # an established socket (state 01) with an inode (not a TIME_WAIT leftover)
            if len(fields) < 10 or fields[3] != "01" or fields[9] == "0":
                continue
            try:
                here, there = _endpoint(fields[1]), _endpoint(fields[2])
            except ValueError:
                continue
            if (here, there) == want:
                return int(fields[9])
    return None


class ZebraCheck:
    """``check(peer, local)``: the :class:`Zebra` at the other end, or why the peer is not
    this node's zebra."""

    def __init__(self, pidfile: str | Path, proc: str | Path = "/proc") -> None:
        self.pidfile = Path(pidfile)
        self.proc = Path(proc)

    def __call__(self, peer: Endpoint, local: Endpoint) -> Zebra | str:
        pid = self._pidfile_pid()
        if pid is None:
            return f"cannot read zebra's pid file {self.pidfile} (zebra cannot be told apart)"
        tables = []
        for name in ("tcp", "tcp6"):
            try:
                tables.append((self.proc / "self" / "net" / name).read_text())
            except OSError:
                continue
        inode = peer_inode(tables, peer, local)
        if inode is None:
            return "its socket is not in this network namespace (not a local process)"
        proc = self.proc / str(pid)
        try:
            comm = (proc / "comm").read_bytes()
        except OSError:
            return f"zebra (pid {pid}, {self.pidfile}) is not running"
        if comm != b"zebra\n":
            return f"pid {pid} of {self.pidfile} is {comm.strip()!r}, not zebra"
        try:
            exe = os.readlink(proc / "exe")
        except OSError:
            exe = ""
        if exe and os.path.basename(exe.removesuffix(" (deleted)")) != "zebra":
            return f"pid {pid} of {self.pidfile} runs {exe}, not zebra"
        if not self._holds(proc, inode):
            return f"its socket is not zebra's (pid {pid}, {self.pidfile})"
        try:
            raw = (proc / "cmdline").read_bytes()
        except OSError:
            raw = b""
        return Zebra(pid, tuple(raw.decode(errors="replace").split("\0")[:-1]))

    def _pidfile_pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError, UnicodeDecodeError):
            return None

    @staticmethod
    def _holds(proc: Path, inode: int) -> bool:
        """Whether the process at ``proc`` has socket ``inode`` open."""
        target = f"socket:[{inode}]"
        try:
            fds = os.scandir(proc / "fd")
        except OSError:
            return False
        with fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) == target:
                        return True
                except OSError:
                    continue
        return False
