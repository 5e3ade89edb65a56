"""The FPM listener (asyncio): zebra connects, its stream feeds the RIB reducer.

One zebra at a time: a new connection replaces the previous one (zebra reconnected). Malformed
input is counted and logged once per connection with a hex excerpt, and that connection is
reset; zebra reconnects and replays, and the RIB's mark-and-sweep absorbs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

from ovn_frr.fpm.framing import FpmFramer, FramingError
from ovn_frr.fpm.netlink import decode
from ovn_frr.fpm.rib import Rib

log = logging.getLogger(__name__)

READ_SIZE = 1 << 18


@dataclass(slots=True)
class FpmCounters:
    connections: int = 0
    frames: int = 0
    messages: int = 0
    errors: int = 0
    connected: bool = False
    last_error: str = ""


class FpmServer:
    def __init__(self, rib: Rib, on_update: Callable[[], None], clock: Callable[[], float]) -> None:
        self.rib = rib
        self.on_update = on_update
        self.clock = clock
        self.counters = FpmCounters()
        self._server: asyncio.Server | None = None
        self._current: asyncio.StreamWriter | None = None

    async def start(self, sock: socket.socket) -> None:
        """Serve on an already bound, listening socket (made by the caller, maybe in a netns)."""
        self._server = await asyncio.start_server(self._handle, sock=sock, limit=READ_SIZE)

    async def close(self) -> None:
        if self._current is not None:
            self._current.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if self._current is not None:
            log.info("fpm_replaced peer=%s", peer)
            self._current.close()
        self._current = writer
        c = self.counters
        c.connections += 1
        c.connected = True
        self.rib.connected(self.clock())
        log.info("fpm_connected peer=%s connection=%d", peer, c.connections)
        framer = FpmFramer()
        try:
            while data := await reader.read(READ_SIZE):
                try:
                    payloads = framer.feed(data)
                except FramingError as exc:
                    self._apply(exc.frames)  # what came before the bad bytes is valid
                    raise
                self._apply(payloads)
        except FramingError as exc:
            c.errors += 1
            c.last_error = str(exc)
            log.error("fpm_malformed peer=%s error=%s (connection reset)", peer, exc)
        except (ConnectionError, OSError) as exc:
            log.warning("fpm_connection_error peer=%s error=%s", peer, exc)
        finally:
            if self._current is writer:
                self._current = None
                c.connected = False
            writer.close()
            log.info("fpm_disconnected peer=%s", peer)
            self.on_update()

    def _apply(self, payloads: list[bytes]) -> None:
        """Decode frames and feed the RIB; a malformed frame raises after the good ones."""
        msgs = []
        try:
            for payload in payloads:
                msgs += decode(payload)
                self.counters.frames += 1
        finally:
            self.counters.messages += len(msgs)
            self.rib.apply(msgs, self.clock())
            self.on_update()
