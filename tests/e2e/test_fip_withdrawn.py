"""A deleted floating IP leaves the ToR, also when it is deleted in a new session's first
second (issue 27; a BIRD ToR, as reported).

FRR < 10.3's bgpd does not withdraw a route from a peer whose update subgroup is still
coalescing (1 s after the session came up) if a route-map update announced it early, and
FRR 8.4 holds a neighbor the agent configured until that route-map update is due: the FIP went
out in the window, its removal never did (bgpd's adj-out kept it, the running config and the
BGP table had lost it). ovn-frr gives its instances ``coalesce-time 0`` on such an FRR. The
"wide" case has node1's FRR configured with a 3 s window before the agent starts (as an
operator may have left it): without the fix it fails every time, the default 1 s window about
one time in four.
"""

from __future__ import annotations

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, neighbors_config
from ovn_frr.lab.nbtopo import openstack_router
from ovn_frr.versions import Version

SPEC = LabSpec(
    nodes=(NodeSpec("node1", bgp=False),),
    peers=(PeerSpec("tor1", 65001, daemon="bird"),),
    links=(LinkSpec("node1", "tor1"),),
)
TOR_PREFIXES = ["203.0.113.0/24", "198.51.100.0/24"]


@pytest.mark.parametrize("window", ["default", "wide"])
def test_a_deleted_floating_ip_leaves_the_tor_in_a_new_sessions_first_second(window: str) -> None:
    with Lab(SPEC) as lab:
        ovn = lab.ovn
        assert ovn is not None
        nb, sb = ovn.nbctl, ovn.sbctl
        # the provider network is the ToR's link: its routes are imported through the gateway
        topo = openstack_router(lab, ("node1",), gateway_ip="10.255.0.10/24")
        sb("chassis-add", "node1", "geneve", "127.0.0.1")
        cr = f"cr-{topo.gateway_port}"
        wait_for(lambda: cr in sb("--bare", "--columns=logical_port", "list", "Port_Binding"),
                 timeout=30, what="northd made the chassisredirect binding")  # fmt: skip
        sb("lsp-bind", cr, "node1")
        nb("set", "Logical_Router", topo.router, "options:dynamic-routing=true",
           "options:dynamic-routing-redistribute=connected,nat,lb")  # fmt: skip
        if window == "wide":
            lab.frr["node1"].apply("router bgp 64512\n coalesce-time 3000\nexit\n")
        lab.announcer("tor1").announce(TOR_PREFIXES)
        agent = AgentProcess.start(lab, "node1", neighbors_config(lab, "node1", 1, 3))
        try:
            fip, kept = "172.24.4.103", "172.24.4.101"  # centralized; distributed, vm0 here
            sb("lsp-bind", "vm0-port", "node1")
            wait_for(lambda: {r[0] for r in ovn.owned_rows(topo.router, "node1")}
                     >= set(TOR_PREFIXES), timeout=60, interval=0.005,
                     what="the ToR's routes imported")  # fmt: skip
            wait_for(lambda: f"{fip}/32" in lab.received("tor1", "node1"), timeout=60,
                     interval=0.005, what="the FIP at the ToR")  # fmt: skip
            nb("lr-nat-del", topo.router, "dnat_and_snat", fip)

            def withdrawn() -> bool:
                # at the ToR, and in what node1's bgpd holds as sent to it (where it stuck)
                sent = (
                    lab.frr["node1"]
                    .show("show bgp ipv4 unicast neighbors 10.255.0.2 advertised-routes json")
                    .get("advertisedRoutes", {})
                )
                at_tor = lab.received("tor1", "node1")
                return (
                    f"{fip}/32" not in at_tor
                    and f"{fip}/32" not in sent
                    and (f"{kept}/32" in at_tor)
                )

            wait_for(withdrawn, timeout=20, what="the deleted FIP withdrawn")
            old = lab.versions.frr is not None and lab.versions.frr < Version(10, 3)
            config = lab.frr["node1"].vtysh.running_config()
            assert ("coalesce-time 0" in config) == old, "coalesce-time 0 only where needed"
        finally:
            agent.stop()
