"""Watch a namespace's kernel routing table (``ip monitor route``) with arrival times.

Benchmarks use it for what FRR itself did and when: zebra installs what it selected into the
kernel in the same dataplane pass that feeds FPM, and a ToR's zebra installs what BGP
delivered to it.
"""

from __future__ import annotations

import subprocess
import threading
import time
from types import TracebackType


class KernelRoutes:
    def __init__(self, netns: str) -> None:
        #: (time.monotonic() at arrival, the line), in order
        self.lines: list[tuple[float, str]] = []
        self._cond = threading.Condition()
        self._proc = subprocess.Popen(["ip", "-n", netns, "monitor", "route"],
                                      stdout=subprocess.PIPE, text=True)  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            now = time.monotonic()
            with self._cond:
                self.lines.append((now, line))
                self._cond.notify_all()

    def first(self, needle: str, after: float = 0.0) -> float | None:
        """When a line mentioning ``needle`` (not a deletion) first arrived at or after
        ``after``."""
        with self._cond:
            return self._first(needle, after)

    def _first(self, needle: str, after: float) -> float | None:
        return next((t for t, line in self.lines if t >= after and needle in line
                     and not line.startswith("Deleted")), None)  # fmt: skip

    def wait(self, needle: str, after: float = 0.0, timeout: float = 30.0) -> float:
        with self._cond:
            if not self._cond.wait_for(lambda: self._first(needle, after) is not None, timeout):
                raise TimeoutError(f"no route line with {needle!r} within {timeout} s")
            found = self._first(needle, after)
            assert found is not None
            return found

    def close(self) -> None:
        self._proc.terminate()
        self._proc.wait()

    def __enter__(self) -> KernelRoutes:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
