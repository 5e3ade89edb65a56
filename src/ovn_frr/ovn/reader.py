"""The one reader of OVN: NB and SB as one frozen :class:`~ovn_frr.core.ovn.OvnState`.

Both monitors take only what concerns this chassis (:mod:`ovn_frr.ovn.conditions`): from SB
(:mod:`ovn_frr.ovn.sbmonitor`, a plain monitor, not an IDL) this chassis' Chassis row and the
port bindings on it; from NB the routers this chassis serves, their
ports, NATs and load balancers, the switches behind them and the switch ports that matter here.
After each change the conditions are derived again from what arrived, and no state is handed
out until they are all in force (:meth:`OvnReader.read` returns None meanwhile): a state read
half-way would be missing routers or ports, and announcements with them.

The NB IDL sees Logical_Router_Static_Route rows only while a served router redistributes
``static``, and then only those ovn-frr did not write (a condition on the constant owner pair):
the rows ovn-frr owns can be 100k+ and are tracked by :mod:`ovn_frr.ovn.bulk`. For the same
reason it does not monitor ``Logical_Router.static_routes``, so the router of each foreign
static route is asked from ovsdb-server (one ``select`` per row, in one transaction), only when
the set of those rows changed (or every ``ask_every`` seconds, for a row moved between routers).
"""

from __future__ import annotations

import ipaddress
import logging
import operator
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ovn_frr.core.advertise import redistributes_static
from ovn_frr.core.ovn import (
    LogicalRouter,
    LogicalSwitch,
    Nat,
    OvnState,
    RouterPort,
    StaticRoute,
    Vip,
)
from ovn_frr.ovn import conditions
from ovn_frr.ovn.bulk import LRSR
from ovn_frr.ovn.changes import Changes
from ovn_frr.ovn.db import OvsdbConnection
from ovn_frr.ovn.jsonrpc import Client
from ovn_frr.ovn.sbmonitor import SbMonitor
from ovn_frr.ovn.views import (
    HolderView,
    RowViews,
    addr,
    binding_here,
    group_view,
    lb_vips,
    lrp_view,
    lsp_view,
    nat_view,
    router_view,
    switch_view,
)

log = logging.getLogger(__name__)
V = TypeVar("V")

NB_TABLES = {
    "Logical_Router": ["name", "options", "ports", "nat", "load_balancer", "load_balancer_group"],
    "Logical_Router_Port": [
        "name",
        "networks",
        "options",
        "gateway_chassis",
        "ha_chassis_group",
        "peer",
    ],
    "Logical_Switch": ["name", "ports", "load_balancer", "load_balancer_group", "other_config"],
    "Logical_Switch_Port": ["name", "addresses", "dynamic_addresses", "type", "options"],
    "NAT": [
        "external_ip",
        "type",
        "logical_port",
        "external_mac",
        "gateway_port",
        "options",
        "external_ids",
    ],
    "Load_Balancer": ["name", "vips", "options"],
    # ovn-kubernetes attaches its services to every gateway router and switch through groups
    "Load_Balancer_Group": ["name", "load_balancer"],
    LRSR: ["ip_prefix", "policy", "nexthop", "output_port", "options", "external_ids"],
    # this chassis' entries only: which gateway ports it may host
    "Gateway_Chassis": ["chassis_name"],
    "HA_Chassis": ["chassis_name"],
    "HA_Chassis_Group": ["ha_chassis"],
}
SB_TABLES = {
    "Port_Binding": ["logical_port", "chassis", "type"],
    "Chassis": ["name"],
}


def nb_connection(remote: str, chassis: str) -> OvsdbConnection:
    return OvsdbConnection(remote, "OVN_Northbound", NB_TABLES, conditions.initial_nb(chassis))


def sb_connection(remote: str, chassis: str) -> SbMonitor:
    """Only what locality needs: this chassis' own row and the port bindings on it."""
    return SbMonitor(remote, chassis)


def bound_ports(sb_idl: Any) -> frozenset[str]:
    """Logical ports bound on this chassis from an SB IDL of ``SB_TABLES`` (the only chassis
    row it monitors; a binding that arrives before its condition is narrowed has no chassis
    reference). The agent reads SB with :class:`SbMonitor`; the scale bench's baseline (what
    ovn-frr monitored before conditions) with the IDL."""
    here = sb_idl.tables["Chassis"].rows
    ports = (binding_here(pb, here) for pb in sb_idl.tables["Port_Binding"].rows.values())
    return frozenset(p for p in ports if p is not None)


# --- NB rows -> core values -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StaticRow:
    """A Logical_Router_Static_Route row no ovn-frr wrote, before its router is known."""

    uuid: str
    ip_prefix: str
    policy: str
    options: Mapping[str, str]
    nexthop: str = ""
    output_port: str = ""


_name = operator.attrgetter("name")


class _Rows:
    """The views of an IDL's rows by UUID (None for a row it lacks), made once per row change
    (``views``)."""

    def __init__(self, nb_idl: Any, views: RowViews) -> None:
        self.t = nb_idl.tables
        self.views = views
        self.lsp = self._of("Logical_Switch_Port", lsp_view)
        self.lrp = self._of("Logical_Router_Port", lrp_view)
        self.nat = self._of("NAT", nat_view)
        self.lb = self._of("Load_Balancer", lb_vips)
        self.group = self._of("Load_Balancer_Group", group_view)

    def _of(self, table: str, make: Callable[[Any], V]) -> Callable[[Any], V | None]:
        rows, cache = self.t[table].rows, self.views.cache(table, make)

        def get(uuid: Any) -> V | None:
            row = rows.get(uuid)
            return None if row is None else cache(row)

        return get

    def vips(self, holder: HolderView) -> tuple[Vip, ...]:
        """Its load balancers' VIPs: its own and its groups' (each once, as ovn-northd)."""
        lbs = set(holder.lbs)
        for g in holder.groups:
            lbs.update(self.group(g) or ())
        return tuple(x for u in sorted(lbs) for x in (self.lb(u) or ()))

    def switches(
        self, bound: frozenset[str], probed: frozenset[str] = frozenset()
    ) -> tuple[dict[str, LogicalSwitch], dict[str, str], dict[str, bool]]:
        """The switches by UUID, router port name -> the UUID of the switch behind it, and
        for the switches of ``probed`` (read only for that) router port name -> whether the
        switch behind it has a localnet port."""
        switches: dict[str, LogicalSwitch] = {}
        behind: dict[str, str] = {}
        localnet: dict[str, bool] = {}
        cache = self.views.cache("Logical_Switch", switch_view)
        for ls in self.t["Logical_Switch"].rows.values():
            uuid, sv = str(ls.uuid), cache(ls)
            if uuid in probed:
                found = [p for pu in sv.ports if (p := self.lsp(pu)) is not None]
                has = any(p.type == "localnet" for p in found)
                localnet.update((p.router_port, has) for p in found
                                if p.type == "router" and p.router_port is not None)  # fmt: skip
                continue
            lsps = []
            for pu in sv.ports:
                if (p := self.lsp(pu)) is None:
                    continue
                if p.type == "router":
                    if p.router_port is not None:
                        behind[p.router_port] = uuid
                    continue
                lsps.append(p.bound if p.name in bound else p.port)
            lsps.sort(key=_name)
            switches[uuid] = LogicalSwitch(uuid, sv.name, tuple(lsps), self.vips(sv),
                                           dict(sv.options))  # fmt: skip
        return switches, behind, localnet

    def router(self, lr: Any, chassis: str, bound: frozenset[str], behind: Mapping[str, str],
               problems: list[str]) -> LogicalRouter:  # fmt: skip
        rv = self.views.cache("Logical_Router", router_view)(lr)
        pinned = rv.options.get("chassis") == chassis
        ports = []
        for pu in rv.ports:
            if (lrp := self.lrp(pu)) is None:
                continue
            problems += [f"router port {lrp.name}: network {n!r} is not an address/length"
                         for n in lrp.bad]  # fmt: skip
            ports.append(RouterPort.of(lrp.name, lrp.networks, lrp.options,
                                       f"cr-{lrp.name}" in bound, behind.get(lrp.name, ""),
                                       lrp.gateway, lrp.peer))  # fmt: skip
        nats = []
        for nu in rv.nats:
            if (nat := self.nat(nu)) is None:
                continue
            ext = addr(nat.external_ip)
            if ext is None:
                problems.append(f"NAT on {rv.name}: external_ip {nat.external_ip!r} "
                                "is not an IP address")  # fmt: skip
                continue
            # a floating IP (a dnat_and_snat with logical port and MAC) is where its VM is
            gateway = self.lrp(nat.gateway_port) if nat.gateway_port is not None else None
            nats.append(Nat.of(rv.name, ext, nat.options, nat.distributed_port in bound,
                               nat.type, nat.distributed_port,
                               gateway.name if gateway is not None else "",
                               nat.owner_type))  # fmt: skip
        return LogicalRouter.of(rv.name, rv.options, tuple(ports), tuple(nats), self.vips(rv),
                                pinned, str(lr.uuid))  # fmt: skip


def read_nb(
    nb_idl: Any, chassis: str, bound: frozenset[str], views: RowViews | None = None,
    probed: frozenset[str] = frozenset(),
) -> tuple[OvnState, tuple[StaticRow, ...]]:  # fmt: skip
    """The state (its static routes still without routers) and the foreign static rows (call
    with the IDL quiescent). ``bound``: logical ports bound on this chassis; ``views``: what
    was made of each row, kept until it changes (:class:`~ovn_frr.ovn.views.RowViews`, synced
    by the caller; default: made anew); ``probed``: switches read only for whether they
    have a localnet port (:func:`ovn_frr.ovn.conditions.nb`)."""
    t = nb_idl.tables
    rows = _Rows(nb_idl, views or RowViews())
    problems: list[str] = []
    switches, behind, localnet = rows.switches(bound, probed)
    routers = [rows.router(lr, chassis, bound, behind, problems)
               for lr in t["Logical_Router"].rows.values()]  # fmt: skip
    statics = tuple(
        StaticRow(
            str(r.uuid),
            r.ip_prefix,
            r.policy[0] if r.policy else "dst-ip",
            dict(r.options),
            r.nexthop,
            r.output_port[0] if r.output_port else "",
        )
        for r in t[LRSR].rows.values()
        # a row of an older ovn-frr (no owner pair) still carries its chassis marker
        if not any(k.startswith("ovn-frr:") for k in r.external_ids)
    )
    state = OvnState(tuple(sorted(routers, key=lambda r: r.name)), switches,
                     read_problems=tuple(problems), gateway_localnet=localnet)  # fmt: skip
    return state, statics


def with_statics(
    state: OvnState, rows: Sequence[StaticRow], router_of: Mapping[str, str]
) -> OvnState:
    """The state with its foreign static routes, each with the router that holds it."""
    statics = []
    problems = list(state.read_problems)
    for row in rows:
        router = router_of.get(row.uuid, "")
        try:
            prefix = ipaddress.ip_network(row.ip_prefix, strict=False)
        except ValueError:
            problems.append(f"static route on {router or '?'}: ip_prefix {row.ip_prefix!r} "
                            "is not a prefix")  # fmt: skip
            continue
        statics.append(StaticRoute.of(row.uuid, router, prefix, row.options, row.policy,
                                      row.nexthop, row.output_port))  # fmt: skip
    statics.sort(key=lambda s: (s.router, s.prefix.version, str(s.prefix), s.uuid))
    return replace(state, statics=tuple(statics), read_problems=tuple(problems))


def routers_of(client: Client, uuids: Sequence[str]) -> dict[str, str]:
    """Route row UUID -> the name of the router whose ``static_routes`` holds it (the table
    has no back reference; meant for the few rows ovn-frr did not write)."""
    if not uuids:
        return {}
    results = client.call([
        {"op": "select", "table": "Logical_Router", "columns": ["name"],
         "where": [["static_routes", "includes", ["uuid", u]]]}
        for u in uuids
    ])  # fmt: skip
    return {u: r["rows"][0]["name"] for u, r in zip(uuids, results, strict=True) if r["rows"]}


class OvnReader:
    """NB (IDL) + SB (monitor), started here, and a JSON-RPC client for the routers of static
    routes. Blocking: call from one worker thread."""

    def __init__(
        self,
        nb: OvsdbConnection,
        sb: SbMonitor,
        chassis: str,
        ask_every: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        switch_names: frozenset[str] = frozenset(),
        static_routers: frozenset[str] = frozenset(),
    ) -> None:
        #: switches read by name whether or not a port on them is bound here, and routers
        #: whose static routes are needed (ovn-kubernetes' node switches and gateway routers:
        #: the foreign static routes are then read, as for a router announcing ``static``)
        self.switch_names = switch_names
        self.static_routers = static_routers
        self.nb = nb
        self.sb = sb
        self.chassis = chassis
        self.ask_every = ask_every
        self.clock = clock
        self._client = Client(nb.remote)
        self._router_of: dict[str, str] = {}
        self._asked: frozenset[str] | None = None
        self._ask_at = 0.0
        #: reads that found the monitors still settling
        self.settling = 0
        self.max_settle_s = 1.0
        self._handed_at: float | None = None
        #: what was made of NB rows, until they change
        self._views = RowViews()
        #: bumped by both monitors on any change (what a settling read waits for), and its
        #: count when the last read's data was taken
        self.changes = Changes()
        self.seen_count = -1
        nb.changes = sb.changes = self.changes

    @property
    def change_count(self) -> int:
        return self.changes.count

    def start(self) -> None:
        """Connect NB's IDL and SB's monitor (again after a failed start); raises OvnError."""
        for db in (self.nb, self.sb):
            if not db.started:
                db.start()

    def read(self, wait_s: float = 0.0) -> OvnState | None:
        """The state, or None while the monitors settle (the last state still holds). Never
        before the first settled state (a restart must not announce, nor withdraw, from half
        of its share); after it, a state still settling is handed out once the last one is
        ``max_settle_s`` old: a stream of new ports on a local switch changes the conditions
        with each port and must not hold every state back (what is missing then is rows on
        their way in, never rows that were there).

        While settling, up to ``wait_s`` is spent here waiting for what the conditions asked
        for (their acknowledgement, rows arriving) and reading again: a change that needs a
        condition round trip (a new NAT, a newly bound port) is read as soon as its rows are
        in, not after the caller is woken again."""
        self.start()
        deadline = self.clock() + wait_s
        while True:
            seen = self.changes.count
            stale_ok = (self._handed_at is not None
                        and self.clock() - self._handed_at >= self.max_settle_s)  # fmt: skip
            found = self._read_once(stale_ok)
            self.seen_count = seen
            now = self.clock()
            if found is not None:
                self._handed_at = now
                return self._with_statics(*found)
            self.settling += 1
            left = deadline - now
            if left <= 0:
                return None
            self.changes.wait(seen, left)  # NB or SB: what was asked for, or anything

    def _read_once(self, anyway: bool) -> tuple[OvnState, tuple[StaticRow, ...]] | None:
        """One read of both monitors: the state (static routes without routers yet) and the
        foreign static rows, or None while a condition is not in force (the state is not even
        made then, unless ``anyway``: half of a change's reads are of this kind)."""
        sb = self.sb.bindings()
        bound, sb_pending = sb.ports, not sb.settled

        def nb(idl: Any) -> tuple[OvnState, tuple[StaticRow, ...]] | None:
            self._views.sync(idl)
            # the conditions first, under the same lock as the state: what they ask for is
            # what this state lacks
            conds, probed = conditions.nb(idl, self.chassis, bound, self._views,
                                          self.switch_names, self.static_routers)  # fmt: skip
            pending = self.nb.set_conditions(conds)
            if (pending or sb_pending) and not anyway:
                return None
            return read_nb(idl, self.chassis, bound, self._views, probed)

        return self.nb.read(nb)

    def _with_statics(self, state: OvnState, rows: tuple[StaticRow, ...]) -> OvnState:
        if not (self.static_routers or redistributes_static(state)):
            self._asked = None
            return state
        uuids = frozenset(r.uuid for r in rows)
        if uuids != self._asked or self.clock() >= self._ask_at:
            self._router_of = routers_of(self._client, sorted(uuids))
            self._asked = uuids
            self._ask_at = self.clock() + self.ask_every
        return with_statics(state, rows, self._router_of)

    def close(self) -> None:
        for db in (self.nb, self.sb):
            db.stop()
        self._client.close()
