"""Capture zebra's FPM stream from a lab into test fixtures (tests/fixtures/fpm/*.bin).

Run as root: ``.venv/bin/python scripts/capture_fpm.py tests/fixtures/fpm``. Each fixture is
the raw byte stream of one FPM connection while tor1 and tor2 announce the same IPv4 and IPv6
prefixes (ECMP on node1), then tor2 withdraws them, then tor1 withdraws one more. Written once
with next-hop groups (zebra's default) and once with ``no fpm use-next-hop-groups``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.fpm_listener import FpmListener

V4 = ["198.51.100.0/24", "203.0.113.128/25"]
V6 = ["2001:db8:100::/48"]


def capture(out: Path, nhg: bool) -> None:
    spec = LabSpec(
        nodes=(NodeSpec("node1"),),
        peers=(PeerSpec("tor1", 65001), PeerSpec("tor2", 65002)),
        links=(LinkSpec("node1", "tor1"), LinkSpec("node1", "tor2")),
        ovn=False,
    )
    with Lab(spec) as lab, FpmListener(lab.netns("node1")) as fpm:
        node = lab.frr["node1"]
        if not nhg:
            node.apply("no fpm use-next-hop-groups\n")
        lab.wait_bgp_up()
        wait_for(lambda: fpm.connections > 0 and fpm.raw, timeout=30, what="FPM connection")
        for tor in ("tor1", "tor2"):
            lab.announcer(tor).announce(V4 + V6)

        def ecmp() -> bool:
            r = node.rib().get(V4[0]) or []
            return len(r) > 0 and len(r[0]["nexthops"]) == 2

        wait_for(ecmp, timeout=20, what="ECMP in zebra")
        wait_for(lambda: set(V4 + V6) <= fpm.prefixes(), timeout=20, what="FPM adds")
        time.sleep(0.5)  # let zebra flush the coalesced ECMP updates (capture only, not a test)
        lab.announcer("tor2").withdraw(V4 + V6)
        wait_for(lambda: len(node.rib()[V4[0]][0]["nexthops"]) == 1, timeout=20, what="1 path")
        lab.announcer("tor1").withdraw([V4[1]])
        wait_for(lambda: V4[1] not in fpm.prefixes(), timeout=20, what="FPM delete")
        time.sleep(0.5)
        out.write_bytes(bytes(fpm.raw))
        print(f"{out}: {len(fpm.raw)} bytes, {len(fpm.routes)} route messages")


def main() -> None:
    outdir = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/fpm")
    outdir.mkdir(parents=True, exist_ok=True)
    capture(outdir / "ecmp-nhg.bin", nhg=True)
    capture(outdir / "ecmp-inline.bin", nhg=False)


if __name__ == "__main__":
    main()
