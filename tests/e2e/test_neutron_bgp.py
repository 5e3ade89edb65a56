"""OpenStack Neutron 2026.1's OVN-native BGP, served by ovn-frr on this machine's OVN (issue 31).

Neutron's own code (neutron 29.0.0 from PyPI, ``scripts/neutron_topology.py``) builds its BGP
topology in the lab's NB (OVN 23.03's schema with the two columns it needs) and, the same way,
in OVN 26.03's NB beside it: ``bgp-lr-main`` (``connected-as-host,nat``, local-only,
``-vrf-id=42``) with a gateway port per chassis peered with that chassis' router
``bgp-lr-<chassis>`` (pinned, ``-vrf-id=10``, an unnumbered port with ``-port-name=br-bgp``), a
provider network, a tenant network with a VM on node1, a Neutron router with its gateway on
node1, a floating IP. The bindings are those the chassis' ovn-controllers would make.

node1's FRR peers with a BIRD ToR over one IPv6 session carrying IPv4 too (RFC 8950, as
Neutron's unnumbered design); the node config maps both of OVN's VRFs onto the default VRF
(``bgp.vrf_map``: this kernel has no VRF devices), and node1's OVS maps ``br-bgp`` to the ToR
link (``dynamic-routing-port-mapping``). What the ToR receives from node1 must be what OVN
26.03 itself would announce from node1; the ToR's routes are learned by ``bgp-lr-node1`` (its
IPv4 ones only where OVN routes IPv4 via IPv6 next hops, else one problem line); the floating
IP and the VM deleted by Neutron's code leave the ToR.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess, local_ovsdb
from ovn_frr.lab.native import NativeOvn, sid_root
from ovn_frr.lab.proc import run
from ovn_frr.lab.semantics import Differential
from ovn_frr.versions import Version

ROOT = Path(__file__).resolve().parents[2]
SPEC = LabSpec(
    nodes=(NodeSpec("node1"),),
    peers=(PeerSpec("tor1", 65001, daemon="bird"),),
    links=(LinkSpec("node1", "tor1"),),
    ipv4_over_ipv6=True,
    nb_bgp_columns=True,
)
TOR_V4, TOR_V6 = "203.0.113.0/24", "2001:db8:5::/48"
CHASSIS_ROUTER = "bgp-lr-node1"


@pytest.fixture(scope="module")
def neutron() -> str:
    """The python of a virtualenv with neutron 29.0.0 (built once, cached)."""
    if os.environ.get("OVN_FRR_STACK", "").startswith("debian-"):
        pytest.skip("Neutron's virtualenv is made on the host tier (OVN 23.03) only")
    res = subprocess.run(["bash", str(ROOT / "scripts" / "neutron-venv.sh")],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert res.returncode == 0, f"scripts/neutron-venv.sh: {res.stderr[-2000:]}"
    return res.stdout.strip().splitlines()[-1]


def neutron_topology(python: str, nb: str, *args: str) -> dict[str, Any]:
    res = subprocess.run(
        [python, str(ROOT / "scripts" / "neutron_topology.py"), "--nb", nb,
         "--chassis", "node1", "--chassis", "node2", "--json", "-", *args],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, f"neutron_topology.py {args}: {res.stderr[-3000:]}"
    summary: dict[str, Any] = json.loads(res.stdout)
    return summary


def test_neutron_bgp_topology_is_served_as_ovn_26_03_serves_it(neutron: str) -> None:
    with Lab(SPEC) as lab:
        assert lab.ovn is not None
        native = NativeOvn(sid_root(), lab.rundir / "native", lab.netns("ovn"))
        native.start()
        d = Differential(lab, native)
        built = neutron_topology(neutron, lab.ovn.nb)
        neutron_topology(neutron, native.nb)
        d.bind([(b["logical_port"], b["chassis"]) for b in built["expected_sb_bindings"]])
        params = built["params"]
        ovs = local_ovsdb(lab, "node1")
        ifname = lab.link("node1", "tor1").ifname
        run(["ovs-vsctl", f"--db={ovs}", "--no-wait", "set", "Open_vSwitch", ".",
             f'external_ids:dynamic-routing-port-mapping="br-bgp={ifname}"'])  # fmt: skip
        lab.announcer("tor1").announce([TOR_V4, TOR_V6])
        extra = (f'[ovs]\ndb = "{ovs}"\n\n'
                 '[bgp.vrf_map]\novnvrf42 = "default"\novnvrf10 = "default"\n')  # fmt: skip
        agent = AgentProcess.start(lab, "node1", extra)
        try:
            # what OVN 26.03 writes on node1, whatever its VRF (both are the default VRF here)
            want = {p for _vrf, p in d.native_answer("node1")}
            assert {f"{params['vm_ip']}/32", f"{params['fip']}/32",
                    f"{params['router_gw_ip']}/32"} <= want, want  # fmt: skip
            wait_for(lambda: lab.received("tor1", "node1") == want, timeout=60,
                     what=f"the ToR receiving what OVN 26.03 announces: {want}")  # fmt: skip
            # the ToR's routes, learned through the unnumbered port (IPv6 link-local next hop)
            port = f"bgp-lrp-{CHASSIS_ROUTER}-to-bgp-ls-node1-br-bgp"

            def learned() -> dict[str, set[tuple[str, str]]]:
                out: dict[str, set[tuple[str, str]]] = {}
                for prefix, hop, out_port in lab.ovn.owned_rows(CHASSIS_ROUTER, "node1"):  # type: ignore[union-attr]
                    out.setdefault(prefix, set()).add((hop, out_port))
                return out

            wait_for(lambda: TOR_V6 in learned(), timeout=60, what="the ToR's IPv6 route learned")
            ((hop, out_port),) = learned()[TOR_V6]
            assert hop.startswith("fe80:") and out_port == port
            ovn = lab.versions.ovn
            if ovn is not None and ovn >= Version(25, 3):
                wait_for(lambda: TOR_V4 in learned(), timeout=30,
                         what="the ToR's IPv4 route (via its IPv6 next hop) learned")  # fmt: skip
            else:
                line = (f"router {CHASSIS_ROUTER}: 1 IPv4 route(s) via IPv6 next hops not "
                        "imported")  # fmt: skip

                def reported() -> bool:
                    return any(p.startswith(line) for p in agent.status()["agent"]["problems"])

                wait_for(reported, timeout=30, what=f"the problem line {line!r}")
                assert TOR_V4 not in learned()
            # Neutron deletes the floating IP, then the VM
            neutron_topology(neutron, lab.ovn.nb, "--remove")
            neutron_topology(neutron, native.nb, "--remove")
            gone = {f"{params['vm_ip']}/32", f"{params['fip']}/32"}
            after = {p for _vrf, p in d.native_answer("node1")}
            assert not gone & after and f"{params['router_gw_ip']}/32" in after
            wait_for(lambda: lab.received("tor1", "node1") == after, timeout=60,
                     what=f"the FIP and the VM withdrawn at the ToR: {after}")  # fmt: skip
        except BaseException:
            sys.stderr.write(agent.output()[-6000:])
            raise
        finally:
            agent.stop()
            native.stop()
