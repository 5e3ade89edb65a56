"""The local ovn-controller's EVPN state, asked over its control socket (blocking;
``ovn-appctl``). OVN 25.09+ prints it with ``evpn/remote-vtep-list``, ``evpn/vtep-fdb-list``
and (26.03) ``evpn/vtep-arp-list``; older ovn-controllers know none of them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ovn_frr.command import Runner, run_command
from ovn_frr.core.evpn_native import OvnEvpn, parse_arp, parse_fdb, parse_remote_vteps


class ControllerError(OSError):
    """ovn-controller could not be asked."""


def _run(argv: Sequence[str], stdin: str | None = None) -> str:
    return run_command(argv, stdin, ControllerError, timeout=10)


class OvnController:
    def __init__(self, rundir: str, runner: Runner = _run) -> None:
        #: where ovn-controller keeps its pid file and control socket (OVN_RUNDIR)
        self.rundir = Path(rundir)
        self._run = runner

    def target(self) -> str:
        """The control socket (``ovn-controller.<pid>.ctl`` beside its pid file)."""
        try:
            pid = (self.rundir / "ovn-controller.pid").read_text().strip()
        except OSError as exc:
            raise ControllerError(f"no ovn-controller pid file in {self.rundir}: {exc}") from None
        return str(self.rundir / f"ovn-controller.{pid}.ctl")

    def evpn(self) -> OvnEvpn:
        """What ovn-controller learned; an :class:`OvnEvpn` with ``error`` set when it could
        not be asked (no command fails the EVPN pass: this is status)."""
        try:
            target = self.target()

            def ask(cmd: str) -> str:
                return self._run(["ovn-appctl", "-t", target, cmd], None)

            vteps = parse_remote_vteps(ask("evpn/remote-vtep-list"))
            fdb = parse_fdb(ask("evpn/vtep-fdb-list"))
            try:
                arp = parse_arp(ask("evpn/vtep-arp-list"))
            except ControllerError:  # 25.09 has no ARP list
                arp = ()
        except ControllerError as exc:
            return OvnEvpn(error=str(exc))
        return OvnEvpn(vteps, fdb, arp)
