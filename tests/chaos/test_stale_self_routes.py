"""zebra started without -K keeps routes of an earlier bgpd after an unclean FRR restart
(docs/frr.md): the agent finds them (internalFlags, ZEBRA_FLAG_SELFROUTE) and says so."""

from __future__ import annotations

import ipaddress
import itertools

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess

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
            node.stop(crash=True)  # the kernel keeps them
            lab.announcer("tor1").withdraw(prefixes)  # while FRR is down
            node.start_again()

            def reported() -> int:
                return int(agent.status()["fpm"]["stale_self_routes"])

            count = wait_for(reported, timeout=120, what="the stale routes reported")
            assert 0 < count <= N
            status = agent.status()
            problems = status["agent"]["problems"]
            assert any("earlier bgpd" in p for p in problems), problems
            assert set(status["fpm"]["stale_self_routes_sample"]) <= set(prefixes)
            assert "zebra_stale_routes" in agent.output()
        finally:
            agent.stop()
