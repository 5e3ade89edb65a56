"""Running a system command for an adapter: argv (and stdin text) in, stdout out, any failure
as the adapter's own error class with the command and its stderr (shared by ``kernel/`` and
``vswitch/``, which do not import each other)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence

#: runs argv (with stdin text) and returns stdout
Runner = Callable[[Sequence[str], str | None], str]


def run_command(
    argv: Sequence[str], stdin: str | None, error: type[OSError], timeout: float
) -> str:
    try:
        done = subprocess.run(list(argv), input=stdin, capture_output=True, text=True,
                              timeout=timeout, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise error(f"{' '.join(argv[:3])}: {exc}") from None
    if done.returncode != 0:
        err = " ".join(done.stderr.split())[:300]
        raise error(f"{' '.join(argv[:4])}: {err or f'exit {done.returncode}'}")
    return done.stdout
