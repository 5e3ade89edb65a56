"""Which lines of FRR's running config are ovn-frr's, and the batch that brings FRR to the
desired config (pure).

FRR's running config is the truth: it is compared with the desired config at every check,
so lines lost to an FRR restart, removed by hand or changed by someone else come back, and a
restarted agent finds its own lines without any memory of what it applied. Ownership is read
from the config itself:

- objects named ``ovnfrr-*`` (prefix-lists, route-maps, large-community lists), all their lines;
- ``network P route-map ovnfrr-origin[-nh-HOP]`` lines, in any BGP instance;
- the neighbors of the node config: the attributes ovn-frr renders (:data:`NEIGHBOR_ATTRS`),
  in the address families ovn-frr activates them in; other lines an operator added to such a
  neighbor (``shutdown``, another address family) stay;
- neighbors that carry an ``ovnfrr-`` route-map but are no longer in the node config: all of
  their lines (the neighbor is removed);
- the BFD profiles of the node config: all their lines;
- a BGP VRF instance that is not desired and holds nothing but ovn-frr's lines and the instance
  settings ovn-frr renders: the whole instance;
- EVPN type-5: ``advertise ipv4/ipv6 unicast route-map ovnfrr-type5`` under ``address-family
  l2vpn evpn`` of ``router bgp ASN vrf X``, and the L3VNI of such a VRF (``vrf X`` > ``vni N``)
  or of one the desired config maps. Other lines of ``vrf X`` (an operator's static routes)
  stay, and ``vrf X`` itself is never negated.

Everything else is the operator's and never touched. Lines equal to desired ones count as
ovn-frr's (they are not sent again). ``bgp graceful-restart preserve-fw-state`` is added where
a neighbor has ``graceful_restart`` and never removed: an operator may have set it, and without
a neighbor in graceful-restart mode it does nothing.

A *unit* is what a rejected line takes with it: a neighbor (every line of it, in every address
family of its instance), or else the line itself with what it holds. A unit FRR rejected is
held at what FRR had before the batch (its lines that landed are rolled back) until its retry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ovn_frr.core.frr_model import ORIGIN_MAP, TYPE5_MAP
from ovn_frr.frr.diff import Batch, Node, Path, build, diff_trees, parse, paths
from ovn_frr.frr.render import GR_PRESERVE, TYPE5_LINES

#: ovn-frr's objects are named with it
MARK = "ovnfrr-"
NEIGHBOR_ATTRS = frozenset(
    {"remote-as", "description", "password", "timers", "ebgp-multihop", "update-source", "bfd",
     "activate", "route-map", "maximum-prefix", "graceful-restart"}
)  # fmt: skip
#: the settings ovn-frr renders in each of its BGP instances
INSTANCE_SETTINGS = (
    "bgp router-id ",
    "no bgp default ipv4-unicast",
    "no bgp network import-check",
    "bgp bestpath as-path multipath-relax",
    "coalesce-time ",
    GR_PRESERVE,
)

Unit = tuple[str, ...]
EVPN_FAMILY = "address-family l2vpn evpn"


def object_name(line: str) -> str | None:
    """The name of a top-level policy object (route-map, prefix-list, large-community list)."""
    words = line.split()
    if len(words) >= 2 and words[0] == "route-map":
        return words[1]
    if len(words) >= 3 and words[1] == "prefix-list":
        return words[2]
    if len(words) >= 3 and words[1] == "large-community-list":
        return words[3] if words[2] in ("standard", "expanded") and len(words) > 3 else words[2]
    return None


def origin_network(line: str) -> bool:
    """A ``network`` line that ovn-frr originates (through its origin route-map, or one of the
    origin route-maps with a next hop)."""
    words = line.split()
    return (len(words) == 4 and words[0] == "network" and words[2] == "route-map"
            and words[3].startswith(ORIGIN_MAP))  # fmt: skip


def neighbor_of(line: str) -> tuple[str, str] | None:
    """(address, attribute) of a ``neighbor X ATTR ...`` line (``no`` form too)."""
    words = line.removeprefix("no ").split()
    if len(words) >= 3 and words[0] == "neighbor":
        return words[1], words[2]
    return None


def unit_of(path: Path) -> Unit:
    """The unit of a changed line (see the module docstring); a removal's is the line it
    removes (held, the line stays as it is)."""
    n = neighbor_of(path[-1])
    if n is not None and len(path) >= 2 and path[0].startswith("router bgp "):
        return (path[0], f"neighbor {n[0]}")
    return (*path[:-1], path[-1].removeprefix("no "))


def in_unit(path: Path, unit: Unit) -> bool:
    if len(unit) == 2 and unit[0].startswith("router bgp ") and unit[1].startswith("neighbor "):
        n = neighbor_of(path[-1])
        return path[0] == unit[0] and n is not None and f"neighbor {n[0]}" == unit[1]
    return path[: len(unit)] == unit


def _has(tree: Node, path: Path) -> bool:
    node = tree
    for part in path:
        child = node.children.get(part)
        if child is None:
            return False
        node = child
    return True


@dataclass(frozen=True, slots=True)
class Owners:
    """What the desired config says ovn-frr owns by name."""

    #: (instance line, neighbor address)
    neighbors: frozenset[tuple[str, str]]
    #: BFD profile names
    profiles: frozenset[str]
    #: (instance line, address-family line, neighbor address) the desired config renders
    families: frozenset[tuple[str, str, str]] = frozenset()
    #: the VRFs whose L3VNI the desired config maps
    vrfs: frozenset[str] = frozenset()

    @classmethod
    def of(cls, desired: Node) -> Owners:
        neighbors = set()
        families = set()
        for top, node in desired.children.items():
            if top.startswith("router bgp "):
                for path in paths(node, (top,)):
                    n = neighbor_of(path[-1])
                    if n is not None:
                        neighbors.add((top, n[0]))
                        if len(path) == 3:
                            families.add((top, path[1], n[0]))
        bfd = desired.children.get("bfd")
        profiles = set()
        if bfd is not None:
            profiles = {p.split()[1] for p in bfd.children if p.startswith("profile ")}
        vrfs = {
            top[4:]
            for top, node in desired.children.items()
            if top.startswith("vrf ") and any(k.startswith("vni ") for k in node.children)
        }
        return cls(frozenset(neighbors), frozenset(profiles), frozenset(families), frozenset(vrfs))


def _instance(top: str, node: Node, want: Node, owners: Owners) -> list[Path]:
    """The lines of BGP instance ``top`` that are ovn-frr's."""
    mine = {addr for inst, addr in owners.neighbors if inst == top}
    stale = set()
    for path in paths(node, (top,)):
        n = neighbor_of(path[-1])
        if n is not None and n[0] not in mine and f" route-map {MARK}" in path[-1]:
            stale.add(n[0])
    out = []
    for path in paths(node, (top,)):
        line = path[-1]
        n = neighbor_of(line)
        if (
            _has(want, path[1:])
            or origin_network(line)
            or (n is not None and (n[0] in stale or _managed(owners, path, n, mine)))
            or (path[1:2] == (EVPN_FAMILY,) and line in TYPE5_LINES)
        ):
            out.append(path)
    return out


def _managed(owners: Owners, path: Path, n: tuple[str, str], mine: set[str]) -> bool:
    """A line of a node config neighbor that ovn-frr renders the like of: its attributes,
    and in an address family only where ovn-frr activates it (an operator's own address
    family for that neighbor, say IPv6 over the IPv4 session, stays)."""
    if n[0] not in mine or n[1] not in NEIGHBOR_ATTRS:
        return False
    return len(path) == 2 or (path[0], path[1], n[0]) in owners.families


def _type5(running: Node, vrf: str) -> bool:
    """FRR runs ovn-frr's type-5 lines in ``vrf``'s BGP instance (then its L3VNI is ours)."""
    for top, node in running.children.items():
        if top.startswith("router bgp ") and top.endswith(f" vrf {vrf}"):
            family = node.children.get(EVPN_FAMILY)
            return family is not None and any(x in family.children for x in TYPE5_LINES)
    return False


def _wholly_ours(top: str, node: Node, ours: list[Path]) -> bool:
    kept = set(ours)
    return all(
        path in kept or path[-1].startswith(INSTANCE_SETTINGS)
        or (path[-1].startswith("address-family ") and len(path) == 2)
        for path in paths(node, (top,))
    )  # fmt: skip


def ours(running: Node, desired: Node, owners: Owners) -> Node:
    """The part of ``running`` that is ovn-frr's (see the module docstring)."""
    keep: list[Path] = []
    for top, node in running.children.items():
        want = desired.children.get(top)
        if top.startswith("router bgp "):
            lines = _instance(top, node, want or Node(top), owners)
            if want is None and " vrf " in top and lines and _wholly_ours(top, node, lines):
                keep.append((top,))  # removed whole (an empty shared context is negated)
            else:
                keep += lines
        elif top == "bfd":
            for line, profile in node.children.items():
                name = line.split()[1] if line.startswith("profile ") else None
                if name in owners.profiles:
                    keep += [(top, line), *paths(profile, (top, line))]
        elif top.startswith("vrf ") and (top[4:] in owners.vrfs or _type5(running, top[4:])):
            vnis = [p for p in paths(node, (top,)) if p[-1].startswith("vni ")]
            keep += [(top,), *vnis] if vnis else []
        elif (name := object_name(top)) is not None and name.startswith(MARK):
            keep += [(top,), *paths(node, (top,))]
        elif want is not None:
            keep += [(top,), *(p for p in paths(node, (top,)) if _has(desired, p))]
    return build(keep)


@dataclass(frozen=True, slots=True)
class Plan:
    #: what FRR runs that is ovn-frr's, before the batch
    ours: Node
    #: the desired config with held units at their earlier state (and adopted networks)
    desired: Node
    batch: Batch


def adopted_networks(running: Node) -> list[Path]:
    """ovn-frr's ``network`` lines FRR has, with the origin route-maps they name (kept while
    OVN's intent is not known yet: a network whose route-map is gone is withdrawn)."""
    nets = [p for top, node in running.children.items() if top.startswith("router bgp ")
            for p in paths(node, (top,))
            if origin_network(p[-1])]  # fmt: skip
    maps = {p[-1].split()[-1] for p in nets}
    return nets + [p for top, node in running.children.items() if object_name(top) in maps
                   for p in [(top,), *paths(node, (top,))]]  # fmt: skip


def plan(
    running: str,
    desired: str,
    held: Mapping[Unit, Iterable[Path]] | None = None,
    adopt_networks: bool = False,
) -> Plan:
    """The batch that brings FRR from ``running`` to ``desired``. ``held``: units kept at the
    given lines (what FRR had before a batch that it rejected them in); ``adopt_networks``:
    OVN's intent is not known yet, so the ``network`` lines FRR has stay as they are."""
    run = parse(running)
    want = parse(desired)
    owners = Owners.of(want)
    if adopt_networks:
        want = build([*paths(want), *adopted_networks(run)])
    effective = _effective(want, held)
    mine = ours(run, effective, owners)
    if kept := _type5_until_l3vni_gone(run, mine, want):
        effective = build([*paths(effective), *kept])
        mine = ours(run, effective, owners)
    return Plan(mine, effective, diff_trees(mine, effective))


def _type5_until_l3vni_gone(run: Node, mine: Node, desired: Node) -> list[Path]:
    """ovn-frr's type-5 lines (and their route-map) of a VRF whose L3VNI of ovn-frr's the
    desired config no longer has: kept until FRR no longer shows the L3VNI. They are what
    makes that L3VNI ovn-frr's: gone first, an L3VNI line FRR did not drop at once (or
    refused to drop: its removal is then held, not undesired) would be no one's."""
    kept: list[Path] = []
    for top, node in mine.children.items():
        want = desired.children.get(top, Node(top))
        if not top.startswith("vrf ") or not any(
            k.startswith("vni ") and k not in want.children for k in node.children
        ):
            continue
        for inst_top, inst in run.children.items():
            if inst_top.startswith("router bgp ") and inst_top.endswith(f" vrf {top[4:]}"):
                family = inst.children.get(EVPN_FAMILY, Node(EVPN_FAMILY))
                kept += [(inst_top, EVPN_FAMILY, x) for x in TYPE5_LINES if x in family.children]
    if kept:
        kept += [p for t, n in run.children.items() if object_name(t) == TYPE5_MAP
                 for p in [(t,), *paths(n, (t,))]]  # fmt: skip
    return kept


def plan_from(
    base: Node, desired: str, held: Mapping[Unit, Iterable[Path]] | None = None
) -> Plan | None:
    """The batch from ``base``, what FRR ran of ovn-frr's at the last check that it matched
    (the effective desired config then), to ``desired``, without reading FRR: for a change of
    the desired config between checks. None when it would remove or add a whole BGP instance
    (that needs the running config: is the instance wholly ovn-frr's?) or remove type-5 lines
    (that needs the running config too: they stay while FRR still shows their L3VNI, which
    FRR 10.3 can keep past the batch that removed it)."""
    effective = _effective(parse(desired), held)
    instances = {t for t in (*base.children, *effective.children) if t.startswith("router bgp ")}
    if any(t not in base.children or t not in effective.children for t in instances):
        return None
    if any(p[1:2] == (EVPN_FAMILY,) and p[-1] in TYPE5_LINES and not _has(effective, p)
           for p in paths(base)):  # fmt: skip
        return None
    return Plan(base, effective, diff_trees(base, effective))


def _effective(want: Node, held: Mapping[Unit, Iterable[Path]] | None) -> Node:
    if not held:
        return want
    lines = list(paths(want))
    for unit, before in held.items():
        lines = [p for p in lines if not in_unit(p, unit)] + list(before)
    tree = build(lines)
    _prune(tree)
    return tree


def _prune(node: Node) -> None:
    """Drop address families left empty (a held neighbor was all they held): FRR never shows
    an empty one, so it would look missing at every check."""
    for line, child in list(node.children.items()):
        _prune(child)
        if line.startswith("address-family ") and not child.children:
            del node.children[line]


def unit_lines(tree: Node, unit: Unit) -> frozenset[Path]:
    """The lines of ``unit`` in ``tree`` (with the contexts that hold them)."""
    out: set[Path] = set()
    for path in paths(tree):
        if in_unit(path, unit):
            out.update(path[: i + 1] for i in range(len(path)))
    return frozenset(out)
