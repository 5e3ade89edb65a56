"""What OVN's NB and SB say, as one frozen snapshot (pure; read by :mod:`ovn_frr.ovn.reader`).

Every pipeline (import, advertise, and later EVPN and VRF-Lite) is a pure function of one
:class:`OvnState`. The ``dynamic-routing*`` options (OVN 25.03's own vocabulary, read on any OVN
version) are parsed here, once, into typed values; a malformed value is a problem line that
names the object, the option and the value, and the object is left out of what that option
governs (a router whose ``dynamic-routing`` is neither true nor false neither learns nor
announces; an unknown ``dynamic-routing-redistribute`` class is ignored, as OVN ignores it, and
reported).

Options read:
- Logical_Router: ``dynamic-routing`` (true|false), ``-redistribute`` (comma list of
  :data:`CLASSES`), ``-redistribute-local-only`` (true|false), ``-vrf-name`` (a VRF name),
  ``-vrf-id`` (a kernel table id), ``-no-learning`` (true|false), ``-v4-prefix-nexthop`` and
  ``-v6-prefix-nexthop`` (the next hop its IPv4 / IPv6 prefixes are announced with: OVN 26.03's
  options; an address of the router on a link it shares with the peers);
- Logical_Router_Port: ``-redistribute`` (overrides the router's), ``-port-name`` (the host
  interface its next hops leave through), ``-no-learning``;
- switch ports, NATs, load balancers and static routes: ``dynamic-routing-advertise=false``
  opts that object out.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from ovn_frr.core.model import Address, Interface, Network

OPT_ENABLED = "dynamic-routing"
OPT_REDISTRIBUTE = "dynamic-routing-redistribute"
OPT_LOCAL_ONLY = "dynamic-routing-redistribute-local-only"
OPT_VRF = "dynamic-routing-vrf-name"
OPT_VRF_ID = "dynamic-routing-vrf-id"
OPT_NO_LEARNING = "dynamic-routing-no-learning"
OPT_PORT_NAME = "dynamic-routing-port-name"
OPT_V4_NEXTHOP = "dynamic-routing-v4-prefix-nexthop"
OPT_V6_NEXTHOP = "dynamic-routing-v6-prefix-nexthop"
OPT_ADVERTISE = "dynamic-routing-advertise"
OPT_MAINTAIN_VRF = "dynamic-routing-maintain-vrf"

CLASSES = frozenset({"connected", "connected-as-host", "static", "nat", "lb"})
#: a Linux interface name, as FRR VRFs are (at most 15 characters)
VRF_NAME = re.compile(r"[A-Za-z0-9_.-]{1,15}")
IFNAME = re.compile(r"[^\s/:]{1,15}")
#: kernel table ids OVN refuses for a VRF (0 and 252-255)
RESERVED_TABLES = frozenset({0, 252, 253, 254, 255})
#: how much of a bad value a problem line quotes
VALUE_CUT = 40


def problem(kind: str, name: str, option: str, value: str, reason: str) -> str:
    """One problem line: the object, the option, the (cut) value and why it is unusable."""
    shown = value if len(value) <= VALUE_CUT else value[:VALUE_CUT] + "..."
    return f"{kind} {name}: {option}={shown!r} {reason}"


def _flag(
    kind: str, name: str, options: Mapping[str, str], key: str, problems: list[str]
) -> bool | None:
    """A true/false option (absent: None), in any case but with no blanks around it (as OVN's
    smap_get_bool); anything else is a problem (also None)."""
    if key not in options:
        return None
    text = options[key].lower()
    if text in ("true", "false"):
        return text == "true"
    problems.append(problem(kind, name, key, options[key], "is not true or false"))
    return None


def _classes(
    kind: str, name: str, options: Mapping[str, str], notes: list[str]
) -> frozenset[str] | None:
    """The classes of ``-redistribute`` (absent: None; "" none). As OVN: an unknown class is
    ignored (and noted), the others stand; ``connected-as-host`` implies ``connected``. The
    list is split at commas only, as OVN's ovn-northd splits it: ``nat, lb`` has the unknown
    class `` lb``."""
    text = options.get(OPT_REDISTRIBUTE)
    if text is None:
        return None
    tokens = [t for t in text.split(",") if t]
    unknown = [t for t in tokens if t not in CLASSES]
    if unknown:
        notes.append(problem(kind, name, OPT_REDISTRIBUTE, text,
                             f"has unknown class(es) {', '.join(map(repr, unknown))}, ignored "
                             f"(known: {', '.join(sorted(CLASSES))})"))  # fmt: skip
    known = {t for t in tokens if t in CLASSES}
    if "connected-as-host" in known:
        known.add("connected")
    return frozenset(known)


def _nexthop(
    kind: str, name: str, options: Mapping[str, str], key: str, version: int, problems: list[str]
) -> Address | None:
    """A prefix next-hop option: an address of the prefixes' family (absent: None). OVN also
    takes an IPv6 next hop for IPv4 prefixes (RFC 5549); ovn-frr does not: a problem."""
    text = options.get(key, "").strip()
    if not text:
        return None
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        problems.append(problem(kind, name, key, text, "is not an IP address"))
        return None
    if addr.version != version:
        why = f"is not an IPv{version} address (an IPv6 next hop for IPv4 is not supported)"
        problems.append(problem(kind, name, key, text, why))
        return None
    # an IPv6 link-local one would need an interface (FRR sets a global next hop)
    if (
        addr.is_unspecified
        or addr.is_multicast
        or addr.is_loopback
        or (addr.version == 6 and addr.is_link_local)
    ):
        problems.append(problem(kind, name, key, text, "is not a usable next hop"))
        return None
    return addr


@dataclass(frozen=True, slots=True)
class RouterRouting:
    """A router's parsed ``dynamic-routing*`` options."""

    enabled: bool = False
    redistribute: frozenset[str] = frozenset()
    local_only: bool = False
    #: the FRR VRF ("" = the default VRF)
    vrf: str = ""
    vrf_id: int | None = None
    learning: bool = True
    #: the next hop announced with its IPv4 / IPv6 prefixes (None: FRR's own address)
    nexthop_v4: Address | None = None
    nexthop_v6: Address | None = None
    #: malformed options that stop announcing / learning for this router
    advertise_problems: tuple[str, ...] = ()
    learn_problems: tuple[str, ...] = ()
    #: malformed options taken as OVN takes them (an unknown class ignored, a flag false)
    notes: tuple[str, ...] = ()
    #: OVN 25.03+ exchanges this router's routes itself, through its VRF's kernel table: why
    #: ("" it does not; :func:`ovn_frr.core.native_routing.mark_native`)
    native: str = ""

    @property
    def advertises(self) -> bool:
        return self.enabled and not self.advertise_problems

    @property
    def learns(self) -> bool:
        return self.enabled and self.learning and not self.learn_problems

    @property
    def problems(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.advertise_problems + self.learn_problems + self.notes))

    @classmethod
    def parse(cls, name: str, options: Mapping[str, str]) -> RouterRouting:
        kind = "router"
        both: list[str] = []
        enabled = _flag(kind, name, options, OPT_ENABLED, both)
        if not enabled:  # off (or malformed): the other options do not matter
            return cls(advertise_problems=tuple(both), learn_problems=tuple(both))
        adv: list[str] = []
        learn: list[str] = []
        notes: list[str] = []
        redistribute = _classes(kind, name, options, notes)
        local_only = _flag(kind, name, options, OPT_LOCAL_ONLY, notes)
        vrf = options.get(OPT_VRF, "").strip()
        if vrf and not VRF_NAME.fullmatch(vrf):
            both.append(
                problem(
                    kind,
                    name,
                    OPT_VRF,
                    vrf,
                    "is not a VRF name (letters, digits, '_', '.', '-'; at most 15)",
                )
            )
            vrf = ""  # fmt: skip
        vrf_id = None
        if (text := options.get(OPT_VRF_ID, "").strip()) != "":
            if not text.isdigit() or int(text) in RESERVED_TABLES or int(text) >= 2**32:
                learn.append(
                    problem(
                        kind,
                        name,
                        OPT_VRF_ID,
                        text,
                        "is not a usable kernel table id (1-251, 256-4294967295)",
                    )
                )
            else:  # fmt: skip
                vrf_id = int(text)
        no_learning = _flag(kind, name, options, OPT_NO_LEARNING, learn)
        if not vrf and vrf_id is not None:  # OVN's name for the table's VRF device
            vrf = f"ovnvrf{vrf_id}"
        return cls(
            enabled=True,
            redistribute=redistribute or frozenset(),
            local_only=bool(local_only),
            vrf=vrf,
            vrf_id=vrf_id,
            learning=not no_learning,
            nexthop_v4=_nexthop(kind, name, options, OPT_V4_NEXTHOP, 4, adv),
            nexthop_v6=_nexthop(kind, name, options, OPT_V6_NEXTHOP, 6, adv),
            advertise_problems=tuple(both + adv),
            learn_problems=tuple(both + learn),
            notes=tuple(notes),
        )


@dataclass(frozen=True, slots=True)
class PortRouting:
    """A router port's parsed ``dynamic-routing*`` options."""

    #: replaces the router's classes (None: the router's; empty: none)
    redistribute: frozenset[str] | None = None
    #: the host interface its next hops leave through ("" none)
    port_name: str = ""
    learning: bool = True
    advertise_problems: tuple[str, ...] = ()
    learn_problems: tuple[str, ...] = ()
    #: replaces the router's ``-redistribute-local-only`` (None: the router's)
    local_only: bool | None = None
    notes: tuple[str, ...] = ()
    #: ``dynamic-routing-maintain-vrf``: OVN 25.03+ makes the router's VRF device itself
    maintain_vrf: bool = False

    @property
    def problems(self) -> tuple[str, ...]:
        return self.advertise_problems + self.learn_problems + self.notes

    @classmethod
    def parse(cls, name: str, options: Mapping[str, str]) -> PortRouting:
        kind = "router port"
        adv: list[str] = []
        learn: list[str] = []
        notes: list[str] = []
        redistribute = _classes(kind, name, options, notes)
        local_only = _flag(kind, name, options, OPT_LOCAL_ONLY, notes)
        port_name = options.get(OPT_PORT_NAME, "").strip()
        if port_name and not IFNAME.fullmatch(port_name):
            learn.append(problem(kind, name, OPT_PORT_NAME, port_name,
                                 "is not an interface name"))  # fmt: skip
            port_name = ""
        no_learning = _flag(kind, name, options, OPT_NO_LEARNING, learn)
        maintain = _flag(kind, name, options, OPT_MAINTAIN_VRF, notes)
        return cls(redistribute, port_name, not no_learning, tuple(adv), tuple(learn),
                   local_only, tuple(notes), bool(maintain))  # fmt: skip


#: the local OVS ``Open_vSwitch`` ``external_ids`` key mapping ``-port-name`` values to host
#: interfaces (OVN's ovn-controller reads it; so does ovn-frr)
PORT_MAPPING = "dynamic-routing-port-mapping"
_PAIR = re.compile(r"([^:=(,\s]+)(?:[:=]([^,\s]*)|\(([^)]*)\))")


def parse_port_mapping(text: str) -> tuple[dict[str, str], str]:
    """``dynamic-routing-port-mapping`` as OVS parses key-value lists: pairs separated by
    commas and/or white space, each ``name=ifname``, ``name:ifname`` or ``name(ifname)``; the
    first entry without a value ends the list (the pairs before it stand). Returns the
    mapping and the problem ("" none)."""
    out: dict[str, str] = {}
    pos = 0
    while True:
        while pos < len(text) and (text[pos] in ", \t\n"):
            pos += 1
        if pos >= len(text):
            return out, ""
        m = _PAIR.match(text, pos)
        if m is None:
            rest = text[pos:].split(",", maxsplit=1)[0].split(maxsplit=1)[0]
            return out, (f"{PORT_MAPPING}={text!r}: entry {rest!r} has no interface "
                         "(name=ifname); the entries after it are ignored")  # fmt: skip
        out[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
        pos = m.end()


def advertised(kind: str, name: str, options: Mapping[str, str]) -> tuple[bool, str]:
    """An object's ``dynamic-routing-advertise``: (may be announced, problem or "")."""
    problems: list[str] = []
    flag = _flag(kind, name, options, OPT_ADVERTISE, problems)
    if problems:
        return False, problems[0]  # malformed: the object is left out, and said so
    return flag is not False, ""


# --- the objects ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SwitchPort:
    name: str
    type: str
    addresses: tuple[Address, ...]
    #: bound on this chassis (SB Port_Binding)
    bound_here: bool = False
    advertise: bool = True
    problem: str = ""
    #: the port's Ethernet address, lower case ("" none: router, unknown or dynamic not yet
    #: assigned)
    mac: str = ""
    #: each address entry that starts with a MAC: (MAC, the IPs of that entry); a port may
    #: have several ("MAC1 IP1", "MAC2 IP2")
    entries: tuple[tuple[str, tuple[Address, ...]], ...] = ()
    #: a localnet port's physical network (options:network_name; "" other ports)
    network: str = ""

    @classmethod
    def of(
        cls,
        name: str,
        addresses: tuple[Address, ...],
        options: Mapping[str, str] | None = None,
        bound_here: bool = False,
        type: str = "",
        mac: str = "",
        entries: tuple[tuple[str, tuple[Address, ...]], ...] | None = None,
    ) -> SwitchPort:
        opts = options or {}
        ok, why = advertised("switch port", name, opts)
        if entries is None:  # one entry: the MAC with every address
            entries = ((mac, addresses),) if mac else ()
        network = opts.get("network_name", "") if type == "localnet" else ""
        return cls(name, type, addresses, bound_here, ok, why, mac, entries, network)


@dataclass(frozen=True, slots=True)
class Vip:
    """A load balancer VIP."""

    lb: str
    address: Address
    advertise: bool = True
    problem: str = ""

    @classmethod
    def of(cls, lb: str, address: Address, options: Mapping[str, str] | None = None) -> Vip:
        ok, why = advertised("load balancer", lb, options or {})
        return cls(lb, address, ok, why)


@dataclass(frozen=True, slots=True)
class LogicalSwitch:
    uuid: str
    name: str
    ports: tuple[SwitchPort, ...] = ()
    vips: tuple[Vip, ...] = ()
    other_config: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Nat:
    external_ip: Address
    type: str = "snat"
    #: its ``logical_port`` is bound on this chassis (a floating IP of a VM here)
    bound_here: bool = False
    advertise: bool = True
    problem: str = ""
    #: a dnat_and_snat with ``logical_port`` and ``external_mac``: that logical port (a
    #: floating IP served where the VM is, on a router with a gateway port); "" other NATs
    logical_port: str = ""
    #: its ``gateway_port`` (a router port name; "" none)
    gateway_port: str = ""
    #: its ``external_ids:k8s.ovn.org/owner-type`` (ovn-kubernetes' object kind, e.g.
    #: ``EgressIP``; "" none)
    owner_type: str = ""

    @classmethod
    def of(
        cls,
        router: str,
        external_ip: Address,
        options: Mapping[str, str] | None = None,
        bound_here: bool = False,
        type: str = "snat",
        logical_port: str = "",
        gateway_port: str = "",
        owner_type: str = "",
    ) -> Nat:
        ok, why = advertised("NAT", f"{external_ip} on {router}", options or {})
        return cls(external_ip, type, bound_here, ok, why, logical_port, gateway_port,
                   owner_type)  # fmt: skip


@dataclass(frozen=True, slots=True)
class StaticRoute:
    """A Logical_Router_Static_Route row that no ovn-frr wrote."""

    uuid: str
    #: the router whose static_routes holds it ("" not known)
    router: str
    prefix: Network
    policy: str = "dst-ip"
    advertise: bool = True
    problem: str = ""
    #: its next hop as NB has it (an address, or "discard")
    nexthop: str = ""
    #: its ``output_port`` (a router port name; "" none: the port whose network holds the
    #: next hop)
    output_port: str = ""

    @classmethod
    def of(
        cls,
        uuid: str,
        router: str,
        prefix: Network,
        options: Mapping[str, str] | None = None,
        policy: str = "dst-ip",
        nexthop: str = "",
        output_port: str = "",
    ) -> StaticRoute:
        ok, why = advertised("static route", f"{prefix} on {router or '?'}", options or {})
        return cls(uuid, router, prefix, policy, ok, why, nexthop, output_port)


@dataclass(frozen=True, slots=True)
class RouterPort:
    name: str
    networks: tuple[Interface, ...]
    routing: PortRouting = PortRouting()
    #: the port's gateway (chassisredirect) binding is on this chassis
    bound_here: bool = False
    #: UUID of the logical switch behind the port ("" none)
    switch: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    #: a distributed gateway port (gateway chassis or HA chassis group): the router is served
    #: where its chassisredirect binding is active
    gateway: bool = False
    #: the router port it is peered with directly (``peer``; "" none)
    peer: str = ""

    @classmethod
    def of(
        cls,
        name: str,
        networks: tuple[Interface, ...],
        options: Mapping[str, str] | None = None,
        bound_here: bool = False,
        switch: str = "",
        gateway: bool = False,
        peer: str = "",
    ) -> RouterPort:
        opts = dict(options or {})
        gateway = gateway or bound_here or "redirect-chassis" in opts
        return cls(name, networks, PortRouting.parse(name, opts), bound_here, switch, opts,
                   gateway, peer)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LogicalRouter:
    name: str
    routing: RouterRouting
    ports: tuple[RouterPort, ...] = ()
    nats: tuple[Nat, ...] = ()
    vips: tuple[Vip, ...] = ()
    #: pinned to this chassis (options:chassis): a gateway router here
    pinned_here: bool = False
    uuid: str = ""
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        name: str,
        options: Mapping[str, str],
        ports: tuple[RouterPort, ...] = (),
        nats: tuple[Nat, ...] = (),
        vips: tuple[Vip, ...] = (),
        pinned_here: bool = False,
        uuid: str = "",
    ) -> LogicalRouter:
        opts = dict(options)
        routing = RouterRouting.parse(name, opts)
        return cls(name, routing, ports, nats, vips, pinned_here, uuid, opts)

    @property
    def gateway_here(self) -> bool:
        """The router is served on this chassis: pinned here, or a gateway port bound here."""
        return self.pinned_here or any(p.bound_here for p in self.ports)

    @property
    def pinned_elsewhere(self) -> bool:
        """A gateway router of another chassis (never served here)."""
        return "chassis" in self.options and not self.pinned_here

    @property
    def distributed(self) -> bool:
        """Pinned nowhere and without a gateway port: the router is on every chassis."""
        return "chassis" not in self.options and not any(p.gateway for p in self.ports)


@dataclass(frozen=True, slots=True)
class Extra:
    """A prefix the node config's intent adds to what OVN's options say (ovn-kubernetes'
    RouteAdvertisements, :mod:`ovn_frr.core.ovnk`): announced, or guarded from the import,
    in a VRF ("" the default VRF), for an OVN object (``source``)."""

    vrf: str
    prefix: Network
    source: str


@dataclass(frozen=True, slots=True)
class OvnState:
    """Everything ovn-frr reads from NB and SB, for one chassis."""

    routers: tuple[LogicalRouter, ...] = ()
    #: by UUID (switch names need not be unique)
    switches: Mapping[str, LogicalSwitch] = field(default_factory=dict)
    statics: tuple[StaticRoute, ...] = ()
    #: rows the reader could not use at all (e.g. a NAT whose external_ip is no address)
    read_problems: tuple[str, ...] = ()
    #: router port name -> whether the switch behind it has a localnet port, for a
    #: neighbour's gateway port whose switch is not in this chassis' share (read only for that)
    gateway_localnet: Mapping[str, bool] = field(default_factory=dict)
    #: announcements the node config adds (ovn-kubernetes' PodNetwork and EgressIP)
    announce: tuple[Extra, ...] = ()
    #: prefixes the node config's intent says are OVN's, guarded from the import like the
    #: addresses OVN owns (an ovn-kubernetes network's cluster subnets)
    guard: tuple[Extra, ...] = ()

    def switch_of(self, port: RouterPort) -> LogicalSwitch | None:
        return self.switches.get(port.switch) if port.switch else None

    def problems(self) -> tuple[str, ...]:
        """Every malformed option or row, one line each, in a stable order."""
        return tuple(dict.fromkeys(_problems(self)))


def _problems(state: OvnState) -> Iterator[str]:
    yield from state.read_problems
    for r in state.routers:
        yield from r.routing.problems
        if not r.routing.enabled:
            continue
        for p in r.ports:
            yield from p.routing.problems
        yield from (x.problem for x in r.nats if x.problem)
        yield from (x.problem for x in r.vips if x.problem)
    for sw in state.switches.values():
        yield from (x.problem for x in sw.ports if x.problem)
        yield from (x.problem for x in sw.vips if x.problem)
    for st in state.statics:
        if st.problem:
            yield st.problem


def map_vrfs(state: OvnState, vrf_map: Mapping[str, str]) -> OvnState:
    """The state with each router's VRF as the node config maps it (``bgp.vrf_map``: OVN's
    name -> the FRR VRF that carries it here, "default" the default VRF)."""
    if not vrf_map:
        return state
    routers = []
    for r in state.routers:
        target = vrf_map.get(r.routing.vrf) if r.routing.vrf else None
        if target is None:
            routers.append(r)
        else:
            vrf = "" if target == "default" else target
            # carried by another VRF than OVN's table: OVN and FRR do not meet there
            native = r.routing.native if vrf == r.routing.vrf else ""
            routers.append(replace(r, routing=replace(r.routing, vrf=vrf, native=native)))
    return replace(state, routers=tuple(routers))


def owned_prefixes_by_vrf(state: OvnState) -> dict[str, dict[Network, str]]:
    """VRF name ("" the default VRF) -> the prefixes OVN owns in the networks routed in it,
    with their owner (for the import hijack guard): router port networks, NAT external IPs,
    load balancer VIPs and switch port addresses (of the share of OVN this chassis reads).

    An OVN network is a set of routers and switches joined by router ports, and by localnet
    ports on the same physical network (``network_name``: one provider network, though each
    gateway router has an external switch of its own); it is routed in the VRFs named by its
    routers with dynamic routing on (the default VRF when none is).
    A tenant's 10.0.0.0/24 behind a router in VRF red then guards red's imports only: blue
    may learn its own 10.0.0.0/24. Without VRFs every network is in the default VRF: the
    guard covers all of the state."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, r in enumerate(state.routers):
        for port in r.ports:
            if port.switch:
                parent[find(f"r:{i}")] = find("s:" + port.switch)
    for uuid, sw in state.switches.items():
        for lsp in sw.ports:
            if lsp.network:
                parent[find("s:" + uuid)] = find("n:" + lsp.network)
    routers: dict[str, list[LogicalRouter]] = {}
    switches: dict[str, list[LogicalSwitch]] = {}
    for i, r in enumerate(state.routers):
        routers.setdefault(find(f"r:{i}"), []).append(r)
    for uuid, sw in state.switches.items():
        switches.setdefault(find("s:" + uuid), []).append(sw)
    out: dict[str, dict[Network, str]] = {}
    for net in sorted(routers.keys() | switches.keys()):  # the same owner names every time
        rs = routers.get(net, [])
        vrfs = {r.routing.vrf for r in rs if r.routing.enabled} or {""}
        for vrf in sorted(vrfs):
            _own(rs, switches.get(net, []), out.setdefault(vrf, {}))
    for x in state.guard:
        out.setdefault(x.vrf, {}).setdefault(x.prefix, x.source)
    return out


def _own(
    routers: Iterable[LogicalRouter], switches: Iterable[LogicalSwitch], owned: dict[Network, str]
) -> None:
    for r in routers:
        for port in r.ports:
            for n in port.networks:
                owned.setdefault(n.network, f"port {port.name}")
        for nat in r.nats:
            owned.setdefault(host_route(nat.external_ip), f"NAT {nat.external_ip} on {r.name}")
        for vip in r.vips:
            owned.setdefault(host_route(vip.address), f"LB {vip.lb} VIP {vip.address}")
    for sw in switches:
        for vip in sw.vips:
            owned.setdefault(host_route(vip.address), f"LB {vip.lb} VIP {vip.address}")
        for lsp in sw.ports:
            for a in lsp.addresses:
                owned.setdefault(host_route(a), f"LSP {lsp.name}")


def host_route(addr: Address) -> Network:
    """The /32 or /128 of an address."""
    return ipaddress.ip_network(addr)
