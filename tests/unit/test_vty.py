"""A daemon's vty socket spoken to directly: replies decoded from bytes, a session against a
fake daemon, and which batches may go that way."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from ovn_frr.frr.vty import Replies, Reply, VtySession
from ovn_frr.frr.vtysh import Vtysh, bgpd_only


def test_replies_are_cut_at_their_terminator_however_the_bytes_arrive() -> None:
    data = b"line 1\nline 2\n\0\0\0\0% Unknown command: x\n\0\0\0\x02\0\0\0\x00"
    whole = Replies().feed(data)
    assert whole == [Reply(0, "line 1\nline 2\n"), Reply(2, "% Unknown command: x\n"),
                     Reply(0, "")]  # fmt: skip
    r = Replies()
    byte_by_byte = [x for i in range(len(data)) for x in r.feed(data[i : i + 1])]
    assert byte_by_byte == whole
    assert whole[1].reason == "Unknown command: x" and not whole[1].ok
    assert Reply(13, "").reason == "configuration failed"


class FakeDaemon:
    """A daemon's vty socket: each NUL-ended command gets its reply; 'bad ...' is refused."""

    def __init__(self, path: Path) -> None:
        self.lines: list[str] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        buf = b""
        while data := conn.recv(4096):
            buf += data
            while b"\0" in buf:
                line, buf = buf.split(b"\0", 1)
                text = line.decode()
                self.lines.append(text)
                status = 1 if text.strip().startswith("bad") else 0
                reply = f"% refused {text.strip()}\n" if status else ""
                conn.sendall(reply.encode() + bytes([0, 0, 0, status]))


def test_a_bgpd_batch_goes_over_the_socket_and_refusals_are_its_lines(tmp_path: Path) -> None:
    daemon = FakeDaemon(tmp_path / "bgpd.vty")
    vtysh = Vtysh(str(tmp_path), run=lambda argv: (_ for _ in ()).throw(AssertionError(argv)))
    batch = ("router bgp 64512\n address-family ipv4 unicast\n  network 10.0.0.0/24\n"
             "  bad line\n  network 10.0.1.0/24\n exit-address-family\nexit\n")  # fmt: skip
    errors = vtysh.apply_batch(batch)
    assert [(e.line, e.reason) for e in errors] == [(4, "refused bad line")]
    # every line was sent (a refused command does not stop the batch), in config mode
    assert daemon.lines == ["enable", "configure", *batch.splitlines(), "end"]
    vtysh.close()


def test_a_refused_context_line_stops_the_batch(tmp_path: Path) -> None:
    daemon = FakeDaemon(tmp_path / "bgpd.vty")
    session = VtySession(str(tmp_path / "bgpd.vty"))
    vtysh = Vtysh(str(tmp_path), run=lambda argv: (_ for _ in ()).throw(AssertionError(argv)))
    errors = vtysh.apply_batch("router bgp 64512\n bad context\n  network 10.0.0.0/24\n exit\n"
                               "exit\n")  # fmt: skip
    assert [e.line for e in errors] == [2]
    assert "  network 10.0.0.0/24" not in daemon.lines  # it would have landed elsewhere
    assert daemon.lines[-1] == "end"
    session.close()
    vtysh.close()


def test_only_bgpd_batches_go_direct() -> None:
    assert bgpd_only("router bgp 64512\n address-family ipv4 unicast\n  network 10.0.0.0/24\n"
                     " exit-address-family\nexit\n")  # fmt: skip
    assert bgpd_only("router bgp 64512 vrf red\n no neighbor 10.0.0.1 remote-as 1\nexit\n")
    # route-maps and prefix-lists go to zebra as well: vtysh
    assert not bgpd_only("route-map ovnfrr-origin permit 10\n set large-community 1:2:3\nexit\n"
                         "router bgp 64512\nexit\n")  # fmt: skip
    assert not bgpd_only("no router bgp 64512 vrf red\n") and not bgpd_only("")
