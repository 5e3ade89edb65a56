"""Versions of the external systems, and the capabilities that differ between them.

Parsing is pure; :func:`detect` runs the binaries through an injected runner.
Debian 12 carries FRR 8.4 / OVN 23.03 / OVS 3.1, Debian 13 FRR 10.x / OVN 25.x / OVS 3.5.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

Runner = Callable[[Sequence[str]], str]


@dataclass(frozen=True, slots=True, order=True)
class Version:
    major: int
    minor: int
    patch: int = 0
    #: As the program printed it ("23.03.1"); not compared.
    text: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.text or f"{self.major}.{self.minor}.{self.patch}"

    @classmethod
    def parse(cls, text: str) -> Version:
        m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
        if m is None:
            raise ValueError(f"no version number in {text!r}")
        return cls(int(m[1]), int(m[2]), int(m[3] or 0), m[0])


_FRR_RE = re.compile(r"zebra version (\S+)|FRRouting (\S+)")
_OVN_RE = re.compile(r"ovn-\S+ (\d+\.\d+\.\d+)")
_OVS_RE = re.compile(r"Open vSwitch\) (\d+\.\d+\.\d+)")


def parse_frr(text: str) -> Version:
    """From ``zebra --version`` or vtysh's ``show version``."""
    m = _FRR_RE.search(text)
    if m is None:
        raise ValueError(f"not FRR version output: {text[:80]!r}")
    return Version.parse(m[1] or m[2])


def parse_ovn(text: str) -> Version:
    """From ``ovn-northd --version`` (or any ovn-* tool)."""
    m = _OVN_RE.search(text)
    if m is None:
        raise ValueError(f"not OVN version output: {text[:80]!r}")
    return Version.parse(m[1])


def parse_ovs(text: str) -> Version:
    m = _OVS_RE.search(text)
    if m is None:
        raise ValueError(f"not Open vSwitch version output: {text[:80]!r}")
    return Version.parse(m[1])


@dataclass(frozen=True, slots=True)
class Versions:
    frr: Version | None
    ovn: Version | None
    ovs: Version | None

    # Capabilities that change between the supported releases.
    @property
    def frr_has_mgmtd(self) -> bool:
        """FRR 9+ fronts staticd (10.x: more daemons) configuration with mgmtd."""
        return self.frr is not None and self.frr >= Version(9, 0)

    @property
    def frr_fpm_route_replace(self) -> bool:
        """FRR 9.1+ sends RTM_NEWROUTE with NLM_F_REPLACE instead of DEL+NEW."""
        return self.frr is not None and self.frr >= Version(9, 1)

    @property
    def frr_withdraws_while_coalescing(self) -> bool:
        """bgpd withdraws a route from a peer whose update subgroup is still coalescing (FRR
        >= 10.3, commit 92c92ae7c6). Before, a ``network`` removed in that window, after a
        route-map update had announced it early, was never withdrawn from that peer; unknown
        (no FRR found): taken as not."""
        return self.frr is not None and self.frr >= Version(10, 3)

    @property
    def ovn_mixed_family_routes(self) -> bool:
        """OVN 25.03+ routes IPv4 prefixes via IPv6 next hops (RFC 5549 / unnumbered BGP; ovn-northd
        commit 559924291, first in v25.03.0)."""
        return self.ovn is not None and self.ovn >= Version(25, 3)

    @property
    def ovn_native_evpn(self) -> bool:
        """OVN 25.09+ acts on a switch's dynamic-routing-vni itself (ovn-controller)."""
        return self.ovn is not None and self.ovn >= Version(25, 9)

    @property
    def ovn_vrf_id(self) -> bool:
        """OVN reads a router's dynamic-routing-vrf-id (25.03.2, 25.09.1, 26.03 on)."""
        v = self.ovn
        if v is None:
            return False
        if v >= Version(26, 3):
            return True
        if v >= Version(25, 9):
            return v >= Version(25, 9, 1)
        return v >= Version(25, 3, 2)

    @property
    def ovn_evpn_names_required(self) -> bool:
        """OVN 26.03+ reads an EVPN switch's device names from its dynamic-routing-*-ifname
        options only (25.09 hard-codes br-N, vxlan-N, lo-N; ``controller/neighbor.c``)."""
        return self.ovn is not None and self.ovn >= Version(26, 3)

    @property
    def ovn_native_dynamic_routing(self) -> bool:
        """OVN 25.03+ understands the dynamic-routing options itself."""
        return self.ovn is not None and self.ovn >= Version(25, 3)


def _run(argv: Sequence[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=10).stdout


FRR_ZEBRA = "/usr/lib/frr/zebra"


def detect(run: Runner = _run) -> Versions:
    """Ask the installed binaries; a missing binary gives None for that system."""

    def ask(argv: list[str], parse: Callable[[str], Version]) -> Version | None:
        if shutil.which(argv[0]) is None:
            return None
        try:
            return parse(run(argv))
        except (OSError, ValueError, subprocess.SubprocessError):
            return None

    return Versions(
        frr=ask([FRR_ZEBRA, "--version"], parse_frr),
        # a chassis may carry only ovn-host (ovn-controller), central only ovn-northd
        ovn=ask(["ovn-northd", "--version"], parse_ovn)
        or ask(["ovn-controller", "--version"], parse_ovn)
        or ask(["ovn-nbctl", "--version"], parse_ovn),
        ovs=ask(["ovsdb-server", "--version"], parse_ovs),
    )
