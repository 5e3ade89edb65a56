"""bench/scale: what one agent costs, and what it is sent, as the cloud grows to C chassis.

For each C: the lab's NB/SB get C chassis in ovn-kubernetes' central-NB layout
(``ovn_frr.lab.scale``: a gateway router per chassis pinned to it, a node switch with P pods
bound on it, the cluster router announcing pods local-only); the agent runs for node1. Then
a stream of changes on *other* chassis (pods added, unbound, bound again, deleted: one
transaction each), and a few on node1 itself as a control. Reported per C, per 1000
foreign changes: what the agent received from NB and SB (bytes, row updates), its CPU and
its passes (reconciler steps) beyond its own pace (measured over 10 quiet seconds before:
periodic checks of FRR and OVN), its OVN reads, and its RSS; also what it received at
start. Target: flat in C (within 10% from C = 10 to C = 1000).

Then, at the largest C, ovsdb-server's CPU (NB + SB) per change with N other agents connected
(their OVN readers, one process each, each for its own chassis): changes that concern none of
them, and changes that each concern one; beside N readers monitoring as ovn-frr did before
conditional monitors (every port binding and every NB row). ovn-northd is paused meanwhile:
its own writes to SB for each NB change would otherwise be most of the figure. Target: the
cost per change follows the agents it concerns, not N.

    sudo .venv/bin/python bench/scale.py [--chassis 10,100,1000] [--pods 10] [--changes 1000]
                                         [--agents 0,10,50]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.proc import read_pid, run
from ovn_frr.lab.scale import Changes, ScaleTopology, chassis_names, cpu_s, rss_mb

SPEC = LabSpec(nodes=(NodeSpec("node1"),), peers=(PeerSpec("tor1", 65001),),
               links=(LinkSpec("node1", "tor1"),))  # fmt: skip


@dataclass
class Reading:
    nb_bytes: int
    nb_updates: int
    sb_bytes: int
    sb_updates: int
    cpu_s: float
    passes: int
    ovn_reads: int
    rss_mb: float

    @classmethod
    def of(cls, agent: AgentProcess) -> Reading:
        s = agent.status()
        ovn = s["ovn"]
        reads = next(r["runs"] for r in s["reconcilers"] if r["name"] == "ovn")
        return cls(ovn["nb"]["received_bytes"], ovn["nb"]["updates"], ovn["sb"]["received_bytes"],
                   ovn["sb"]["updates"], cpu_s(agent.proc.pid), s["agent"]["passes"], reads,
                   rss_mb(agent.proc.pid))  # fmt: skip


def settled(agent: AgentProcess, lab: Lab, topo: ScaleTopology) -> bool:
    """node1's pods at tor1 and the agent's OVN state settled."""
    want = {f"10.128.0.{p + 2}/32" for p in range(topo.pods)}
    s = agent.status()
    return want <= set(lab.frr["tor1"].bgp_prefixes()) and not s["ovn"].get("settling")


def per_c(c: int, pods: int, changes: int, agents: list[int]) -> tuple[dict[str, Any], list[Any]]:
    with Lab(SPEC) as lab:
        assert lab.ovn is not None
        topo = ScaleTopology(lab.ovn, chassis_names(c), pods)
        t0 = time.monotonic()
        topo.build()
        built = time.monotonic() - t0
        agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1"))
        try:
            lab.frr["tor1"].wait_established([str(lab.link("tor1", "node1").peer_v4)], 60)
            wait_for(lambda: settled(agent, lab, topo), timeout=600, interval=0.5,
                     what="node1's pods announced")  # fmt: skip
            time.sleep(2)
            # the agent's own pace (periodic checks of FRR and OVN): over a quiet while
            quiet = Reading.of(agent)
            time.sleep(10)
            start = Reading.of(agent)
            idle_cpu, idle_passes = (
                (start.cpu_s - quiet.cpu_s) / 10,
                (start.passes - quiet.passes) / 10,
            )
            stream = Changes(topo)
            others = topo.chassis[1:]
            t1 = time.monotonic()
            stream.run(others, changes)
            lab.ovn.nbctl("--wait=sb", "sync")
            time.sleep(3)
            after = Reading.of(agent)
            window = time.monotonic() - t1
            stream.run(["node1"], 40)  # the control: these concern node1
            lab.ovn.nbctl("--wait=sb", "sync")
            time.sleep(3)
            local = Reading.of(agent)
            servers = server_cost(lab, topo, stream, agents, changes) if agents else []
            stream.close()
        finally:
            agent.stop()
    k = 1000 / changes
    row = {
        "C": c, "build_s": built,
        "start_kb": (start.nb_bytes + start.sb_bytes) / 1024,
        "rss_mb": after.rss_mb,
        "nb_kb": (after.nb_bytes - start.nb_bytes) / 1024 * k,
        "nb_upd": (after.nb_updates - start.nb_updates) * k,
        "sb_kb": (after.sb_bytes - start.sb_bytes) / 1024 * k,
        "sb_upd": (after.sb_updates - start.sb_updates) * k,
        "window_s": window,
        "cpu_s": (after.cpu_s - start.cpu_s - idle_cpu * window) * k,
        "passes": (after.passes - start.passes - idle_passes * window) * k,
        "reads": (after.ovn_reads - start.ovn_reads) * k,
        "local_reads": local.ovn_reads - after.ovn_reads,
    }  # fmt: skip
    return row, servers


def server_cost(
    lab: Lab, topo: ScaleTopology, stream: Changes, agents: list[int], changes: int
) -> list[Any]:
    """ovsdb-server CPU (NB + SB) per change, with N other agents' readers connected."""
    assert lab.ovn is not None
    pids = [pid for n in ("nb", "sb") if (pid := read_pid(lab.ovn.rundir / f"{n}.pid"))]
    ctl = str(lab.ovn.rundir / "northd.ctl")

    def northd(command: str) -> None:
        run(["ovn-appctl", "-t", ctl, command])

    out = []
    modes = [(n, False) for n in agents] + [(max(agents), True)]
    for n, monitor_all in modes:
        watched = topo.chassis[1 : n + 1]
        argv = [
            "ip",
            "netns",
            "exec",
            lab.ovn.netns,
            sys.executable,
            "-m",
            "ovn_frr.lab.scale",
            lab.ovn.nb,
            lab.ovn.sb,
        ]
        mode = "all" if monitor_all else "cond"
        probes = [subprocess.Popen([*argv, ch, mode], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                  for ch in watched]  # fmt: skip
        try:
            for p in probes:
                assert p.stdout is not None
                if p.stdout.readline().strip() != "ready":  # synced and settled
                    raise SystemExit(f"a probe for {mode} monitors did not start")
            time.sleep(2)
            row: list[Any] = [n, "all rows" if monitor_all else "conditional"]
            unwatched = topo.chassis[n + 1 :]
            for targets in (unwatched, watched or unwatched):
                # ovn-northd paused: its own SB writes for each NB change stay out
                northd("pause")
                sent = received(probes)
                before = sum(cpu_s(pid) for pid in pids)
                stream.run(targets, changes)
                time.sleep(2)
                row.append((sum(cpu_s(pid) for pid in pids) - before) / changes * 1000)
                row.append((received(probes) - sent) / changes / 1024)
                northd("resume")
                lab.ovn.nbctl("--wait=sb", "sync")
            out.append(row)
            print(f"  N={n} {row[1]}: {row[2]:.2f} / {row[4]:.2f} ms per change, "
                  f"{row[3]:.2f} / {row[5]:.2f} KB sent to the agents", flush=True)  # fmt: skip
        finally:
            for p in probes:
                p.kill()
                p.wait()
    return out


def received(probes: list[subprocess.Popen[str]]) -> int:
    """Bytes the probes received from NB and SB so far."""
    total = 0
    for p in probes:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write("\n")
        p.stdin.flush()
        total += int(p.stdout.readline().split()[0])
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chassis", default="10,100,1000")
    ap.add_argument("--pods", type=int, default=10)
    ap.add_argument("--changes", type=int, default=1000)
    ap.add_argument("--agents", default="0,10,50")
    args = ap.parse_args()
    cs = [int(x) for x in args.chassis.split(",")]
    agents = [int(x) for x in args.agents.split(",")] if args.agents else []
    rows = []
    servers: list[Any] = []
    for c in cs:
        print(f"C={c}: building NB/SB ({c} chassis, {c * args.pods} pods) ...", flush=True)
        row, srv = per_c(c, args.pods, args.changes, agents if c == max(cs) else [])
        rows.append(row)
        servers = srv or servers
        print(f"  {row}", flush=True)
    print(f"\nper 1000 changes on other chassis ({args.pods} pods per chassis):")
    print(f"{'C':>6} {'start KB':>9} {'RSS MB':>7} {'NB KB':>6} {'NB upd':>7} {'SB KB':>6} "
          f"{'SB upd':>7} {'CPU s':>6} {'passes':>7} {'OVN reads':>9} {'window s':>8} "
          f"{'control':>8}")  # fmt: skip
    for r in rows:
        print(f"{r['C']:>6} {r['start_kb']:>9.0f} {r['rss_mb']:>7.1f} {r['nb_kb']:>6.1f} "
              f"{r['nb_upd']:>7.0f} {r['sb_kb']:>6.1f} {r['sb_upd']:>7.0f} {r['cpu_s']:>6.2f} "
              f"{r['passes']:>7.0f} {r['reads']:>9.0f} {r['window_s']:>8.1f} "
              f"{r['local_reads']:>8}")  # fmt: skip
    print("(control: OVN reads after 40 changes on node1 itself)")
    if servers:
        print(
            f"\nper change at C={max(cs)}, N other agents connected (ovn-northd paused): "
            "ovsdb-server CPU (NB + SB), and what it sent to the N agents"
        )
        print(f"{'N agents':>8} {'monitors':>12} {'none: CPU ms':>13} {'KB sent':>8} "
              f"{'one: CPU ms':>12} {'KB sent':>8}")  # fmt: skip
        for n, mode, none, none_kb, one, one_kb in servers:
            print(f"{n:>8} {mode:>12} {none:>13.2f} {none_kb:>8.2f} {one:>12.2f} {one_kb:>8.2f}")
        print("(none: changes on chassis none of them serves; one: each on the chassis of one)")


if __name__ == "__main__":
    main()
