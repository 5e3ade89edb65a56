"""bench/failover: a ToR dies; how fast its routes leave OVN, against FRR's own detection.

node1 (BGP rendered by the agent, BFD profile 100 ms x 3 toward both ToRs, BGP hold 30 s) learns
one prefix from tor1 and tor2 (ECMP: two rows in OVN). Each run cuts the link to tor2 without
carrier loss and measures, from the cut:
- FRR's own detection: until zebra's update for the prefix reaches node1's kernel (``ip monitor``;
  zebra's dataplane hands the same update to the kernel and to FPM in one pass);
- end to end: until OVN NB holds only tor1's row (``ovsdb-client monitor``).
Then restores the link and waits for ECMP again. Reported: min/median/max over ``--runs``
(default 10). Target: median end to end < 500 ms.

    sudo .venv/bin/python bench/failover_bench.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess
from ovn_frr.lab.nbtopo import openshift_node
from ovn_frr.lab.nbwatch import RouteMonitor

SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001), PeerSpec("tor2", 65002)),
    links=(LinkSpec("node1", "tor1"), LinkSpec("node1", "tor2")),
    bgp_timers=(10, 30),
    bfd=(100, 3),
)
CONFIG = (
    "".join(
        f'[[bgp.neighbors]]\naddress = "10.255.{i}.2"\nremote_as = {65001 + i}\nkeepalive = 10\n'
        f'hold = 30\nbfd_profile = "fast"\n'
        for i in (0, 1)
    )
    + "[bfd.profiles.fast]\nreceive_interval_ms = 100\ntransmit_interval_ms = 100\n"
)
PREFIX = "203.0.113.0/24"
TOR1, TOR2 = "10.255.0.2", "10.255.1.2"


class KernelEvents:
    """Times of ``ip monitor route`` lines in a namespace that mention ``needle``."""

    def __init__(self, netns: str, needle: str) -> None:
        self.needle = needle
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(["ip", "-n", netns, "monitor", "route"],
                                      stdout=subprocess.PIPE, text=True)  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if self.needle in line:
                with self._lock:
                    self.times.append(time.monotonic())

    def first_after(self, t0: float) -> float | None:
        with self._lock:
            return next((t for t in self.times if t >= t0), None)

    def close(self) -> None:
        self._proc.terminate()
        self._proc.wait()


def bfd_up(lab: Lab) -> bool:
    """Both sessions Established and bgpd (not only bfdd) sees their BFD up. BFD comes up
    before BGP, and flaps once when the BGP session establishes (bgpd registers it again with
    the session's source address): a cut before BFD is up again is caught by the hold timer."""
    neighbors = lab.frr["node1"].show("show bgp neighbors json")
    ready = [n.get("bgpState") == "Established" and n.get("peerBfdInfo", {}).get("status") == "Up"
             for n in neighbors.values()]  # fmt: skip
    return ready.count(True) == 2


def main() -> None:
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    frr: list[float] = []
    e2e: list[float] = []
    with Lab(SPEC) as lab:
        assert lab.ovn is not None
        openshift_node(lab)
        agent = AgentProcess.start(lab, "node1", CONFIG)
        kernel = KernelEvents(lab.netns("node1"), PREFIX.split("/", maxsplit=1)[0])
        try:
            for tor in ("tor1", "tor2"):
                lab.announcer(tor).announce([PREFIX])
            # before the first complete FPM replay since start the agent deletes nothing
            # (adoption after a restart: import.replay_hold_ms, 15 s by default)
            wait_for(lambda: "fpm_replay_complete" in agent.output(), timeout=60,
                     what="the agent's first FPM replay complete")  # fmt: skip
            with RouteMonitor(lab.ovn.nb) as mon:
                for run in range(args.runs):
                    wait_for(lambda: mon.nexthops(PREFIX) == {TOR1, TOR2}, timeout=60,
                             what="ECMP rows")  # fmt: skip
                    wait_for(lambda: bfd_up(lab), timeout=60, what="BFD up")
                    time.sleep(0.5)  # settle: no update of the previous run still in flight
                    t0 = time.monotonic()
                    lab.cut("node1", "tor2")
                    wait_for(lambda: mon.nexthops(PREFIX) == {TOR1}, timeout=30,
                             what="tor2's row gone", interval=0.005)  # fmt: skip
                    t_nb = mon.changed_at[PREFIX]
                    t_k = wait_for(lambda t0=t0: kernel.first_after(t0), timeout=5,  # type: ignore[misc]
                                   what="zebra's update in the kernel")  # fmt: skip
                    lab.restore("node1", "tor2")
                    frr.append(t_k - t0)
                    e2e.append(t_nb - t0)
                    print(f"run {run + 1}: FRR {frr[-1] * 1e3:.0f} ms, OVN {e2e[-1] * 1e3:.0f} ms",
                          file=sys.stderr, flush=True)  # fmt: skip
        finally:
            kernel.close()
            agent.stop()

    def ms(values: list[float], f: Callable[[list[float]], float]) -> int:
        return round(f(values) * 1000)

    result = {
        "runs": args.runs,
        "frr_detect_min_ms": ms(frr, min), "frr_detect_median_ms": ms(frr, statistics.median),
        "frr_detect_max_ms": ms(frr, max),
        "ovn_min_ms": ms(e2e, min), "ovn_median_ms": ms(e2e, statistics.median),
        "ovn_max_ms": ms(e2e, max),
        "median_above_frr_ms": round((statistics.median(e2e) - statistics.median(frr)) * 1000),
    }  # fmt: skip
    print("| " + " | ".join(result) + " |\n|" + "---|" * len(result))
    print("| " + " | ".join(str(v) for v in result.values()) + " |")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
