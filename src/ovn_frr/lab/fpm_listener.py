"""A blocking FPM listener in a lab namespace that collects zebra's route messages (for tests,
benchmarks and fixture capture; the agent has its own asyncio server)."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

from ovn_frr.fpm import FpmFramer, RouteMessage, decode
from ovn_frr.kernel.netns import listening_socket


class FpmListener:
    def __init__(self, netns: str, port: int = 2620) -> None:
        self.sock = listening_socket(netns, "127.0.0.1", port)
        self.sock.settimeout(0.2)
        self.routes: list[RouteMessage] = []
        self.raw = bytearray()
        self.connections = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="fpm-listener", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            framer = FpmFramer()
            with conn:
                conn.settimeout(0.2)
                while not self._stop.is_set():
                    try:
                        data = conn.recv(65536)
                    except TimeoutError:
                        continue
                    if not data:
                        break
                    with self._lock:
                        self.raw += data
                        for payload in framer.feed(data):
                            self.routes += [
                                m for m in decode(payload) if isinstance(m, RouteMessage)
                            ]

    def prefixes(self) -> set[str]:
        """Prefixes currently installed according to the stream (adds minus deletes)."""
        live: set[str] = set()
        with self._lock:
            for m in self.routes:
                (live.add if m.add else live.discard)(m.prefix)
        return live

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FpmListener:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
