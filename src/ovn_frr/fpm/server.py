"""The FPM listener (asyncio): zebra connects, its stream feeds the RIB reducer.

A connection is taken only from zebra (``check``, see :mod:`ovn_frr.fpm.peer`); any other is
closed at once, counted and logged (at most one line per 10 s), and never disturbs zebra's
session. One zebra at a time: a new connection of zebra's replaces the previous one (zebra
reconnected). Malformed input is counted and logged once per connection with a hex excerpt,
and that connection is reset; zebra reconnects and replays, and the RIB's mark-and-sweep
absorbs it.
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
from ovn_frr.fpm.peer import Zebra
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
    #: connections refused because the peer is not zebra, and the last one's peer and reason
    refused: int = 0
    last_refused: str = ""
    last_refused_at: float | None = None
    #: the zebra of the current (or last) connection, when the peer is checked
    zebra: Zebra | None = None


#: (peer, local) -> the zebra at the other end, else why the peer is not zebra
PeerCheck = Callable[[tuple[str, int], tuple[str, int]], "Zebra | str"]
REFUSED_LOG_EVERY = 10.0


class FpmServer:
    def __init__(
        self,
        rib: Rib,
        on_update: Callable[[], None],
        clock: Callable[[], float],
        check: PeerCheck | None = None,
    ) -> None:
        self.rib = rib
        self.on_update = on_update
        self.clock = clock
        self.check = check
        self._refused_logged_at = -1e9
        self._refused_unlogged = 0
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

    async def _accept(self, writer: asyncio.StreamWriter) -> bool | None:
        """Whether the connection is zebra's (None: not checked); a refused one is counted,
        logged and closed."""
        if self.check is None:
            return None
        peer = writer.get_extra_info("peername")
        local = writer.get_extra_info("sockname")
        c = self.counters
        if not peer or not local:  # reset before it could be looked at
            writer.close()
            return False
        try:  # reads /proc: off the event loop
            found = await asyncio.get_running_loop().run_in_executor(
                None, self.check, tuple(peer[:2]), tuple(local[:2])
            )
        except Exception as exc:  # a check that cannot decide refuses
            found = f"cannot check the peer: {exc}"
        if isinstance(found, Zebra):
            if found.sweep_option is None and (c.zebra is None or c.zebra.pid != found.pid):
                log.warning("zebra_without_graceful_restart pid=%d: after an unclean FRR "
                            "restart, routes withdrawn while FRR was down can stay in zebra "
                            "and so in OVN (FRR < 10.7); start zebra with -K (docs/frr.md)",
                            found.pid)  # fmt: skip
            c.zebra = found
            return True
        reason = found
        c.refused += 1
        c.last_refused = f"{peer[0]}:{peer[1]}: {reason}"
        c.last_refused_at = self.clock()
        self._refused_unlogged += 1
        now = self.clock()
        if now - self._refused_logged_at >= REFUSED_LOG_EVERY:
            log.warning("fpm_refused peer=%s:%s reason=%r refused=%d (since the last line: %d)",
                        peer[0], peer[1], reason, c.refused, self._refused_unlogged)  # fmt: skip
            self._refused_logged_at = now
            self._refused_unlogged = 0
        writer.close()
        return False

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        previous = self.counters.zebra
        accepted = await self._accept(writer)
        if accepted is False:
            return
        zebra = self.counters.zebra
        # a zebra that is not the one before (or not known) restarted: bgpd re-learns
        restarted = (
            accepted is None or previous is None or zebra is None or (zebra.pid != previous.pid)
        )
        if self._current is not None:
            log.info("fpm_replaced peer=%s", peer)
            self._current.close()
        self._current = writer
        c = self.counters
        c.connections += 1
        c.connected = True
        self.rib.connected(self.clock(), restarted)
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
        except Exception as exc:  # a decoder or RIB bug: said, and zebra replays on reconnect
            c.errors += 1
            c.last_error = f"{type(exc).__name__}: {exc}"
            log.exception("fpm_stream_failed peer=%s (connection reset)", peer)
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
