"""zebra started without -K keeps routes of an earlier bgpd after an unclean FRR restart
(docs/frr.md): the agent finds them (internalFlags, ZEBRA_FLAG_SELFROUTE) and says so. FRR 10.7's
zebra sweeps them: nothing stays, nothing is reported."""

from __future__ import annotations

import ipaddress
import itertools
import re

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess
from ovn_frr.lab.proc import run
from ovn_frr.versions import Version

# 20k: zebra 8.4/10.3 sweeps at once and keeps most of what it loads after (17k here)
N = 20_000
SPEC = LabSpec(
    nodes=(NodeSpec("node1", zebra_sweep_s=None),),  # Debian's default: no -K
    peers=(PeerSpec("tor1", 65001),),
    links=(LinkSpec("node1", "tor1"),),
)


def test_routes_an_unclean_restart_left_in_zebra_are_reported() -> None:
    prefixes = [str(s) for s in itertools.islice(
        ipaddress.ip_network("198.18.0.0/15").subnets(new_prefix=31), N)]  # fmt: skip
    with Lab(SPEC) as lab:
        node = lab.frr["node1"]
        agent = AgentProcess.start(lab, "node1", "[import]\nstale_check_s = 2\n")
        try:
            lab.wait_bgp_up()
            lab.announcer("tor1").announce(prefixes)
            wait_for(lambda: len(node.rib()) >= N, timeout=120, what="the routes in zebra")
            assert agent.status()["fpm"]["stale_self_routes"] == 0
            wanted = set(prefixes)

            def in_kernel() -> int:
                out = run(["ip", "-4", "route", "show", "proto", "bgp"], netns=lab.netns("node1"))
                return sum(1 for line in out.splitlines() if line.split()[0] in wanted)

            checks = agent.output().count("zebra_stale_routes count=0")
            node.stop(crash=True)
            assert in_kernel() > N // 2  # the kernel keeps them
            lab.announcer("tor1").withdraw(prefixes)  # while FRR is down
            node.start_again()

            def reported() -> int:
                return int(agent.status()["fpm"]["stale_self_routes"])

            if lab.versions.frr is not None and lab.versions.frr >= Version(10, 7):
                # FRR 10.7's zebra sweeps what it read back once it has loaded it all
                # (docs/frr.md): nothing stays, nothing is reported
                lab.wait_bgp_up()
                wait_for(lambda: in_kernel() == 0 and not wanted & set(node.rib()), timeout=180,
                         what="the withdrawn routes swept from zebra and the kernel")  # fmt: skip
                # the stale check after the new zebra's replay ran and found none
                wait_for(lambda: agent.output().count("zebra_stale_routes count=0") > checks,
                         timeout=60, what="the stale check after the restart")  # fmt: skip
                assert reported() == 0
                return
            count = wait_for(reported, timeout=120, what="the stale routes reported")
            assert 0 < count <= N
            status = agent.status()
            problems = status["agent"]["problems"]
            assert any("earlier bgpd" in p for p in problems), problems
            assert set(status["fpm"]["stale_self_routes_sample"]) <= set(prefixes)
            assert re.search(r"zebra_stale_routes count=[1-9]", agent.output())
        finally:
            agent.stop()
