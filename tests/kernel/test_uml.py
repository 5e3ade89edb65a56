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
