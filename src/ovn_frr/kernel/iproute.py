"""iproute2 (``ip``, ``bridge``) as the kernel adapter runs it: one error class for all of it."""

from __future__ import annotations

from collections.abc import Sequence

from ovn_frr.command import run_command


class KernelError(OSError):
    """An iproute2 command failed."""


def run(argv: Sequence[str], stdin: str | None = None, timeout: float = 120) -> str:
    return run_command(argv, stdin, KernelError, timeout=timeout)
