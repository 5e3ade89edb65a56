"""What the running agent tells ``ovn-frr status`` and ``ovn-frr trace`` (JSON documents).

``status``: agent health, FRR and OVN connections, BGP sessions with BFD, what is advertised
(and the OVN object behind each prefix), what is imported per router, what was rejected and
why, the last FRR apply. ``trace PREFIX``: the story of one prefix in both directions.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ovn_frr import __version__
from ovn_frr.core.model import RTPROT_BGP, Network, Rejection
from ovn_frr.frr.show import advertised_to, best_paths
from ovn_frr.frr.vtysh import VtyshError

if TYPE_CHECKING:
    from ovn_frr.agent import Agent

#: lists in the status document are cut here (totals are always given)
LIST_LIMIT = 1000
PROTOCOL_NAMES = {3: "kernel", 4: "static", RTPROT_BGP: "bgp", 187: "isis", 188: "ospf"}


def health(a: Agent) -> list[str]:
    """What is wrong, one line each (empty: healthy)."""
    s = a.state
    problems = []
    if not a.nb.connected:
        problems.append("OVN NB not connected")
    if not a.sb.connected:
        problems.append("OVN SB not connected")
    if not s.frr_reachable:
        problems.append("FRR not reachable (vtysh)")
    if not a.fpm.counters.connected:
        problems.append("zebra not connected on FPM")
    if s.last_apply is not None and not s.last_apply.ok:
        problems.append(f"last FRR apply failed: {s.last_apply.error}")
    if s.last_error:
        problems.append(s.last_error)
    return problems


def status_doc(a: Agent, now: float) -> dict[str, Any]:
    s = a.state
    fpm = a.fpm.counters
    per_router = a.imported_per_router()
    reasons = Counter(r.reason for r in s.rejected)
    apply = None
    if s.last_apply is not None:
        apply = {"ok": s.last_apply.ok, "lines": s.last_apply.lines, "error": s.last_apply.error,
                 "seconds_ago": round(now - s.last_apply_at, 1),
                 "duration_ms": round(s.last_apply_ms, 1)}  # fmt: skip
    return {
        "agent": {"version": __version__, "chassis": a.chassis, "uptime_s": round(now - s.started),
                  "passes": s.passes, "problems": health(a)},
        "frr": {"reachable": s.frr_reachable, "version": str(a.versions.frr or ""),
                "last_apply": apply},
        "ovn": {"nb": {"remote": a.nb.remote, "connected": a.nb.connected},
                "sb": {"remote": a.sb.remote, "connected": a.sb.connected}},
        "fpm": {"connected": fpm.connected, "connections": fpm.connections,
                "messages": fpm.messages, "errors": fpm.errors, "last_error": fpm.last_error,
                "rib_routes": len(a.rib), "synced": a.rib.synced},
        "bgp": [asdict(x) for x in s.sessions],
        "advertised": [{"vrf": x.vrf or "default", "prefix": str(x.prefix), "source": x.source}
                       for x in sorted(s.announcements, key=lambda x: (x.vrf, str(x.prefix)))
                       ][:LIST_LIMIT],
        "advertised_total": len(s.announcements),
        "imported": {"total": s.routes_imported,
                     "routers": [{"router": r, "table": s.routers.get(r),
                                  "rows": per_router.get(r, 0)}
                                 for r in sorted(set(s.routers) | set(per_router))]},
        "rejected": [asdict(r) for r in s.rejected[:LIST_LIMIT]],
        "rejected_total": len(s.rejected),
        "rejected_by_reason": dict(reasons),
        "intent_problems": list(s.intent_problems),
    }  # fmt: skip


def metric_values(a: Agent) -> dict[str, Any]:
    s = a.state
    up: Counter[str] = Counter()
    for x in s.sessions:
        up[x.vrf] += 0
    for vrf, _neighbor in {(x.vrf, x.neighbor) for x in s.sessions if x.up}:
        up[vrf] += 1
    return {
        "sessions_up": dict(up),
        "imported": s.routes_imported,
        "advertised": len(s.announcements),
        "rejected": dict(Counter(r.reason for r in s.rejected)),
        "fpm_messages": a.fpm.counters.messages,
        "fpm_errors": a.fpm.counters.errors,
        "fpm_connections": a.fpm.counters.connections,
        "passes": s.passes,
        "apply_failures": s.apply_failures,
        "intent_problems": len(s.intent_problems),
    }


async def trace_doc(a: Agent, text: str) -> dict[str, Any]:
    try:
        prefix: Network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return {"error": f"{text!r} is not a prefix"}
    s = a.state
    story: list[str] = []
    afi = "ipv6" if prefix.version == 6 else "ipv4"

    async def bgp(vrf: str) -> Any:
        where = f"vrf {vrf} " if vrf else ""
        command = f"show bgp {where}{afi} unicast {prefix} json"
        try:
            return await asyncio.to_thread(a.vtysh.show_json, command)
        except VtyshError as exc:
            return {"error": str(exc)}

    # OVN -> FRR -> peers
    ours = sorted((x for x in s.announcements if x.prefix == prefix), key=lambda x: x.vrf)
    applied = f"network {prefix}" in a.applier.applied
    advertise = []
    for x in ours:
        shown = await bgp(x.vrf)
        peers = advertised_to(shown)
        advertise.append({"vrf": x.vrf or "default", "source": x.source,
                          "in_frr_config": applied, "sent_to": list(peers)})  # fmt: skip
        story.append(f"OVN {x.source} -> announce {prefix} in VRF {x.vrf or 'default'}")
        story.append(f"FRR: `network {prefix}` " + ("applied" if applied else "NOT applied" + (
            f" (last apply failed: {s.last_apply.error})" if s.last_apply and not s.last_apply.ok
            else "")))  # fmt: skip
        story.append("BGP: sent to " + (", ".join(peers) if peers else "no peer"))

    # peers -> zebra -> FPM -> policy -> OVN
    rib = a.rib.lookup(str(prefix))
    received = await bgp("") if not ours else {}
    paths = best_paths(received)
    if paths:
        story.append("BGP: paths from " + ", ".join(paths))
    for route in rib:
        hops = ", ".join(str(h.gateway or f"ifindex {h.ifindex}") for h in sorted(route.hops))
        proto = PROTOCOL_NAMES.get(route.protocol, route.protocol)
        story.append(f"zebra -> FPM: table {route.table} {proto} {route.kind} via {hops}")
    if not rib and not ours:
        story.append("zebra has not sent this prefix on FPM")
    rejected = [r for r in s.rejected if r.prefix == str(prefix)]
    for r in rejected:
        story.append(f"policy: not imported into {r.router}: {r.reason} ({r.detail})")
    # the plan itself is not kept between passes (a set of every imported route): the
    # decisions are, per router and prefix
    desired = sorted(d for decision in a.decisions.decided(str(prefix))
                     if not isinstance(decision, Rejection) for d in decision)  # fmt: skip
    for d in desired:
        story.append(f"policy: import into {d.router} via {d.nexthop} port {d.output_port}")
    rows = sorted((r for r in a.owned_rows() if r.prefix == str(prefix)), key=lambda r: r.uuid)
    for row in rows:
        story.append(f"OVN: row {row.uuid} on {row.router} via {row.nexthop}")
    if desired and len(rows) < len(desired):
        story.append("OVN: not all rows written yet")
    return {
        "prefix": str(prefix),
        "advertise": advertise,
        "import": {
            "bgp_paths": list(paths),
            "rib": [{"table": x.table, "protocol": PROTOCOL_NAMES.get(x.protocol, x.protocol),
                     "kind": x.kind, "hops": [str(h.gateway) for h in sorted(x.hops)]}
                    for x in rib],
            "rejected": [asdict(r) for r in rejected],
            "desired": [d._asdict() for d in desired],
            "rows": [asdict(r) for r in rows],
        },
        "story": story,
    }  # fmt: skip
