"""Sockets inside a named network namespace, without moving the process.

A thread that calls setns(2) with CLONE_NEWNET switches only itself; a socket it creates stays
in that namespace for its whole life. So a short-lived thread enters the namespace, creates and
binds the socket, and hands it back to the caller's thread (and event loop).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import socket
import threading

CLONE_NEWNET = 0x40000000
NETNS_RUN_DIR = "/run/netns"


class NetnsError(OSError):
    pass


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise NetnsError(err, f"setns: {os.strerror(err)}")


def listening_socket(netns: str | None, host: str, port: int, backlog: int = 4) -> socket.socket:
    """A TCP socket bound to host:port and listening, in ``netns`` (None: this namespace)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET

    def make() -> socket.socket:
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
            s.listen(backlog)
        except OSError:
            s.close()
            raise
        return s

    if netns is None:
        return make()
    result: list[socket.socket | BaseException] = []

    def worker() -> None:
        try:
            fd = os.open(f"{NETNS_RUN_DIR}/{netns}", os.O_RDONLY)
            try:
                _setns(fd)
            finally:
                os.close(fd)
            result.append(make())
        except BaseException as exc:
            result.append(exc)

    t = threading.Thread(target=worker, name=f"netns-{netns}")
    t.start()
    t.join()
    got = result[0]
    if isinstance(got, BaseException):
        raise got
    return got
