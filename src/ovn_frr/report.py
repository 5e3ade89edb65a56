"""What the running agent tells ``ovn-frr status`` and ``ovn-frr trace`` (JSON documents),
composed from what each reconciler reports about itself.

``status``: agent health (every reconciler's problems), each reconciler's runner (steps,
failures, back-off), then each reconciler's own part: OVN connections and intent problems,
FPM and what is imported and rejected, what is advertised, FRR (drift, rejected lines, the
last apply) and the BGP sessions with BFD. ``trace PREFIX``: the parts of the story of one
prefix, in pipeline order (OVN object -> FRR `network` -> peers; peers -> zebra/FPM -> policy
-> OVN rows).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ovn_frr.core.model import Network
from ovn_frr.reconcilers.base import Runner, Sample


@dataclass(frozen=True, slots=True)
class AgentInfo:
    version: str
    chassis: str
    started: float


def health(runners: Sequence[Runner], now: float) -> list[str]:
    """What is wrong, one line each (empty: healthy)."""
    out: list[str] = []
    for r in runners:
        out += r.reconciler.problems(now)
        out += r.problems(now)
    return list(dict.fromkeys(out))


def status_doc(info: AgentInfo, runners: Sequence[Runner], now: float) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "agent": {"version": info.version, "chassis": info.chassis,
                  "uptime_s": round(now - info.started),
                  "passes": sum(r.runs for r in runners), "problems": health(runners, now)},
        "reconcilers": [r.status(now) for r in runners],
    }  # fmt: skip
    for r in runners:
        doc.update(r.reconciler.status(now))
    doc["vrfs"] = vrf_summary(doc)
    return doc


def vrf_summary(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per VRF: BGP sessions (up / all neighbors), the kernel tables the import reads, route
    rows imported, prefixes announced, and the L3VNI (EVPN type-5)."""
    vrfs: dict[str, dict[str, Any]] = {}

    def of(name: str) -> dict[str, Any]:
        return vrfs.setdefault(name, {"vrf": name, "sessions": 0, "sessions_up": 0,
                                      "tables": [], "routers": [], "imported": 0,
                                      "advertised": 0, "l3vni": None})  # fmt: skip

    neighbors: dict[tuple[str, str], bool] = {}
    for x in doc.get("bgp", []):
        key = (x["vrf"], x["neighbor"])
        neighbors[key] = neighbors.get(key, False) or x["state"] == "Established"
    for (vrf, _n), up in neighbors.items():
        of(vrf)["sessions"] += 1
        of(vrf)["sessions_up"] += up
    for x in doc.get("imported", {}).get("routers", []):
        v = of(x.get("vrf") or "default")
        v["routers"].append(x["router"])
        v["imported"] += x["rows"]
        if x["table"] is not None and x["table"] not in v["tables"]:
            v["tables"].append(x["table"])
    for vrf, n in doc.get("advertised_by_vrf", {}).items():
        of(vrf)["advertised"] += n
    for x in doc.get("l3vnis", []):
        of(x["vrf"])["l3vni"] = x["vni"]
    return [vrfs[k] for k in sorted(vrfs, key=lambda k: (k != "default", k))]


def samples(runners: Sequence[Runner]) -> Iterable[Sample]:
    for r in runners:
        yield from r.samples()
        yield from r.reconciler.samples()


async def trace_doc(text: str, runners: Sequence[Runner]) -> dict[str, Any]:
    for r in runners:  # a MAC: the EVPN pipeline's story
        trace_mac = getattr(r.reconciler, "trace_mac", None)
        if trace_mac is not None and (part := trace_mac(text)) is not None:
            return {**part.doc, "story": list(part.story)}
    try:
        prefix: Network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return {"error": f"{text!r} is not a prefix or a MAC"}
    doc: dict[str, Any] = {"prefix": str(prefix)}
    story: list[str] = []
    for r in runners:
        part = await r.reconciler.trace(prefix)
        doc.update(part.doc)
        story += part.story
    if not doc.get("advertise") and not doc.get("import", {}).get("rib") and not doc.get("evpn"):
        story.insert(0, "zebra has not sent this prefix on FPM")
    doc["story"] = story
    return doc
