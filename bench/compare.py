"""bench/compare: the advertise and import benches for two revisions, interleaved, in one run.

A regression shows only beside its baseline measured on the same machine at the same time
(this 2-core machine's figures move with its load). Each revision gets a clone of its own
(``/var/tmp/ovn-frr-compare/<commit>``) and a virtualenv made by its own ``scripts/setup.sh``;
then the rounds alternate A, B, A, B... so that a slow minute hits both. Printed per revision:
advertise (``bench/advertise_bench.py --changes C --bulk 0``) mean and p99 over FRR's own
delay, the median of those over the rounds; import (``bench/import_bench.py N``) the median
add ratio NB/zebra and the peak RSS; and B's figures over A's.

    sudo .venv/bin/python bench/compare.py A B [--rounds 5] [--changes 100] [--import-n 100000]
                                               [--big 1000000] [--big-rounds 1]

A and B are anything ``git rev-parse`` takes in this checkout (``HEAD`` is the working tree as
committed). ``--import-n 0`` / ``--changes 0`` skip a bench; ``--big N`` adds import rounds at N
(peak RSS is what matters there).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
WORK = Path("/var/tmp/ovn-frr-compare")


def sh(*argv: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    res = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {res.returncode}\n{res.stdout}{res.stderr}")
    return res.stdout


def checkout(rev: str) -> tuple[str, Path]:
    """A clone at ``rev`` with its own virtualenv (made once, kept for later runs)."""
    commit = sh("git", "rev-parse", rev, cwd=HERE).strip()
    tree = WORK / commit[:12]
    if not (tree / ".venv" / "bin" / "python").exists():
        WORK.mkdir(parents=True, exist_ok=True)
        if not tree.exists():
            sh("git", "clone", "-q", str(HERE), str(tree))
        sh("git", "checkout", "-q", commit, cwd=tree)
        print(f"compare: setting up {commit[:12]} in {tree}", file=sys.stderr, flush=True)
        sh(
            "bash",
            "scripts/setup.sh",
            cwd=tree,
            env={**os.environ, "OVN_FRR_VENV": str(tree / ".venv")},
        )
    return commit[:12], tree


def bench(tree: Path, script: str, *args: str) -> Any:
    """Run one bench of ``tree`` with its virtualenv; its last output line is JSON."""
    out = sh(str(tree / ".venv" / "bin" / "python"), f"bench/{script}", *args, cwd=tree)
    return json.loads(out.strip().splitlines()[-1])


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--import-n", type=int, default=100_000)
    ap.add_argument("--big", type=int, default=0)
    ap.add_argument("--big-rounds", type=int, default=1)
    args = ap.parse_args()
    revs = [checkout(args.a), checkout(args.b)]
    got: dict[str, dict[str, list[float]]] = {c: {} for c, _ in revs}

    def add(commit: str, key: str, value: float) -> None:
        got[commit].setdefault(key, []).append(value)

    for r in range(args.rounds):
        for commit, tree in revs if r % 2 == 0 else revs[::-1]:
            if args.changes:
                lat = bench(tree, "advertise_bench.py", "--changes", str(args.changes),
                            "--bulk", "0")["latency"]  # fmt: skip
                add(commit, "advertise mean over FRR's own (ms)", lat["mean_diff_ms"])
                add(commit, "advertise p99 over FRR's own (ms)", lat["p99_above_frr_ms"])
                add(commit, "advertise p50 (ms)", lat["ovn_frr_p50_ms"])
                add(commit, "FRR's own p50 (ms)", lat["frr_own_p50_ms"])
                if "mean_above_socket_ms" in lat:  # benches since the socket floor
                    add(commit, "advertise mean over FRR's socket floor (ms)",
                        lat["mean_above_socket_ms"])  # fmt: skip
                    add(commit, "advertise p99 over FRR's socket floor (ms)",
                        lat["p99_above_socket_ms"])  # fmt: skip
            if args.import_n:
                (imp,) = bench(tree, "import_bench.py", str(args.import_n))
                add(commit, f"import {args.import_n}: NB/zebra add", imp["add_ratio"])
                add(commit, f"import {args.import_n}: NB/zebra withdraw", imp["withdraw_ratio"])
                add(commit, f"import {args.import_n}: agent peak RSS (MB)",
                    imp["agent_peak_rss_mb"])  # fmt: skip
            last = {k: v[-1] for k, v in got[commit].items()}
            print(f"compare: round {r + 1} {commit}: {json.dumps(last)}", file=sys.stderr,
                  flush=True)  # fmt: skip
    for r in range(args.big_rounds if args.big else 0):
        for commit, tree in revs if r % 2 == 0 else revs[::-1]:
            (imp,) = bench(tree, "import_bench.py", str(args.big))
            add(commit, f"import {args.big}: NB/zebra add", imp["add_ratio"])
            add(commit, f"import {args.big}: agent peak RSS (MB)", imp["agent_peak_rss_mb"])
    (a, _), (b, _) = revs
    print(f"| median of {args.rounds} rounds | {a} | {b} | {b} / {a} |")
    print("|---|---|---|---|")
    for key in dict.fromkeys([*got[a], *got[b]]):
        ma, mb = median(got[a].get(key, [])), median(got[b].get(key, []))
        ratio = round(mb / ma, 2) if ma and not math.isnan(ma) else float("nan")
        print(f"| {key} | {ma} | {mb} | {ratio} |")
    print(json.dumps({"a": a, "b": b, "rounds": got}))


if __name__ == "__main__":
    main()
