"""bench/advertise: how fast OVN's intent reaches a peer, against FRR's own delay.

Part 1, latency (``--changes``, default 200): one NB change at a time (a floating-IP-style NAT
added to GR_node1, which redistributes ``nat``) and, interleaved, the same kind of change made
by hand in FRR (a ``network`` statement with ovn-frr's origin route-map): FRR's own delay,
once as one ``vtysh -f`` (what an operator or a tool that drives vtysh pays) and once over
bgpd's vty socket (the way ovn-frr sends such a change: the floor). Each sample runs from
issuing the change to the prefix appearing in tor1's kernel table (tor1's zebra installs what
BGP selected; ``ip monitor route`` timestamps it), so every path includes BGP's own
propagation. Reported: p50/p99 of each, and ovn-frr's mean and p99 over each floor.

Part 2, bulk (``--bulk``, default 10k): the agent is stopped; ovn-frr's applier adds N
``network`` lines and withdraws them (the same code the agent runs), then ``frr-reload.py``
applies the same two changes (the running configs captured after ovn-frr's add and withdraw).
Reported: the times and the ratio frr-reload / ovn-frr per direction (target >= 50 on
withdrawal). frr-reload.py withdraws one vtysh call per line: 10k lines take minutes.

    sudo .venv/bin/python bench/advertise_bench.py [--changes 200] [--bulk 10000]
"""

from __future__ import annotations

import argparse
import ipaddress
import itertools
import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ovn_frr import config
from ovn_frr.config.convert import frr_settings
from ovn_frr.core.frr_model import desired_frr
from ovn_frr.frr.apply import FrrApplier
from ovn_frr.frr.render import render
from ovn_frr.frr.vty import VtySession
from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec
from ovn_frr.lab.agent import AgentProcess, agent_config, neighbors_config
from ovn_frr.lab.kernelwatch import KernelRoutes
from ovn_frr.lab.nbtopo import openshift_node

SPEC = LabSpec(nodes=(NodeSpec("node1", bgp=False),), peers=(PeerSpec("tor1", 65001),),
               links=(LinkSpec("node1", "tor1"),))  # fmt: skip
FRR_RELOAD = Path("/usr/lib/frr/frr-reload.py")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(lab: Lab, gr: str, changes: int) -> dict[str, float]:
    assert lab.ovn is not None
    node1 = lab.frr["node1"]
    lab.ovn.nbctl("set", "Logical_Router", gr, "options:dynamic-routing-redistribute=nat")
    # FRR's own delay: a `network` an operator adds, exported like ovn-frr's (the same large
    # community) through a route-map of its own (lines with ovn-frr's route-map are ovn-frr's:
    # the agent would take them away again)
    node1.apply("route-map bench-origin permit 10\n set large-community 64512:4242:1 additive\n"
                "exit\n")  # fmt: skip
    watch = KernelRoutes(lab.netns("tor1"))
    ovn: list[float] = []
    frr: list[float] = []
    direct: list[float] = []
    hosts = ipaddress.ip_network("198.18.0.0/16").hosts()
    # FRR's own delay twice: a batch through vtysh (a process per change, ~50 ms of its own
    # here), and the same line over bgpd's vty socket, which ovn-frr uses: the floor
    bgpd = VtySession(str(node1.rundir / "bgpd.vty"))

    def by_hand(ip: str, socket: bool) -> None:
        lines = [
            "router bgp 64512",
            " address-family ipv4 unicast",
            f"  network {ip}/32 route-map bench-origin",
            " exit-address-family",
            "exit",
        ]
        if socket:
            assert all(r.ok for r in bgpd.run(["configure", *lines, "end"]))
        else:
            node1.apply("\n".join(lines) + "\n")

    try:
        # one unmeasured round first: BGP's first update to a peer after the session came up
        # waits for its update group to form (~1 s in FRR), for every path alike
        for i in range(changes + 1):
            samples = (ovn, frr, direct) if i else ([], [], [])
            ip = str(next(hosts))
            t0 = time.monotonic()
            lab.ovn.nbctl("--id=@n", "create", "NAT", "type=dnat_and_snat",
                          f"external_ip={ip}", "logical_ip=10.244.1.5", "--",
                          "add", "Logical_Router", gr, "nat", "@n")  # fmt: skip
            samples[0].append(watch.wait(ip + " ", t0) - t0)
            for sample, socket in ((samples[1], False), (samples[2], True)):
                ip = str(next(hosts))
                t0 = time.monotonic()
                by_hand(ip, socket)
                sample.append(watch.wait(ip + " ", t0) - t0)
    finally:
        watch.close()
        bgpd.close()
    ms = 1000

    def over(floor: list[float]) -> dict[str, float]:
        return {"mean": round(statistics.mean(a - b for a, b in zip(ovn, floor, strict=True)) * ms),
                "p99": round((pct(ovn, 0.99) - pct(floor, 0.99)) * ms)}  # fmt: skip

    return {
        "changes": changes,
        "ovn_frr_p50_ms": round(pct(ovn, 0.5) * ms), "ovn_frr_p99_ms": round(pct(ovn, 0.99) * ms),
        "frr_own_p50_ms": round(pct(frr, 0.5) * ms), "frr_own_p99_ms": round(pct(frr, 0.99) * ms),
        "p99_above_frr_ms": over(frr)["p99"], "mean_diff_ms": over(frr)["mean"],
        "frr_socket_p50_ms": round(pct(direct, 0.5) * ms),
        "frr_socket_p99_ms": round(pct(direct, 0.99) * ms),
        "p99_above_socket_ms": over(direct)["p99"], "mean_above_socket_ms": over(direct)["mean"],
    }  # fmt: skip


def frr_reload(lab: Lab, target: str) -> float:
    rundir = lab.frr["node1"].rundir
    confdir = lab.rundir / "frr-reload"  # its own vtysh.conf, none of the daemons' files
    confdir.mkdir(exist_ok=True)
    (confdir / "vtysh.conf").write_text("service integrated-vtysh-config\n")
    path = confdir / "target.conf"
    # `show running-config` starts with two lines that are not config
    path.write_text(
        "".join(
            line + "\n"
            for line in target.splitlines()
            if not line.startswith(("Building configuration", "Current config"))
        )
    )
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, str(FRR_RELOAD), "--reload", "--stdout",
                          "--log-level", "error", "--vty_socket", str(rundir), "--confdir",
                          str(confdir), "--rundir", str(confdir), str(path)],
                         check=False, capture_output=True, text=True)  # fmt: skip
    took = time.monotonic() - t0
    if res.returncode:
        raise RuntimeError(f"frr-reload.py failed ({res.returncode}): {res.stdout}{res.stderr}")
    return took


def bulk(lab: Lab, cfg_text: str, n: int) -> dict[str, float]:
    node1 = lab.frr["node1"]
    cfg = config.parse(cfg_text)
    pool = ipaddress.ip_network("100.64.0.0/10").subnets(new_prefix=28)
    nets: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = list(itertools.islice(pool, n))
    applier = FrrApplier(node1.vtysh)
    base = render(desired_frr(frr_settings(cfg), {}))
    full = render(desired_frr(frr_settings(cfg), {"": nets}))
    assert not applier.check(base).rejected
    # as the agent does for a change of the announcements: planned from what FRR matched at
    # the last check, one vtysh -f (the next periodic check reads the running config)
    t0 = time.monotonic()
    assert not applier.check(full, read=False).rejected
    ours_add = time.monotonic() - t0
    assert applier.check(full).sent == 0  # FRR has exactly that
    with_n = node1.vtysh.running_config()
    t0 = time.monotonic()
    assert not applier.check(base, read=False).rejected
    ours_del = time.monotonic() - t0
    assert applier.check(base).sent == 0
    without_n = node1.vtysh.running_config()
    theirs_add = frr_reload(lab, with_n)
    # networks left by the latency part (its NATs and hand-made lines) are in both configs
    base_count = without_n.count("\n  network ")
    added = node1.vtysh.running_config().count("\n  network ") - base_count
    print(f"frr-reload.py added {added} of {n} in {theirs_add:.1f} s", file=sys.stderr)
    theirs_del = frr_reload(lab, without_n)
    left = node1.vtysh.running_config().count("\n  network ") - base_count
    print(f"frr-reload.py withdrew {added - left} in {theirs_del:.1f} s", file=sys.stderr)
    return {
        "prefixes": n,
        "ovn_frr_add_s": round(ours_add, 2), "frr_reload_add_s": round(theirs_add, 2),
        "add_ratio": round(theirs_add / ours_add, 1),
        "ovn_frr_withdraw_s": round(ours_del, 2), "frr_reload_withdraw_s": round(theirs_del, 2),
        "withdraw_ratio": round(theirs_del / ours_del, 1),
        # what one frr-reload.py run left undone (it is not always one-shot at this size)
        "frr_reload_missed_add": n - added, "frr_reload_missed_withdraw": left,
    }  # fmt: skip


def table(result: dict[str, float]) -> str:
    return "| " + " | ".join(result) + " |\n|" + "---|" * len(result) + "\n| " + " | ".join(
        str(v) for v in result.values()) + " |"  # fmt: skip


def main() -> None:
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--bulk", type=int, default=10_000)
    args = parser.parse_args()
    results = {}
    with Lab(SPEC) as lab:
        topo = openshift_node(lab)
        neighbor = neighbors_config(lab, "node1")
        agent = AgentProcess.start(lab, "node1", neighbor)
        try:
            lab.frr["tor1"].wait_established(["10.255.0.1"], timeout=60)
            if args.changes:
                results["latency"] = latency(lab, topo.gr, args.changes)
                print(table(results["latency"]), flush=True)
        finally:
            agent.stop()
        if args.bulk:
            results["bulk"] = bulk(lab, agent_config(lab, "node1", extra=neighbor), args.bulk)
            print(table(results["bulk"]), flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
