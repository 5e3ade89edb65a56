"""A ToR that is not FRR: BIRD 2 in a lab peer's namespace (``PeerSpec(daemon="bird")``).

Real fabrics mix BGP implementations; a ToR of another make sends its UPDATEs with its own
timing and grouping (BIRD announces what it has the moment a session is up, FRR coalesces),
which is how some of FRR's own quirks show. The config is rendered from the lab's links as
FRR peers' is: one eBGP session per address family and link (v4 to v4, v6 to v6; with the
lab's ``ipv4_over_ipv6``, one IPv6 session carrying both, IPv4 with extended next hops), the
lab's timers, everything imported and exported. ``announce``/``withdraw`` keep a set of blackhole
static routes (one protocol per family) in an included file and reconfigure (``birdc
configure``: BIRD sends only the difference).
"""

from __future__ import annotations

import ipaddress
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ovn_frr.lab.proc import LabError, run, wait_for
from ovn_frr.lab.spec import LinkAddrs

BIRD = "bird"
BIRDC = "birdc"


def _proto(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """The name of the BGP protocol toward a neighbor address."""
    return "n_" + str(addr).replace(".", "_").replace(":", "_")


@dataclass
class BirdInstance:
    name: str
    netns: str
    rundir: Path
    asn: int
    router_id: str
    links: list[LinkAddrs]
    #: (keepalive, hold, connect retry) of every session
    timers: tuple[int, int, int] = (1, 3, 1)
    #: RFC 8950: one IPv6 session per link carries IPv4 too (extended next hop)
    ipv4_over_ipv6: bool = False
    announced: set[str] = field(default_factory=set)

    @property
    def socket(self) -> Path:
        return self.rundir / "bird.ctl"

    def _config(self) -> str:
        keepalive, hold, retry = self.timers
        lines = [
            f"router id {self.router_id};",
            "protocol device {}",
            f'include "{self.rundir / "static.conf"}";',
        ]
        for la in self.links:
            Addr = ipaddress.IPv4Address | ipaddress.IPv6Address
            sessions: list[tuple[Addr, Addr, list[str]]]
            sessions = [(la.v4.ip, la.peer_v4, ["ipv4 { import all; export all; };"]),
                        (la.v6.ip, la.peer_v6, ["ipv6 { import all; export all; };"])]  # fmt: skip
            if self.ipv4_over_ipv6:
                sessions = [(la.v6.ip, la.peer_v6, [
                    "ipv4 { import all; export all; extended next hop on; };",
                    "ipv6 { import all; export all; };",
                ])]  # fmt: skip
            for local, peer, channels in sessions:
                lines += [
                    f"protocol bgp {_proto(peer)} {{",
                    f"  local {local} as {self.asn};",
                    f"  neighbor {peer} external;",
                    f"  hold time {hold}; keepalive time {keepalive};",
                    f"  connect retry time {retry};",
                    *(f"  {c}" for c in channels),
                    "}",
                ]
        return "\n".join(lines) + "\n"

    def _static(self) -> str:
        out = []
        for afi, version in (("ipv4", 4), ("ipv6", 6)):
            routes = sorted(p for p in self.announced if ipaddress.ip_network(p).version == version)
            body = " ".join(f"route {p} blackhole;" for p in routes)
            out.append(f"protocol static st_{afi} {{ {afi}; {body} }}")
        return "\n".join(out) + "\n"

    def start(self) -> None:
        self.rundir.mkdir(parents=True, exist_ok=True)
        (self.rundir / "static.conf").write_text(self._static())
        conf = self.rundir / "bird.conf"
        conf.write_text(self._config())
        run([BIRD, "-c", str(conf), "-s", str(self.socket), "-P", str(self.rundir / "bird.pid")],
            netns=self.netns)  # fmt: skip
        wait_for(self.socket.exists, timeout=10, what=f"{self.name}: bird's control socket")

    def birdc(self, *args: str) -> str:
        res = subprocess.run([BIRDC, "-s", str(self.socket), *args], capture_output=True,
                             text=True, check=False, timeout=60)  # fmt: skip
        if res.returncode != 0:
            raise LabError(f"{self.name}: birdc {' '.join(args)}: {res.stdout}{res.stderr}")
        return res.stdout

    def announce(self, prefixes: Iterable[str]) -> None:
        self.announced.update(str(ipaddress.ip_network(p)) for p in prefixes)
        self._reconfigure()

    def withdraw(self, prefixes: Iterable[str]) -> None:
        self.announced.difference_update(str(ipaddress.ip_network(p)) for p in prefixes)
        self._reconfigure()

    def _reconfigure(self) -> None:
        (self.rundir / "static.conf").write_text(self._static())
        out = self.birdc("configure")
        if "Reconfigured" not in out and "Reconfiguration in progress" not in out:
            raise LabError(f"{self.name}: birdc configure: {out.strip()}")

    def established(self, neighbor: str) -> bool:
        proto = _proto(ipaddress.ip_address(neighbor))
        return "Established" in self.birdc("show", "protocols", proto)

    def wait_established(self, neighbors: Iterable[str], timeout: float = 30.0) -> None:
        want = list(neighbors)
        wait_for(lambda: all(self.established(n) for n in want), timeout=timeout,
                 what=f"{self.name}: BGP Established with {want}")  # fmt: skip

    def routes_from(self, neighbor: str) -> set[str]:
        """The prefixes BIRD took from ``neighbor``."""
        proto = _proto(ipaddress.ip_address(neighbor))
        out = self.birdc("show", "route", "protocol", proto)
        found = set()
        for line in out.splitlines():
            word = line.split(maxsplit=1)[0] if line[:1].strip() else ""
            if "/" in word:
                try:
                    found.add(str(ipaddress.ip_network(word)))
                except ValueError:
                    continue
        return found
