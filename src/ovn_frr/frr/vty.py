"""One FRR daemon's vty socket, spoken to directly (what vtysh does for each command).

Each vtysh run starts a process that loads FRR's libraries and YANG modules and connects to
every daemon: ~50 ms here for a one-line batch or one ``show`` (measured, FRR 8.4.4), where the
command itself takes a millisecond. On the path of every announcement that was most of what
ovn-frr added to FRR's own delay (bench/advertise_bench.py). A daemon's vty socket
(``<vty_socket_dir>/<daemon>.vty``) takes the same commands over a connection that stays open:

    client -> daemon:  command text, then one NUL byte
    daemon -> client:  the command's output (text, no NUL), then 0x00 0x00 0x00 <status>

``status`` is FRR's ``CMD_*`` return code (0 success; 1 warning, as for a rejected value; 2 no
such command; 3 ambiguous; 4 incomplete; 13 a config change that failed). The replies are
decoded here without I/O (:class:`Replies`); :class:`VtySession` is the blocking connection.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

CMD_SUCCESS = 0
#: CMD_* names of the statuses vtysh reports as refusals
STATUS = {1: "warning", 2: "unknown command", 3: "ambiguous command", 4: "incomplete command",
          13: "configuration failed"}  # fmt: skip


class VtyError(Exception):
    """The daemon's socket cannot be used (absent, refused, closed, too slow)."""


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    text: str

    @property
    def ok(self) -> bool:
        return self.status == CMD_SUCCESS

    @property
    def reason(self) -> str:
        """The daemon's words for a refusal (or the status' name when it said nothing)."""
        said = "; ".join(t.strip().lstrip("% ") for t in self.text.splitlines() if t.strip())
        return said or STATUS.get(self.status, f"status {self.status}")


class Replies:
    """Bytes from the socket -> complete replies, in order (sans I/O)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Reply]:
        self._buf += data
        out = []
        while (end := self._buf.find(b"\0\0\0")) >= 0 and len(self._buf) > end + 3:
            text = bytes(self._buf[:end]).decode(errors="replace")
            out.append(Reply(self._buf[end + 3], text))
            del self._buf[: end + 4]
        return out


class VtySession:
    """A connection to one daemon's vty socket (blocking; one command at a time, a lock
    serializes the callers)."""

    def __init__(self, path: str, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._replies = Replies()
        self._lock = threading.Lock()

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except OSError as exc:
            sock.close()
            raise VtyError(f"{self.path}: {exc.strerror or exc}") from None
        self._sock, self._replies = sock, Replies()
        self._run("enable")  # as vtysh: the session starts in the view node
        return sock

    def _run(self, line: str) -> Reply:
        sock = self._sock
        assert sock is not None
        try:
            sock.sendall(line.encode() + b"\0")
            while True:
                data = sock.recv(65536)
                if not data:
                    raise VtyError(f"{self.path}: closed by the daemon")
                replies = self._replies.feed(data)
                if replies:
                    return replies[0]
        except OSError as exc:
            self.close()
            raise VtyError(f"{self.path}: {exc.strerror or exc}") from None

    def run(
        self, lines: Iterable[str], past: Callable[[int], bool] = lambda _i: False
    ) -> list[Reply]:
        """Each line in turn; stops after the first that is not a success (its reply is the
        last one) unless ``past(its index)`` says to go on. Connects on first use and again
        after the daemon closed the socket."""
        with self._lock:
            if self._sock is None:
                self._connect()
            out = []
            for i, line in enumerate(lines):
                reply = self._run(line)
                out.append(reply)
                if not reply.ok and not past(i):
                    break
            return out

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
