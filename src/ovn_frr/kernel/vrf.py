"""VRF devices of this chassis' kernel: each one's routing table, read, never assumed.

zebra puts the routes of FRR's ``vrf red`` in the table of the kernel's VRF device ``red`` and
sends them over FPM with that table id; the import pipeline maps a router's
``dynamic-routing-vrf-name`` to the table through this read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ovn_frr.command import run_command


class VrfReadError(OSError):
    """The VRF devices could not be listed."""


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


def vrf_tables() -> dict[str, int]:
    """VRF name -> kernel table id, in this process' network namespace."""
    text = run_command(["ip", "-json", "-details", "link", "show", "type", "vrf"], None,
                       VrfReadError, timeout=30)  # fmt: skip
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise VrfReadError(f"ip link show type vrf: {exc}") from None
    return parse_vrf_links(data)
