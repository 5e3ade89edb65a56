from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ovn_frr.versions import FRR_ZEBRA


def lab_unavailable() -> str | None:
    """Why lab tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, FRR, OVN): run as root"
    missing = [
        b for b in ("ip", "vtysh", "ovsdb-server", "ovn-northd", "ovs-vswitchd", "ovn-controller")
        if shutil.which(b) is None
    ]  # fmt: skip
    if not os.path.exists(FRR_ZEBRA):
        missing.append(FRR_ZEBRA)
    if missing:
        return f"needs {', '.join(missing)}: run `make setup`"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = lab_unavailable()
    for item in items:
        if any(f"/{tier}/" in str(item.path) for tier in ("functional", "e2e", "chaos")):
            item.add_marker(pytest.mark.root)
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite tests/golden/* from the current renderers instead of comparing",
    )


FRR_ROOT_SH = Path(__file__).parents[1] / "scripts" / "frr-root.sh"


@pytest.fixture(scope="session")
def newer_frr_root() -> str:
    """A root file system with FRR 10.7 (Debian forky's, ``scripts/frr-root.sh``, built once
    and cached) for a lab peer that needs an FRR >= 10.6 (``PeerSpec.frr_root``)."""
    res = subprocess.run(["bash", str(FRR_ROOT_SH)], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        pytest.fail(f"scripts/frr-root.sh failed: {res.stderr.strip()[-2000:]}")
    return res.stdout.strip()
