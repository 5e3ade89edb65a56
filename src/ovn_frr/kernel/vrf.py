"""VRF devices of this chassis' kernel: each one's routing table, read, never assumed; and the
VRFs ovn-frr makes (alias ``ovn-frr:vrf``), the only ones it changes or removes.

zebra puts the routes of FRR's ``vrf red`` in the table of the kernel's VRF device ``red`` and
sends them over FPM with that table id; the import pipeline maps a router's
``dynamic-routing-vrf-name`` to the table through this read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ovn_frr.core.vrf import KernelLink, KernelVrf
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
