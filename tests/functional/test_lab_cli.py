"""`ovn-frr lab up|status|down` as an operator runs them, and Ctrl-C teardown."""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import sys
from pathlib import Path

from ovn_frr.lab import wait_for
from ovn_frr.lab.proc import netns_list

CLI = [sys.executable, "-m", "ovn_frr"]


def cli(*args: str, base: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "lab", "--base", str(base), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def lab_netns(name: str) -> list[str]:
    return [ns for ns in netns_list() if ns.startswith(f"{name}-")]


def test_up_status_down(lab_base: Path) -> None:
    name = "cli" + secrets.token_hex(2)
    try:
        up = cli("up", "--name", name, "--topology", "minimal", base=lab_base)
        assert up.returncode == 0, up.stderr
        assert f"ovn-frr lab down {name}" in up.stdout
        assert sorted(lab_netns(name)) == [f"{name}-node1", f"{name}-ovn", f"{name}-tor1"]

        status = cli("status", "--json", base=lab_base)
        entry = next(x for x in json.loads(status.stdout) if x["name"] == name)
        assert sorted(entry["live_netns"]) == sorted(entry["netns"])

        def established() -> bool:
            out = cli("status", base=lab_base).stdout
            return out.count("Established") >= 2  # node1's IPv4 and IPv6 sessions

        wait_for(established, timeout=30, what="status shows Established sessions")
    finally:
        down = cli("down", name, base=lab_base)
    assert down.returncode == 0, down.stderr
    assert lab_netns(name) == []
    assert not (lab_base / name).exists()


def test_up_an_ovn_kubernetes_cluster_in_local_gateway_mode(lab_base: Path) -> None:
    name = "cli" + secrets.token_hex(2)
    try:
        up = cli("up", "--name", name, "--topology", "ovn-kubernetes", "--gateway-mode", "local",
                 base=lab_base)  # fmt: skip
        assert up.returncode == 0, up.stderr
        members = ("node1", "node2", "ovn", "tor1", "tor2")
        assert sorted(lab_netns(name)) == [f"{name}-{n}" for n in members]
        nb = f"unix:{lab_base / name / 'ovn' / 'nb.sock'}"
        get = subprocess.run(["ovn-nbctl", f"--db={nb}", "get", "Logical_Router",
                              "ns1_green_transit_router", "options:ct-commit-all"],
                             capture_output=True, text=True, check=True)  # fmt: skip
        assert get.stdout.strip().strip('"') == "true"
    finally:
        down = cli("down", name, base=lab_base)
    assert down.returncode == 0, down.stderr


def test_hold_tears_down_on_ctrl_c(lab_base: Path) -> None:
    name = "hold" + secrets.token_hex(2)
    proc = subprocess.Popen(
        [*CLI, "lab", "--base", str(lab_base), "up", "--name", name, "--topology", "minimal",
         "--hold"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "Ctrl-C tears it down" in line:
                break
        assert len(lab_netns(name)) == 3
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        cli("down", name, base=lab_base)
    assert lab_netns(name) == []
    assert not (lab_base / name).exists()


def test_down_without_names_is_a_usage_error(lab_base: Path) -> None:
    res = cli("down", base=lab_base)
    assert res.returncode == 2
    assert "name a lab, or --all" in res.stderr
