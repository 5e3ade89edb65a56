"""VRF devices of this chassis' kernel: each one's routing table, read, never assumed; and the
VRFs ovn-frr makes (alias ``ovn-frr:vrf``), the only ones it changes or removes.

zebra puts the routes of FRR's ``vrf red`` in the table of the kernel's VRF device ``red`` and
sends them over FPM with that table id; the import pipeline maps a router's
``dynamic-routing-vrf-name`` to the table through this read.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ovn_frr.core.model import Address, Interface, Network
from ovn_frr.core.vrf import L3VNI_ALIAS, RTPROT_OVN_FRR, KernelL3vni, KernelLink, KernelVrf, L3vni
from ovn_frr.kernel.iproute import KernelError, run

ALIAS = "ovn-frr:vrf"


def parse_vrf_links(data: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """``ip -json -details link show type vrf`` -> VRF name -> table id."""
    out: dict[str, int] = {}
    for link in data:
        info = link.get("linkinfo") or {}
        if info.get("info_kind") != "vrf":
            continue
        table = (info.get("info_data") or {}).get("table")
        if isinstance(table, int) and isinstance(link.get("ifname"), str):
            out[link["ifname"]] = table
    return out


def _links(*args: str) -> list[dict[str, Any]]:
    text = run(["ip", "-json", "-details", "link", "show", *args], timeout=30)
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise KernelError(f"ip link show: {exc}") from None
    return data if isinstance(data, list) else []


def parse_vrfs(
    data: Sequence[Mapping[str, Any]], members: Mapping[str, Sequence[str]]
) -> list[KernelVrf]:
    """The VRF devices (``ip -json -details link show type vrf``) with their members."""
    alias = {link.get("ifname"): link.get("ifalias", "") for link in data}
    return [KernelVrf(n, t, alias.get(n) == ALIAS, frozenset(members.get(n, ())))
            for n, t in sorted(parse_vrf_links(data).items())]  # fmt: skip


def parse_link(data: Sequence[Mapping[str, Any]]) -> KernelLink | None:
    """One interface (``ip -json -details link show dev NAME``)."""
    for link in data:
        if isinstance(link.get("ifname"), str):
            return KernelLink(link["ifname"], str(link.get("master") or ""))
    return None


def parse_l3vnis(data: Sequence[Mapping[str, Any]], vnis: Iterable[int]) -> list[KernelL3vni]:
    """The L3VNI devices (``ip -json -details link show`` of the bridges and VXLAN devices) of
    ``vnis`` and of every VNI some device of ovn-frr's is marked with."""
    links = {x["ifname"]: x for x in data if isinstance(x.get("ifname"), str)}
    marked = {int(t) for x in links.values()
              if (t := str(x.get("ifalias", "")).removeprefix(L3VNI_ALIAS)) != x.get("ifalias")
              and t.isdigit()}  # fmt: skip
    out = []
    for vni in sorted(set(vnis) | marked):
        alias = f"{L3VNI_ALIAS}{vni}"
        names = L3vni(vni, "", "", 0, 0)
        br, vx = links.get(names.bridge), links.get(names.vxlan)
        there = [x for x in (br, vx) if x is not None]
        foreign = tuple(x["ifname"] for x in there if x.get("ifalias") != alias)
        mine = tuple(x["ifname"] for x in there if x.get("ifalias") == alias)
        if br is None or vx is None or foreign:
            out.append(KernelL3vni(vni, None, foreign, mine=mine))
            continue
        data_vx = (vx.get("linkinfo") or {}).get("info_data") or {}
        found = L3vni(vni, str(br.get("master") or ""), str(data_vx.get("local", "")),
                      int(data_vx.get("port", 0)), int(vx.get("mtu", 0)))  # fmt: skip
        up = all("UP" in x.get("flags", ()) for x in (br, vx))
        ready = up and vx.get("master") == names.bridge
        out.append(KernelL3vni(vni, found, (), ready, str(br.get("address", "")), mine))
    return out


def parse_addresses(data: Sequence[Mapping[str, Any]]) -> tuple[Interface, ...]:
    """``ip -json addr show dev X`` -> its addresses but link-local ones."""
    out = []
    for link in data:
        for a in link.get("addr_info", ()):
            if a.get("scope") == "link" or "local" not in a:
                continue
            out.append(ipaddress.ip_interface(f"{a['local']}/{a.get('prefixlen', 32)}"))
    return tuple(out)


class KernelVrfs:
    """Read and change the VRF devices (blocking; the VRF pipeline's worker thread)."""

    def read(self, names: Iterable[str]) -> tuple[list[KernelVrf], list[KernelLink]]:
        """Every VRF device with its members, and of ``names`` the interfaces that exist:
        a few ``ip`` calls, none listing every interface (a node has thousands of pod veths)."""
        data = _links("type", "vrf")
        names_of = [x["ifname"] for x in data if isinstance(x.get("ifname"), str)]
        members = {v: [x["ifname"] for x in _links("master", v) if "ifname" in x]
                   for v in names_of}  # fmt: skip
        links = []
        for name in sorted(set(names)):
            try:
                link = parse_link(_links("dev", name))
            except KernelError:  # no such device
                continue
            if link is not None:
                links.append(link)
        return parse_vrfs(data, members), links

    def read_l3vnis(self, vnis: Iterable[int]) -> list[KernelL3vni]:
        """The L3VNI devices: two listings (bridges, VXLAN devices), never every interface."""
        return parse_l3vnis([*_links("type", "bridge"), *_links("type", "vxlan")], vnis)

    def apply_l3vnis(self, delete: Sequence[str], make: Sequence[L3vni]) -> None:
        """One ``ip -force -batch``: ``delete`` goes (the caller read them as ovn-frr's), then
        ``make``'s devices are made: the bridge (the SVI) in the VRF, the VXLAN device on it
        without learning and with neighbour suppression, no addresses of their own, both
        marked and up."""
        lines = [f"link del dev {name}" for name in delete]
        for x in make:
            alias = f"{L3VNI_ALIAS}{x.vni}"
            lines += [
                f"link add {x.bridge} type bridge",
                f"link set dev {x.bridge} alias {alias}",
                f"link set dev {x.bridge} addrgenmode none",
                f"link set dev {x.bridge} master {x.vrf}",
                f"link add {x.vxlan} type vxlan id {x.vni} local {x.local} dstport {x.port} "
                "nolearning",
                f"link set dev {x.vxlan} alias {alias}",
                f"link set dev {x.vxlan} addrgenmode none",
                f"link set dev {x.vxlan} mtu {x.mtu}",
                f"link set dev {x.vxlan} master {x.bridge}",
                f"link set dev {x.vxlan} type bridge_slave neigh_suppress on learning off",
                f"link set dev {x.vxlan} up",
                f"link set dev {x.bridge} up",
            ]
        if lines:  # -force: a device already gone does not stop the rest
            run(["ip", "-force", "-batch", "-"], "\n".join(lines) + "\n", timeout=60)

    def addresses(self, names: Iterable[str]) -> dict[str, tuple[Interface, ...]]:
        """The global addresses of each of ``names`` that exists."""
        out = {}
        for name in names:
            try:
                text = run(["ip", "-json", "addr", "show", "dev", name], timeout=30)
            except KernelError:  # no such device
                continue
            out[name] = parse_addresses(json.loads(text or "[]"))
        return out

    def routes(self, table: int) -> frozenset[tuple[Network, Address]]:
        """ovn-frr's routes (protocol RTPROT_OVN_FRR) in ``table``, both families."""
        found = set()
        for family in ("-4", "-6"):
            text = run(["ip", family, "-json", "route", "show", "table", str(table), "proto",
                        str(RTPROT_OVN_FRR)], timeout=30)  # fmt: skip
            for r in json.loads(text or "[]"):
                if r.get("dst") and r.get("gateway"):
                    found.add((ipaddress.ip_network(r["dst"]), ipaddress.ip_address(r["gateway"])))
        return frozenset(found)

    def apply_routes(
        self,
        table: int,
        add: Iterable[tuple[Network, Address]],
        delete: Iterable[tuple[Network, Address]],
    ) -> None:
        """One ``ip -force -batch``: ``delete`` then ``add`` (replace) in ``table``."""
        tail = f"table {table} proto {RTPROT_OVN_FRR}"
        lines = [f"route del {p} via {h} {tail}" for p, h in delete]
        lines += [f"route replace {p} via {h} {tail}" for p, h in add]
        if lines:
            run(["ip", "-force", "-batch", "-"], "\n".join(lines) + "\n", timeout=60)

    def apply(
        self,
        create: Sequence[tuple[str, int]],
        enslave: Sequence[tuple[str, str]],
        remove: Sequence[str],
    ) -> None:
        """One ``ip -batch``: made VRFs carry the alias and come up; removals only of VRFs
        read as ovn-frr's just before (the caller's plan)."""
        lines = []
        for name, table in create:
            lines += [f"link add {name} type vrf table {table}",
                      f"link set dev {name} alias {ALIAS}", f"link set dev {name} up"]  # fmt: skip
        lines += [f"link set dev {ifname} master {vrf}" for ifname, vrf in enslave]
        lines += [f"link del dev {name}" for name in remove]
        if lines:  # -force: one failing line (reported) does not stop the others
            run(["ip", "-force", "-batch", "-"], "\n".join(lines) + "\n", timeout=60)
