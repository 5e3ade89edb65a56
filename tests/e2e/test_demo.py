"""The README's demo, run non-interactively: routes flow both ways, then everything is gone."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

from ovn_frr.lab.proc import netns_list


def test_demo_check_both_directions_and_teardown() -> None:
    name = f"dm{uuid.uuid4().hex[:6]}"
    res = subprocess.run(
        [sys.executable, "-m", "ovn_frr", "demo", "--name", name, "--check", "--timeout", "120"],
        capture_output=True, text=True, timeout=400, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["converged"]
    # OVN -> ToRs: the EgressIP, the node's SNAT IP and the pod network, at both ToRs
    assert "172.20.0.10/32" in summary["ovn_to_tors"]
    assert all(sorted(tors) == ["tor1", "tor2"] for tors in summary["ovn_to_tors"].values())
    # ToRs -> OVN: each ToR's prefixes on GR_node1, ECMP for the one both announce
    assert sorted(summary["tors_to_ovn"]["203.0.113.0/24"]) == ["10.255.0.2", "10.255.1.2"]
    assert summary["tors_to_ovn"]["198.51.100.0/24"] == ["10.255.0.2"]
    # the EVPN switch: vm1 (OVN, node1) and host1 (behind vtep1) know each other's VTEP, and ping
    # (ovn-frr's own data path before OVN 25.09, OVN's own with ovn-frr as its host side after)
    ev = summary["evpn"]
    assert (ev["vm1_at_vtep1"], ev["host1_at_node1"]) == ("10.255.2.1", "10.255.2.2")
    assert ev["ping_vm1_host1"]
    assert not [ns for ns in netns_list() if ns.startswith(name)]


def test_demo_on_ovn_kubernetes_nb_in_local_gateway_mode() -> None:
    """``--topology ovn-kubernetes``: no dynamic-routing option, the node config's
    ``[ovn_kubernetes]`` section; every network's pods and the EgressIP at both ToRs (one
    uplink), the ToRs' routes on GR_node1 (ECMP where both announce)."""
    name = f"dk{uuid.uuid4().hex[:6]}"
    res = subprocess.run(
        [sys.executable, "-m", "ovn_frr", "demo", "--name", name, "--check", "--timeout", "120",
         "--topology", "ovn-kubernetes", "--gateway-mode", "local"],
        capture_output=True, text=True, timeout=400, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["converged"]
    assert summary["ovn_to_tors"] == {
        p: ["tor1", "tor2"]
        for p in ("10.100.1.0/24", "10.200.0.0/16", "10.244.1.0/24", "172.20.0.10/32")
    }
    assert sorted(summary["tors_to_ovn"]["203.0.113.0/24"]) == ["10.255.0.2", "10.255.0.3"]
    assert not [ns for ns in netns_list() if ns.startswith(name)]
