"""bench/rib_churn: the agent's RIB under next-hop churn with a constant route count.

R routes (default 10k), each an ECMP group of two next hops, then C next-hop changes (default
1M): each change gives one route a new group with new ids (as zebra allocates them) and frees
the old ids: decoded FPM messages fed to the RIB reducer (the decoder keeps no state).
Reports the process RSS once the routes are in, after one change of each (the baseline: the
allocator's free lists are filled) and after every 20% of the churn, as a ratio to the
baseline. Target: flat, i.e. the RSS at the end within 10% of the RSS after the first 20%
(before issue 11 the reducer kept every old id's users: 960 MB after 1M changes, 29x).

    .venv/bin/python bench/rib_churn_bench.py [--routes 10000] [--changes 1000000]
"""

from __future__ import annotations

import argparse
import gc
import ipaddress
import os
import time

from ovn_frr.fpm import NexthopMessage, RouteMessage
from ovn_frr.fpm.rib import Rib


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--routes", type=int, default=10_000)
    ap.add_argument("--changes", type=int, default=1_000_000)
    args = ap.parse_args()
    rib = Rib()
    gw0 = ipaddress.ip_address("10.255.0.2")
    gws = [ipaddress.ip_address(f"10.255.{i}.2") for i in range(200)]
    prefixes = [str(ipaddress.ip_network((0x0A000000 + (i << 8), 24))) for i in range(args.routes)]
    ids = iter(range(1, 1 << 31))
    current: dict[int, tuple[int, int, int]] = {}

    def change(i: int, now: float) -> None:
        a, b, g = next(ids), next(ids), next(ids)
        msgs: list[NexthopMessage | RouteMessage] = [
            NexthopMessage(True, a, gw0, 2), NexthopMessage(True, b, gws[i % 200], 3),
            NexthopMessage(True, g, group=((a, 1), (b, 1))),
            RouteMessage(True, False, prefixes[i], 254, 186, "unicast", (), g, 20),
        ]  # fmt: skip
        old = current.get(i)
        current[i] = (a, b, g)
        if old is not None:  # zebra frees what no route uses
            msgs += [NexthopMessage(False, x) for x in old]
        rib.apply(msgs, now)

    for i in range(args.routes):
        change(i, 0.0)
    rib.snapshot()
    gc.collect()
    print(f"routes {len(rib)}: RSS {rss_mb():.1f} MB")
    for i in range(args.routes):  # warm-up: every route changed once (free lists filled)
        change(i, 0.0)
    rib.snapshot()
    gc.collect()
    base = rss_mb()
    print(f"each route changed once: RSS {base:.1f} MB (baseline)")
    started = time.monotonic()
    step = max(1, args.changes // 5)
    first = 0.0
    for n in range(1, args.changes + 1):
        change(n % args.routes, float(n))
        if n % 50_000 == 0:
            rib.snapshot()
        if n % step == 0:
            gc.collect()
            first = first or rss_mb()
            first = first or rss_mb()
            print(
                f"after {n:>9} changes: RSS {rss_mb():.1f} MB = {rss_mb() / base:.3f} x baseline"
                f" ({n / (time.monotonic() - started):.0f} changes/s)"
            )
    assert len(rib) == args.routes
    end = rss_mb()
    verdict = "flat" if end <= first * 1.10 else "GROWING"
    print(f"end / first 20%: {end / first:.3f} ({verdict}; target <= 1.10)")


if __name__ == "__main__":
    main()
