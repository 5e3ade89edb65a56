"""The node config turned into the core's values (the edge: the core never sees pydantic)."""

from __future__ import annotations

from ovn_frr.config.schema import NodeConfig
from ovn_frr.config.schema import PrefixFilter as ConfigFilter
from ovn_frr.core.frr_model import BfdProfile, FrrSettings, Neighbor, PrefixFilter
from ovn_frr.core.model import PROTOCOLS, ImportPolicy


def _filters(filters: tuple[ConfigFilter, ...]) -> tuple[PrefixFilter, ...]:
    return tuple(PrefixFilter(f.prefix, f.ge, f.le, f.action) for f in filters)


def frr_settings(cfg: NodeConfig) -> FrrSettings:
    """BGP peering, BFD profiles and the FPM address of the node config."""
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
        cfg.bgp.asn, str(cfg.bgp.router_id), neighbors, profiles, (str(fpm.host), fpm.port)
    )


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
