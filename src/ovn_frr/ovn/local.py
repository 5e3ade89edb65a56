"""Facts of the local Open vSwitch."""

from __future__ import annotations

import subprocess


def local_chassis(timeout: float = 5.0) -> str:
    """This chassis' name: the local OVS ``external_ids:system-id`` (as ovn-controller uses)."""
    try:
        out = subprocess.run(
            ["ovs-vsctl", f"--timeout={int(timeout)}", "get", "Open_vSwitch", ".",
             "external_ids:system-id"],
            capture_output=True, text=True, timeout=timeout + 1, check=True,
        ).stdout.strip().strip('"')  # fmt: skip
    except (subprocess.SubprocessError, FileNotFoundError) as exc:
        raise OSError(f"cannot read the local OVS system-id: {exc}") from None
    if not out:
        raise OSError("the local OVS has no external_ids:system-id")
    return out
