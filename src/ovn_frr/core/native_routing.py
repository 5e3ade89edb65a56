"""Which routers OVN 25.03+ exchanges routes for itself, through the kernel table of the very
VRF ovn-frr's FRR runs them in (pure; ``docs/native-routing.md``).

OVN 25.03+ (ovn-controller, on the chassis where a router with ``dynamic-routing=true`` is
served) writes the router's prefixes as protocol-84 routes into kernel table N and learns
every other route of table N into SB ``Learned_Route``. N is the router's
``dynamic-routing-vrf-id`` (OVN 25.03.2, 25.09.1, 26.03 on) or else its datapath's tunnel key.
FRR installs a VRF's BGP routes into that VRF's table. So where the router's FRR VRF is bound
to table N, OVN and FRR meet, and the router is served natively:

- the router's ``dynamic-routing-vrf-id`` is its VRF's table (ovn-frr makes the VRF with that
  table; an operator's VRF with another table is a problem of the VRF pipeline), on an OVN that
  reads the option; or
- a port of the router has ``dynamic-routing-maintain-vrf=true`` and the router names its VRF
  (``dynamic-routing-vrf-name``): OVN makes that VRF device for its table N itself, and ovn-frr
  uses it as it finds it (its interfaces of the node config put in).

A router served natively is neither imported into (its ``Learned_Route`` rows are OVN's import)
nor announced with ``network`` lines by ovn-frr: its VRF's BGP instance redistributes the
kernel routes of its table instead, which are OVN's protocol-84 routes (written where OVN
serves the router, following its ``-redistribute`` classes as OVN means them). ovn-frr still
configures the VRF's FRR side: the VRF, its neighbors and BFD. No route is imported twice and
no prefix originated twice.

The default VRF is never native (OVN refuses the main table), nor is a router whose VRF the
node config maps elsewhere (``bgp.vrf_map``: FRR then runs it in another table).
"""

from __future__ import annotations

from dataclasses import replace

from ovn_frr.core.ovn import OPT_MAINTAIN_VRF, OPT_VRF, OPT_VRF_ID, LogicalRouter, OvnState


def why_native(r: LogicalRouter, vrf_id: bool) -> str:
    """Why OVN exchanges ``r``'s routes itself ("" it does not); ``vrf_id``: this OVN reads
    ``dynamic-routing-vrf-id``."""
    rt = r.routing
    if not rt.enabled or not rt.vrf:
        return ""
    if vrf_id and rt.vrf_id is not None:
        return (f"OVN exchanges its routes through table {rt.vrf_id} ({OPT_VRF_ID}), "
                f"VRF {rt.vrf}'s")  # fmt: skip
    ports = [p.name for p in r.ports if p.routing.maintain_vrf]
    # OVN names the VRF it makes by -vrf-name, else ovnvrf<table>: with no -vrf-name (and an
    # OVN that ignores -vrf-id) that is the datapath's tunnel key, unknown here
    if ports and r.options.get(OPT_VRF, "").strip():
        return (f"OVN makes VRF {rt.vrf} for it ({OPT_MAINTAIN_VRF} on {ports[0]}) and "
                "exchanges its routes through that VRF's table")  # fmt: skip
    return ""


def mark_native(state: OvnState, vrf_id: bool) -> OvnState:
    """``state`` with each router OVN 25.03+ serves itself marked (``routing.native``)."""
    whys = [why_native(r, vrf_id) for r in state.routers]
    if all(w == r.routing.native for w, r in zip(whys, state.routers, strict=True)):
        return state
    return replace(state, routers=tuple(
        replace(r, routing=replace(r.routing, native=w)) if w != r.routing.native else r
        for w, r in zip(whys, state.routers, strict=True)))  # fmt: skip


def native_vrfs(state: OvnState) -> frozenset[str]:
    """The VRFs whose BGP instance announces OVN's own routes (``redistribute kernel``): those
    of the native routers this chassis may serve (not a gateway router of another chassis)."""
    return frozenset(r.routing.vrf for r in state.routers
                     if r.routing.native and r.routing.vrf
                     and not r.pinned_elsewhere)  # fmt: skip
