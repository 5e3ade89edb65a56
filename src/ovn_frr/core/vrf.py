"""Which kernel VRF devices this chassis needs, and what to do about the ones it has (pure).

A VRF is needed when a router this chassis serves or may serve names it
(``dynamic-routing-vrf-name``: any router of the chassis' OVN state but a gateway router pinned
to another chassis; the state holds the routers whose gateway this chassis hosts or stands by
for, and the distributed ones) or the node config has BGP neighbors or a ``[vrfs.NAME]`` entry
in it. A needed VRF the kernel lacks is
made by ovn-frr and marked as its own (the device alias ``ovn-frr:vrf``); its table is the
node config's ``vrfs.NAME.table``, else the router's ``dynamic-routing-vrf-id``, else the
lowest table from ``TABLE_BASE`` no other VRF uses. An operator's VRF of that name (no mark)
is used as it is: never changed, never removed. A VRF of ovn-frr's that nothing needs any
more is removed (the kernel releases its interfaces).

EVPN type-5: a VRF with an L3VNI (``[vrfs.NAME] l3vni``) gets a bridge ``br-l3-<vni>`` in the
VRF (its SVI: zebra's router MAC is the bridge's) and a VXLAN device ``vx-l3-<vni>`` on it (the
VTEP of ``[evpn]``, no learning, neighbour suppression), both marked ``ovn-frr:l3vni:<vni>``.
They are made once the VRF is in the kernel (operator's or ovn-frr's), made again when they
differ from that, and removed when the L3VNI goes from the node config. Devices of those
names that are not ovn-frr's are never touched (a problem).

Type-5 routes reach OVN through the host's VRF (OVN before 26.03 has no EVPN of its own): the
import gives a route whose next hop is a remote VTEP on an L3VNI's SVI to the router with the
host's address on the router's ``dynamic-routing-port-name`` interface as next hop
(:class:`Type5Hops`); the way back is a route per prefix the VRF's routers announce with a
next hop (``dynamic-routing-v4/v6-prefix-nexthop``), in the VRF's kernel table, marked with
protocol :data:`RTPROT_OVN_FRR` (as OVN 26.03 writes its own, protocol 84, into the table).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ovn_frr.core.model import Address, Interface, Network
from ovn_frr.core.ovn import OvnState

#: the first table ovn-frr gives a VRF of its own
TABLE_BASE = 10000
#: kernel tables a VRF may not use (unspec, compat, default, main, local)
RESERVED_TABLES = frozenset({0, 252, 253, 254, 255})


@dataclass(frozen=True, slots=True)
class KernelVrf:
    name: str
    table: int
    #: made by ovn-frr (alias ``ovn-frr:vrf``)
    ours: bool
    #: the interfaces enslaved to it
    members: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class KernelLink:
    """An interface the node config asks to put in a VRF, as the kernel has it."""

    name: str
    #: its master device ("" none): a bridge, a bond, a VRF
    master: str = ""


@dataclass(frozen=True, slots=True)
class VrfNeed:
    """One VRF this chassis needs, and why."""

    name: str
    #: the table asked for (None: any)
    table: int | None = None
    #: interfaces to put in it when ovn-frr makes it (the node config's dedicated links)
    interfaces: tuple[str, ...] = ()
    #: who needs it: "router GR_red", "neighbor 10.0.0.1", "node config"
    users: tuple[str, ...] = ()
    #: the different tables routers ask for it (dynamic-routing-vrf-id), when they disagree
    conflict: tuple[int, ...] = ()
    #: OVN makes it (a router port's dynamic-routing-maintain-vrf, OVN 25.03+): ovn-frr waits
    #: for OVN's device instead of making one with a table OVN would not use
    ovn_makes: bool = False


@dataclass(frozen=True, slots=True)
class VrfConfig:
    """The node config's ``[vrfs.NAME]`` and the VRFs of its neighbors."""

    tables: Mapping[str, int | None] = field(default_factory=dict)
    interfaces: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: VRF -> neighbors configured in it
    neighbors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: EVPN type-5: VRF -> its L3VNI
    l3vnis: Mapping[str, int] = field(default_factory=dict)
    #: the VTEP of the L3VNIs: (local address, UDP port, MTU of the VXLAN device)
    vtep: tuple[str, int, int] | None = None


L3VNI_ALIAS = "ovn-frr:l3vni:"
#: the protocol of the routes ovn-frr writes in a VRF's kernel table (the way back into OVN)
RTPROT_OVN_FRR = 210


@dataclass(frozen=True, slots=True)
class Type5Hops:
    """What the import needs for type-5 routes (see the module docstring)."""

    #: the L3VNI bridges that are up
    svis: frozenset[str] = frozenset()
    #: the host's addresses on the interfaces the routers of L3VNI VRFs name
    host_addrs: Mapping[str, tuple[Interface, ...]] = field(default_factory=dict)


def type5_port_names(state: OvnState | None, config: VrfConfig) -> tuple[str, ...]:
    """The ``dynamic-routing-port-name`` interfaces of the routers (served here) in VRFs with
    an L3VNI."""
    names: set[str] = set()
    for r in state.routers if state is not None else ():
        if r.routing.vrf not in config.l3vnis or r.pinned_elsewhere:
            continue
        names.update(p.routing.port_name for p in r.ports if p.routing.port_name)
    return tuple(sorted(names))


def return_routes(
    networks: Mapping[str, Iterable[Network]], config: VrfConfig
) -> dict[str, frozenset[tuple[Network, Address]]]:
    """Per VRF with an L3VNI: (prefix, next hop) of each announced prefix that has one."""
    out = {}
    for vrf in config.l3vnis:
        given = networks.get(vrf, ())
        hops = given.items() if isinstance(given, Mapping) else ()
        out[vrf] = frozenset((p, h) for p, h in hops if h is not None)
    return out


@dataclass(frozen=True, slots=True)
class L3vni:
    """An L3VNI's devices, as wanted or as the kernel has them."""

    vni: int
    vrf: str
    local: str
    port: int
    mtu: int

    @property
    def bridge(self) -> str:
        return f"br-l3-{self.vni}"

    @property
    def vxlan(self) -> str:
        return f"vx-l3-{self.vni}"


@dataclass(frozen=True, slots=True)
class KernelL3vni:
    """What the kernel has under an L3VNI's device names."""

    vni: int
    #: ovn-frr's devices (both marked), as they are (None: not both there, or not ovn-frr's)
    found: L3vni | None
    #: the names that exist but are not ovn-frr's
    foreign: tuple[str, ...] = ()
    #: the bridge (the SVI) and the VXLAN device are up, the VXLAN device on the bridge
    ready: bool = False
    #: the bridge's MAC: zebra's router MAC of the VRF
    router_mac: str = ""
    #: the devices under those names that are ovn-frr's (a half-made set too)
    mine: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class L3vniPlan:
    #: devices of ovn-frr's to delete (first)
    delete: tuple[str, ...] = ()
    #: devices to make
    make: tuple[L3vni, ...] = ()
    #: VNIs whose devices go (no L3VNI in the node config any more)
    remove: tuple[int, ...] = ()
    problems: tuple[str, ...] = ()


def plan_l3vnis(
    config: VrfConfig,
    vrfs: Iterable[KernelVrf],
    kernel: Iterable[KernelL3vni],
    l2vnis: Mapping[int, str] | None = None,
) -> L3vniPlan:
    """What to make and remove so that each configured L3VNI has its devices in its VRF.
    ``kernel``: the configured VNIs' names as found, and every L3VNI device set of
    ovn-frr's; ``l2vnis``: the VNIs OVN's switches use (-> switch): not made as L3VNIs."""
    l2vnis = l2vnis or {}
    have = {k.vni: k for k in kernel}
    present = {v.name for v in vrfs}
    make: list[L3vni] = []
    delete: list[str] = []
    problems: list[str] = []
    wanted = set()
    for vrf, vni in sorted(config.l3vnis.items()):
        wanted.add(vni)
        if config.vtep is None:
            problems.append(f"VRF {vrf}: L3VNI {vni} needs EVPN (a VTEP address)")
            continue
        local, port, mtu = config.vtep
        want = L3vni(vni, vrf, local, port, mtu)
        cur = have.get(vni, KernelL3vni(vni, None))
        if vni in l2vnis:
            problems.append(f"VRF {vrf}: L3VNI {vni} is also the dynamic-routing-vni of "
                            f"logical switch {l2vnis[vni]} (not made)")  # fmt: skip
            continue
        if cur.foreign:
            problems.append(f"VRF {vrf}: L3VNI {vni}: {', '.join(cur.foreign)} exist and are "
                            "not ovn-frr's (left as they are)")  # fmt: skip
            continue
        if vrf not in present:
            problems.append(f"VRF {vrf}: L3VNI {vni} waits for the VRF device")
            continue
        if cur.found != want or not cur.ready:
            make.append(want)
            delete += cur.mine
    remove = tuple(sorted(v for v, k in have.items() if v not in wanted and k.mine))
    delete += [n for v in remove for n in have[v].mine]
    return L3vniPlan(tuple(delete), tuple(make), remove, tuple(problems))


@dataclass(frozen=True, slots=True)
class VrfPlan:
    #: (name, table) to make, marked as ovn-frr's
    create: tuple[tuple[str, int], ...] = ()
    #: (interface, VRF): interfaces to put in a VRF ovn-frr made
    enslave: tuple[tuple[str, str], ...] = ()
    #: ovn-frr's VRFs nothing needs
    remove: tuple[str, ...] = ()
    #: what is needed and what it is: (name, table or None if not made yet, owner, users)
    view: tuple[tuple[str, int | None, str, tuple[str, ...]], ...] = ()
    problems: tuple[str, ...] = ()


def needed_vrfs(state: OvnState | None, config: VrfConfig) -> dict[str, VrfNeed]:
    """The VRFs this chassis needs (``state`` None: the config's only)."""
    users: dict[str, list[str]] = {}
    asked: dict[str, set[int]] = {}
    ovn_makes: set[str] = set()
    for name in config.tables:
        users.setdefault(name, []).append("node config")
    for name, neighbors in config.neighbors.items():
        users.setdefault(name, []).extend(f"neighbor {n}" for n in neighbors)
    for r in state.routers if state is not None else ():
        routing = r.routing
        if not routing.enabled or not routing.vrf:
            continue
        if r.pinned_elsewhere:
            continue
        users.setdefault(routing.vrf, []).append(f"router {r.name}")
        if routing.native and any(p.routing.maintain_vrf for p in r.ports):
            ovn_makes.add(routing.vrf)
        if routing.vrf_id is not None:
            asked.setdefault(routing.vrf, set()).add(routing.vrf_id)
    out = {}
    for name, who in users.items():
        table = config.tables.get(name)
        tables = asked.get(name, set())
        conflict: tuple[int, ...] = ()
        if table is None and len(tables) == 1:
            table = next(iter(tables))
        elif table is None and len(tables) > 1:
            conflict = tuple(sorted(tables))
        out[name] = VrfNeed(name, table, config.interfaces.get(name, ()), tuple(who), conflict,
                            name in ovn_makes)  # fmt: skip
    return out


def plan_vrfs(
    needed: Mapping[str, VrfNeed], kernel: Iterable[KernelVrf], links: Iterable[KernelLink]
) -> VrfPlan:
    """What to make, put in, remove. ``kernel``: every VRF device; ``links``: the kernel's
    interfaces among the names needed (VRF names and the interfaces to put in)."""
    have = {v.name: v for v in kernel}
    present = {link.name: link for link in links}
    used = {v.table for v in have.values()}
    # the tables asked for are taken before any is chosen: a choice never takes one
    asked = {n.table for n in needed.values() if n.table is not None and n.name not in have}
    create: list[tuple[str, int]] = []
    enslave: list[tuple[str, str]] = []
    view: list[tuple[str, int | None, str, tuple[str, ...]]] = []
    problems: list[str] = []
    for name in sorted(needed):
        need = needed[name]
        if need.conflict:
            tables = ", ".join(map(str, need.conflict))
            problems.append(f"VRF {name}: routers ask different tables {tables} "
                            "(dynamic-routing-vrf-id)")  # fmt: skip
        cur = have.get(name)
        if cur is not None:
            if need.table is not None and need.table != cur.table:
                problems.append(f"VRF {name}: table {need.table} asked ({', '.join(need.users)}),"
                                f" the kernel's has table {cur.table}")  # fmt: skip
            owner = "ovn-frr" if cur.ours else "ovn" if need.ovn_makes else "operator"
            view.append((name, cur.table, owner, need.users))
            if cur.ours or need.ovn_makes:  # (OVN's own: its interfaces go in too)
                enslave += _members(need, cur.members, present, problems)
            elif missing := [i for i in need.interfaces if i not in cur.members]:
                problems.append(f"VRF {name} is the operator's (left as it is): "
                                f"{', '.join(missing)} not in it")  # fmt: skip
            continue
        if need.ovn_makes:  # OVN's own (dynamic-routing-maintain-vrf): not made here
            view.append((name, None, "ovn (not made yet)", need.users))
            continue
        if name in present:
            problems.append(f"VRF {name}: an interface of that name exists and is no VRF")
            view.append((name, None, "-", need.users))
            continue
        table = need.table
        if table is not None and (table in used or table in RESERVED_TABLES):
            problems.append(f"VRF {name}: table {table} is reserved or another VRF's")
            view.append((name, None, "-", need.users))
            continue
        if table is None:
            table = TABLE_BASE
            while table in used or table in asked:
                table += 1
        used.add(table)
        create.append((name, table))
        view.append((name, table, "ovn-frr", need.users))
        enslave += _members(need, frozenset(), present, problems)
    remove = tuple(sorted(v.name for v in have.values() if v.ours and v.name not in needed))
    return VrfPlan(tuple(create), tuple(enslave), remove, tuple(view), tuple(problems))


def _members(
    need: VrfNeed,
    members: frozenset[str],
    present: Mapping[str, KernelLink],
    problems: list[str],
) -> list[tuple[str, str]]:
    out = []
    for ifname in need.interfaces:
        if ifname in members:
            continue
        link = present.get(ifname)
        if link is None:
            problems.append(f"VRF {need.name}: no interface {ifname} to put in it")
        elif link.master:  # never taken out of a bridge, a bond or another VRF
            problems.append(f"VRF {need.name}: interface {ifname} is in {link.master}")
        else:
            out.append((ifname, need.name))
    return out
