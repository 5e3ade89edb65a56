"""The kernel tier: run a command inside a User-Mode Linux guest whose kernel has what this
machine's lacks (vrf, dummy; also vxlan, bridge, veth, tun), on the same root file system.

Debian's ``user-mode-linux`` package is a Linux kernel built to run as a process, its modules in
``/usr/lib/uml/modules/<version>``. The guest sees the root (``/``, read-only, through hostfs)
and so the same FRR, OVN and Python as the host; every path a scenario writes is a tmpfs of the
guest (``guest-init.sh``). The command's output and exit code come back through a read-write
folder of the host.

No guest process outlives a run: linux.uml runs inside its own PID namespace (``unshare --pid
--fork --kill-child``) and not as its PID 1, so when it ends for any reason, SIGKILL included,
the host kernel kills every process left in that namespace: UML's ptrace stubs, which would
otherwise go on running guest code with the host's system calls. The LD_PRELOAD shim
(``umlxstate.c``, built once) also gives every stub PDEATHSIG, and makes linux.uml 6.1 boot on
hosts with AVX-512/AMX (it assumes an 832-byte XSAVE area; see the C source).

Inside UML system calls and process starts are 6-60x slower than on the host; pure CPU runs at
native speed. The guest is pinned to one host CPU (2-4x faster than letting it move).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

#: Where the shim is built (per source hash), outside any clone.
CACHE = Path(os.environ.get("OVN_FRR_UML_CACHE", "/var/cache/ovn-frr/uml"))
#: Set in the guest's environment: tests that need the guest's kernel look for it.
GUEST_ENV = "OVN_FRR_UML_GUEST"


class UmlError(Exception):
    """The guest could not be started (no kernel, no compiler, a bad path)."""


@dataclass(frozen=True, slots=True)
class Kernel:
    binary: Path
    modules: Path
    version: str


def find_kernel(root: Path = Path("/")) -> Kernel | None:
    """Debian's UML kernel and its modules, or None when ``user-mode-linux`` is missing."""
    binary = root / "usr/bin/linux.uml"
    base = root / "usr/lib/uml/modules"
    if not binary.exists() or not base.is_dir():
        return None
    versions = sorted((p.name for p in base.iterdir() if p.is_dir()), key=_version_key)
    if not versions:
        return None
    return Kernel(binary=binary, modules=base / versions[-1], version=versions[-1])


def _version_key(version: str) -> list[int]:
    return [int(x) if x.isdigit() else 0 for x in version.split(".")]


def shim(cache: Path = CACHE) -> Path:
    """The LD_PRELOAD shim, compiled once per source into ``cache``."""
    source = resources.files(__package__).joinpath("umlxstate.c").read_bytes()
    out = cache / f"libumlxstate-{hashlib.sha256(source).hexdigest()[:12]}.so"
    if out.exists():
        return out
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise UmlError("no C compiler to build the UML shim (apt-get install gcc libc6-dev)")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        src = Path(tmp) / "umlxstate.c"
        src.write_bytes(source)
        lib = Path(tmp) / out.name
        p = subprocess.run(
            [cc, "-shared", "-fPIC", "-O2", "-o", str(lib), str(src), "-ldl"],
            capture_output=True,
            text=True,
            check=False,
        )
        if p.returncode != 0:
            raise UmlError(f"building the UML shim failed: {p.stderr.strip()}")
        lib.replace(out)
    return out


@dataclass(frozen=True, slots=True)
class GuestResult:
    """What one guest run left: the command's exit code (None: it never finished, the guest
    crashed or hit its deadline) and output, the guest init's log and the kernel's own."""

    rc: int | None
    output: str
    console: str
    kernel_log: str
    seconds: float
    #: the run's working folder (gone when run returns; it names the guest's processes)
    workdir: str = ""

    @property
    def ok(self) -> bool:
        return self.rc == 0

    def explain(self, tail: int = 200) -> str:
        """Everything a failure needs, last lines first of what matters most."""

        def last(text: str) -> str:
            return "\n".join(text.splitlines()[-tail:])

        return (
            f"guest command exit: {self.rc} after {self.seconds:.1f} s\n"
            f"--- command output ---\n{last(self.output)}\n"
            f"--- guest console ---\n{last(self.console)}\n"
            f"--- UML kernel ---\n{last(self.kernel_log)}"
        )


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _checked_path(path: Path) -> str:
    text = str(path.resolve())
    if not text.startswith("/") or any(c.isspace() or c in ",'\"" for c in text):
        raise UmlError(f"{text!r}: guest paths must be absolute, without blanks, quotes or ','")
    return text


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float = 600.0,
    mem: str = "1536M",
    deadline: float | None = None,
) -> GuestResult:
    """Boot a guest, run ``argv`` in ``cwd``, power off; never raises for what happens inside
    the guest (see ``GuestResult``). The guest sees the root read-only, and ``cwd`` read-only
    again after its tmpfs mounts (a clone under /tmp, say). It powers itself off ``deadline`` s
    after boot (default: 15 s before ``timeout``); the host kills it at ``timeout``."""
    kernel = find_kernel()
    if kernel is None:
        raise UmlError("no UML kernel: apt-get install user-mode-linux (make setup does)")
    lib = shim()
    src = _checked_path(cwd)
    work = Path(tempfile.mkdtemp(prefix="ovn-frr-uml-", dir="/var/tmp"))
    try:
        wdir = _checked_path(work)
        (work / "out").mkdir()
        (work / "umldir").mkdir()
        modroot = work / "modroot/lib/modules"
        modroot.mkdir(parents=True)
        (modroot / kernel.version).symlink_to(kernel.modules)
        _script(work / "modprobe.sh", f'exec /usr/sbin/modprobe -d {wdir}/modroot "$@"\n')
        exports = f"export {GUEST_ENV}=1 PYTHONDONTWRITEBYTECODE=1 HOME=/tmp\n"
        _script(work / "command.sh", f"{exports}cd {src}\nexec {shlex.join(argv)}\n")
        init = resources.files(__package__).joinpath("guest-init.sh").read_text()
        _script(work / "init.sh", init)
        if deadline is None:
            deadline = max(10, int(timeout) - 15)
        cmdline = [
            str(kernel.binary),
            f"mem={mem}",
            "root=/dev/root",
            "rootfstype=hostfs",
            "rootflags=/",
            "ro",
            f"init={wdir}/init.sh",
            "con=null",
            "ssl=null",
            "con0=null,fd:1",
            f"umid=ovnfrr{os.getpid()}",
            f"uml_dir={wdir}/umldir",
            f"UML_DIR={wdir}",
            f"UML_RO={src}",
            f"UML_DEADLINE={int(deadline)}",
        ]
        # on the last CPU this process may use
        pin = ["taskset", "-c", str(max(os.sched_getaffinity(0)))]
        # linux.uml must not be the namespace's PID 1 (its abort() would be ignored there)
        wrapped = ["unshare", "--pid", "--fork", "--kill-child", "--", "sh", "-c",
                   '"$@"; exit $?', "sh", *pin, *cmdline]  # fmt: skip
        t0 = time.monotonic()
        with open(work / "kernel.log", "wb") as log:
            try:
                subprocess.run(
                    wrapped,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    # the guest's memory is a file in TMPDIR: in RAM, not on disk
                    env={**os.environ, "LD_PRELOAD": str(lib), "TMPDIR": _memdir(work)},
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                log.write(f"\nhost: no power-off within {timeout:.0f} s: killed\n".encode())
        seconds = time.monotonic() - t0
        rc_text = _read(work / "out/rc").strip()
        return GuestResult(
            rc=int(rc_text) if rc_text.lstrip("-").isdigit() else None,
            output=_read(work / "out/output.txt"),
            console=_read(work / "out/console.txt"),
            kernel_log=_read(work / "kernel.log"),
            seconds=seconds,
            workdir=wdir,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _memdir(work: Path) -> str:
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else str(work)


def _script(path: Path, text: str) -> None:
    path.write_text(text if text.startswith("#!") else "#!/bin/sh\n" + text)
    path.chmod(0o755)
