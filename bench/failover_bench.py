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
import sys
import time
from collections.abc import Callable
from dataclasses import replace

from ovn_frr.lab import Lab, NodeSpec, demo_spec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.kernelwatch import KernelRoutes
from ovn_frr.lab.nbtopo import openshift_node
from ovn_frr.lab.nbwatch import RouteMonitor

#: node1 (BGP rendered by the agent) and two ToRs; BGP hold 30 s: only BFD can be this fast
SPEC = replace(demo_spec(), nodes=(NodeSpec("node1", bgp=False),), bgp_timers=(10, 30),
               bfd=(100, 3))  # fmt: skip
PREFIX = "203.0.113.0/24"
TOR1, TOR2 = "10.255.0.2", "10.255.1.2"


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
        agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1", 10, 30, 100))
        kernel = KernelRoutes(lab.netns("node1"))
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
                    wait_for(lambda: lab.frr["node1"].bfd_protected([TOR1, TOR2]), timeout=60,
                             what="BFD up, as bgpd sees it")  # fmt: skip
                    time.sleep(0.5)  # settle: no update of the previous run still in flight
                    t0 = time.monotonic()
                    lab.cut("node1", "tor2")
                    wait_for(lambda: mon.nexthops(PREFIX) == {TOR1}, timeout=30,
                             what="tor2's row gone", interval=0.005)  # fmt: skip
                    t_nb = mon.changed_at[PREFIX]
                    t_k = kernel.wait(PREFIX, after=t0, timeout=5)
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
