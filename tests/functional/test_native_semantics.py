"""ovn-frr means what OVN means: its announcements against OVN 26.03's own, for the same NB.

OVN 26.03.1's ovn-northd (the Debian sid root, ``scripts/root.sh sid``) is given the same
ovn-nbctl commands as the lab's OVN (this machine's, 23.03 here); the same ports are bound to
the same chassis in both SBs. Per chassis, ovn-frr's answer (its reader with this chassis'
monitors, its advertise core) must equal the Advertised_Route rows ovn-controller 26.03 would
write there (``ovn_frr.lab.native``), but for the differences docs/intent.md keeps (a default
route, a source route: counted, with their reason). The soak's oracle is held to the same.
Seeded random NBs (``ovn_frr.lab.nbgen``) and the fixed shapes the other tests use.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator

import pytest

from ovn_frr.lab.nbgen import random_case
from ovn_frr.lab.nbtopo import openshift_node, openstack_router
from ovn_frr.lab.semantics import Differential, differential_lab
from ovn_frr.versions import Version, detect

VERSIONS = detect()
pytestmark = [
    pytest.mark.root,
    # the lab's own OVN only makes the port bindings here, but an ovn-northd that acts on the
    # options itself and predates 26.03 can wedge: OVN 25.03.0's inserts one NAT's
    # Advertised_Route twice on these NBs, every SB commit then fails (a constraint
    # violation, "OVNSB commit failed, force recompute" in a loop) and no binding comes
    pytest.mark.skipif(
        VERSIONS.ovn is not None and Version(25, 3) <= VERSIONS.ovn < Version(26, 3),
        reason=f"OVN {VERSIONS.ovn}'s ovn-northd wedges on duplicate Advertised_Route rows "
        "for these NBs (the differential runs where the lab's OVN is 23.03 or 26.03+)",
    ),
]

#: seeded random NBs: batches of cases sharing one NB (each case has its own addresses)
BATCHES = 4
CASES = 50


@pytest.fixture(scope="module")
def diff() -> Iterator[Differential]:
    with differential_lab() as d:
        yield d


def _report(d: Differential) -> tuple[dict[str, list[str]], collections.Counter[str]]:
    bad, kept = d.report()
    return {ch: [f"{x.only}: {x.route}" for x in xs] for ch, xs in bad.items()}, kept


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_nbs(diff: Differential, batch: int) -> None:
    diff.clear()
    diff.load([random_case(1000 + batch, i) for i in range(1, CASES + 1)])
    bad, kept = _report(diff)
    assert bad == {"node1": [], "node2": []}, f"seed {1000 + batch}: {bad}"
    print(f"batch {batch}: kept differences {dict(kept)}")


RD, LO = "dynamic-routing-redistribute", "dynamic-routing-redistribute-local-only"
OPTIONS = (
    {RD: "connected"},
    {RD: "connected-as-host,nat,lb,static"},
    {RD: "connected,nat,lb", LO: "true"},
    {RD: "connected-as-host,nat", LO: "true", "dynamic-routing-vrf-id": "42"},
)  # fmt: skip


def _set(d: Differential, router: str, options: dict[str, str]) -> None:
    d.nbctl("set", "Logical_Router", router, "options:dynamic-routing=true",
            *(f'options:{k}="{v}"' for k, v in options.items()))  # fmt: skip


@pytest.mark.parametrize("options", OPTIONS)
def test_openshift_nodes(diff: Differential, options: dict[str, str]) -> None:
    """ovn-kubernetes' gateway routers of two nodes on the shared join switch (each the
    other's neighbour), with the cluster router (distributed: announced by no chassis)."""
    diff.clear()
    n1 = openshift_node(diff.lab, "node1", nbctl=diff.nbctl)
    n2 = openshift_node(diff.lab, "node2", "10.244.2.0/24", egress_ip="172.20.0.11",
                        nbctl=diff.nbctl)  # fmt: skip
    for gr in (n1.gr, n2.gr, "ovn_cluster_router"):
        _set(diff, gr, options)
    diff.nbctl("lb-add", "svc", "10.96.0.10:80", "10.244.1.5:8080", "tcp")
    diff.nbctl("lr-lb-add", n1.gr, "svc")
    diff.nbctl("ls-lb-add", "node1", "svc")
    diff.bind([(p, "node1") for p in n1.pods] + [(p, "node2") for p in n2.pods])
    bad, _kept = _report(diff)
    assert bad == {"node1": [], "node2": []}
    assert diff.ovn_frr("node1"), "the shape announces something"


@pytest.mark.parametrize("options", OPTIONS)
def test_openstack_router(diff: Differential, options: dict[str, str]) -> None:
    """A Neutron router (ML2/OVN): gateway port active on node1, VMs on both chassis and
    none, distributed and centralized floating IPs, an Octavia LB on router and switch."""
    diff.clear()
    r = openstack_router(diff.lab, nbctl=diff.nbctl)
    _set(diff, r.router, options)
    vms = list(r.vms)
    diff.bind([(f"cr-{r.gateway_port}", "node1"), (vms[0], "node1"), (vms[1], "node2")])
    bad, _kept = _report(diff)
    assert bad == {"node1": [], "node2": []}
    assert diff.ovn_frr("node1"), "the shape announces something"
