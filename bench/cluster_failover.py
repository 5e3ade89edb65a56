"""bench/cluster_failover: how long the agent's writes stop when NB's RAFT leader dies.

NB and SB run as 3-member clusters in the lab; the agent imports continuous churn from tor1
(a set of prefixes announced and withdrawn in turn, so a write is always due). Each run kills
the NB leader with kill -9 and measures, from the kill:

- ``election``: until another member reports itself leader (``cluster/status``, polled every
  20 ms): RAFT's own floor, measured in the same run;
- ``agent write``: until ``ovsdb-client monitor`` on a surviving member sees the agent's next
  committed row change;

then starts the killed member again (it rejoins as a follower) before the next run.

    sudo .venv/bin/python bench/cluster_failover.py [--runs 7] [--routes 2000]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from ovn_frr.lab.chaos import chaos_lab, prefixes
from ovn_frr.lab.lab import Origin
from ovn_frr.lab.nbwatch import RouteMonitor
from ovn_frr.lab.ovn import OvnCentral
from ovn_frr.lab.proc import wait_for


def once(
    ovn: OvnCentral, old: str, mon: RouteMonitor, fresh: str, tor1: Origin
) -> tuple[float, float, float]:
    """Kill ``old`` (the leader); (election, agent's next write, ``fresh`` in NB) in seconds
    from the kill: ``fresh`` is announced by tor1 as soon as the election is seen, so its row
    is a write the agent planned after the failover (the next write may be one that was in
    flight at the kill, committed by the new leader)."""
    wait_for(lambda: mon.updates > 2, timeout=30, what="the agent writing")
    t0 = time.monotonic()
    ovn.stop_member(old, crash=True)

    def elected() -> float | None:
        return time.monotonic() if ovn.leader("nb") not in (None, old) else None

    election = wait_for(elected, timeout=30, interval=0.02, max_interval=0.02,
                        what="a new NB leader")  # fmt: skip
    # an update already on its way when the leader died is not the agent's next write:
    # count from 10 ms after the kill
    tor1.announce([fresh])
    seen = wait_for(lambda: mon.first_update_after(t0 + 0.01), timeout=60,
                    what="the agent's next write")  # fmt: skip
    landed = wait_for(lambda: mon.count(fresh) and mon.changed_at[fresh], timeout=60,
                      what=f"{fresh} in NB")  # fmt: skip
    return election - t0, seen - t0, landed - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--routes", type=int, default=2_000, help="stable routes under the churn")
    args = ap.parse_args()
    elections: list[float] = []
    writes: list[float] = []
    news: list[float] = []
    with chaos_lab(members=3) as chaos:
        ovn = chaos.lab.ovn
        assert ovn is not None
        chaos.load(prefixes(args.routes), [], timeout=300)
        flapping = prefixes(20, start=args.routes)
        tor1 = chaos.lab.announcer("tor1")
        stop = threading.Event()

        def churn() -> None:
            up = True
            while not stop.wait(0.1):
                (tor1.announce if up else tor1.withdraw)(flapping)
                up = not up

        churner = threading.Thread(target=churn, daemon=True)
        churner.start()
        try:
            for run in range(args.runs):
                old = ovn.leader("nb")
                assert old is not None
                watcher = next(m for m in ovn.names("nb") if m != old)
                fresh = prefixes(1, start=args.routes + 100 + run)[0]
                with RouteMonitor(f"unix:{ovn.rundir / watcher}.sock") as mon:
                    elected, seen, landed = once(ovn, old, mon, fresh, tor1)
                elections.append(elected)
                writes.append(seen)
                news.append(landed)
                print(f"run {run + 1}: killed {old}: election {elected:.2f} s, agent write "
                      f"{seen:.2f} s, new route {landed:.2f} s", flush=True)  # fmt: skip
                chaos._rejoin(old)
                time.sleep(2)
        finally:
            stop.set()
            churner.join()
    print(f"\n{'from kill -9 of the NB leader':<32} {'min':>6} {'median':>7} {'max':>6}")
    for name, xs in (("RAFT election (floor)", elections), ("agent's next write", writes),
                     ("route announced at election", news)):  # fmt: skip
        print(f"{name:<32} {min(xs):>6.2f} {statistics.median(xs):>7.2f} {max(xs):>6.2f}")
    for name, ys in (("agent write - election", writes), ("new route - election", news)):
        extra = [y - e for y, e in zip(ys, elections, strict=True)]
        print(f"{name:<32} {min(extra):>6.2f} {statistics.median(extra):>7.2f} "
              f"{max(extra):>6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
