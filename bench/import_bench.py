"""bench/import: how fast routes a peer announces reach OVN, against FRR's own floor.

For each N: tor1 announces N prefixes at once; we time (from the announce) until node1's zebra
has all N (FRR's own cost, the floor: ``show ip route summary json``) and until OVN NB has all N
routes (its routers' ``static_routes``, streamed by ``ovsdb-client monitor-cond``: the
cheapest observer, see ``StaticRouteCount``), then the same for the withdrawal. The ratio
NB/zebra is the figure of merit (target <= 1.3 at 100k); absolute times are noise.

    sudo .venv/bin/python bench/import_bench.py 10000 100000

``--vrf``: each N twice, in the default VRF and then in VRF red (node1's link to tor1 in a
kernel VRF, the router ``GR_red`` with ``dynamic-routing-vrf-name=red``: the agent imports from
red's table), the zebra time taken in the same VRF. It needs a kernel with VRFs: with ``--uml``
the whole bench runs inside the kernel tier's User-Mode Linux guest (one CPU, system calls
slower than on the host: compare ratios, not times, and only within one run).

    sudo .venv/bin/python bench/import_bench.py --uml --vrf 1000 10000

``--native`` (with ``--vrf``, OVN >= 25.03.2: the sid root's 26.03): each N a third time, with
OVN's own import: ``GR_red`` also has ``dynamic-routing-vrf-id`` = red's table and node1 runs
ovn-controller, so OVN learns red's table itself (SB ``Learned_Route``) and ovn-frr is only its
host side (docs/native-routing.md); timed until SB holds all N, beside the same zebra floor.

    sudo bash scripts/root.sh sid /opt/ovn-frr-venv/bin/python bench/import_bench.py \
        --uml --vrf --native 1000 10000
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import os
import signal
import sys
import time
from pathlib import Path

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.nbtopo import openshift_node, vrf_lite_node
from ovn_frr.lab.nbwatch import LearnedRouteCount, StaticRouteCount
from ovn_frr.lab.proc import read_pid
from ovn_frr.lab.uml import run as uml_run

SPEC = LabSpec(nodes=(NodeSpec("node1"),), peers=(PeerSpec("tor1", 65001),),
               links=(LinkSpec("node1", "tor1"),))  # fmt: skip
#: node1's BGP rendered by the agent, in VRF red (the router's VRF)
VRF_SPEC = LabSpec(nodes=(NodeSpec("node1", bgp=False),), peers=(PeerSpec("tor1", 65001),),
                   links=(LinkSpec("node1", "tor1", vrf="red"),))  # fmt: skip
#: the same with ovn-controller on node1 (OVN's own route exchange: --native)
NATIVE_SPEC = LabSpec(nodes=(NodeSpec("node1", bgp=False, chassis=True),),
                      peers=(PeerSpec("tor1", 65001),),
                      links=(LinkSpec("node1", "tor1", vrf="red"),))  # fmt: skip
ROOT = Path(__file__).resolve().parents[1]


def prefixes(n: int) -> list[str]:
    """n distinct IPv4 prefixes outside everything the lab and the NB topology use."""
    nets = itertools.chain(
        ipaddress.ip_network("198.18.0.0/15").subnets(new_prefix=29),
        ipaddress.ip_network("100.128.0.0/9").subnets(new_prefix=29),
    )
    return [str(p) for p in itertools.islice(nets, n)]


def zebra_bgp_routes(lab: Lab, vrf: str = "") -> int:
    data = lab.frr["node1"].show(f"show ip route {f'vrf {vrf} ' if vrf else ''}summary json")
    return sum(
        r.get("fib", 0) for r in data.get("routes", []) if r.get("type") in ("bgp", "ebgp", "ibgp")
    )


def cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a process so far."""
    if pid is None:
        return float("nan")
    return _stat_cpu(Path(f"/proc/{pid}/stat").read_text())


def _stat_cpu(stat: str) -> float:
    """User + system CPU seconds from the text of /proc/PID/stat."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int, field: str = "VmHWM") -> float:
    """Peak (VmHWM) or current (VmRSS) resident memory of a process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_by_comm() -> dict[str, float]:
    """CPU seconds so far of every process on the machine, summed by command name."""
    out: dict[str, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        out[comm] = out.get(comm, 0.0) + _stat_cpu(text)
    return out


#: the longest zebra poll (one vtysh call) of the run: the resolution of the zebra times (in
#: the UML guest a call takes seconds, and NB is then often seen complete in the same poll)
POLL = {"max_s": 0.0}


def timed(cond_zebra: object, cond_nb: object, timeout: float) -> tuple[float, float]:
    t0 = time.monotonic()
    t_zebra = t_nb = None
    while t_zebra is None or t_nb is None:
        now = time.monotonic() - t0
        if now > timeout:
            raise TimeoutError(f"zebra={t_zebra} nb={t_nb} after {timeout}s")
        if t_nb is None and cond_nb():  # type: ignore[operator]
            t_nb = time.monotonic() - t0
        if t_zebra is None:
            t1 = time.monotonic()
            if cond_zebra():  # type: ignore[operator]
                t_zebra = time.monotonic() - t0
            POLL["max_s"] = max(POLL["max_s"], time.monotonic() - t1)
        if t_nb is None and cond_nb():  # type: ignore[operator]
            t_nb = time.monotonic() - t0
        time.sleep(0.05)
    return t_zebra, t_nb


def run(n: int, vrf: str = "", native: bool = False) -> dict[str, float | str]:
    POLL["max_s"] = 0.0
    with Lab(NATIVE_SPEC if native else VRF_SPEC if vrf else SPEC) as lab:
        assert lab.ovn is not None
        fast = "[import]\nreplay_hold_ms = 2000\n"
        if vrf:
            vrf_lite_node(lab)  # GR_red: no static routes of its own
            if native:  # OVN's own exchange through red's table: OVN imports
                table = lab.spec.vrf_table(vrf)
                lab.ovn.nbctl("set", "Logical_Router", "GR_red",
                              f"options:dynamic-routing-vrf-id={table}")  # fmt: skip
            agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1") + fast)
            others = 0
        else:
            openshift_node(lab)  # GR_node1 and ovn_cluster_router: two static routes
            agent = AgentProcess.start(lab, "node1", fast)
            others = 2
        try:
            la = lab.link("tor1", "node1", vrf)
            lab.frr["tor1"].wait_established([str(la.peer_v4)], timeout=120, vrf=vrf)
            wait_for(lambda: "fpm_replay_complete" in agent.output(), timeout=60, what="sync")
            ps = prefixes(n)
            nb_pid = read_pid(lab.ovn.rundir / "nb.pid")
            northd_pid = read_pid(lab.ovn.rundir / "northd.pid")
            count = LearnedRouteCount(lab.ovn.sb) if native else StaticRouteCount(lab.ovn.nb)
            with count as mon:
                all0 = cpu_by_comm()
                c0 = cpu_s(nb_pid), cpu_s(northd_pid), cpu_s(agent.proc.pid)
                t0 = time.monotonic()
                lab.announcer("tor1", vrf).announce(ps)
                announce_cmd = time.monotonic() - t0
                tz, tn = timed(lambda: zebra_bgp_routes(lab, vrf) >= n,
                               lambda: mon.total() >= n + others,
                               timeout=max(300, n / 100))  # fmt: skip
                tz, tn = tz + announce_cmd, tn + announce_cmd
                c1 = cpu_s(nb_pid), cpu_s(northd_pid), cpu_s(agent.proc.pid)
                spent = {k: v - all0.get(k, 0.0) for k, v in cpu_by_comm().items()}
                top = sorted(spent.items(), key=lambda kv: -kv[1])[:8]
                print(f"n={n}: add-phase CPU s by process:",
                      ", ".join(f"{k} {v:.1f}" for k, v in top), file=sys.stderr)  # fmt: skip
                rss_loaded = rss_mb(agent.proc.pid, "VmRSS")
                t1 = time.monotonic()
                lab.announcer("tor1", vrf).withdraw(ps)
                withdraw_cmd = time.monotonic() - t1
                wz, wn = timed(lambda: zebra_bgp_routes(lab, vrf) == 0,
                               lambda: mon.total() <= others,
                               timeout=max(300, n / 100))  # fmt: skip
                wz, wn = wz + withdraw_cmd, wn + withdraw_cmd
            rss = rss_mb(agent.proc.pid)
            passes = [line for line in agent.output().splitlines()
                      if "ovn_routes_written" in line and "added=0 " not in line]  # fmt: skip
            print(f"n={n}: {len(passes)} write passes", *passes[-14:], sep="\n  ", file=sys.stderr)
        finally:
            agent.stop()
    return {
        "n": n,
        "vrf": vrf or "default",
        # whose import: ovn-frr's (NB static routes) or OVN's own (SB Learned_Route)
        "import": "ovn" if native else "ovn-frr",
        "zebra_add_s": round(tz, 2),
        "nb_add_s": round(tn, 2),
        "add_ratio": round(tn / tz, 2),
        "zebra_withdraw_s": round(wz, 2),
        "nb_withdraw_s": round(wn, 2),
        "withdraw_ratio": round(wn / wz, 2),
        "zebra_poll_max_s": round(POLL["max_s"], 2),
        "agent_peak_rss_mb": round(rss, 1),
        "agent_rss_with_n_mb": round(rss_loaded, 1),
        # CPU seconds spent during the add phase: where the time beyond FRR's floor goes
        "add_cpu_nb_server_s": round(c1[0] - c0[0], 1),
        "add_cpu_northd_s": round(c1[1] - c0[1], 1),
        "add_cpu_agent_s": round(c1[2] - c0[2], 1),
    }


def main() -> None:
    # SIGTERM would end Python without running the lab's teardown (`with Lab`)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    args = sys.argv[1:]
    if "--uml" in args:
        in_guest([a for a in args if a != "--uml"])
        return
    runs = [("", False), ("red", False)] if "--vrf" in args else [("", False)]
    if "--native" in args:
        runs.append(("red", True))
    sizes = [int(x) for x in args if x.isdigit()] or [10_000]
    results = [run(n, vrf, native) for n in sizes for vrf, native in runs]
    cols = list(results[0])
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in results:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    print(json.dumps(results))


def in_guest(args: list[str]) -> None:
    """The bench inside the kernel tier's guest (a kernel with VRFs); its output here."""
    sizes = [int(x) for x in args if x.isdigit()] or [10_000]
    result = uml_run([sys.executable, "bench/import_bench.py", *args], cwd=ROOT,
                     timeout=600 + sum(sizes) / 20, mem="3G")  # fmt: skip
    print(result.output, end="")
    if not result.ok:
        print(result.explain(), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
