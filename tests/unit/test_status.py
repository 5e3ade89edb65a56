"""FRR show-JSON parsing, the status/trace renderings, the status socket and /metrics."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from rich.console import Console

from ovn_frr.frr.show import advertised_to, best_paths, sessions
from ovn_frr.reconcilers.base import Sample
from ovn_frr.report import vrf_summary
from ovn_frr.status import Metrics, MetricsServer, StatusServer, ask
from ovn_frr.status_view import status_view, trace_view

SUMMARY = {
    "default": {
        "ipv4Unicast": {"peers": {
            "10.255.0.2": {"remoteAs": 65001, "state": "Established", "peerUptime": "00:01:02",
                           "pfxRcd": 12, "pfxSnt": 3},
            "10.255.1.2": {"remoteAs": 65002, "state": "Active", "peerUptime": "never"},
        }},
    },
    "blue": {"ipv4Unicast": {"peers": {"10.77.0.2": {"remoteAs": 65077, "state": "Idle"}}}},
}  # fmt: skip
BFD = [{"peer": "10.255.0.2", "vrf": "default", "status": "up"},
       {"peer": "10.255.1.2", "vrf": "default", "status": "down"}]  # fmt: skip


def test_sessions_with_bfd_state() -> None:
    got = sessions(SUMMARY, BFD)
    assert [(s.vrf, s.neighbor, s.state, s.bfd) for s in got] == [
        ("blue", "10.77.0.2", "Idle", ""),
        ("default", "10.255.0.2", "Established", "up"),
        ("default", "10.255.1.2", "Active", "down"),
    ]
    assert got[1].up and got[1].received == 12 and got[1].sent == 3
    assert sessions({}, []) == ()
    assert sessions({"default": "garbage"}, "garbage") == ()


def test_prefix_json() -> None:
    doc = {
        "prefix": "198.51.100.0/24",
        "advertisedTo": {"10.255.1.2": {}, "10.255.0.2": {}},
        "paths": [
            {"aspath": {"string": "65002"}, "peer": {"peerId": "10.255.1.2"}},
            {"aspath": {"string": "65001"}, "peer": {"peerId": "10.255.0.2"},
             "bestpath": {"overall": True}},
        ],
    }  # fmt: skip
    assert advertised_to(doc) == ("10.255.0.2", "10.255.1.2")
    assert best_paths(doc) == ("10.255.0.2 (65001)", "10.255.1.2 (65002)")
    assert advertised_to({}) == () and best_paths(None) == ()


STATUS: dict[str, Any] = {
    "agent": {"version": "0.1.0", "chassis": "node1", "uptime_s": 5, "passes": 3,
              "problems": ["zebra not connected on FPM"]},
    "frr": {"reachable": True, "version": "8.4.4",
            "last_apply": {"ok": False, "lines": 4, "drift": 0, "rejected": [], "seconds_ago": 1,
                           "duration_ms": 20.0},
            "drift": {"lines": 12, "checks": 2, "last_at": 1.7e9, "seconds_ago": 5.0},
            "rejected": [{"line": "router bgp 64512 > neighbor fe80::1%eth0 remote-as 65001",
                          "reason": "Create the peer-group or interface first", "attempts": 2,
                          "retry_in_s": 3.0}],
            "not_kept": []},
    "reconcilers": [{"name": "ovn", "healthy": False, "runs": 3, "failures": 2,
                     "last_error": "OVN_Northbound at unix:nb: connection refused",
                     "retry_in_s": 4.0, "busy_s": None, "last_ok_s_ago": 9.0},
                    {"name": "frr", "healthy": True, "runs": 9, "failures": 0, "last_error": "",
                     "retry_in_s": None, "busy_s": None, "last_ok_s_ago": 0.2}],
    "ovn": {"nb": {"remote": "unix:nb", "connected": True},
            "sb": {"remote": "unix:sb", "connected": False}},
    "fpm": {"connected": False, "connections": 0, "messages": 0, "errors": 0, "last_error": "",
            "rib_routes": 0, "synced": False},
    "bgp": [{"vrf": "default", "neighbor": "10.255.0.2", "afi": "ipv4Unicast",
             "state": "Established", "uptime": "00:00:09", "received": 1, "sent": 2,
             "remote_as": 65001, "bfd": "up"}],
    "advertised": [{"vrf": "default", "prefix": f"10.0.{i}.0/24", "source": "port p"}
                   for i in range(30)],
    "advertised_total": 31,
    "imported": {"total": 1, "routers": [{"router": "GR_node1", "table": 254, "rows": 1}]},
    "rejected": [{"router": "GR_node1", "prefix": "10.244.1.5/32", "reason": "hijack",
                  "detail": "overlaps 10.244.1.5/32 (LSP pod)"}],
    "rejected_total": 1, "rejected_by_reason": {"hijack": 1},
    "intent_problems": ["router r: dynamic-routing-redistribute='x' has unknown class(es) x"],
}  # fmt: skip


def render(renderable: Any) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


def test_views() -> None:
    text = render(status_view(STATUS))
    for want in (
        "zebra not connected on FPM",
        "FRR drifted: 12 lines re-applied, last at",
        "FRR rejected `router bgp 64512 > neighbor fe80::1%eth0 remote-as 65001`",
        "connection refused (retry in 4.0 s)",
        "10.255.0.2",
        "Established",
        "10.0.19.0/24",
        "20 of 31 shown",
        "hijack",
        "has unknown class(es)",
    ):
        assert want in text, want  # fmt: skip
    assert "10.0.20.0/24" not in text
    assert "agent: boom" in render(status_view({"error": "boom"}))
    story = {"prefix": "10.0.0.0/24", "story": ["OVN port p -> announce"]}
    assert "OVN port p -> announce" in render(trace_view(story))
    assert "nothing known" in render(trace_view({"prefix": "10.0.0.0/24", "story": []}))


def test_status_socket_and_metrics(tmp_path: Path) -> None:
    path = tmp_path / "run" / "status.sock"

    async def handle(request: str) -> dict[str, Any]:
        if request == "boom":
            raise RuntimeError("bad")
        return {"echo": request}

    values = [
        Sample("ovnfrr_bgp_sessions_up", "gauge", "up", 2, (("vrf", "default"),)),
        Sample("ovnfrr_routes_rejected", "gauge", "rejected", 1, (("reason", "hijack"),)),
        Sample("ovnfrr_reconcile_passes", "counter", "steps", 4, (("reconciler", "import"),)),
        Sample("ovnfrr_reconcile_passes", "counter", "steps", 6, (("reconciler", "frr"),)),
        Sample("ovnfrr_routes_imported", "gauge", "rows", 7),
    ]
    metrics = Metrics(lambda: values)
    metrics.apply_seconds.observe(0.03)

    async def main() -> tuple[dict[str, Any], dict[str, Any], str, str]:
        server = StatusServer(str(path), handle)
        await server.start()
        http = MetricsServer("127.0.0.1", 0, metrics)
        await http.start()
        assert http._server is not None
        port = http._server.sockets[0].getsockname()[1]
        try:
            echo = await asyncio.to_thread(ask, str(path), "trace 10.0.0.0/8")
            boom = await asyncio.to_thread(ask, str(path), "boom")
            body = await asyncio.to_thread(
                lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
            )
            try:
                await asyncio.to_thread(urllib.request.urlopen, f"http://127.0.0.1:{port}/x")
                missing = "served"
            except urllib.error.HTTPError as exc:
                missing = str(exc.code)
        finally:
            await server.close()
            await http.close()
        return echo, boom, body, missing

    echo, boom, body, missing = asyncio.run(main())
    assert echo == {"echo": "trace 10.0.0.0/8"}
    assert boom == {"error": "RuntimeError: bad"}
    assert 'ovnfrr_bgp_sessions_up{vrf="default"} 2.0' in body
    assert 'ovnfrr_routes_rejected{reason="hijack"} 1.0' in body
    assert 'ovnfrr_reconcile_passes_total{reconciler="import"} 4.0' in body
    assert 'ovnfrr_reconcile_passes_total{reconciler="frr"} 6.0' in body
    assert "ovnfrr_routes_imported 7.0" in body
    assert "ovnfrr_frr_apply_seconds_count 1.0" in body
    assert missing == "404"
    assert not path.exists()  # removed on close


def test_vrf_summary_and_view() -> None:
    doc = {
        **STATUS,
        "bgp": [*STATUS["bgp"],
                {"vrf": "red", "neighbor": "10.255.2.2", "afi": "ipv4Unicast", "state": "Active",
                 "uptime": "", "received": 0, "sent": 0, "remote_as": 65001, "bfd": None},
                {"vrf": "red", "neighbor": "10.255.3.2", "afi": "ipv4Unicast",
                 "state": "Established", "uptime": "00:00:09", "received": 2, "sent": 1,
                 "remote_as": 65001, "bfd": "up"},
                {"vrf": "red", "neighbor": "10.255.3.2", "afi": "ipv6Unicast",
                 "state": "Established", "uptime": "00:00:09", "received": 0, "sent": 1,
                 "remote_as": 65001, "bfd": "up"}],
        "imported": {"total": 3, "routers": [
            {"router": "GR_node1", "vrf": "default", "table": 254, "rows": 1},
            {"router": "GR_red", "vrf": "red", "table": 1001, "rows": 2}]},
        "advertised_by_vrf": {"default": 31, "red": 4},
    }  # fmt: skip
    vrfs = {v["vrf"]: v for v in vrf_summary(doc)}
    assert list(vrfs) == ["default", "red"]
    assert vrfs["red"] == {"vrf": "red", "sessions": 2, "sessions_up": 1, "tables": [1001],
                           "routers": ["GR_red"], "imported": 2, "advertised": 4,
                           "l3vni": None}  # fmt: skip
    assert vrfs["default"]["sessions_up"] == 1 and vrfs["default"]["tables"] == [254]
    text = render(status_view({**doc, "vrfs": list(vrfs.values())}))
    assert "VRFs" in text and "GR_red" in text and "1/2" in text
    assert "VRFs" not in render(status_view({**STATUS, "vrfs": vrf_summary(STATUS)}))
