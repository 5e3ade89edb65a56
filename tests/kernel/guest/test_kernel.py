"""The guest's kernel has what the host's lacks: each device kind the VRF and EVPN scenarios
need can be made in a namespace, and a VRF's routes land in its own table."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator

import pytest


def ip(*args: str) -> str:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def netns() -> Iterator[str]:
    name = f"k{uuid.uuid4().hex[:8]}"
    ip("netns", "add", name)
    try:
        yield name
    finally:
        ip("netns", "del", name)


@pytest.mark.parametrize(
    "kind",
    [
        ("vrf", "table", "10"),
        ("dummy",),
        ("bridge",),
        ("vxlan", "id", "100", "dstport", "4789", "local", "127.0.0.1"),
        ("veth", "peer", "name", "dev1"),
        ("tuntap",),
    ],
    ids=lambda k: k[0],
)
def test_device_kind(netns: str, kind: tuple[str, ...]) -> None:
    if kind[0] == "tuntap":
        ip("-n", netns, "tuntap", "add", "dev0", "mode", "tap")
    else:
        ip("-n", netns, "link", "add", "dev0", "type", *kind)
    assert "dev0" in ip("-n", netns, "-o", "link", "show")


def test_a_vrf_route_lands_in_the_vrf_table(netns: str) -> None:
    ip("-n", netns, "link", "add", "red", "type", "vrf", "table", "10")
    ip("-n", netns, "link", "add", "d0", "type", "dummy")
    ip("-n", netns, "link", "set", "d0", "master", "red")
    for dev in ("red", "d0"):
        ip("-n", netns, "link", "set", dev, "up")
    ip("-n", netns, "addr", "add", "10.0.0.1/24", "dev", "d0")
    ip("-n", netns, "route", "add", "198.51.100.0/24", "via", "10.0.0.2", "vrf", "red")
    assert "198.51.100.0/24" in ip("-n", netns, "route", "show", "table", "10")
    assert "198.51.100.0/24" not in ip("-n", netns, "route", "show", "table", "main")
