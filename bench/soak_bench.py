"""bench/soak: the NB churn soak at full length (tests/chaos/test_soak.py runs 400 operations).

Random, seeded NB changes of every kind the intent reads, ToR route churn, agent restarts
(SIGTERM and kill -9, each at least once) and FRR restarts, with a quiet point after every few
operations where FRR's announcements per VRF, tor1's routes from node1 and NB's owned static
routes must equal what ovn_frr.lab.oracle computes from NB (docs/intent.md). Prints the
operations tried, the quiet points checked, the mismatches (each with its seed, to replay),
the time to agreement and the agent's resident set over the run (the same process: the
median of the last third of its quiet points over the first third).

    sudo .venv/bin/python bench/soak_bench.py [--minutes 30] [--seed N] [--frr-restarts 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from ovn_frr.lab.soak import Soak, soak_lab


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--frr-restarts", type=int, default=3)
    ap.add_argument("--details", default="", help="write each mismatch's details (JSON) here")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)

    def save(soak: Soak) -> None:
        if args.details:
            with open(args.details, "w") as f:
                json.dump(soak.fig.details, f, indent=1, default=str)

    with soak_lab(seed, frr_restarts=args.frr_restarts, on_mismatch=save) as soak:
        fig = soak.run(duration_s=args.minutes * 60)
    summary = fig.summary()
    print(json.dumps(summary, indent=1))
    # the agent's RSS at each quiet point of its longest-lived process, in tenths of the run
    pids = [pid for pid, _kb in fig.rss]
    longest = max(set(pids), key=pids.count) if pids else None
    series = [kb for pid, kb in fig.rss if pid == longest]
    if series:
        step = max(1, len(series) // 10)
        print("agent RSS (kB) over its longest-lived process:", series[::step])
    for m in fig.mismatches:
        print("MISMATCH", m)
    sys.exit(1 if fig.mismatches else 0)


if __name__ == "__main__":
    main()
