"""The root file systems the tests use never break the host's network namespaces.

`ip netns add` makes /run/netns a shared mount; a bind of it into a root joins its peer group,
and unmounting that bind unmounted on the host every namespace made meanwhile (their files
stay; `ip netns exec` then fails with "Invalid argument"). Each test makes a namespace on the
host while a root is in use and checks it still works once the root is gone.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ovn_frr.lab import Lab, LabSpec, PeerSpec, minimal_spec

ROOT_SH = Path(__file__).parents[2] / "scripts" / "root.sh"


@pytest.fixture
def host_netns() -> Iterator[Callable[[], str]]:
    """Make namespaces on the host (removed at the end)."""
    made: list[str] = []

    def make() -> str:
        name = f"probe{uuid.uuid4().hex[:8]}"
        subprocess.run(["ip", "netns", "add", name], check=True)
        made.append(name)
        return name

    yield make
    for name in made:
        subprocess.run(["ip", "netns", "del", name], check=False)


def works(netns: str) -> bool:
    res = subprocess.run(["ip", "netns", "exec", netns, "ip", "link", "show", "lo"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    return res.returncode == 0


@pytest.mark.skipif(bool(os.environ.get("OVN_FRR_STACK")),
                    reason="scripts/root.sh runs from the host, not inside a root")  # fmt: skip
def test_a_namespace_made_while_the_debian_13_root_is_up_works_after_it(
    host_netns: Callable[[], str],
) -> None:
    before = host_netns()
    # the root waits for a line on stdin, makes a namespace of its own meanwhile, and ends
    inside = f"inner{uuid.uuid4().hex[:6]}"
    script = (f"ip netns add {inside} && echo ready && read x && "
              f"ip netns exec {inside} true && ip netns del {inside}")  # fmt: skip
    proc = subprocess.Popen(["bash", str(ROOT_SH), "trixie", "sh", "-c", script],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdin is not None
    try:
        line = proc.stdout.readline()  # the first run builds the root: minutes
        assert line.strip() == "ready", proc.communicate(timeout=60)
        during = host_netns()
        assert works(during)
        # the root's own namespaces are its own
        assert inside not in os.listdir("/run/netns")
        proc.stdin.write("go\n")
        proc.stdin.flush()
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert works(before) and works(during)


def test_a_namespace_made_while_a_peer_runs_another_roots_frr_works_after_it(
    make_lab: Callable[[LabSpec], Lab], newer_frr_root: str, host_netns: Callable[[], str]
) -> None:
    spec = minimal_spec()
    spec = LabSpec(nodes=spec.nodes, peers=(PeerSpec("tor1", 65001, frr_root=newer_frr_root),),
                   links=spec.links)  # fmt: skip
    lab = make_lab(spec)
    during = host_netns()
    lab.wait_bgp_up()
    lab.down()
    assert works(during)
