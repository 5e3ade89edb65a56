"""The FPM listener on loopback: malformed input resets that connection, counted and logged."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest

from ovn_frr.fpm import encode_frame
from ovn_frr.fpm.rib import Rib
from ovn_frr.fpm.server import FpmServer
from tests.unit.nlbuild import route


async def _session(payloads: list[bytes]) -> tuple[FpmServer, Rib, bytes]:
    rib = Rib(replay_hold=0.0)
    woken = asyncio.Event()
    server = FpmServer(rib, woken.set, asyncio.get_running_loop().time)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    await server.start(sock)
    reader, writer = await asyncio.open_connection(*sock.getsockname())
    for p in payloads:
        writer.write(p)
        await writer.drain()
    rest = await asyncio.wait_for(reader.read(), timeout=5)  # EOF: the server closed it
    writer.close()
    await server.close()
    return server, rib, rest


def test_malformed_stream_resets_the_connection_and_is_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    good = encode_frame(route("198.51.100.0/24", gateways=("10.255.0.2",)))
    bad = b"\x07\x01\x00\x10" + b"\xde\xad\xbe\xef" * 3
    with caplog.at_level(logging.ERROR):
        server, rib, rest = asyncio.run(_session([good, bad]))
    assert rest == b""
    assert server.counters.errors == 1
    assert server.counters.connections == 1
    assert not server.counters.connected
    assert len(rib) == 1  # what came before the garbage was kept
    (record,) = [r for r in caplog.records if "fpm_malformed" in r.getMessage()]
    assert "07 01 00 10 de ad be ef" in record.getMessage()  # a hex excerpt
