"""Each module of tests/kernel/guest runs in a User-Mode Linux guest of its own; a failure shows
the guest's pytest output, its console and the UML kernel's log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
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


@pytest.mark.timeout(960)
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


def _stray(workdir: str) -> list[str]:
    """Host processes of that guest still running a moment after it ended (UML's stubs carry
    linux.uml's command line, with the run's working folder in it)."""

    def now() -> list[str]:
        out = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
        return [line for line in out.splitlines()
                if workdir in line and " Z" not in line]  # fmt: skip

    deadline = time.monotonic() + 5
    while (left := now()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.mark.timeout(300)
def test_no_guest_process_outlives_its_guest() -> None:
    """A guest that leaves a background process, and one the host kills at its timeout
    (its own deadline is later): afterwards nothing of either runs on the host."""
    marker = ["bash", "-c", "(exec -a ovn-frr-guest-marker sleep 1000) & sleep 0.5; ps -eo args"]
    done = run(marker, cwd=ROOT, timeout=120)
    assert done.ok and "ovn-frr-guest-marker" in done.output, done.explain()
    assert done.workdir and not _stray(done.workdir), _stray(done.workdir)
    hung = run(["sleep", "1000"], cwd=ROOT, timeout=20, deadline=600)
    assert hung.rc is None and "no power-off within 20 s: killed" in hung.kernel_log, hung.explain()
    assert not _stray(hung.workdir), _stray(hung.workdir)
