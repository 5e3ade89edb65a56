"""Rules that relate several keys of a parsed node config.

Each returns ``(key path, reason)`` problems; an empty list means the config is consistent.
:func:`check_parts` applies them to the parts of a config that failed validation as a whole,
so that one run reports every problem: a type error in one neighbor does not hide a missing
BFD profile in another.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from ovn_frr.config.schema import (
    EvpnConfig,
    ImportConfig,
    Neighbor,
    NodeConfig,
    OvnConfig,
    OvnKubernetesConfig,
    PrefixFilter,
)
from ovn_frr.config.types import parse_asn
from ovn_frr.core.ovnk import target_vrf

Problem = tuple[str, str]
M = TypeVar("M", OvnConfig, ImportConfig, Neighbor, EvpnConfig)
VNI_MAX = 16_777_215


def check(cfg: NodeConfig) -> list[Problem]:
    problems: list[Problem] = []
    problems += _check_ovn(cfg.ovn)
    problems += _check_import(cfg.import_)
    neighbors = list(enumerate(cfg.bgp.neighbors))
    problems += _check_neighbors(neighbors, cfg.bgp.asn, set(cfg.bfd.profiles))
    problems += _check_evpn(cfg.evpn)
    problems += _check_l3vnis(cfg)
    if cfg.ovn_kubernetes is not None:
        problems += _check_ovnk(cfg.ovn_kubernetes)
    return problems


def _check_ovnk(ovnk: OvnKubernetesConfig) -> Iterator[Problem]:
    """As ovn-kubernetes' RouteAdvertisements controller refuses them (generateFRRConfigurations):
    EgressIP with targetVRF auto; and one network in one VRF only (its gateway router
    imports from one)."""
    target: dict[str, str] = {}
    for i, ra in enumerate(ovnk.route_advertisements):
        path = f"ovn_kubernetes.route_advertisements[{i}]"
        if ra.target_vrf == "auto" and "EgressIP" in ra.advertisements:
            yield f"{path}.advertisements", ("EgressIP cannot be advertised with target_vrf "
                                             "'auto' (ovn-kubernetes refuses it)")  # fmt: skip
        for net in ra.networks:
            vrf = target_vrf(ra.target_vrf, net, ovnk.vrfs)
            if vrf is None:
                yield f"{path}.networks", (f"{net}: target_vrf 'auto' needs its VRF in "
                                           "ovn_kubernetes.vrfs (ovn-kubernetes names it "
                                           "mp<network ID>-udn-vrf)")  # fmt: skip
                continue
            if net in target and target[net] != vrf:
                yield f"{path}.networks", (f"{net} is also selected for VRF "
                                           f"{target[net] or 'default'!r}")  # fmt: skip
            target.setdefault(net, vrf)


def _check_l3vnis(cfg: NodeConfig) -> Iterator[Problem]:
    seen: dict[int, str] = {}
    evpn_on = any("l2vpn-evpn" in (nb.address_families or ()) for nb in cfg.bgp.neighbors)
    for name, entry in sorted(cfg.vrfs.items()):
        vni = entry.l3vni
        if vni is None:
            continue
        path = f"vrfs.{name}.l3vni"
        if vni in seen:
            yield path, f"{vni} is already the L3VNI of VRF {seen[vni]}"
        seen.setdefault(vni, name)
        if str(vni) in cfg.evpn.vnis:
            yield path, f"{vni} is also in evpn.vnis (an L2VNI's overrides)"
        if not evpn_on:
            yield path, "needs EVPN: a neighbor with l2vpn-evpn in its address_families"


def _check_evpn(evpn: EvpnConfig) -> Iterator[Problem]:
    if evpn.control_udp_port == evpn.udp_port:
        # OVS's own VXLAN port (OVN 25.09+) listens there: the kernel devices must not
        yield "evpn.control_udp_port", f"{evpn.control_udp_port} is also udp_port"
    for key in evpn.vnis:
        if int(key) > VNI_MAX:
            yield f"evpn.vnis.{key}", f"{key} is not a VNI (1..{VNI_MAX})"


def check_parts(data: Mapping[str, Any]) -> list[Problem]:
    """The cross-key rules on whatever parts of raw (TOML) ``data`` validate on their own."""
    problems: list[Problem] = []
    ovn = _valid(OvnConfig, data.get("ovn", {}))
    if ovn is not None:
        problems += _check_ovn(ovn)
    imp = _valid(ImportConfig, data.get("import", {}))
    if imp is not None:
        problems += _check_import(imp)
    evpn = data.get("evpn", {})
    vnis = evpn.get("vnis", {}) if isinstance(evpn, Mapping) else {}
    if isinstance(vnis, Mapping):  # each key on its own, whatever else is wrong
        problems += [(f"evpn.vnis.{k}", f"{k} is not a VNI (1..{VNI_MAX})")
                     for k in vnis if str(k).isdigit() and int(k) > VNI_MAX]  # fmt: skip
    bgp = data.get("bgp")
    if not isinstance(bgp, Mapping):
        return problems
    try:
        asn: int | None = parse_asn(bgp.get("asn"))
    except ValueError:
        asn = None
    bfd = data.get("bfd", {})
    profiles = bfd.get("profiles", {}) if isinstance(bfd, Mapping) else {}
    names = set(profiles) if isinstance(profiles, Mapping) else None
    raw = bgp.get("neighbors", [])
    neighbors = []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        nb = _valid(Neighbor, item)
        if nb is not None:
            neighbors.append((i, nb))
    problems += _check_neighbors(neighbors, asn, names)
    return problems


def _valid(model: type[M], data: Any) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


def _check_ovn(ovn: OvnConfig) -> Iterator[Problem]:
    uses_ssl = any(r.strip().startswith("ssl:") for r in f"{ovn.nb},{ovn.sb}".split(","))
    if uses_ssl:
        for key in ("ssl_key", "ssl_cert", "ssl_ca"):
            if getattr(ovn, key) is None:
                yield f"ovn.{key}", "required when nb or sb uses ssl:"


def _check_import(imp: ImportConfig) -> Iterator[Problem]:
    if not imp.protocols:
        yield "import.protocols", "must name at least one protocol"


def _check_neighbors(
    neighbors: Sequence[tuple[int, Neighbor]], asn: int | None, profiles: set[str] | None
) -> Iterator[Problem]:
    seen: dict[tuple[str | None, str], int] = {}
    for i, nb in neighbors:
        path = f"bgp.neighbors[{i}]"
        key = (nb.vrf, str(nb.address))
        if key in seen:
            yield f"{path}.address", f"{nb.address} is already neighbor {seen[key]}"
        seen.setdefault(key, i)
        yield from _check_neighbor(path, nb, asn, profiles)


def _check_neighbor(
    path: str, nb: Neighbor, asn: int | None, profiles: set[str] | None
) -> Iterator[Problem]:
    if nb.bfd_profile is not None and profiles is not None and nb.bfd_profile not in profiles:
        known = ", ".join(sorted(profiles)) or "none defined"
        yield f"{path}.bfd_profile", f"no profile {nb.bfd_profile!r} in [bfd.profiles] ({known})"
    if nb.keepalive is not None or nb.hold is not None:
        if nb.keepalive is None or nb.hold is None:
            yield f"{path}.keepalive", "keepalive and hold must be set together"
        elif nb.hold != 0 and nb.hold < 3:
            yield f"{path}.hold", f"{nb.hold} must be 0 or >= 3 seconds"
        elif nb.hold != 0 and nb.keepalive >= nb.hold:
            yield f"{path}.keepalive", f"{nb.keepalive} must be less than hold ({nb.hold})"
    if nb.address_families is not None:
        if not nb.address_families:
            yield f"{path}.address_families", "must name at least one address family"
        if len(set(nb.address_families)) != len(nb.address_families):
            yield f"{path}.address_families", "lists an address family twice"
    if nb.vrf and nb.address_families and "l2vpn-evpn" in nb.address_families:
        yield f"{path}.address_families", "l2vpn-evpn is carried in the default VRF only"
    if asn is not None and nb.remote_as == asn and nb.ebgp_multihop is not None:
        yield f"{path}.ebgp_multihop", "only applies to eBGP neighbors"
    if nb.password is not None and nb.password_file is not None:
        yield f"{path}.password", "password and password_file are exclusive"
    for kind in ("import_filters", "export_filters"):
        filters: tuple[PrefixFilter, ...] = getattr(nb, kind)
        for j, flt in enumerate(filters):
            yield from _check_filter(f"{path}.{kind}[{j}]", flt)


def _check_filter(path: str, flt: PrefixFilter) -> Iterator[Problem]:
    maxlen = flt.prefix.max_prefixlen
    plen = flt.prefix.prefixlen
    for key in ("ge", "le"):
        value: int | None = getattr(flt, key)
        if value is None:
            continue
        if value > maxlen:
            yield f"{path}.{key}", f"{value} is longer than an IPv{flt.prefix.version} prefix"
        elif value < plen:
            yield f"{path}.{key}", f"{value} is shorter than the prefix length {plen}"
    if flt.ge is not None and flt.le is not None and flt.ge > flt.le:
        yield f"{path}.ge", f"{flt.ge} is greater than le ({flt.le})"
