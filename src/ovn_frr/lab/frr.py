"""FRR daemons of one lab namespace: start, configure, announce, read the RIB."""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import re
import signal
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ovn_frr.frr.diff import Path as ConfigPath
from ovn_frr.frr.diff import shared_lines
from ovn_frr.frr.render import router_bgp
from ovn_frr.frr.vtysh import Vtysh, VtyshError, has_no_fork, run_subprocess
from ovn_frr.lab.proc import LabError, kill_pids, read_pid, remove_frr_tmp, wait_for
from ovn_frr.versions import Version

FRR_SBIN = Path("/usr/lib/frr")

#: Runs a command of the FRR installed in another root file system (``sh -c`` with: root, run
#: directory, command...), in a mount namespace of its own (``unshare -m`` before it, whose
#: mounts are private): the root gets /proc, /dev, /sys (the network namespace's, when started
#: in one), /tmp (where vtysh -f files are written: the lab keeps TMPDIR unset), /var/tmp
#: (FRR's per-daemon directories, cleaned up as this machine's) and a /run of its own holding
#: the instance's run directory (the lab's are under /run). Nothing is mounted outside it, so
#: nothing is left behind, and pids are this machine's (pid files and kills work as they do).
IN_ROOT_SH = """set -e
r=$1; d=$2; shift 2
mount -t proc proc "$r/proc"
mount --rbind /dev "$r/dev"
mount --rbind /sys "$r/sys"
mount --bind /tmp "$r/tmp"
mount --bind /var/tmp "$r/var/tmp"
mount -t tmpfs tmpfs "$r/run"
mkdir -p "$r$d"
mount --bind "$d" "$r$d"
exec chroot "$r" "$@"
"""


def in_root(root: Path | None, rundir: Path) -> tuple[str, ...]:
    """The prefix that runs a command of ``root``'s FRR for the instance in ``rundir``
    (nothing: this machine's FRR)."""
    if root is None:
        return ()
    return ("unshare", "-m", "sh", "-c", IN_ROOT_SH, "sh", str(root), str(rundir))


def daemons_for(version: Version | None, *, node: bool, root: Path | None = None) -> list[str]:
    """Daemons in start order. FRR 9+ needs mgmtd first (it fronts staticd's config). With
    ``root``, that root's FRR (one with mgmtd is 9 or later)."""
    names = ["zebra", "bgpd", "bfdd", "staticd"] if node else ["zebra", "bgpd", "bfdd"]
    if root is not None:
        newer = (root / FRR_SBIN.relative_to("/") / "mgmtd").exists()
    else:
        newer = version is not None and version >= Version(9, 0) and (FRR_SBIN / "mgmtd").exists()
    if newer:
        names.insert(0, "mgmtd")
    return names


def _chroot(root: Path | None) -> list[str]:
    return [] if root is None else ["chroot", str(root)]


@functools.cache
def daemon_options(daemon: str, root: Path | None = None) -> frozenset[str]:
    """The long options ``daemon --help`` lists (asked once per process and root): FRR 10 took
    ``-f`` from mgmtd and staticd (their config goes through mgmtd) and ``--bfdctl`` from bfdd."""
    try:
        argv = [*_chroot(root), str(FRR_SBIN / daemon), "--help"]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(re.findall(r"(--[a-z][a-z_-]*)", out))


@functools.cache
def _no_fork(root: Path | None = None) -> bool:
    """This machine's (or ``root``'s) vtysh takes --no-fork (asked once per process)."""
    return has_no_fork(lambda argv: run_subprocess([*_chroot(root), *argv]))


#: zebra ``-s`` in the lab (set with SO_RCVBUFFORCE: zebra runs as root)
ZEBRA_NL_BUFSIZE = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FrrInstance:
    """FRR in namespace ``netns`` with its sockets, pid files and logs under ``rundir``."""

    name: str
    netns: str
    rundir: Path
    daemons: tuple[str, ...]
    #: zebra loads dplane_fpm_nl and sends FPM to 127.0.0.1:fpm_port
    fpm_port: int | None = None
    #: bgpd's startup config (kept across restarts, like an operator's frr.conf)
    bgpd_config: str = ""
    #: zebra --graceful_restart (seconds; see NodeSpec.zebra_sweep_s)
    zebra_sweep_s: int | None = None
    #: run the FRR of this root file system (see PeerSpec.frr_root); None: this machine's
    root: Path | None = None

    @property
    def vtysh(self) -> Vtysh:
        # the lab's own config waits longer for an agent's batch (10k lines: seconds)
        prefix = in_root(self.root, self.rundir)
        return Vtysh(str(self.rundir), prefix, no_fork=_no_fork(self.root), lock_wait_s=15.0)

    def start(self) -> None:
        # FRR drops privileges (-u root keeps uid 0 without CAP_DAC_OVERRIDE): the run dir
        # must be owned by root itself.
        self.rundir.mkdir(parents=True, exist_ok=True, mode=0o755)
        for daemon in self.daemons:
            self.start_daemon(daemon)
        self._check_config()

    def _check_config(self) -> None:
        """FRR skips lines of a config file it rejects, silently: check that bgpd took it."""
        if not self.bgpd_config:
            return
        first = self.bgpd_config.splitlines()[0].strip()
        if first not in self.vtysh.running_config():
            log = (self.rundir / "bgpd.log").read_text(errors="replace").strip().splitlines()
            raise LabError(f"{self.name}: bgpd rejected its config ({first!r}): {log[-1:]}")

    def start_daemon(self, daemon: str) -> None:
        conf = self.rundir / f"{daemon}.conf"
        lines = [f"hostname {self.name}", f"log file {self.rundir / daemon}.log"]
        if daemon == "zebra" and self.fpm_port is not None:
            # in the file, so that a restarted zebra finds its FPM target again
            lines.append(f"fpm address 127.0.0.1 port {self.fpm_port}")
        if daemon == "bgpd" and self.bgpd_config:
            lines.append(self.bgpd_config)
        conf.write_text("\n".join(lines) + "\n")
        argv = [
            str(FRR_SBIN / daemon),
            "-d", "-u", "root", "-g", "frrvty", "-P", "0",
            "--vty_socket", str(self.rundir),
            "-z", str(self.rundir / "zserv.api"),
            "-i", str(self.rundir / f"{daemon}.pid"),
            "--log", f"file:{self.rundir / daemon}.log",
        ]  # fmt: skip
        options = daemon_options(daemon, self.root)
        if "--config_file" in options:
            argv += ["-f", str(conf)]
        if daemon == "zebra":
            # netlink receive buffer: with the default (4 MiB) zebra 8.4 missed most of 10k FDB
            # deletions written in one batch and kept announcing them (docs/frr.md)
            argv += ["-s", str(ZEBRA_NL_BUFSIZE)]
        if daemon == "zebra" and self.fpm_port is not None:
            argv += ["-M", "dplane_fpm_nl"]
        if daemon == "zebra" and self.zebra_sweep_s is not None:
            # "=": FRR 10.x takes -K's time only attached (-K 5 is -K alone: 500 s)
            argv.append(f"--graceful_restart={self.zebra_sweep_s}")
        if daemon == "bfdd" and "--bfdctl" in options:
            argv += ["--bfdctl", str(self.rundir / "bfdd.sock")]
        # FRR names its /var/tmp/frr/<daemon>.<pid> directory after the pid it had before it
        # daemonized, i.e. the pid launched here (ip netns exec execs in place); a daemon that
        # has to be SIGKILLed leaves the directory behind, so the lab records that pid
        # the daemon keeps the launcher's stdout open (FRR 10): to a file, never a pipe
        out_file = self.rundir / f"{daemon}.out"
        with out_file.open("w") as out:
            argv = [*in_root(self.root, self.rundir), *argv]  # unshare, sh, chroot: all exec
            launcher = subprocess.Popen(["ip", "netns", "exec", self.netns, *argv],
                                        stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        (self.rundir / f"{daemon}.launch").write_text(f"{launcher.pid}\n")
        if launcher.wait(timeout=60) != 0:
            said = out_file.read_text(errors="replace").strip()
            raise LabError(f"{self.name}: {daemon} failed to start: {said[-300:]}")
        sock = self.rundir / f"{daemon}.vty"
        wait_for(sock.exists, timeout=10, what=f"{self.name} {daemon} vty socket")

    def restart(self) -> None:
        """Restart every daemon, as watchfrr does when zebra dies (FRR does not support a
        zebra-only restart: bgpd reconnects but does not re-install its routes). The
        configuration applied through vtysh is lost; the daemons' files are kept."""
        self.stop()
        self.start_again()

    def restart_daemon(self, daemon: str) -> None:
        """Kill ``daemon`` alone (SIGKILL: a crash) and start it again with its startup file,
        as watchfrr does when a daemon other than zebra dies: the others keep what they
        hold, the route-maps and prefix-lists zebra shares with bgpd included."""
        pid = read_pid(self.rundir / f"{daemon}.pid")
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            kill_pids([pid])
        launched = read_pid(self.rundir / f"{daemon}.launch")
        remove_frr_tmp([launched] if launched else [])
        (self.rundir / f"{daemon}.vty").unlink(missing_ok=True)
        self.start_daemon(daemon)

    def bgpd_policy(self) -> set[ConfigPath]:
        """The route-map and prefix-list lines bgpd itself holds (zebra holds its own copies,
        and vtysh's merged config shows either)."""
        return shared_lines(self.vtysh.command("show running-config", daemon="bgpd"))

    def stop(self, crash: bool = False) -> None:
        """Stop every daemon: SIGTERM, zebra last as FRR's own init script does (zebra removes
        its kernel routes), or with ``crash`` SIGKILL (a crash, an OOM kill: the kernel keeps
        them, see docs/frr.md)."""
        pids = self.pids()
        if crash:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        zebra = read_pid(self.rundir / "zebra.pid")
        kill_pids([p for p in pids if p != zebra])
        kill_pids([p for p in pids if p == zebra])
        remove_frr_tmp(self.launcher_pids())

    def start_again(self) -> None:
        """Start the daemons stopped by :meth:`stop` with their startup files."""
        for daemon in self.daemons:
            (self.rundir / f"{daemon}.vty").unlink(missing_ok=True)
        for daemon in self.daemons:
            self.start_daemon(daemon)

    def launcher_pids(self) -> list[int]:
        """The pids FRR's /var/tmp/frr directories are named after (see start_daemon)."""
        return [p for d in self.daemons if (p := read_pid(self.rundir / f"{d}.launch"))]

    def pids(self) -> list[int]:
        return [p for d in self.daemons if (p := read_pid(self.rundir / f"{d}.pid"))]

    def apply(self, config: str) -> None:
        """Apply ``config`` with vtysh -f (tried again while FRR 9+'s mgmtd lets another
        session, the agent's batch say, hold the datastore: :attr:`Vtysh.lock_wait_s`)."""
        try:
            self.vtysh.apply(config)
        except VtyshError as exc:
            raise LabError(f"{self.name}: {exc}") from None

    def show(self, command: str) -> Any:
        try:
            return self.vtysh.show_json(command)
        except VtyshError as exc:
            raise LabError(f"{self.name}: {exc}") from None

    # --- BGP state ---------------------------------------------------------------------------

    def _neighbors(self, vrf: str) -> dict[str, Any]:
        """``show bgp [vrf NAME] neighbors json`` ("": the default VRF)."""
        data: dict[str, Any] = self.show(f"show bgp {f'vrf {vrf} ' if vrf else ''}neighbors json")
        return data

    def bgp_neighbors(self, vrf: str = "") -> dict[str, str]:
        """neighbor address -> state, over all address families of a VRF (default: the
        default VRF)."""
        return {addr: str(info.get("bgpState", "?")) for addr, info in self._neighbors(vrf).items()}

    def graceful_restart(self, neighbor: str, vrf: str = "") -> dict[str, Any]:
        """``neighbor``'s session as this FRR sees it across restarts: ``connections``
        established so far, the neighbor's graceful-restart ``mode`` (``Restart``,
        ``Helper``...), its ``f_bit`` (FRR details it per family for unicast only; one setting
        sets it for every family) and ``eor``: End-of-RIB received, per family
        (``ipv4Unicast``, ``l2VpnEvpn``)."""
        n = self._neighbors(vrf).get(neighbor, {})
        gr = n.get("gracefulRestartInfo", {})
        return {
            "connections": int(n.get("connectionsEstablished", 0)),
            "mode": gr.get("remoteGrMode"),
            "f_bit": gr.get("ipv4Unicast", {}).get("fBit"),
            "eor": {k: v is True for k, v in gr.get("endOfRibRecv", {}).items()},
        }

    def bfd_protected(self, neighbors: Iterable[str], vrf: str = "") -> bool:
        """Each BGP session Established for 2 s or more, with BFD up as bgpd (not only bfdd)
        sees it. BFD comes up before BGP and flaps once when the session establishes (bgpd
        registers it again with the session's source address); until it is up again only the
        hold timer would notice a dead peer (bgpd acts on BFD Up -> Down only). FRR >= 10 also
        ignores a BFD Down in the same second as the establishment (``bgp_bfd.c``: the Down
        must be later, in whole seconds, than the session's uptime stamp)."""
        data = self._neighbors(vrf)
        return all(
            data.get(n, {}).get("bgpState") == "Established"
            and int(data.get(n, {}).get("bgpTimerUpMsec", 0)) >= 2000
            and data.get(n, {}).get("peerBfdInfo", {}).get("status") == "Up"
            for n in neighbors
        )

    def wait_established(
        self, neighbors: Iterable[str], timeout: float = 30.0, vrf: str = ""
    ) -> None:
        want = sorted(str(n) for n in neighbors)

        def ready() -> bool:
            states = self.bgp_neighbors(vrf)
            return all(states.get(n) == "Established" for n in want)

        wait_for(ready, timeout=timeout, what=f"{self.name}: BGP Established with {want}")

    def bgp_prefixes(self, afi: str = "ipv4") -> dict[str, list[dict[str, Any]]]:
        """The BGP table: prefix -> paths (``show bgp <afi> unicast json``)."""
        data = self.show(f"show bgp {afi} unicast json")
        routes: dict[str, list[dict[str, Any]]] = data.get("routes", {})
        return routes

    def rib(self, afi: str = "ipv4") -> dict[str, list[dict[str, Any]]]:
        """zebra's RIB: prefix -> route entries (``show ip[v6] route json``)."""
        cmd = "show ip route json" if afi == "ipv4" else "show ipv6 route json"
        data: dict[str, list[dict[str, Any]]] = self.show(cmd)
        return data


def _family(prefix: str) -> str:
    return "ipv6" if ipaddress.ip_network(prefix, strict=False).version == 6 else "ipv4"


@dataclass(frozen=True, slots=True)
class Announcer:
    """Originate and withdraw prefixes from a lab router with ``network`` statements
    (``no bgp network import-check`` is set by the lab, so nothing needs to be in the RIB)."""

    frr: FrrInstance
    asn: int
    vrf: str = ""

    def _batch(self, prefixes: Sequence[str], negate: bool) -> str:
        by_afi: dict[str, list[str]] = {"ipv4": [], "ipv6": []}
        for p in prefixes:
            by_afi[_family(p)].append(str(ipaddress.ip_network(p, strict=True)))
        neg = "no " if negate else ""
        lines = [router_bgp(self.asn, self.vrf)]
        for afi, items in by_afi.items():
            if items:
                lines.append(f" address-family {afi} unicast")
                lines += [f"  {neg}network {p}" for p in items]
                lines.append(" exit-address-family")
        lines.append("exit")
        return "\n".join(lines) + "\n"

    #: prefixes per vtysh batch: FRR parses ~15k lines/s, vtysh calls time out after 120 s
    CHUNK = 50_000

    def announce(self, prefixes: Iterable[str]) -> None:
        self._apply(list(prefixes), negate=False)

    def withdraw(self, prefixes: Iterable[str]) -> None:
        self._apply(list(prefixes), negate=True)

    def _apply(self, prefixes: list[str], negate: bool) -> None:
        for i in range(0, len(prefixes), self.CHUNK):
            self.frr.apply(self._batch(prefixes[i : i + self.CHUNK], negate))
