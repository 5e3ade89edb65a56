"""FPM connections are taken from zebra only: the peer socket's process, found through
/proc (real sockets, real processes; a process is "zebra" by its executable's name)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ovn_frr.fpm import encode_frame
from ovn_frr.fpm.peer import Zebra, ZebraCheck, peer_inode, sweep_option
from ovn_frr.fpm.rib import Rib
from ovn_frr.fpm.server import FpmServer
from tests.unit.nlbuild import route

# captured from /proc/net/tcp and tcp6 (a zebra FPM session on 127.0.0.1:2620, one on [::1])
TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0A3C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1067 1 0
   1: 0100007F:A845 0100007F:0A3C 01 00000000:00000000 00:00000000 00000000   100        0 4242 1 0
   2: 0100007F:0A3C 0100007F:A845 01 00000000:00000000 00:00000000 00000000     0        0 4243 1 0
"""
TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:C350 00000000000000000000000001000000:0A3C 01 00000000:00000000 00:00000000 00000000     0        0 777 1 0
"""  # noqa: E501


def test_the_peer_socket_is_the_one_with_the_ends_swapped() -> None:
    # we accepted 127.0.0.1:43077 on 127.0.0.1:2620: the peer's socket is local 43077
    assert peer_inode([TCP, TCP6], ("127.0.0.1", 0xA845), ("127.0.0.1", 2620)) == 4242
    assert peer_inode([TCP, TCP6], ("::1", 50000), ("::1", 2620, 0, 0)[:2]) == 777
    assert peer_inode([TCP], ("127.0.0.1", 1), ("127.0.0.1", 2620)) is None
    assert peer_inode(["garbage\n 0: zz:zz yy:yy 01 0 0 0 0 0 x 0"], ("::1", 1), ("::1", 2)) is None


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock
    sock.close()


def _start(exe: str | Path, port: int | None) -> subprocess.Popen[bytes]:
    """A process of executable ``exe``, connected to ``port`` (or just sleeping)."""
    connect = f"s = socket.create_connection(('127.0.0.1', {port})); " if port else ""
    code = f"import socket, time; {connect}print('up', flush=True); time.sleep(30)"
    proc = subprocess.Popen([str(exe), "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    return proc


def _check(listener: socket.socket, exe: str | Path, pidfile: Path,
           pid_of: subprocess.Popen[bytes] | None = None) -> Zebra | str:  # fmt: skip
    """Who connects with ``exe``, as checked against ``pidfile`` naming the connecting
    process (or ``pid_of``)."""
    proc = _start(exe, listener.getsockname()[1])
    try:
        pidfile.write_text(f"{(pid_of or proc).pid}\n")
        conn, peer = listener.accept()
        with conn:
            return ZebraCheck(pidfile)(peer, conn.getsockname())
    finally:
        proc.kill()
        proc.wait()


def test_only_this_nodes_zebra_is_taken(listener: socket.socket, tmp_path: Path) -> None:
    zebra = tmp_path / "zebra"  # a program named zebra: its process name and executable
    shutil.copy(os.path.realpath(sys.executable), zebra)
    pidfile = tmp_path / "zebra.pid"
    found = _check(listener, zebra, pidfile)
    assert isinstance(found, Zebra) and found.argv[0] == str(zebra)
    assert found.sweep_option is None
    reason = _check(listener, sys.executable, pidfile)
    assert isinstance(reason, str) and reason.endswith(", not zebra"), reason
    other = _start(zebra, None)  # the pid file names another zebra than the one connecting
    try:
        reason = _check(listener, zebra, pidfile, pid_of=other)
        assert isinstance(reason, str) and reason.startswith("its socket is not zebra's"), reason
    finally:
        other.kill()
        other.wait()
    pidfile.unlink()
    reason = ZebraCheck(pidfile)(("127.0.0.1", 1), ("127.0.0.1", 2))
    assert isinstance(reason, str) and reason.startswith("cannot read zebra's pid file")


def test_zebras_sweep_option_is_read_from_its_command_line() -> None:
    base = ["/usr/lib/frr/zebra", "-d", "-A", "127.0.0.1", "-s", "90000000"]
    assert sweep_option(base) is None
    assert sweep_option([*base, "-K", "60"]) == "-K 60 (FRR >= 9: 500 s, write -K60)"
    assert sweep_option([*base, "-K60"]) == "-K60"
    assert sweep_option([*base, "--graceful_restart=20"]) == "--graceful_restart=20"


def test_a_refused_connection_never_replaces_zebras(listener: socket.socket) -> None:
    """zebra's session goes on while another process connects; the refusal is counted."""

    async def main() -> FpmServer:
        rib = Rib(replay_hold=0.0)
        loop = asyncio.get_running_loop()
        zebra_sock = socket.socket()
        zebra_sock.bind(("127.0.0.1", 0))  # zebra's end is known before it connects
        zebra_port = zebra_sock.getsockname()[1]

        def check(peer: tuple[str, int], local: tuple[str, int]) -> Zebra | str:
            if peer[1] == zebra_port:
                return Zebra(1, ("zebra", "-K60"))
            return "no zebra process holds its socket"

        server = FpmServer(rib, lambda: None, loop.time, check)
        await server.start(listener)
        zebra_sock.setblocking(False)
        await loop.sock_connect(zebra_sock, listener.getsockname())
        _r, zebra = await asyncio.open_connection(sock=zebra_sock)
        for _ in range(100):
            if server.counters.connected:
                break
            await asyncio.sleep(0.01)
        intruder_r, intruder = await asyncio.open_connection(*listener.getsockname())
        intruder.write(encode_frame(route("203.0.113.0/24", gateways=("10.0.0.66",))))
        assert await asyncio.wait_for(intruder_r.read(), 5) == b""  # closed on it
        zebra.write(encode_frame(route("198.51.100.0/24", gateways=("10.255.0.2",))))
        await zebra.drain()
        for _ in range(100):
            if len(rib):
                break
            await asyncio.sleep(0.01)
        assert server.counters.connected and server.counters.connections == 1
        assert rib.lookup("198.51.100.0/24") and not rib.lookup("203.0.113.0/24")
        zebra.close()
        intruder.close()
        await server.close()
        return server

    server = asyncio.run(main())
    assert server.counters.refused == 1
    assert server.counters.last_refused.endswith(": no zebra process holds its socket")
