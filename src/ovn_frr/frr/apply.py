"""Apply ovn-frr's FRR config as the exact diff from what it applied last, in one vtysh batch.

An apply that FRR rejects (any ``%`` line) is undone: the reverse diff restores the last good
config (its own failures, for lines that never landed, are expected and ignored), and the
applied state stays the last good one. ``missing()`` compares with ``show running-config``:
after an FRR restart everything is missing, and the caller applies in full again.

``router bgp ASN vrf X`` is shared with the operator like every BGP instance, so the diff only
removes ovn-frr's lines from it; when ovn-frr no longer needs a VRF instance and FRR shows it
empty afterwards (nobody else wrote into it), the instance itself is removed as well.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from ovn_frr.frr.diff import Node, diff, parse
from ovn_frr.frr.vtysh import Vtysh, VtyshError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ApplyResult:
    ok: bool
    #: commands sent (0: nothing changed)
    lines: int
    error: str = ""


class FrrApplier:
    def __init__(self, vtysh: Vtysh) -> None:
        self.vtysh = vtysh
        #: the config text ovn-frr last applied successfully ("" at start: nothing of ours)
        self.applied = ""

    def apply(self, text: str) -> ApplyResult:
        batch = diff(self.applied, text)
        lines = batch.count("\n")
        if not batch:
            return ApplyResult(True, 0)
        try:
            self.vtysh.apply(batch)
        except VtyshError as exc:
            log.error("frr_apply_failed lines=%d error=%s (rolling back)", lines, exc)
            # lines of the failed batch that never landed cannot be undone: expected failures
            with contextlib.suppress(VtyshError):
                self.vtysh.apply(diff(text, self.applied))
            return ApplyResult(False, lines, str(exc))
        old, self.applied = self.applied, text
        log.info("frr_applied lines=%d", lines)
        self._drop_empty_vrfs(old, text)
        return ApplyResult(True, lines)

    def _drop_empty_vrfs(self, old: str, new: str) -> None:
        gone = set(_vrf_instances(old)) - set(_vrf_instances(new))
        if not gone:
            return
        try:
            running = parse(self.vtysh.running_config()).children
            empty = [v for v in sorted(gone) if v in running and not running[v].children]
            if empty:
                self.vtysh.apply("".join(f"no {v}\n" for v in empty))
                log.info("frr_vrf_instances_removed instances=%s", empty)
        except VtyshError as exc:  # left in place, empty: harmless
            log.warning("frr_vrf_instance_removal_failed error=%s", exc)

    def forget(self) -> None:
        """FRR lost our config (restart): the next apply sends all of it."""
        self.applied = ""

    def missing(self) -> list[str]:
        """Lines of the applied config that FRR's running-config lacks. Only lines FRR shows
        verbatim are compared (it hides default values, e.g. the FPM port or a BFD
        multiplier of 3)."""
        applied = _paths(parse(self.applied))
        return sorted(applied - _paths(parse(self.vtysh.running_config())))


def _vrf_instances(text: str) -> list[str]:
    return [line for line in parse(text).children if line.startswith("router bgp ") and
            " vrf " in line]  # fmt: skip


#: lines FRR's running-config shows exactly as ovn-frr renders them
VERBATIM = ("router bgp", "neighbor", "network", "ip prefix-list", "ipv6 prefix-list",
            "route-map", "address-family", "match", "profile")  # fmt: skip


def _paths(node: Node, path: str = "") -> set[str]:
    out = set()
    for line, child in node.children.items():
        here = f"{path} > {line}" if path else line
        if line.startswith(VERBATIM):
            out.add(here)
        out |= _paths(child, here)
    return out
