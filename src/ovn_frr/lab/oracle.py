"""What one chassis should announce and import, computed from NB and SB by docs/intent.md.

The soak (:mod:`ovn_frr.lab.soak`) compares the agent against this. It is written from the
documentation alone and imports nothing of the agent (an import-linter contract keeps it so):
a rule the agent gets wrong and the documentation states shows up as a difference, not as the
same mistake made twice.

Input: NB's rows as OVSDB returns them (:func:`read_nb`, one ``select`` per table) and SB's
bindings (logical port -> chassis name). Output: per VRF, prefix -> next hop (None: FRR's own
address); and the owned static routes NB should hold, as (router, prefix, next hop, output
port), given zebra's selected BGP routes.

Scope, as the soak builds NBs: routers have unique names; a distributed gateway port uses
``gateway_chassis``; ToR prefixes either lie outside every address in NB or are deliberately
an address of a router that learns here (so the hijack guard can be taken as every address in
NB: the chassis' share holds all of those); a router in a VRF learns nothing on a kernel
without VRF devices (the host tier).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

Net = ipaddress.IPv4Network | ipaddress.IPv6Network
Addr = ipaddress.IPv4Address | ipaddress.IPv6Address
Row = dict[str, Any]

TABLES = ("Logical_Router", "Logical_Router_Port", "Logical_Switch", "Logical_Switch_Port",
          "NAT", "Load_Balancer", "Load_Balancer_Group", "Logical_Router_Static_Route",
          "Gateway_Chassis", "HA_Chassis_Group", "HA_Chassis")  # fmt: skip
CLASSES = {"connected", "connected-as-host", "static", "nat", "lb"}
VRF_NAME = re.compile(r"[A-Za-z0-9_.-]{1,15}")
OWNER_KEY = "ovn-frr:owner"


def _value(datum: Any) -> Any:
    """An OVSDB JSON value as Python: uuid -> str, set -> list, map -> dict."""
    if isinstance(datum, list) and len(datum) == 2 and isinstance(datum[0], str):
        kind, inner = datum
        if kind == "uuid":
            return inner
        if kind == "set":
            return [_value(x) for x in inner]
        if kind == "map":
            return {_value(k): _value(v) for k, v in inner}
    return datum


def _set(datum: Any) -> list[Any]:
    """A set column (OVSDB sends a set of one as the bare atom)."""
    value = _value(datum)
    return value if isinstance(value, list) else [value]


@dataclass
class Nb:
    """NB's rows by table, then by UUID (columns as Python values)."""

    tables: dict[str, dict[str, Row]] = field(default_factory=dict)

    def rows(self, table: str) -> dict[str, Row]:
        return self.tables.get(table, {})


#: one OVSDB transaction on a database: its operations -> their results
Transact = Callable[[list[dict[str, Any]]], list[Any]]


def read_nb(transact: Transact) -> Nb:
    """Every row of the tables the intent reads, in one transaction on NB."""
    results = transact([{"op": "select", "table": t, "where": []} for t in TABLES])
    nb = Nb()
    for table, result in zip(TABLES, results, strict=True):
        rows = {}
        for raw in result["rows"]:
            row = {k: _value(v) for k, v in raw.items()}
            for k, v in raw.items():  # reference sets stay lists even with one member
                if (isinstance(v, list) and v[:1] == ["set"]) or k in _SETS:
                    row[k] = _set(v)
            rows[row["_uuid"]] = row
        nb.tables[table] = rows
    return nb


#: set columns that may come as a bare atom
_SETS = {"ports", "nat", "load_balancer", "load_balancer_group", "static_routes", "networks",
         "addresses", "dynamic_addresses", "gateway_chassis", "ha_chassis", "logical_port",
         "external_mac", "policy", "ha_chassis_group", "peer", "output_port",
         "gateway_port"}  # fmt: skip


def read_bindings(transact: Transact) -> dict[str, str]:
    """Logical port -> the name of the chassis it is bound on (one transaction on SB)."""
    chassis, bindings = transact(
        [{"op": "select", "table": "Chassis", "where": [], "columns": ["_uuid", "name"]},
         {"op": "select", "table": "Port_Binding", "where": [],
          "columns": ["logical_port", "chassis"]}]
    )  # fmt: skip
    names = {_value(r["_uuid"]): r["name"] for r in chassis["rows"]}
    out = {}
    for r in bindings["rows"]:
        held = _set(r["chassis"])
        if held and held[0] in names:
            out[r["logical_port"]] = names[held[0]]
    return out


# --- options ----------------------------------------------------------------------------------


def _flag(options: Mapping[str, str], key: str) -> bool | str | None:
    """True/False, None when absent, "bad" when neither."""
    if key not in options:
        return None
    text = options[key].lower()
    return text == "true" if text in ("true", "false") else "bad"


def _classes(options: Mapping[str, str]) -> set[str] | None:
    """The redistribute classes, None when absent; an unknown class is ignored (docs/intent.md,
    as OVN's ovn-northd: a warning, the other classes stand)."""
    if "dynamic-routing-redistribute" not in options:
        return None
    return set(options["dynamic-routing-redistribute"].split(",")) & CLASSES


def _hop(options: Mapping[str, str], key: str, version: int) -> Addr | str | None:
    text = options.get(key, "").strip()
    if not text:
        return None
    try:
        a = ipaddress.ip_address(text)
    except ValueError:
        return "bad"
    if a.version != version or a.is_unspecified or a.is_multicast or a.is_loopback:
        return "bad"
    if a.version == 6 and a.is_link_local:
        return "bad"
    return a


@dataclass
class Router:
    """What the documentation says of one router's options (see docs/intent.md, Routers)."""

    row: Row
    enabled: bool
    announces: bool
    learns: bool
    classes: set[str]
    local_only: bool
    vrf: str
    hops: dict[int, Addr | None]

    @classmethod
    def of(cls, row: Row) -> Router:
        o = row["options"]
        enabled = _flag(o, "dynamic-routing") is True
        classes = _classes(o)
        local_only = _flag(o, "dynamic-routing-redistribute-local-only")
        vrf = o.get("dynamic-routing-vrf-name", "").strip()
        hop4 = _hop(o, "dynamic-routing-v4-prefix-nexthop", 4)
        hop6 = _hop(o, "dynamic-routing-v6-prefix-nexthop", 6)
        vrf_ok = not vrf or bool(VRF_NAME.fullmatch(vrf))
        vrf_id = o.get("dynamic-routing-vrf-id", "").strip()
        id_ok = not vrf_id or (vrf_id.isdigit() and int(vrf_id) not in (0, 252, 253, 254, 255)
                               and int(vrf_id) < 2**32)  # fmt: skip
        no_learning = _flag(o, "dynamic-routing-no-learning")
        announces = (enabled and vrf_ok and local_only != "bad"
                     and "bad" not in (hop4, hop6))  # fmt: skip
        learns = enabled and vrf_ok and id_ok and no_learning in (None, False)
        if not vrf and vrf_id and id_ok:  # OVN's name for the table's VRF
            vrf = f"ovnvrf{vrf_id}"
        return cls(row, enabled, announces, learns,
                   classes or set(), local_only is True,
                   vrf if vrf_ok else "",
                   {4: hop4 if not isinstance(hop4, str) else None,
                    6: hop6 if not isinstance(hop6, str) else None})  # fmt: skip


def _advertise(row: Row) -> bool:
    """``dynamic-routing-advertise``: only true (or absent) announces the object."""
    return _flag(row.get("options", {}), "dynamic-routing-advertise") in (None, True)


def _addr(text: str) -> Addr | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]").split("/", 1)[0])
    except ValueError:
        return None


def _vip(key: str) -> Addr | None:
    if key.startswith("["):
        return _addr(key[1 : key.index("]")] if "]" in key else key)
    if key.count(":") == 1:
        return _addr(key.split(":", 1)[0])
    return _addr(key)


def _host(a: Addr) -> Net:
    return ipaddress.ip_network(a)


# --- the chassis' view ------------------------------------------------------------------------


@dataclass
class View:
    """NB and SB as one chassis sees them: which routers are served here, what is behind them."""

    nb: Nb
    bound: Mapping[str, str]
    chassis: str

    def __post_init__(self) -> None:
        t = self.nb
        self.lrps = t.rows("Logical_Router_Port")
        self.lsps = t.rows("Logical_Switch_Port")
        self.switches = t.rows("Logical_Switch")
        self.gwc = t.rows("Gateway_Chassis")
        #: router port name -> the switch (UUID) behind it, through its router-type LSP
        self.switch_of: dict[str, str] = {}
        for su, s in self.switches.items():
            for pu in s["ports"]:
                p = self.lsps.get(pu)
                if p and p["type"] == "router" and "router-port" in p["options"]:
                    self.switch_of[p["options"]["router-port"]] = su

    def here(self, port: str) -> bool:
        return self.bound.get(port) == self.chassis

    def ports(self, lr: Row) -> list[Row]:
        return [self.lrps[u] for u in lr["ports"] if u in self.lrps]

    def is_gateway_port(self, lrp: Row) -> bool:
        return bool(lrp.get("gateway_chassis") or lrp.get("ha_chassis_group")
                    or "redirect-chassis" in lrp["options"])  # fmt: skip

    def pinned(self, lr: Row) -> str | None:
        pin: str | None = lr["options"].get("chassis")
        return pin

    def attached(self, lrp: Row) -> bool:
        """On a switch or peered with another router's port."""
        return lrp["name"] in self.switch_of or bool(lrp.get("peer"))

    def served(self, lr: Row) -> bool:
        """docs/intent.md: pinned here, or a gateway port (on a switch or peered) whose
        chassisredirect binding is here."""
        ports = self.ports(lr)
        if self.pinned(lr) is not None:
            return self.pinned(lr) == self.chassis and any(map(self.attached, ports))
        return any(self.is_gateway_port(p) and self.attached(p) and self.here(f"cr-{p['name']}")
                   for p in ports)  # fmt: skip

    def gateway_here(self, lr: Row) -> bool:
        """Pinned here, or a gateway port whose chassisredirect binding is here (where a
        router learns)."""
        return self.pinned(lr) == self.chassis or any(
            self.here(f"cr-{p['name']}") for p in self.ports(lr)
        )

    def port_local(self, lr: Row, lrp: Row) -> bool:
        """docs/intent.md: a gateway router's ports on its chassis; a gateway port where its
        chassisredirect binding is (one on nothing: everywhere); any other port everywhere."""
        if self.pinned(lr) is not None:
            return self.pinned(lr) == self.chassis
        if self.is_gateway_port(lrp) and self.attached(lrp):
            return self.here(f"cr-{lrp['name']}")
        return True

    def router_of(self, lrp_name: str) -> tuple[Row, Row] | None:
        for lr in self.nb.rows("Logical_Router").values():
            for p in self.ports(lr):
                if p["name"] == lrp_name:
                    return lr, p
        return None

    def across(self, lrp: Row) -> list[tuple[Row, Row]]:
        """The router ports across ``lrp``: the one peered with it, else the other router
        ports on its switch (with their routers)."""
        if lrp.get("peer"):
            found = self.router_of(lrp["peer"][0])
            return [found] if found else []
        switch = self.switch_of.get(lrp["name"])
        out = []
        for name, s in self.switch_of.items():
            if (s == switch and switch is not None and name != lrp["name"]
                    and (found := self.router_of(name)) is not None):  # fmt: skip
                out.append(found)
        return out

    def switch_ports(self, switch: str) -> list[Row]:
        """A switch's ports but its router-type ones."""
        s = self.switches[switch]
        return [p for u in s["ports"] if (p := self.lsps.get(u)) and p["type"] != "router"]

    def lsp_addresses(self, lsp: Row) -> list[Addr]:
        out = []
        for entry in [*lsp["addresses"], *lsp.get("dynamic_addresses", [])]:
            for word in entry.split()[1:]:
                if (a := _addr(word)) is not None:
                    out.append(a)
        return out

    def lbs(self, row: Row) -> list[Row]:
        """A router's or switch's load balancers: its own and its groups', each once."""
        lbs = self.nb.rows("Load_Balancer")
        groups = self.nb.rows("Load_Balancer_Group")
        uuids = set(row.get("load_balancer", []))
        for g in row.get("load_balancer_group", []):
            if g in groups:
                uuids.update(groups[g]["load_balancer"])
        return [lbs[u] for u in sorted(uuids) if u in lbs]

    def share(self) -> tuple[list[Row], set[str]]:
        """The routers and switches this chassis reads (docs/intent.md, "Per-chassis cost"):
        the switches with a port bound here and all their ports; the router ports any of
        those switches peers with, the gateway ports bound here and those this chassis may
        host; the routers holding them and the router pinned here, never one pinned to
        another chassis; and of a router with dynamic routing announced here (its gateway
        here or hostable here) the switches behind it: to a fixed point. (The routers across
        its ports are read too; this model of NB has every row at hand.)"""
        lrs = self.nb.rows("Logical_Router")
        ha = {u for u, h in self.nb.rows("HA_Chassis").items()
              if h["chassis_name"] == self.chassis}  # fmt: skip
        groups = {u for u, g in self.nb.rows("HA_Chassis_Group").items()
                  if ha.intersection(g["ha_chassis"])}  # fmt: skip
        standby = {p["name"] for p in self.lrps.values()
                   if any(self.gwc.get(g, {}).get("chassis_name") == self.chassis
                          for g in p.get("gateway_chassis", []))
                   or groups.intersection(p.get("ha_chassis_group", []))}  # fmt: skip
        gateways = {p["name"] for p in self.lrps.values() if self.here(f"cr-{p['name']}")}
        local = {su for su, s in self.switches.items()
                 if any(self.here(p["name"]) for p in self.switch_ports(su))}  # fmt: skip
        while True:
            peers = {p["options"]["router-port"] for su in local
                     for pu in self.switches[su]["ports"]
                     if (p := self.lsps.get(pu)) and p["type"] == "router"
                     and "router-port" in p["options"]}  # fmt: skip
            reached = peers | gateways | standby
            routers = [lr for lr in lrs.values()
                       if self.pinned(lr) in (None, self.chassis)
                       and (self.pinned(lr) == self.chassis
                            or any(p["name"] in reached for p in self.ports(lr)))]  # fmt: skip
            more = set(local)
            for lr in routers:
                o = lr["options"]
                if o.get("dynamic-routing", "").strip().lower() != "true":
                    continue
                mine = self.ports(lr)
                hosted = self.pinned(lr) == self.chassis or any(
                    p["name"] in gateways | standby for p in mine
                )
                if hosted:
                    more.update(s for p in mine if (s := self.switch_of.get(p["name"])))
            if more == local:
                return routers, local
            local = more


# --- announcements ----------------------------------------------------------------------------


def announcements(
    nb: Nb, bound: Mapping[str, str], chassis: str
) -> dict[str, dict[Net, Addr | None]]:
    """VRF ("" the default) -> prefix -> next hop (None: FRR's own address); of two routers
    announcing one prefix in one VRF, the one without a next hop wins, else the lowest."""
    v = View(nb, bound, chassis)
    found: dict[str, dict[Net, list[Addr | None]]] = {}
    for lr in nb.rows("Logical_Router").values():
        r = Router.of(lr)
        if not r.announces or not v.served(lr):
            continue
        for p in v.ports(lr):
            if not v.port_local(lr, p):
                continue
            for net in _PortAnnouncements(v, r, p).prefixes():
                found.setdefault(r.vrf, {}).setdefault(net, []).append(r.hops[net.version])
    return {vrf: {n: min(hops, key=_hop_order) for n, hops in nets.items()}
            for vrf, nets in found.items()}  # fmt: skip


def _hop_order(h: Addr | None) -> tuple[int, int]:
    return (0, 0) if h is None else (1, int(h))


_LLA64 = ipaddress.ip_network("fe80::/64")


def _link_local(net: Net) -> bool:
    if net.version == 4:
        return net.prefixlen >= 16 and net.subnet_of(ipaddress.ip_network("169.254.0.0/16"))  # type: ignore[arg-type]
    return net.prefixlen >= 10 and net.subnet_of(ipaddress.ip_network("fe80::/10"))  # type: ignore[arg-type]


def _hostable(a: Addr) -> bool:
    """connected-as-host: every IPv4 address, IPv6 ones outside fe80::/64."""
    return a.version == 4 or a not in _LLA64


@dataclass
class _PortAnnouncements:
    """One local router port's prefixes, by its redistribute classes (docs/intent.md)."""

    v: View
    r: Router
    p: Row

    def __post_init__(self) -> None:
        own = _classes(self.p["options"])  # the port's list replaces the router's
        self.classes = self.r.classes if own is None else own
        lo = _flag(self.p["options"], "dynamic-routing-redistribute-local-only")
        self.local_only = self.r.local_only if lo in (None, "bad") else bool(lo)

    def keep(self, object_here: bool | None) -> bool:
        """local-only leaves out what stands for an object that is not local here."""
        return not (self.local_only and object_here is False)

    def prefixes(self) -> Iterator[Net]:
        v, lr, p, c = self.v, self.r.row, self.p, self.classes
        nets = [n for text in p["networks"] if (n := _iface(text)) is not None]
        if "connected-as-host" in c:
            yield from self._hosts(nets)
        elif "connected" in c:
            yield from (n.network for n in nets if not _link_local(n.network))
        if "static" in c:
            yield from self._statics()
        if "nat" in c:
            for nr in [lr, *(r for r, _q in v.across(p) if r is not lr)]:
                yield from self._nats(nr)
        if "lb" in c:
            if v.pinned(lr) is not None:
                yield from _vips(v.lbs(lr))
            else:
                for d in v.ports(lr):
                    if v.is_gateway_port(d) and self.keep(v.port_local(lr, d)):
                        yield from _vips(v.lbs(lr))
            for nr, q in v.across(p):
                if self.keep(v.port_local(nr, q)):
                    yield from _vips(v.lbs(nr))

    def _hosts(self, nets: list[Any]) -> Iterator[Net]:
        v, p = self.v, self.p
        if not p.get("peer") and p["name"] not in v.switch_of:
            return
        ports = v.across(p)
        if not p.get("peer"):
            ports.append((self.r.row, p))
            for lsp in v.switch_ports(v.switch_of[p["name"]]):
                if not _advertise(lsp) or lsp["type"] == "virtual":
                    continue
                if self.keep(v.here(lsp["name"])):
                    yield from (_host(a) for a in v.lsp_addresses(lsp) if _hostable(a))
        for r, q in ports:
            if self.keep(v.port_local(r, q)):
                yield from (_host(n.ip) for t in q["networks"]
                            if (n := _iface(t)) is not None and _hostable(n.ip))  # fmt: skip

    def _nats(self, lr: Row) -> Iterator[Net]:
        v = self.v
        gateways = [d for d in v.ports(lr) if v.is_gateway_port(d)]
        for nu in lr["nat"]:
            nat = v.nb.rows("NAT").get(nu)
            if nat is None or (a := _addr(nat["external_ip"])) is None or not _advertise(nat):
                continue
            if not gateways:  # a gateway router's, or a router without gateway ports
                yield _host(a)
                continue
            gw = self._gateway_of(nat, gateways, a)
            if gw is None:
                continue  # several gateway ports, none the NAT's: OVN drops it
            fip = (
                nat["type"] == "dnat_and_snat"
                and nat.get("logical_port")
                and nat.get("external_mac")
            )
            switch = v.switch_of.get(gw["name"])
            centralized = (
                len(gateways) == 1
                and switch is not None
                and not any(x["type"] == "localnet" for x in v.switch_ports(switch))
            )
            if fip and not centralized:
                here = v.here(nat["logical_port"][0])
            else:
                here = v.port_local(lr, gw)
            if self.keep(here):
                yield _host(a)

    def _gateway_of(self, nat: Row, gateways: list[Row], a: Addr) -> Row | None:
        if nat.get("gateway_port"):
            uuid = (
                nat["gateway_port"][0]
                if isinstance(nat["gateway_port"], list)
                else (nat["gateway_port"])
            )
            return next((d for d in gateways if d["_uuid"] == uuid), None)
        if len(gateways) == 1:
            return gateways[0]
        for d in gateways:
            if any((n := _iface(t)) is not None and n.version == a.version and a in n.network
                   for t in d["networks"]):  # fmt: skip
                return d
        return None

    def _statics(self) -> Iterator[Net]:
        """The router's destination routes leaving through this port (``output_port``, else
        the port whose network holds the next hop), never a default, discard or link-local
        route, never one ovn-frr wrote."""
        rows = self.v.nb.rows("Logical_Router_Static_Route")
        lr, p = self.r.row, self.p
        for su in lr.get("static_routes", []):
            st = rows.get(su)
            if st is None or any(k.startswith("ovn-frr:") for k in st["external_ids"]):
                continue
            try:
                net = ipaddress.ip_network(st["ip_prefix"], strict=False)
            except ValueError:
                continue
            policy = (st.get("policy") or ["dst-ip"])[0]
            if policy == "src-ip" or not net.prefixlen or not _advertise(st):
                continue
            if st["nexthop"] == "discard" or _link_local(net):
                continue
            if self._out_port(st) == p["name"]:
                yield net

    def _out_port(self, st: Row) -> str:
        out = st.get("output_port") or []
        if out:
            return str(out[0] if isinstance(out, list) else out)
        hop = _addr(st["nexthop"])
        if hop is None:
            return ""
        for q in self.v.ports(self.r.row):
            if any((n := _iface(t)) is not None and n.version == hop.version
                   and hop in n.network for t in q["networks"]):  # fmt: skip
                return str(q["name"])
        return ""


def _vips(lbs: Iterable[Row]) -> Iterator[Net]:
    for lb in lbs:
        if _advertise(lb):
            yield from (_host(a) for key in lb["vips"] if (a := _vip(key)) is not None)


def _iface(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        return None


# --- imports ----------------------------------------------------------------------------------

#: (router, prefix, next hop, output port)
Imported = tuple[str, str, str, str]


def imports(nb: Nb, bound: Mapping[str, str], chassis: str,
            rib: Mapping[str, Iterable[str]]) -> set[Imported]:  # fmt: skip
    """The owned static routes NB should hold, given zebra's selected BGP routes in the
    default VRF (prefix -> next hop addresses): into each router that learns here (enabled,
    pinned here or a gateway port active here, in the default VRF, learning not turned off;
    through every port of a gateway router, through the gateway ports active here of any
    other), every route that is not a default route and overlaps nothing OVN owns in the
    networks routed in the default VRF, through the first of those ports whose networks hold
    the next hop (next hops no learning port holds are left out; a route with none is not
    imported)."""
    v = View(nb, bound, chassis)
    rows, local = v.share()
    owned = _guard(v, rows, local).get("", [])
    out: set[Imported] = set()
    for row in rows:
        r = Router.of(row)
        if not r.learns or r.vrf or not v.gateway_here(row):
            continue
        no_learning = "dynamic-routing-no-learning"
        # a gateway router learns on all its ports, any other router on its gateway ports
        # active here only (its other ports face OVN's own networks)
        ports = [p for p in v.ports(row) if _flag(p["options"], no_learning) in (None, False)
                 and (v.pinned(row) is not None or _gateway_active_here(v, p))]  # fmt: skip
        for prefix, hops in rib.items():
            net = ipaddress.ip_network(prefix)
            if net.prefixlen == 0 or any(
                net.overlaps(o) for o in owned if o.version == net.version
            ):
                continue
            for hop in hops:
                gw = ipaddress.ip_address(hop)
                for p in ports:
                    nets = [n for t in p["networks"] if (n := _iface(t)) is not None]
                    if any(n.version == gw.version and gw in n.network for n in nets):
                        out.add((row["name"], prefix, hop, p["name"]))
                        break
    return out


def _gateway_active_here(v: View, lrp: Row) -> bool:
    """A gateway port whose chassisredirect binding is here."""
    return v.is_gateway_port(lrp) and v.here(f"cr-{lrp['name']}")


def _guard(v: View, routers: list[Row], switches: set[str]) -> dict[str, list[Net]]:
    """VRF -> every prefix OVN owns in the networks routed in it (docs/intent.md, VRF-Lite
    and the hijack guard): a network is the routers and switches of this chassis' share joined
    by router ports, and by localnet ports on one physical network; it is routed in the VRFs
    its routers with dynamic routing name (the default VRF when none does)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def join(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    for lr in routers:
        for p in v.ports(lr):
            if (s := v.switch_of.get(p["name"])) in switches:
                join("r" + lr["_uuid"], "s" + str(s))
    for su in switches:
        for lsp in v.switch_ports(su):
            if lsp["type"] == "localnet" and lsp["options"].get("network_name"):
                join("s" + su, "n" + lsp["options"]["network_name"])
    owned: dict[str, list[Net]] = {}
    vrfs: dict[str, set[str]] = {}
    for lr in routers:
        net = find("r" + lr["_uuid"])
        r = Router.of(lr)
        if r.enabled:
            vrfs.setdefault(net, set()).add(r.vrf)
        found = owned.setdefault(net, [])
        for p in v.ports(lr):
            found += [n.network for t in p["networks"] if (n := _iface(t)) is not None]
        for nu in lr["nat"]:
            nat = v.nb.rows("NAT").get(nu)
            if nat and (a := _addr(nat["external_ip"])) is not None:
                found.append(_host(a))
        found += [_host(a) for lb in v.lbs(lr) for key in lb["vips"]
                  if (a := _vip(key)) is not None]  # fmt: skip
    for su in switches:
        found = owned.setdefault(find("s" + su), [])
        found += [_host(a) for lb in v.lbs(v.switches[su]) for key in lb["vips"]
                  if (a := _vip(key)) is not None]  # fmt: skip
        for lsp in v.switch_ports(su):
            found += [_host(a) for a in v.lsp_addresses(lsp)]
    out: dict[str, list[Net]] = {}
    for net, prefixes in owned.items():
        for vrf in vrfs.get(net) or {""}:
            out.setdefault(vrf, []).extend(prefixes)
    return out
