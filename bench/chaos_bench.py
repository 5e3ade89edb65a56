"""bench/chaos: the chaos tier's scenarios with the full counts (tests/chaos runs them small).

- kill -9 of the agent in the middle of an import of N routes + E ECMP prefixes;
- kill -9 of zebra and bgpd with N + E, the ToR withdrawing W prefixes while FRR is down;
- NB's ovsdb-server stopped 10 s during churn (C prefixes moved, added, withdrawn per round).

Each reports the time from the end of the fault to NB = zebra, beside a baseline measured in
the same run (the same N + E loaded into NB from scratch by the running agent), and the
counts that must be 0: duplicate rows, rows of unchanged prefixes deleted and written again,
ECMP prefixes seen missing a leg they kept in BGP.

With ``--cluster``, NB and SB are 3-member RAFT clusters and the scenarios are the leader's
death instead: kill -9 of the NB leader in the middle of the import and during churn, and of
the SB leader while node1 announces a router whose gateway is there (tor1 must receive no
UPDATE meanwhile).

    sudo .venv/bin/python bench/chaos_bench.py [--routes 50000] [--ecmp 2000] [--withdrawn 1000]
                                               [--cluster]
"""

from __future__ import annotations

import argparse
import time

from ovn_frr.lab.chaos import Figures, chaos_lab, prefixes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--routes", type=int, default=50_000)
    ap.add_argument("--ecmp", type=int, default=2_000)
    ap.add_argument("--withdrawn", type=int, default=1_000)
    ap.add_argument("--churn", type=int, default=5_000)
    ap.add_argument("--cluster", action="store_true")
    args = ap.parse_args()
    n, e = args.routes, args.ecmp
    figures: list[Figures] = []
    with chaos_lab(members=3 if args.cluster else 1) as chaos:
        single, ecmp = prefixes(n), prefixes(e, start=n)
        started = time.monotonic()
        chaos.load(single, ecmp, timeout=900)
        baseline = time.monotonic() - started
        chaos.clear(single, ecmp, timeout=900)
        if args.cluster:
            figures.append(chaos.nb_leader_kill_import(n, e, timeout=900))
            figures.append(chaos.nb_leader_kill_churn(n, args.churn, timeout=900))
            figures.append(chaos.sb_leader_kill(timeout=300))
        else:
            figures.append(chaos.agent_kill(n, e, timeout=900))
            figures.append(chaos.frr_crash(n, e, args.withdrawn, timeout=900))
            figures.append(chaos.nb_outage(n, args.churn, outage_s=10, timeout=900))
    print(f"\nbaseline: {n} + {e} ECMP prefixes announced -> all in NB: {baseline:.1f} s\n")
    print(f"{'scenario':<34} {'converge s':>10} {'x base':>7} {'rows':>7} {'dupes':>6} "
          f"{'re-added':>8} {'ECMP gaps':>9}  notes")  # fmt: skip
    for f in figures:
        print(f"{f.scenario:<34} {f.converge_s:>10.1f} {f.converge_s / baseline:>7.2f} "
              f"{f.rows:>7} {f.duplicates:>6} {f.readded:>8} {f.ecmp_gaps:>9}  "
              f"{'; '.join(f.notes)}")  # fmt: skip
    if args.cluster:
        print(
            "(SB leader: converge = RAFT's election; re-added = UPDATEs tor1 received from "
            "node1 meanwhile; ECMP gaps = samples of tor1 missing a prefix)"
        )
    if not all(f.clean for f in figures):
        raise SystemExit("a scenario lost, doubled or flapped rows")


if __name__ == "__main__":
    main()
