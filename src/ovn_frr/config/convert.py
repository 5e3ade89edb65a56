"""The node config turned into the core's values (the edge: the core never sees pydantic)."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import IPv4Address, ip_network

from ovn_frr.config.schema import NodeConfig
from ovn_frr.config.schema import PrefixFilter as ConfigFilter
from ovn_frr.core.frr_model import (
    BfdProfile,
    EvpnSettings,
    FrrSettings,
    Neighbor,
    PrefixFilter,
    VniOverride,
)
from ovn_frr.core.model import PROTOCOLS, ImportPolicy
from ovn_frr.core.ovnk import NetworkIntent, OvnkIntent, own_vrf, target_vrf
from ovn_frr.core.vrf import VrfConfig


def _filters(filters: tuple[ConfigFilter, ...]) -> tuple[PrefixFilter, ...]:
    return tuple(PrefixFilter(f.prefix, f.ge, f.le, f.action) for f in filters)


def frr_settings(cfg: NodeConfig, coalescing_safe: bool = True) -> FrrSettings:
    """BGP peering, BFD profiles and the FPM address of the node config. ``coalescing_safe``:
    this FRR withdraws while a peer's update subgroup coalesces
    (``Versions.frr_withdraws_while_coalescing``); if not, ovn-frr's instances get
    ``coalesce-time 0``."""
    neighbors = tuple(
        Neighbor(
            address=nb.address,
            remote_as=str(nb.remote_as),
            description=nb.description,
            password=nb.password,
            keepalive=nb.keepalive,
            hold=nb.hold,
            connect_retry=nb.connect_retry,
            ebgp_multihop=nb.ebgp_multihop,
            update_source=nb.update_source,
            bfd_profile=nb.bfd_profile,
            address_families=nb.address_families,
            import_filters=_filters(nb.import_filters),
            export_filters=_filters(nb.export_filters),
            max_prefix=nb.max_prefix,
            vrf=nb.vrf or "",
            graceful_restart=nb.graceful_restart,
        )
        for nb in cfg.bgp.neighbors
    )
    profiles = tuple(
        BfdProfile(
            name, p.receive_interval_ms, p.transmit_interval_ms, p.detect_multiplier, p.passive
        )
        for name, p in sorted(cfg.bfd.profiles.items())
    )
    fpm = cfg.frr.fpm_listen
    return FrrSettings(
        cfg.bgp.asn, str(cfg.bgp.router_id), neighbors, profiles, (str(fpm.host), fpm.port),
        evpn_settings(cfg),
        {name: v.l3vni for name, v in sorted(cfg.vrfs.items()) if v.l3vni is not None},
        None if coalescing_safe else 0,
        ovnk_leaks(cfg),
    )  # fmt: skip


def ovnk_leaks(cfg: NodeConfig) -> dict[str, tuple[str, ...]]:
    """What ovn-kubernetes' FRRConfiguration leaks for a RouteAdvertisements whose targetVRF is
    not ``auto``: each selected user-defined network's own VRF imports the target VRF, so the
    host's VRF of the network (its pods' way out in local gateway mode) has the routes its
    gateway router imports (routeadvertisements/controller.go generateFRRConfiguration). A
    network whose VRF name needs its ID and is not in ``ovn_kubernetes.vrfs`` is left out."""
    ovnk = cfg.ovn_kubernetes
    if ovnk is None:
        return {}
    out: dict[str, list[str]] = {}
    for ra in ovnk.route_advertisements:
        if ra.target_vrf == "auto":
            continue
        for name in ra.networks:
            own = own_vrf(name, ovnk.vrfs)
            if not own or own == ra.target_vrf:  # the default network's is "", too
                continue
            if ra.target_vrf not in out.setdefault(own, []):
                out[own].append(ra.target_vrf)
    return {vrf: tuple(froms) for vrf, froms in sorted(out.items())}


def evpn_uses(cfg: NodeConfig) -> bool:
    """EVPN is on when a neighbor carries l2vpn-evpn."""
    return any("l2vpn-evpn" in (nb.address_families or ()) for nb in cfg.bgp.neighbors)


def vtep_ip(cfg: NodeConfig) -> IPv4Address:
    return cfg.evpn.local_ip or cfg.bgp.router_id


def evpn_settings(cfg: NodeConfig) -> EvpnSettings | None:
    if not evpn_uses(cfg):
        return None

    def rts(vni: str, given: tuple[str, ...]) -> tuple[str, ...]:
        # FRR shows a lone RT equal to its auto one (ASN:VNI) as no line at all
        return () if given == (f"{cfg.bgp.asn}:{vni}",) else given

    vnis = tuple(
        VniOverride(int(k), v.rd, rts(k, v.route_targets_import), rts(k, v.route_targets_export))
        for k, v in sorted(cfg.evpn.vnis.items(), key=lambda kv: int(kv[0]))
    )
    vtep = ip_network(f"{vtep_ip(cfg)}/32") if cfg.evpn.advertise_local_ip else None
    return EvpnSettings(vnis, vtep)


def import_policy(cfg: NodeConfig, mixed_family: bool) -> ImportPolicy:
    """What the node config says about importing; ``mixed_family``: OVN routes IPv4 prefixes
    via IPv6 next hops (a capability of the OVN version)."""
    imp = cfg.import_
    return ImportPolicy(
        protocols=frozenset(PROTOCOLS[p] for p in imp.protocols),
        allow_default=imp.allow_default,
        allow_overlap=imp.allow_overlap,
        max_prefix=imp.max_prefix,
        mixed_family=mixed_family,
    )


def vrf_config(cfg: NodeConfig) -> VrfConfig:
    """The VRFs of ``[vrfs]`` and of the neighbors (a neighbor's VRF is needed here too)."""
    neighbors: dict[str, list[str]] = {}
    for nb in cfg.bgp.neighbors:
        if nb.vrf:
            neighbors.setdefault(nb.vrf, []).append(str(nb.address))
    return VrfConfig(
        tables={name: v.table for name, v in cfg.vrfs.items()},
        interfaces={name: v.interfaces for name, v in cfg.vrfs.items()},
        neighbors={name: tuple(addrs) for name, addrs in neighbors.items()},
        l3vnis={name: v.l3vni for name, v in cfg.vrfs.items() if v.l3vni is not None},
        vtep=(str(vtep_ip(cfg)), cfg.evpn.udp_port, cfg.evpn.mtu) if evpn_uses(cfg) else None,
    )


def ovnk_intent(cfg: NodeConfig, hostname: str) -> OvnkIntent | None:
    """The ``[ovn_kubernetes]`` section as the core takes it (None: no such section); the
    node defaults to ``hostname``. A network selected by several RouteAdvertisements gets
    the union of their advertisements (the config checks allow one target VRF per network)."""
    ovnk = cfg.ovn_kubernetes
    if ovnk is None:
        return None
    nets: dict[str, NetworkIntent] = {}
    for ra in ovnk.route_advertisements:
        for name in ra.networks:
            # never None: the config checks refuse an ``auto`` whose VRF is not known
            vrf = target_vrf(ra.target_vrf, name, ovnk.vrfs) or ""
            old = nets.get(name, NetworkIntent(name, vrf))
            nets[name] = replace(
                old,
                pod_network=old.pod_network or "PodNetwork" in ra.advertisements,
                egress_ip=old.egress_ip or "EgressIP" in ra.advertisements,
            )
    return OvnkIntent(ovnk.node or hostname, tuple(nets.values()), ovnk.gateway_mode,
                      ovnk.import_)  # fmt: skip
