"""A count of changes that the OVSDB threads make and a reader waits on."""

from __future__ import annotations

import threading


class Changes:
    """Bumped (in an OVSDB thread) whenever rows changed or a condition took effect; the reader
    waits for the next bump while the monitors' conditions settle, instead of returning and
    being woken again (which cost a debounce per round trip of a condition change)."""

    def __init__(self) -> None:
        self._count = 0
        self._cv = threading.Condition()

    @property
    def count(self) -> int:
        return self._count

    def bump(self) -> None:
        with self._cv:
            self._count += 1
            self._cv.notify_all()

    def wait(self, since: int, timeout: float) -> bool:
        """Wait until the count is no longer ``since``; False when ``timeout`` passed first."""
        with self._cv:
            return self._cv.wait_for(lambda: self._count != since, timeout)
