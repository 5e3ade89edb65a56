"""Rich renderings of the agent's status and trace documents (for ``ovn-frr status|trace``)."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

#: rows shown per list in the tables (the JSON output has them all, up to the agent's limit)
ROWS = 20


def _table(title: str, *columns: str) -> Table:
    t = Table(title=title, title_justify="left", title_style="bold")
    for c in columns:
        t.add_column(c)
    return t


def _more(t: Table, total: int, shown: int) -> None:
    if total > shown:
        t.caption = f"{shown} of {total} shown (--json for all)"


def status_view(doc: dict[str, Any]) -> RenderableType:
    if "error" in doc:
        return Text(f"agent: {doc['error']}", style="red")
    a, frr, ovn, fpm = doc["agent"], doc["frr"], doc["ovn"], doc["fpm"]
    problems = a["problems"]
    head = Text.assemble(
        ("ovn-frr ", "bold"), f"{a['version']} on chassis {a['chassis']}: ",
        ("healthy" if not problems else "; ".join(problems), "green" if not problems else "red"),
        f"  (up {a['uptime_s']} s, {a['passes']} passes)",
    )  # fmt: skip
    conn = _table("Connections", "what", "state", "detail")
    for name in ("nb", "sb"):
        db = ovn[name]
        conn.add_row(f"OVN {name.upper()}", _ok(db["connected"]), db["remote"])
    conn.add_row("FRR (vtysh)", _ok(frr["reachable"]), f"FRR {frr['version']}")
    refused = f", {fpm['refused']} refused (not zebra)" if fpm.get("refused") else ""
    if fpm.get("zebra_pid") and not fpm.get("zebra_sweep"):
        refused += ", zebra runs without -K (docs/frr.md)"
    conn.add_row("zebra FPM", _ok(fpm["connected"]),
                 f"{fpm['messages']} messages, {fpm['errors']} errors, {fpm['rib_routes']} routes"
                 + ("" if fpm["synced"] else ", replay not complete") + refused)  # fmt: skip
    last = frr["last_apply"]
    if last is not None:
        detail = f"{last['lines']} lines in {last['duration_ms']} ms, {last['seconds_ago']} s ago"
        conn.add_row("last FRR change", _ok(last["ok"]), detail)
    pipes = _table("Reconcilers", "name", "state", "steps", "failures", "detail")
    for r in doc.get("reconcilers", []):
        detail = r["last_error"] or (f"busy for {r['busy_s']} s" if r["busy_s"] else "")
        if r["retry_in_s"] is not None:
            detail += f" (retry in {r['retry_in_s']} s)"
        pipes.add_row(r["name"], _ok(r["healthy"], "ok" if r["healthy"] else "failing"),
                      str(r["runs"]), str(r["failures"]), detail)  # fmt: skip
    bgp = _table("BGP sessions", "VRF", "neighbor", "family", "state", "up for", "received",
                 "sent", "BFD")  # fmt: skip
    for x in doc["bgp"]:
        bgp.add_row(x["vrf"], x["neighbor"], x["afi"], _ok(x["state"] == "Established",
                    x["state"]), x["uptime"], str(x["received"]), str(x["sent"]),
                    x["bfd"] or "-")  # fmt: skip
    adv = _table(f"Advertised ({doc['advertised_total']})", "VRF", "prefix", "OVN object")
    for x in doc["advertised"][:ROWS]:
        adv.add_row(x["vrf"], x["prefix"], x["source"])
    _more(adv, doc["advertised_total"], min(ROWS, len(doc["advertised"])))
    imp = _table(f"Imported ({doc['imported']['total']} rows)", "router", "table", "rows")
    for x in doc["imported"]["routers"]:
        imp.add_row(x["router"], str(x["table"] if x["table"] is not None else "-"),
                    str(x["rows"]))  # fmt: skip
    parts: list[RenderableType] = [head, conn, pipes, bgp, adv, imp]
    vrfs = doc.get("vrfs", [])
    if any(v["vrf"] != "default" for v in vrfs):
        parts.append(_vrf_table(vrfs))
    evpn = doc.get("evpn", {})
    if evpn.get("vnis"):
        ev = _table(f"EVPN (VTEP {evpn['vtep']})", "VNI", "switch", "data path", "local MACs",
                    "remote MACs", "remote IPs", "remote VTEPs")  # fmt: skip
        for v in evpn["vnis"]:
            ev.add_row(str(v["vni"]), v["switch"], _ok(v["wired"], "wired" if v["wired"]
                       else "waiting for the localnet patch"), str(v["local_total"]),
                       str(v["remote_macs_total"]), str(v["remote_ips_total"]),
                       ", ".join(v["vteps"]) or "none")  # fmt: skip
        parts.append(ev)
    drift = frr.get("drift")
    if drift:
        at = time.strftime("%H:%M:%S", time.localtime(drift["last_at"]))
        parts.append(Text(f"FRR drifted: {drift['lines']} lines re-applied, last at {at} "
                          f"({drift['seconds_ago']} s ago)", style="yellow"))  # fmt: skip
    for x in frr.get("rejected", []):
        parts.append(Text(f"FRR rejected `{x['line']}`: {x['reason']} (attempt {x['attempts']}, "
                          f"retry in {x['retry_in_s']} s)", style="red"))  # fmt: skip
    if doc["rejected_total"]:
        rej = _table(f"Rejected ({doc['rejected_total']})", "router", "prefix", "reason",
                     "detail")  # fmt: skip
        for x in doc["rejected"][:ROWS]:
            rej.add_row(x["router"], x["prefix"], Text(x["reason"], style="yellow"), x["detail"])
        _more(rej, doc["rejected_total"], min(ROWS, len(doc["rejected"])))
        parts.append(rej)
    if doc["intent_problems"]:
        parts.append(Text("Ignored intent:\n  " + "\n  ".join(doc["intent_problems"]),
                          style="yellow"))  # fmt: skip
    return Group(*parts)


def _vrf_table(vrfs: list[dict[str, Any]]) -> Table:
    vt = _table("VRFs", "VRF", "sessions up", "tables", "routers", "imported", "advertised",
                "L3VNI")  # fmt: skip
    for v in vrfs:
        vt.add_row(v["vrf"], _ok(v["sessions_up"] == v["sessions"],
                                 f"{v['sessions_up']}/{v['sessions']}"),
                   ",".join(map(str, v["tables"])) or "-", ", ".join(v["routers"]) or "-",
                   str(v["imported"]), str(v["advertised"]),
                   str(v["l3vni"]) if v["l3vni"] is not None else "-")  # fmt: skip
    return vt


def _ok(good: bool, text: str | None = None) -> Text:
    return Text(text or ("up" if good else "down"), style="green" if good else "red")


def trace_view(doc: dict[str, Any]) -> RenderableType:
    if "error" in doc:
        return Text(f"trace: {doc['error']}", style="red")
    lines = doc["story"] or ["nothing known about this prefix (not advertised, not learned)"]
    title = doc.get("prefix") or doc.get("mac", "")
    return Group(Text(title, style="bold"), *(Text(f"  {line}") for line in lines))


def demo_view(
    at_tors: dict[str, list[str]],
    imported: dict[str, list[str]],
    status: dict[str, Any],
    announced: set[str],
    expected: dict[str, set[str]],
    tors: tuple[str, ...],
    evpn: tuple[dict[str, Any], dict[str, Any]] | None = None,
) -> RenderableType:
    """Both directions of the demo, expected against seen; ``evpn``: (seen, expected) of its
    EVPN switch."""
    sources = {x["prefix"]: x["source"] for x in status.get("advertised", [])}
    out = _table("OVN -> ovn-frr -> FRR -> ToRs", "prefix", "OVN object", *tors)
    for p in sorted(announced):
        out.add_row(p, sources.get(p, "-"), *(_ok(t in at_tors.get(p, ()), "yes" if t in
                    at_tors.get(p, ()) else "no") for t in tors))  # fmt: skip
    inn = _table("ToRs -> FRR -> FPM -> ovn-frr -> OVN GR_node1", "prefix", "expected next hops",
                 "rows in OVN NB")  # fmt: skip
    for p, hops in sorted(expected.items()):
        got = set(imported.get(p, ()))
        inn.add_row(p, ", ".join(sorted(hops)), _ok(got == hops, ", ".join(sorted(got)) or "none"))
    sessions = _table("node1 BGP sessions", "neighbor", "state", "BFD", "received", "sent")
    for x in status.get("bgp", []):
        sessions.add_row(x["neighbor"], _ok(x["state"] == "Established", x["state"]),
                         x["bfd"] or "-", str(x["received"]), str(x["sent"]))  # fmt: skip
    problems = status.get("agent", {}).get("problems", [status.get("error", "")])
    head = Text.assemble(("ovn-frr demo", "bold"), "  agent: ",
                         ("healthy" if not problems else "; ".join(problems),
                          "green" if not problems else "yellow"))  # fmt: skip
    parts: list[RenderableType] = [head, out, inn, sessions]
    if evpn is not None and evpn[1]:
        seen, want = evpn
        ev = _table(f"EVPN: switch {want['switch']} (VNI {want['vni']}) <-> vtep1", "what",
                    "expected", "seen")  # fmt: skip
        names = {"vm1_at_vtep1": "vm1's MAC at vtep1 (type-2), via VTEP",
                 "host1_at_node1": "host1's MAC at node1 (type-2), via VTEP",
                 "ping_vm1_host1": "ping vm1 (OVN) -> host1 (behind vtep1)"}  # fmt: skip
        for key, label in names.items():
            ev.add_row(label, str(want[key]), _ok(seen.get(key) == want[key], str(seen.get(key))))
        parts.append(ev)
    return Group(*parts)
