"""What one pass of the EVPN pipeline leaves for status, metrics and trace: one view per VNI
(shared by ovn-frr's own data path, :mod:`ovn_frr.reconcilers.evpn`, and the host side of OVN's
own EVPN, :mod:`ovn_frr.reconcilers.evpn_native`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ovn_frr.core.evpn import EvpnSwitch, KernelVni
from ovn_frr.reconcilers.evpn_answers import Wiring


@dataclass(frozen=True, slots=True)
class VniView:
    """One VNI as the last pass left it (status, metrics, trace)."""

    sw: EvpnSwitch
    kernel: KernelVni
    #: what the ARP/ND answers need (None: ovn-controller has not patched the OVS bridge to
    #: the integration bridge yet)
    wiring: Wiring | None
    problems: tuple[str, ...] = ()
    #: FDB and neighbour entries this pass wrote or deleted for it
    written: int = 0
    #: OVN 25.09+: what ovn-controller says of the VNI (:meth:`OvnEvpn.for_vni`); None: ovn-frr
    #: carries the VNI itself
    ovn: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True)
class PassResult:
    vnis: tuple[VniView, ...] = ()
    problems: tuple[str, ...] = ()
    #: entries written in this pass (fdb + neigh adds and deletes)
    written: int = 0
    device_changes: tuple[str, ...] = field(default_factory=tuple)
    #: what the answers serve: the wired VNIs, a VNI whose pass failed with its last wiring
    wiring: tuple[Wiring, ...] = ()
