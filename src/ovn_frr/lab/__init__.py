"""The lab: real FRR and OVN in network namespaces, for tests, benchmarks and the demo.

>>> with Lab(minimal_spec()) as lab:          # doctest: +SKIP
...     lab.wait_bgp_up()
...     lab.announcer("tor1").announce(["203.0.113.0/24"])
"""

from ovn_frr.lab.frr import Announcer, FrrInstance
from ovn_frr.lab.lab import DEFAULT_BASE, Lab, destroy, list_labs
from ovn_frr.lab.ovn import Chassis, OvnCentral
from ovn_frr.lab.proc import LabError, LabTimeout, wait_for
from ovn_frr.lab.spec import (
    LabSpec,
    LinkAddrs,
    LinkSpec,
    NodeSpec,
    PeerSpec,
    SpecError,
    demo_spec,
    minimal_spec,
)

__all__ = [
    "DEFAULT_BASE",
    "Announcer",
    "Chassis",
    "FrrInstance",
    "Lab",
    "LabError",
    "LabSpec",
    "LabTimeout",
    "LinkAddrs",
    "LinkSpec",
    "NodeSpec",
    "OvnCentral",
    "PeerSpec",
    "SpecError",
    "demo_spec",
    "destroy",
    "list_labs",
    "minimal_spec",
    "wait_for",
]
