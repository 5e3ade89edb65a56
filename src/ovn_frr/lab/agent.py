"""Run the ovn-frr agent for a lab node, in the node's namespace, as a real process."""

from __future__ import annotations

import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ovn_frr.lab.lab import Lab
from ovn_frr.lab.proc import run, wait_for
from ovn_frr.status import ask

VSWITCH_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"


def neighbors_config(
    lab: Lab,
    node: str,
    keepalive: int = 3,
    hold: int = 9,
    bfd_ms: int | None = None,
    skip: tuple[str, ...] = (),
    graceful_restart: bool = False,
) -> str:
    """Node config for BGP to every peer linked to ``node`` but ``skip`` (IPv4 sessions; in
    the link's VRF), with BFD profile ``tor`` (``bfd_ms`` x 3) when given, and graceful restart
    when asked."""
    asn = {p.name: p.asn for p in lab.spec.peers if p.name not in skip}
    out = []
    for la in lab.links(node):
        if la.remote not in asn:
            continue
        out.append(f'[[bgp.neighbors]]\naddress = "{la.peer_v4}"\nremote_as = {asn[la.remote]}\n'
                   f"keepalive = {keepalive}\nhold = {hold}\n"
                   + (f'vrf = "{la.vrf}"\n' if la.vrf else "")
                   + ('bfd_profile = "tor"\n' if bfd_ms else "")
                   + ("graceful_restart = true\n" if graceful_restart else ""))  # fmt: skip
    if bfd_ms:
        out.append(f"[bfd.profiles.tor]\nreceive_interval_ms = {bfd_ms}\n"
                   f"transmit_interval_ms = {bfd_ms}\n")  # fmt: skip
    return "".join(out)


def local_ovsdb(lab: Lab, node: str) -> str:
    """A bare local OVS database of ``node`` (ovsdb-server with the Open_vSwitch schema, no
    ovs-vswitchd), for what the agent reads there (``dynamic-routing-port-mapping``); returns
    its remote, for the node config's ``[ovs] db``. It goes with the node's namespace."""
    d = lab.rundir / node / "ovs-local"
    d.mkdir(parents=True, exist_ok=True)
    db = d / "conf.db"
    run(["ovsdb-tool", "create", str(db), VSWITCH_SCHEMA])
    # its control socket beside it too (the default, /run/openvswitch, may not exist)
    run(["ovsdb-server", "--detach", "--no-chdir", f"--pidfile={d}/ovsdb.pid",
         f"--log-file={d}/ovsdb.log", f"--remote=punix:{d}/db.sock",
         f"--unixctl={d}/ovsdb.ctl", str(db)], netns=lab.netns(node))  # fmt: skip
    remote = f"unix:{d}/db.sock"
    wait_for((d / "db.sock").exists, timeout=10, what=f"{node}: local OVS db")
    run(["ovs-vsctl", f"--db={remote}", "--no-wait", "init"])
    return remote


def status_socket(lab: Lab, node: str) -> Path:
    return lab.rundir / node / "ovn-frr.sock"


def agent_config(lab: Lab, node: str, fpm_port: int = 2620, extra: str = "",
                 agent: str = "", ovn: tuple[str, str] | None = None) -> str:  # fmt: skip
    """A node config pointing the agent at the lab's OVN and the node's FRR; ``agent``: more
    lines for its ``[agent]`` section; ``ovn``: other NB and SB remotes (comma lists, say)."""
    assert lab.ovn is not None, "the lab has no OVN central"
    spec = lab.spec.node(node)
    nb, sb = ovn or (lab.ovn.nb, lab.ovn.sb)
    return (
        f'[ovn]\nnb = "{nb}"\nsb = "{sb}"\nchassis = "{node}"\n\n'
        f'[frr]\nvty_socket_dir = "{lab.frr[node].rundir}"\n'
        f'fpm_listen = "127.0.0.1:{fpm_port}"\n\n'
        f'[agent]\nstatus_socket = "{status_socket(lab, node)}"\n{agent}\n'
        f'[bgp]\nasn = {spec.asn}\nrouter_id = "{lab.spec.router_id(node)}"\n\n{extra}'
    )


@dataclass
class AgentProcess:
    lab: Lab
    node: str
    config: Path
    log: Path
    proc: subprocess.Popen[bytes]

    @classmethod
    def start(cls, lab: Lab, node: str, extra_config: str = "", agent: str = "",
              ovn: tuple[str, str] | None = None, verbose: int = 1) -> AgentProcess:  # fmt: skip
        workdir = lab.rundir / node
        config = workdir / "ovn-frr.toml"
        config.write_text(agent_config(lab, node, lab.spec.node(node).fpm_port or 2620,
                                       extra_config, agent, ovn))  # fmt: skip
        log = workdir / "ovn-frr.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", lab.netns(node), sys.executable, "-m", "ovn_frr",
                 *(["-" + "v" * verbose] if verbose else []), "run", "--config", str(config)],
                stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        return cls(lab, node, config, log, proc)

    @property
    def socket(self) -> str:
        return str(status_socket(self.lab, self.node))

    def status(self, timeout: float = 30.0) -> dict[str, Any]:
        return ask(self.socket, "status", timeout)

    def trace(self, prefix: str) -> dict[str, Any]:
        return ask(self.socket, f"trace {prefix}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """kill -9: no clean-up of any kind (a crash, an OOM kill)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
