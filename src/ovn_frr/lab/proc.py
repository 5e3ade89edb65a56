"""Process, namespace and waiting helpers of the lab."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

FRR_TMP = Path("/var/tmp/frr")


class LabError(Exception):
    """A lab step failed; the message says which and why."""


class LabTimeout(LabError):
    """A condition did not become true before its deadline."""


def run(
    argv: Sequence[str],
    *,
    netns: str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float = 120.0,
    input_text: str | None = None,
) -> str:
    """Run a command (in ``netns`` if given); return stdout, raise LabError on failure."""
    full = ["ip", "netns", "exec", netns, *argv] if netns else list(argv)
    penv = None if env is None else {**os.environ, **env}
    try:
        p = subprocess.run(
            full,
            capture_output=True,
            text=True,
            env=penv,
            timeout=timeout,
            check=False,
            input=input_text,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"{' '.join(full)}: {exc}") from None
    if check and p.returncode != 0:
        detail = (p.stderr or p.stdout).strip().splitlines()
        raise LabError(f"{' '.join(full)}: exit {p.returncode}: {' | '.join(detail[-5:])}")
    return p.stdout


def wait_for(
    condition: Callable[[], T | None],
    *,
    timeout: float,
    what: str,
    interval: float = 0.02,
    max_interval: float = 0.5,
) -> T:
    """Poll ``condition`` until it returns a truthy value (returned) or the deadline passes.

    Exceptions from ``condition`` count as "not yet" and the last one is reported on timeout.
    """
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as exc:  # "not yet": remembered for the timeout message
            last = exc
        now = time.monotonic()
        if now >= deadline:
            detail = f" (last error: {last})" if last else ""
            raise LabTimeout(f"timed out after {timeout:.1f}s waiting for {what}{detail}")
        time.sleep(min(interval, deadline - now))
        interval = min(interval * 1.5, max_interval)


# --- network namespaces ---------------------------------------------------------------------


def netns_list() -> list[str]:
    out = run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def netns_add(name: str) -> None:
    run(["ip", "netns", "add", name])
    run(["ip", "link", "set", "lo", "up"], netns=name)


def netns_pids(name: str) -> list[int]:
    out = run(["ip", "netns", "pids", name], check=False)
    return [int(x) for x in out.split() if x.isdigit()]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno == errno.EPERM
    # a zombie is gone for our purposes
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def kill_pids(pids: Sequence[int], grace: float = 5.0) -> None:
    """SIGTERM, wait up to ``grace`` seconds, then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        try:
            wait_for(
                lambda: not any(pid_alive(p) for p in pids) or None,
                timeout=grace,
                what="processes to exit",
            )
            return
        except LabTimeout:
            continue


def remove_frr_tmp(pids: Sequence[int]) -> None:
    """FRR daemons keep /var/tmp/frr/<daemon>.<pid>/ (crash logs) after they exit."""
    if not FRR_TMP.is_dir():
        return
    wanted = {str(p) for p in pids}
    for entry in FRR_TMP.iterdir():
        if entry.name.rpartition(".")[2] in wanted:
            shutil.rmtree(entry, ignore_errors=True)


def netns_destroy(name: str) -> None:
    """Kill every process in the namespace, remove FRR's temp dirs of them, delete it."""
    pids = netns_pids(name)
    kill_pids(pids)
    remove_frr_tmp(pids)
    run(["ip", "netns", "del", name], check=False)


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None
