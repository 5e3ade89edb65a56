"""Python values of IDL rows, each made once and kept until the row changes.

Reading a column of an ovs IDL row (``Row.__getattr__``) converts the column's datum to Python
at every access (~10 µs). A chassis with 10k switch ports read them all after each change: a
pod bound here cost ~1 s of reads of ports that had not changed. :class:`RowViews` keeps what
was made of each row until the IDL reports that row inserted, changed or deleted
(:meth:`ovn_frr.ovn.db.OvsdbConnection.read` hands those UUIDs over with the IDL); the reader
takes them at the start of each read, under the same lock as the IDL's updates.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ovn_frr.core.model import Address, Interface
from ovn_frr.core.ovn import SwitchPort, Vip

V = TypeVar("V")


class RowCache(Generic[V]):
    """``make(row)`` of each row, kept by UUID until :meth:`forget` names it."""

    def __init__(self, make: Callable[[Any], V]) -> None:
        self._make = make
        self._values: dict[Any, V] = {}

    def __call__(self, row: Any) -> V:
        value = self._values.get(row.uuid)
        if value is None:
            value = self._values[row.uuid] = self._make(row)
        return value

    def forget(self, uuids: Iterable[Any], rows: int) -> None:
        """Drop the values of changed rows; ``rows``: how many the table holds now (rows
        gone while the IDL reconnected are never reported: past twice that, start over)."""
        for u in uuids:
            self._values.pop(u, None)
        if len(self._values) > 2 * rows + 64:
            self._values.clear()


class RowViews:
    """The caches of one IDL, by table."""

    def __init__(self) -> None:
        self._caches: dict[str, RowCache[Any]] = {}

    def cache(self, table: str, make: Callable[[Any], V]) -> RowCache[V]:
        found = self._caches.get(table)
        if found is None:
            found = self._caches[table] = RowCache(make)
        return found

    def sync(self, idl: Any) -> None:
        """Forget the rows the IDL changed since the last sync (call with it quiescent)."""
        changed = idl.take_changed()
        for table, cache in self._caches.items():
            cache.forget(changed, len(idl.tables[table].rows))


def referenced(row: Any, column: str, rows: Mapping[Any, Any]) -> list[Any]:
    """The rows of ``rows`` that ``row``'s reference column holds (``row.column`` without the
    conversion, which sorts the rows: ~0.5 s for a switch of 10k ports)."""
    datum = row._data.get(column) if row._data is not None else None
    if datum is None:
        return []
    return [r for atom in datum.values if (r := rows.get(atom.value)) is not None]


# --- Logical_Switch_Port ----------------------------------------------------------------------


def addr(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]").split("/", maxsplit=1)[0])
    except ValueError:
        return None


MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


def lsp_addresses(entries_text: Iterable[str]) -> tuple[Address, ...]:
    out = []
    for entry in entries_text:
        for word in entry.split()[1:]:  # "MAC IP IP ..."; router/unknown/dynamic carry none
            if (a := addr(word)) is not None:
                out.append(a)
    return tuple(out)


def lsp_entries(entries_text: Iterable[str]) -> tuple[tuple[str, tuple[Address, ...]], ...]:
    """Each address entry that starts with a MAC (``addresses`` before ``dynamic_addresses``):
    (MAC, the IPs of that entry), each MAC once."""
    out: dict[str, list[Address]] = {}
    for entry in entries_text:
        words = entry.split()
        if words and MAC.match(words[0]):
            ips = out.setdefault(str(words[0]).lower(), [])
            ips += [a for w in words[1:] if (a := addr(w)) is not None and a not in ips]
    return tuple((m, tuple(ips)) for m, ips in out.items())


@dataclass(frozen=True, slots=True)
class LspView:
    """What the reader and the conditions use of a Logical_Switch_Port row."""

    uuid: str
    name: str
    type: str
    options: Mapping[str, str]
    #: the port as a core value, not bound here and bound here
    port: SwitchPort
    bound: SwitchPort

    @property
    def router_port(self) -> str | None:
        return self.options.get("router-port")


def lsp_view(lsp: Any) -> LspView:
    text = [*lsp.addresses, *lsp.dynamic_addresses]
    entries = lsp_entries(text)
    options = dict(lsp.options)
    port = SwitchPort.of(lsp.name, lsp_addresses(text), options, False, lsp.type,
                         entries[0][0] if entries else "", entries)  # fmt: skip
    return LspView(str(lsp.uuid), lsp.name, lsp.type, options, port,
                   SwitchPort.of(port.name, port.addresses, options, True, port.type, port.mac,
                                 entries))  # fmt: skip


# --- Port_Binding -----------------------------------------------------------------------------


def binding_here(pb: Any, chassis_rows: Mapping[Any, Any]) -> str | None:
    """The logical port of a binding whose chassis is a row of ``chassis_rows`` (the one
    chassis the SB IDL monitors: ``pb.chassis`` without converting the row)."""
    data: Mapping[str, Any] = pb._data or {}
    chassis = data.get("chassis")
    if chassis is None or not any(atom.value in chassis_rows for atom in chassis.values):
        return None
    port = data.get("logical_port")
    return None if port is None else str(port.as_scalar())


# --- routers, their ports, NATs, load balancers, switches -------------------------------------


def refs(row: Any, column: str) -> tuple[Any, ...]:
    """The UUIDs a reference column holds, in the order the IDL gives them (sorted), without
    converting the rows (also of rows this IDL does not monitor)."""
    datum = row._data.get(column) if row._data is not None else None
    return () if datum is None else tuple(sorted(atom.value for atom in datum.values))


def _map(row: Any, column: str) -> dict[str, str]:
    return dict(getattr(row, column))


@dataclass(frozen=True, slots=True)
class LrpView:
    name: str
    networks: tuple[Interface, ...]
    #: networks that are no address/length (a problem each)
    bad: tuple[str, ...]
    options: Mapping[str, str]
    #: a distributed gateway port (gateway chassis, an HA chassis group, redirect-chassis)
    gateway: bool
    #: its Gateway_Chassis rows and HA chassis group (UUIDs as text)
    gateway_chassis: frozenset[str] = frozenset()
    ha_group: frozenset[str] = frozenset()
    #: the router port it is peered with directly ("" none)
    peer: str = ""


def lrp_view(lrp: Any) -> LrpView:
    good, bad = [], []
    for n in lrp.networks:
        try:
            good.append(ipaddress.ip_interface(n))
        except ValueError:
            bad.append(n)
    options = _map(lrp, "options")
    gwc = frozenset(str(u) for u in refs(lrp, "gateway_chassis"))
    group = frozenset(str(u) for u in refs(lrp, "ha_chassis_group"))
    gateway = bool(gwc or group or "redirect-chassis" in options)
    peer = lrp.peer[0] if lrp.peer else ""
    return LrpView(lrp.name, tuple(good), tuple(bad), options, gateway, gwc, group, peer)


@dataclass(frozen=True, slots=True)
class NatView:
    external_ip: str
    type: str
    options: Mapping[str, str]
    #: a distributed dnat_and_snat (logical_port and external_mac): its logical port
    distributed_port: str
    #: its gateway port's row UUID (None: none)
    gateway_port: Any = None
    #: ovn-kubernetes' ``k8s.ovn.org/owner-type`` ("" none)
    owner_type: str = ""


#: ovn-kubernetes' owner-type key (libovsdb/ops/db_object_ids.go)
OWNER_TYPE = "k8s.ovn.org/owner-type"


def nat_view(nat: Any) -> NatView:
    distributed = nat.type == "dnat_and_snat" and nat.logical_port and nat.external_mac
    gateway = refs(nat, "gateway_port")
    return NatView(nat.external_ip, nat.type, _map(nat, "options"),
                   nat.logical_port[0] if distributed else "",
                   gateway[0] if gateway else None,
                   _map(nat, "external_ids").get(OWNER_TYPE, ""))  # fmt: skip


def vip_address(vip: str) -> Address | None:
    """An LB VIP key: ``IP``, ``IP:PORT`` or ``[IPv6]:PORT``."""
    if vip.startswith("["):
        return addr(vip[1 : vip.index("]")] if "]" in vip else vip)
    if vip.count(":") == 1:
        return addr(vip.split(":", maxsplit=1)[0])
    return addr(vip)


def lb_vips(lb: Any) -> tuple[Vip, ...]:
    options = _map(lb, "options")
    return tuple(Vip.of(lb.name, a, options) for key in lb.vips
                 if (a := vip_address(key)) is not None)  # fmt: skip


@dataclass(frozen=True, slots=True)
class HolderView:
    """A router's or switch's row: its name, options (``options`` or ``other_config``) and
    references (ports, NATs, load balancers and their groups)."""

    name: str
    options: Mapping[str, str]
    ports: tuple[Any, ...]
    nats: tuple[Any, ...]
    lbs: tuple[Any, ...]
    groups: tuple[Any, ...]


def router_view(lr: Any) -> HolderView:
    return HolderView(lr.name, _map(lr, "options"), refs(lr, "ports"), refs(lr, "nat"),
                      refs(lr, "load_balancer"), refs(lr, "load_balancer_group"))  # fmt: skip


def switch_view(ls: Any) -> HolderView:
    return HolderView(ls.name, _map(ls, "other_config"), refs(ls, "ports"), (),
                      refs(ls, "load_balancer"), refs(ls, "load_balancer_group"))  # fmt: skip


def group_view(group: Any) -> tuple[Any, ...]:
    return refs(group, "load_balancer")
