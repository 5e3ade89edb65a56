"""Each module of tests/kernel/guest runs in a User-Mode Linux guest of its own; a failure shows
the guest's pytest output, its console and the UML kernel's log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ovn_frr.lab.uml import GUEST_ENV, find_kernel, run

ROOT = Path(__file__).resolve().parents[2]
GUEST = sorted(p.name for p in (Path(__file__).parent / "guest").glob("test_*.py"))

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (UML, namespaces)"),
    pytest.mark.skipif(bool(os.environ.get(GUEST_ENV)), reason="already in a guest"),
]


def test_a_uml_kernel_is_installed() -> None:
    """`make setup` installs user-mode-linux: the tier never skips for want of a kernel."""
    kernel = find_kernel()
    assert kernel is not None, "no /usr/bin/linux.uml: run `make setup`"
    for module in ("vrf", "dummy", "vxlan", "bridge", "veth", "tun"):
        found = subprocess.run(
            ["find", str(kernel.modules), "-name", f"{module}.ko*"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert found.strip(), f"{module}.ko not in {kernel.modules}"


@pytest.mark.parametrize("module", GUEST)
def test_in_guest(module: str) -> None:
    result = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         f"tests/kernel/guest/{module}"],
        cwd=ROOT,
        timeout=900,
    )  # fmt: skip
    if not result.ok:
        pytest.fail(result.explain(), pytrace=False)
    print(result.output.splitlines()[-1] if result.output else "", f"({result.seconds:.0f} s)")


def _stray() -> list[str]:
    """Processes of earlier guests still running on the host (UML's stubs run the guest's
    programs; the marker is in their command line)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines()
            if "linux.uml" in line or "ovn-frr-guest-marker" in line]  # fmt: skip


def test_no_guest_process_outlives_its_guest() -> None:
    """A guest that leaves a background process, and one that overruns its deadline and is
    killed from outside: afterwards nothing of either runs on the host."""
    assert not _stray(), _stray()
    marker = ["bash", "-c", "(exec -a ovn-frr-guest-marker sleep 1000) & sleep 0.5; ps -eo args"]
    done = run(marker, cwd=ROOT, timeout=120)
    assert done.ok and "ovn-frr-guest-marker" in done.output, done.explain()
    assert not _stray(), _stray()
    hung = run(["bash", "-c", "exec -a ovn-frr-guest-marker sleep 1000"], cwd=ROOT, timeout=20)
    assert hung.rc is None, hung.explain()
    assert not _stray(), _stray()
