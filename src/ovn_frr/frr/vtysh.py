"""vtysh as a typed, injectable command runner.

vtysh ``-f FILE`` applies a batch and goes on after a failing line, reporting it as ``line N:``
(exit code non-zero), except that after a failed context line the ``exit`` that closes it
leaves config mode (FRR 8.4: every later line fails) or ends the batch (FRR >= 9.1); FRR >= 9
forks one child per daemon unless told ``--no-fork``. ``-c`` stops at the first error. Lines
for a daemon that is not running are dropped silently, so callers verify against ``show
running-config``.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ovn_frr.frr.diff import held_by
from ovn_frr.frr.vty import VtyError, VtySession

VTYSH = "vtysh"


class VtyshError(Exception):
    """vtysh failed to run, or FRR rejected lines of a batch."""

    def __init__(self, message: str, errors: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.errors = tuple(errors)


@dataclass(frozen=True, slots=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


Run = Callable[[Sequence[str]], Result]


def run_subprocess(argv: Sequence[str], timeout: float = 120.0) -> Result:
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    return Result(p.returncode, p.stdout, p.stderr)


#: "line N: ..." as vtysh -f reports a line a daemon rejected
LINE_ERROR = re.compile(r"line (\d+): (.*)")
#: FRR >= 9 (mgmtd) refuses a config session while another one holds the datastore; the
#: session before ours (often our own previous batch) releases it within moments
LOCKED = "locked by another session"
LOCK_POLL_S = 0.2
#: vtysh -f's words for a line a daemon refused (the daemon's own reason comes on stdout)
REFUSED = re.compile(r"Failure to communicate\[\d+\] to (\S+), line:")
#: vtysh -f's own end marker, rejected by zebra whenever a batch failed: noise
NOISE = "XFRR_end_configuration"
#: mgmtd (seen with FRR 10.7) on a commit that succeeded with something to say, e.g. "No
#: changes found to be committed!" when a batch's part for a mgmtd daemon was in force: applied
APPLIED_WITH_NOTES = "% Configuration applied with notes"


def config_errors(output: str) -> list[str]:
    """The lines of vtysh output that report a rejected command: vtysh -f prints
    "line N: % Unknown command[...]" or "line N: Failure to communicate[13] to bgpd, line: ...";
    -c prints "% ..." directly."""
    errors = []
    for line in output.splitlines():
        text = line.strip()
        if text.startswith(APPLIED_WITH_NOTES):
            continue
        if (text.startswith("%") or LINE_ERROR.match(text)) and NOISE not in text:
            errors.append(text)
    return errors


@dataclass(frozen=True, slots=True)
class LineError:
    """A line of a ``vtysh -f`` batch that FRR rejected."""

    #: 1-based line of the batch
    line: int
    reason: str


#: vtysh's own progress lines when it forks per daemon (FRR >= 9): "[1234|bgpd] done"
CHILD = re.compile(r"\[\d+\|\S+\]")
#: FRR >= 9.1: an `exit` at the top level after a failed context line ends the batch there
EARLY_EXIT = "early exit from config file"


def line_errors(stdout: str, stderr: str) -> tuple[LineError, ...]:
    """The rejected lines of a ``vtysh -f`` run, each with the best reason known.

    vtysh prints ``line N: % Unknown command[..]: TEXT`` for a line no daemon knows, and
    ``line N: Failure to communicate[13] to bgpd, line: TEXT`` for a line a daemon refused;
    the daemons' own words ("BGP is already running; AS is 65099", "% Create the peer-group or
    interface first") come on stdout in the same order, without line numbers, sometimes two
    lines for one refusal (FRR 10.3). With a single refusal they are all its reason; with
    several they are paired in order (best effort).
    """
    said = [t for x in stdout.splitlines() if (t := x.strip()) and NOISE not in t
            and not LINE_ERROR.match(t) and not CHILD.match(t)
            and not t.startswith(("Waiting for children", "Configuration file["))]  # fmt: skip
    found = []
    for text in (stdout + "\n" + stderr).splitlines():
        m = LINE_ERROR.match(text.strip())
        if m is None or NOISE in text or EARLY_EXIT in text:
            continue
        found.append((int(m[1]), m[2]))
    refusals = sum(1 for _n, detail in found if REFUSED.match(detail))
    out = []
    for number, detail in found:
        refused = REFUSED.match(detail)
        if refused and refusals == 1 and said:
            reason = "; ".join(x.lstrip("% ") for x in said)
        elif refused:
            reason = said.pop(0).lstrip("% ") if said else f"refused by {refused[1]}"
        else:
            reason = detail.split(":", 1)[0].lstrip("% ")
        out.append(LineError(number, reason))
    return tuple(sorted(out, key=lambda e: e.line))


def has_no_fork(run: Run) -> bool:
    """vtysh forks one child per daemon to read a batch (FRR >= 9) and can be told not to:
    then every daemon stops at the same line when the batch ends early."""
    try:
        res = run([VTYSH, "--help"])
    except (OSError, subprocess.SubprocessError):
        return False
    return "--no-fork" in res.stdout + res.stderr


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" ")) if line.strip() else -1


def bgpd_only(config: str) -> bool:
    """Every line of a batch is inside a ``router bgp`` block (bgpd's alone: route-maps and
    prefix-lists go to zebra too, which only vtysh does)."""
    top = [line for line in config.splitlines() if line.strip() and not line.startswith(" ")]
    return bool(top) and all(line.startswith("router bgp ") or line == "exit" for line in top)


@dataclass(slots=True)
class _Sessions:
    """The direct connections to daemons' vty sockets, by (daemon, purpose): a batch never
    waits for a reading of the running config on another thread."""

    open: dict[tuple[str, str], VtySession] = field(default_factory=dict)


@dataclass(slots=True)
class _Verified:
    """The bgpd process whose own config last held every route-map and prefix-list line
    that vtysh's merged config showed."""

    pid: int | None = None


@dataclass(frozen=True, slots=True)
class Vtysh:
    """vtysh bound to one FRR instance (its vty socket directory).

    ``prefix`` runs vtysh through another command (``ip netns exec NS`` in the lab).
    """

    socket_dir: str
    prefix: tuple[str, ...] = ()
    run: Run = run_subprocess
    #: pass --no-fork to batches (see :func:`has_no_fork`)
    no_fork: bool = False
    #: how long a batch waits for another session to release FRR's datastore (FRR >= 9)
    lock_wait_s: float = 2.0
    #: where the daemons' processes are seen (bgpd's pid file is in ``socket_dir``)
    proc: Path = Path("/proc")
    _verified: _Verified = field(default_factory=_Verified, compare=False, repr=False)
    #: batches for bgpd alone go over its vty socket (see :mod:`ovn_frr.frr.vty`), when this
    #: vtysh runs here (no ``prefix``) and the socket is there; False: always vtysh
    direct: bool = True
    _sessions: _Sessions = field(default_factory=_Sessions, compare=False, repr=False)

    def _argv(self, *args: str) -> list[str]:
        return [*self.prefix, VTYSH, "--vty_socket", self.socket_dir, *args]

    def command(self, *commands: str, daemon: str | None = None) -> str:
        """Run exec-mode commands (``-c`` each), in ``daemon`` alone if given (over its
        socket, else ``-d``: fails while it does not run); raise on any error."""
        session = self._session(daemon, "show") if daemon else None
        if session is not None:
            try:
                replies = session.run(commands)
            except VtyError:
                replies = []  # the socket went (a restart): vtysh says what is wrong
            if len(replies) == len(commands) and replies[-1].ok:
                return "".join(r.text for r in replies)
            if replies:
                detail = replies[-1].reason
                raise VtyshError(f"vtysh {' / '.join(commands)!r} failed: {detail}", [detail])
        only = ("-d", daemon) if daemon else ()
        argv = self._argv(*only, *(x for c in commands for x in ("-c", c)))
        res = self.run(argv)
        errors = config_errors(res.stdout) + config_errors(res.stderr)
        if res.returncode != 0 or errors:
            detail = "; ".join(errors) or (res.stderr or res.stdout).strip()[:500]
            raise VtyshError(f"vtysh {' / '.join(commands)!r} failed: {detail}", errors)
        return res.stdout

    def show_json(self, command: str, daemon: str | None = None) -> Any:
        out = self.command(command, daemon=daemon)
        try:
            return json.loads(out) if out.strip() else {}
        except json.JSONDecodeError as exc:
            raise VtyshError(f"vtysh {command!r}: not JSON ({exc}): {out[:200]!r}") from None

    def _batch(self, config: str) -> Result:
        """One ``vtysh -f`` session; tried again (for up to ``lock_wait_s``) while FRR says
        another session holds the datastore: nothing of the batch was applied then."""
        with tempfile.NamedTemporaryFile("w", suffix=".conf", prefix="ovn-frr-") as f:
            f.write(config)
            f.flush()
            fork = ("--no-fork",) if self.no_fork else ()
            deadline = time.monotonic() + self.lock_wait_s
            while True:
                res = self.run(self._argv(*fork, "-f", f.name))
                locked = LOCKED in res.stdout or LOCKED in res.stderr
                if not locked or time.monotonic() >= deadline:
                    return res
                time.sleep(LOCK_POLL_S)

    def _session(self, daemon: str, purpose: str) -> VtySession | None:
        """A direct connection to ``daemon`` (None: use vtysh)."""
        path = Path(self.socket_dir) / f"{daemon}.vty"
        if not self.direct or self.prefix or not path.exists():
            return None
        key = (daemon, purpose)
        found = self._sessions.open.get(key)
        if found is None:
            found = self._sessions.open[key] = VtySession(str(path))
        return found

    def close(self) -> None:
        for session in self._sessions.open.values():
            session.close()
        self._sessions.open.clear()

    def _apply_direct(self, session: VtySession, config: str) -> tuple[LineError, ...] | None:
        """A bgpd-only batch over bgpd's socket, then ``end``: as vtysh -f, every line FRR
        accepts is applied and the refused ones are returned, but it stops at a refused
        context line (``router bgp``, ``address-family``: the lines under it would land
        elsewhere; they are not sent, and the caller plans again). None when the socket
        cannot be used (then vtysh takes the batch)."""
        lines = config.splitlines()

        def command(i: int) -> bool:  # line i of the session: "configure", then the batch
            nxt = lines[i] if i < len(lines) else ""
            return i > 0 and _indent(nxt) <= _indent(lines[i - 1])

        try:
            replies = session.run(["configure", *lines], past=command)
            session.run(["end"])
        except VtyError:
            return None
        if not replies or not replies[0].ok:  # not even in config mode (locked, say)
            return None
        bad = [(i, r) for i, r in enumerate(replies[1:], start=1) if not r.ok]
        return tuple(LineError(i, r.reason) for i, r in bad)

    def apply_batch(self, config: str) -> tuple[LineError, ...]:
        """Apply config lines as one batch (bgpd's alone: over its socket; else one ``vtysh
        -f``); FRR applies what it accepts and the lines it rejected are returned. Raises only
        when vtysh itself failed (FRR down)."""
        session = self._session("bgpd", "config") if bgpd_only(config) else None
        if session is not None and (done := self._apply_direct(session, config)) is not None:
            return done
        res = self._batch(config)
        errors = line_errors(res.stdout, res.stderr)
        if res.returncode != 0 and not errors:
            detail = (res.stderr or res.stdout).strip()[:500] or f"exit code {res.returncode}"
            raise VtyshError(f"vtysh -f failed: {detail}")
        return errors

    def apply(self, config: str) -> None:
        """Apply config lines as one ``vtysh -f`` batch; raise with every rejected line."""
        res = self._batch(config)
        errors = config_errors(res.stdout) + config_errors(res.stderr)
        if res.returncode != 0 or errors:
            # the daemon's own words (e.g. "BGP is already running; AS is 65099") come on
            # stdout without any marker: they explain the first rejected line
            said = [t for x in res.stdout.splitlines() if (t := x.strip())
                    and not t.startswith("%") and not LINE_ERROR.match(t)]  # fmt: skip
            detail = "; ".join([*said[:2], *errors[:5]]) or (res.stderr or res.stdout).strip()[:500]
            more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
            raise VtyshError(f"vtysh -f rejected the batch: {detail}{more}", errors)

    def bgpd_pid(self) -> int | None:
        """bgpd's pid, from its pid file beside the vty sockets, if that process runs here and
        is bgpd (None: not known, e.g. vtysh runs through a ``prefix``, FRR in another pid
        namespace)."""
        if self.prefix:
            return None
        try:
            pid = int((Path(self.socket_dir) / "bgpd.pid").read_text().strip())
            comm = (self.proc / str(pid) / "comm").read_text().strip()
        except (OSError, ValueError):
            return None
        return pid if comm == "bgpd" else None

    def running_config(self) -> str:
        """``show running-config``, only while bgpd answers (raises otherwise), with the lines
        of route-maps and prefix-lists that bgpd's own config lacks left out.

        vtysh sends route-maps and prefix-lists to zebra and bgpd both, and shows the union of
        what the daemons hold. A batch sent while bgpd was down (FRR starting again) landed in
        zebra alone; a bgpd that watchfrr restarted alone starts without them while zebra keeps
        them. Either way the merged config showed them as there, they were never sent again,
        and bgpd denied every route of a neighbor whose (empty) inbound route-map it did not
        have (e2e, FRR 10.3). bgpd's own copy decides; a missing line is sent again, to both.

        bgpd's own config is read (45 ms at 10k networks, as much as the merged one) until
        one read finds it holding them all, and then again whenever bgpd's pid changes or is
        not known.
        """
        pid = self.bgpd_pid()
        if pid is not None and pid == self._verified.pid:
            merged = self.command("show running-config")
            if self.bgpd_pid() != pid:  # bgpd went or started again during the read
                self._verified.pid = None
                raise VtyshError("bgpd restarted while the running config was read")
            return merged
        own = self.command("show running-config", daemon="bgpd")
        merged = self.command("show running-config")
        text = held_by(merged, own)
        self._verified.pid = pid if text is merged else None
        return text
