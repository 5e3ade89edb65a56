"""What the NB and SB IDLs monitor: only rows that concern this chassis (conditional monitors).

The chassis' share of OVN is what ovn-controller calls its local datapaths: the switches with a
port bound here, the routers behind them, the router pinned here and the routers whose gateway
port is active here. From SB the agent needs this chassis' Chassis row and the port bindings on
it; from NB those switches and routers and what hangs off them. An OVSDB condition cannot
follow a reference, so each set is derived from the rows already received, the way
ovn-controller conditions SB on its local datapaths:

    SB: Chassis name == this chassis -> Port_Binding chassis == its UUID
        (:mod:`ovn_frr.ovn.sbmonitor`: a plain monitor, not an IDL)
    NB: switch ports bound here (by name) -> the switches holding them -> all their ports
        -> the router ports that any switch received peers with, the gateway ports bound
           here (by name), and the gateway ports this chassis may host (Gateway_Chassis or
           HA_Chassis with its name -> the ports and HA groups referring to them)
        -> the routers holding them, and the routers pinned here (options:chassis), but
           not a router pinned to another chassis
        -> of each: its ports, NATs, load balancers and load balancer groups -> the groups'
           load balancers (by UUID; the import's hijack guard keeps routes off every address
           of the routers reached); and of a router with
           dynamic routing announced here (pinned here, or a gateway port here or that may
           come here): the switches behind its ports (through their router-type ports) with
           all their ports, load balancers and groups, the router ports peered with its
           ports, and the routers across the ports that announce NATs or VIPs (also gateway
           routers of other chassis) with their ports, NATs and load balancers; of such a
           router with floating IPs across a ``nat`` port and one gateway port: the switch
           behind that port and every localnet port (where OVN routes those floating IPs
           depends on whether that switch has one), only for that
        Logical_Router_Static_Route: the rows ovn-frr did not write, only while such a
        router redistributes ``static``

So a change on another chassis (a pod bound there, its switch, its gateway router) reaches no
other agent, unless a router announced here has it behind or across its ports.

Each function reads an IDL (call it with the IDL quiescent) and returns table -> condition; the
reader sets them and takes no state as final until every condition it asked for is acked by
ovsdb-server and the conditions computed from what arrived are those in force (a fixed point:
a few round trips at start, one for each later step of the chain).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ovn_frr.core.ovn import OPT_ENABLED, OPT_REDISTRIBUTE
from ovn_frr.ovn.bulk import LRSR, OWNER
from ovn_frr.ovn.views import (
    HolderView,
    LrpView,
    RowViews,
    lrp_view,
    lsp_view,
    nat_view,
    router_view,
)

#: the static routes ovn-frr did not write (any chassis)
NOT_OURS = [["external_ids", "excludes", ["map", [list(OWNER)]]]]
#: matches no row
NOTHING: list[Any] = [False]

Conditions = dict[str, list[Any]]


def initial_nb(chassis: str) -> Conditions:
    """Before anything is read: the router pinned here, this chassis' gateway entries,
    nothing else."""
    return {
        "Gateway_Chassis": [["chassis_name", "==", chassis]],
        "HA_Chassis": [["chassis_name", "==", chassis]],
        "HA_Chassis_Group": NOTHING,
        "Logical_Router": [_pinned(chassis)],
        "Logical_Router_Port": NOTHING,
        "Logical_Switch": NOTHING,
        "Logical_Switch_Port": NOTHING,
        "NAT": NOTHING,
        "Load_Balancer": NOTHING,
        "Load_Balancer_Group": NOTHING,
        LRSR: NOTHING,
    }


def _pinned(chassis: str) -> list[Any]:
    return ["options", "includes", ["map", [["chassis", chassis]]]]


def _refs(row: Any, column: str) -> list[str]:
    """The UUIDs a reference column holds, also of rows this IDL does not monitor (the
    column's Python value drops those)."""
    datum = row._data.get(column) if row._data is not None else None
    return [] if datum is None else [str(atom.value) for atom in datum.values]


def _by_uuid(uuids: Iterable[str]) -> list[Any]:
    return [["_uuid", "==", ["uuid", u]] for u in sorted(set(uuids))]


def _holding(column: str, uuids: Iterable[str]) -> list[Any]:
    return [[column, "includes", ["uuid", u]] for u in sorted(set(uuids))]


def _true(options: Any, key: str) -> bool:
    return bool(options.get(key, "").strip().lower() == "true")


def _switches_holding(
    switches: Iterable[Any],
    lsps: set[str],
    ports_out: set[str],
    lbs_out: set[str],
    groups_out: set[str],
    switches_out: set[str],
    named: frozenset[str] = frozenset(),
) -> None:
    """The switches holding any of ``lsps`` (or named in ``named``): all their ports, their
    LBs and LB groups, their UUIDs."""
    for ls in switches:
        ports = _refs(ls, "ports")
        if lsps.intersection(ports) or ls.name in named:
            ports_out.update(ports)
            lbs_out.update(_refs(ls, "load_balancer"))
            groups_out.update(_refs(ls, "load_balancer_group"))
            switches_out.add(str(ls.uuid))


def nb(
    idl: Any, chassis: str, bound: frozenset[str], views: RowViews | None = None,
    named: frozenset[str] = frozenset(), static_routers: frozenset[str] = frozenset(),
) -> tuple[Conditions, frozenset[str]]:  # fmt: skip
    """NB rows that concern this chassis, given the logical ports bound on it (from SB).
    ``views``: what the reader made of each row (kept until the row changes). ``named``:
    switches taken as local whether or not a port on them is bound here, by name, and
    ``static_routers``: routers whose static routes are needed, by name (ovn-kubernetes' node
    switches and gateway routers, :mod:`ovn_frr.core.ovnk`): the static routes ovn-frr did not
    write are then monitored, as for a router that announces ``static``.

    What is reached is found anew from this chassis' own roots (the ports bound here, its
    gateway ports, the router pinned here) through the rows received, to the least fixed
    point: a router reached only through a switch that is there because that router is
    announced in full (a distributed router whose last local port went) is not reached any
    more, and its rows go.

    Also the UUIDs of the switches received that are not this chassis' share (read only to
    learn whether they have a localnet port, or on their way out): the reader makes no switch
    of them."""
    t = idl.tables
    rv = views or RowViews()
    lsp_of = rv.cache("Logical_Switch_Port", lsp_view)
    lrp_of = rv.cache("Logical_Router_Port", lrp_view)
    lr_of = rv.cache("Logical_Router", router_view)
    nat_of = rv.cache("NAT", nat_view)
    lsps = [lsp_of(p) for p in t["Logical_Switch_Port"].rows.values()]
    by_uuid = {x.uuid: x for x in lsps}
    lrps = {str(r.uuid): lrp_of(r) for r in t["Logical_Router_Port"].rows.values()}
    lrs = [(str(lr.uuid), lr_of(lr)) for lr in t["Logical_Router"].rows.values()]
    switches = list(t["Logical_Switch"].rows.values())
    bound_lsps = {p.uuid for p in lsps if p.name in bound}
    gateways = {name[3:] for name in bound if name.startswith("cr-")}
    # gateway ports this chassis may host (a gateway chassis or HA group member): their
    # routers are here already when the gateway fails over to this chassis
    standby_gwc = {str(r.uuid) for r in t["Gateway_Chassis"].rows.values()}
    ha = {str(r.uuid) for r in t["HA_Chassis"].rows.values()}
    groups = {str(r.uuid) for r in t["HA_Chassis_Group"].rows.values()}
    standby = {u for u, r in lrps.items()
               if standby_gwc & r.gateway_chassis or groups & r.ha_group}  # fmt: skip
    # the local switches (a port bound here), then, round by round, the routers reached
    # through them and the switches behind the routers announced in full here
    wanted_lsps, lbs, lb_groups, local_switches = set[str](), set[str](), set[str](), set[str]()
    _switches_holding(switches, bound_lsps, wanted_lsps, lbs, lb_groups, local_switches, named)
    full_peers, direct = set[str](), set[str]()
    while True:
        # routers are reached through the switches reached, as ovn-controller follows patch
        # ports from its local datapaths, and through router ports peered directly
        peers = {r for u in wanted_lsps if (x := by_uuid.get(u)) is not None
                 and x.type == "router" and (r := x.router_port) is not None} | direct  # fmt: skip
        local_lrps = sorted({u for u, r in lrps.items() if r.name in peers | gateways} | standby)
        reached = _reached(lrs, chassis, set(local_lrps))
        full_names = _full(reached, lrps, chassis, gateways, standby)
        more = {p.uuid for p in lsps if p.type == "router" and p.router_port in full_names}
        more_direct = {r.peer for r in lrps.values() if r.name in full_names and r.peer}
        if more <= full_peers and more_direct <= direct:
            break
        full_peers |= more
        direct |= more_direct
        _switches_holding(switches, full_peers, wanted_lsps, lbs, lb_groups, local_switches)
    # the routers across the ports announcing NATs or VIPs (a gateway router of another
    # chassis too): OVN announces their NATs and VIPs there
    neighbours, across_nat = _neighbours(lrs, lrps, full_names, switches, by_uuid)
    # a neighbour with floating IPs across a ``nat`` port and one gateway port: whether the
    # switch behind that port has a localnet port (OVN routes the floating IPs on the gateway
    # chassis when it has none); that switch's row and the localnet ports, nothing else of it
    probes, probe_lsps, probed = _only_gateways(
        across_nat, lrps, lsps, switches,
        {str(u) for u, n in t["NAT"].rows.items() if nat_of(n).distributed_port})  # fmt: skip
    # every router reached: its networks, NATs and VIPs (the import's hijack guard)
    wanted_lrps: set[str] = set()
    nats: set[str] = set()
    for lr in [*reached, *neighbours]:
        wanted_lrps.update(map(str, lr.ports))
        nats.update(map(str, lr.nats))
        lbs.update(map(str, lr.lbs))
        lb_groups.update(map(str, lr.groups))
    statics = any(
        "static" in _classes_of(lr.options, lrps[str(u)].options)
        for lr in reached
        for u in lr.ports
        if str(u) in lrps and lrps[str(u)].name in full_names
    )
    routers = [_pinned(chassis), *_holding("ports", local_lrps)]
    # the load balancers of the groups received (a group is asked by its UUID first)
    lbs.update(u for g in t["Load_Balancer_Group"].rows.values() if str(g.uuid) in lb_groups
               for u in _refs(g, "load_balancer"))  # fmt: skip
    # a switch already received is asked by its UUID, one clause however many of its ports
    # are bound here (10k pods bound at once change no condition); a port whose switch has
    # not arrived yet is asked through the switch holding it
    held = {u for ls in switches for u in _refs(ls, "ports")}
    # a port bound here is asked by name until it arrives with its switch's ports: the
    # clauses then stay the same while pods are bound and unbound on a local switch (each
    # condition change costs ovsdb-server a pass over the table)
    received = {p.name for p in lsps if p.uuid in wanted_lsps}
    lsp_conds: list[Any] = [
        ["name", "==", n] for n in sorted(bound - received - {f"cr-{g}" for g in gateways})
    ]
    lsp_conds += [["options", "includes", ["map", [["router-port", n]]]]
                  for n in sorted(full_names | probes)]  # fmt: skip
    lsp_conds += [["type", "==", "localnet"]] if probes else []
    conds = {
        "Gateway_Chassis": [["chassis_name", "==", chassis]],
        "HA_Chassis": [["chassis_name", "==", chassis]],
        "HA_Chassis_Group": _holding("ha_chassis", ha) or NOTHING,
        "Logical_Router": routers,
        "Logical_Router_Port": [["name", "==", n] for n in sorted(peers | gateways)]
        + _holding("gateway_chassis", standby_gwc)
        + [["ha_chassis_group", "==", ["uuid", g]] for g in sorted(groups)]
        + _by_uuid(wanted_lrps)
        or NOTHING,
        "Logical_Switch": _by_uuid(local_switches | probed)
        + _holding("ports", (bound_lsps | full_peers | probe_lsps) - held)
        + [["name", "==", n] for n in sorted(named)]
        or NOTHING,
        "Logical_Switch_Port": lsp_conds + _by_uuid(wanted_lsps) or NOTHING,
        "NAT": _by_uuid(nats) or NOTHING,
        "Load_Balancer": _by_uuid(lbs) or NOTHING,
        "Load_Balancer_Group": _by_uuid(lb_groups) or NOTHING,
        LRSR: NOT_OURS if statics or static_routers else NOTHING,
    }
    # every switch received outside the share: a probe's, or one on its way out (a probe
    # dropped): the reader makes no switch of either
    return conds, frozenset(str(ls.uuid) for ls in switches) - local_switches


def _reached(routers: Iterable[tuple[str, HolderView]], chassis: str,
             lrps: set[str]) -> list[HolderView]:  # fmt: skip
    """The routers pinned here or holding one of ``lrps`` (UUIDs), but never a router pinned
    to another chassis (a gateway router of another chassis, reached through a shared
    switch)."""
    out = []
    for _uuid, lr in routers:
        pin = lr.options.get("chassis")
        if pin == chassis or (pin is None and lrps.intersection(map(str, lr.ports))):
            out.append(lr)
    return out


def _full(
    routers: Iterable[HolderView], lrps: Mapping[str, LrpView], chassis: str,
    gateways: set[str], standby: set[str],
) -> set[str]:  # fmt: skip
    """The names of the router ports of the routers announced here: dynamic routing on and
    a gateway here (or one it may host: a standby has what it needs before a failover). A
    router pinned nowhere without gateway ports is announced by no chassis (as OVN)."""
    out: set[str] = set()
    for lr in routers:
        options = lr.options
        if not _true(options, OPT_ENABLED):
            continue
        mine = [(str(u), lrps[str(u)]) for u in lr.ports if str(u) in lrps]
        hosted = options.get("chassis") == chassis or any(
            r.name in gateways or u in standby for u, r in mine
        )
        if hosted:
            out.update(r.name for _u, r in mine)
    return out


def _only_gateways(
    routers: Iterable[HolderView], lrps: Mapping[str, LrpView], lsps: Iterable[Any],
    switches: Iterable[Any], fips: set[str],
) -> tuple[set[str], set[str], set[str]]:  # fmt: skip
    """The names of the gateway ports of the routers with a NAT of ``fips`` (UUIDs) and
    exactly one gateway port, the UUIDs of the router-type switch ports received for them,
    and of the switches received holding those."""
    names: set[str] = set()
    for lr in routers:
        gateways = [r.name for u in lr.ports if (r := lrps.get(str(u))) is not None and r.gateway]
        if len(gateways) == 1 and fips.intersection(map(str, lr.nats)):
            names.update(gateways)
    if not names:
        return names, set(), set()
    ports = {p.uuid for p in lsps if p.type == "router" and p.router_port in names}
    return names, ports, {str(ls.uuid) for ls in switches if ports.intersection(_refs(ls, "ports"))}


def _classes_of(router: Mapping[str, str], port: Mapping[str, str]) -> set[str]:
    """A port's redistribute classes: its own list, else its router's."""
    text = port.get(OPT_REDISTRIBUTE, router.get(OPT_REDISTRIBUTE, ""))
    return {t.strip() for t in text.split(",")}


def _neighbours(
    routers: Iterable[tuple[str, HolderView]], lrps: Mapping[str, LrpView], full: set[str],
    switches: Iterable[Any], lsps: Mapping[str, Any],
) -> tuple[list[HolderView], list[HolderView]]:  # fmt: skip
    """The routers across the ports of ``full`` that announce ``nat`` or ``lb`` (the one
    peered directly, else those with a port on the switch behind), and those of them across
    a port that announces ``nat``, in one pass."""
    routers = list(routers)
    owner = {str(u): lr for _uuid, lr in routers for u in lr.ports}
    across: set[str] = set()
    across_nat: set[str] = set()
    behind: dict[str, bool] = {}  # port name -> it announces nat
    for u, r in lrps.items():
        if r.name not in full or u not in owner:
            continue
        classes = _classes_of(owner[u].options, r.options)
        if not {"nat", "lb"} & classes:
            continue
        if r.peer:
            across.add(r.peer)
            if "nat" in classes:
                across_nat.add(r.peer)
        else:
            behind[r.name] = "nat" in classes
    for ls in switches:
        ports = [x for u in _refs(ls, "ports") if (x := lsps.get(u)) is not None
                 and x.type == "router" and x.router_port is not None]  # fmt: skip
        found = [behind[x.router_port] for x in ports if x.router_port in behind]
        if found:
            across.update(x.router_port for x in ports)
            if any(found):
                across_nat.update(x.router_port for x in ports)

    def holding(names: set[str]) -> list[HolderView]:
        return [lr for _uuid, lr in routers
                if any(lrps[str(u)].name in names for u in lr.ports if str(u) in lrps)]  # fmt: skip

    return holding(across), holding(across_nat)
