"""Rules that relate several keys of a parsed node config.

Each returns ``(key path, reason)`` problems; an empty list means the config is consistent.
"""

from __future__ import annotations

from collections.abc import Iterator

from ovn_frr.config.schema import Neighbor, NodeConfig, PrefixFilter

Problem = tuple[str, str]


def check(cfg: NodeConfig) -> list[Problem]:
    problems: list[Problem] = []
    problems += _check_ovn(cfg)
    if not cfg.import_.protocols:
        problems.append(("import.protocols", "must name at least one protocol"))
    seen: dict[tuple[str | None, str], int] = {}
    for i, nb in enumerate(cfg.bgp.neighbors):
        path = f"bgp.neighbors[{i}]"
        key = (nb.vrf, str(nb.address))
        if key in seen:
            problems.append((f"{path}.address", f"{nb.address} is already neighbor {seen[key]}"))
        seen.setdefault(key, i)
        problems += _check_neighbor(path, nb, cfg)
    return problems


def _check_ovn(cfg: NodeConfig) -> Iterator[Problem]:
    uses_ssl = any(r.strip().startswith("ssl:") for r in f"{cfg.ovn.nb},{cfg.ovn.sb}".split(","))
    if uses_ssl:
        for key in ("ssl_key", "ssl_cert", "ssl_ca"):
            if getattr(cfg.ovn, key) is None:
                yield f"ovn.{key}", "required when nb or sb uses ssl:"


def _check_neighbor(path: str, nb: Neighbor, cfg: NodeConfig) -> Iterator[Problem]:
    if nb.bfd_profile is not None and nb.bfd_profile not in cfg.bfd.profiles:
        known = ", ".join(sorted(cfg.bfd.profiles)) or "none defined"
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
    if nb.remote_as == cfg.bgp.asn and nb.ebgp_multihop is not None:
        yield f"{path}.ebgp_multihop", "only applies to eBGP neighbors"
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
