"""The ``ovn-frr`` command line."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import click
from rich.console import Console, RenderableType
from rich.live import Live
from rich.table import Table

from ovn_frr import __version__, config, redact
from ovn_frr.agent import Agent, StartError, secrets
from ovn_frr.config.schema import AgentConfig
from ovn_frr.frr.vtysh import Vtysh, VtyshError, has_no_fork, run_subprocess
from ovn_frr.kernel.netns import listening_socket
from ovn_frr.lab import Lab, LabError, demo_spec, destroy, list_labs, minimal_spec
from ovn_frr.lab.demo import TORS, Demo, OvnkDemo
from ovn_frr.lab.demo import summary as demo_summary
from ovn_frr.lab.ovn import cluster_roles
from ovn_frr.lab.ovnk import ovnk_cluster
from ovn_frr.lab.spec import ovnk_spec
from ovn_frr.ovn.db import OvnError, set_ssl
from ovn_frr.ovn.local import local_chassis
from ovn_frr.ovn.reader import nb_connection, sb_connection
from ovn_frr.status import ask
from ovn_frr.status_view import demo_view, status_view, trace_view
from ovn_frr.versions import detect

err = Console(stderr=True, highlight=False)
out = Console(highlight=False)


def _load_or_exit(path: str) -> config.NodeConfig:
    try:
        return config.load(path)
    except config.ConfigError as exc:
        for line in exc.problems:
            click.echo(line, err=True)
        sys.exit(1)


#: ovn-kubernetes' gateway mode, for ``demo`` and ``lab up`` with ``--topology ovn-kubernetes``
GATEWAY_MODE = click.option(
    "--gateway-mode",
    type=click.Choice(["shared", "local"]),
    default="shared",
    show_default=True,
    help="ovn-kubernetes' gateway mode (--topology ovn-kubernetes).",
)


@click.group()
@click.version_option(__version__, prog_name="ovn-frr")
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug).")
def main(verbose: int) -> None:
    """FRR-based BGP/EVPN plugin for OVN."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s")


@main.command("check-config")
@click.argument("file", type=click.Path(dir_okay=False))
def check_config(file: str) -> None:
    """Validate a node config file; one line per problem, exit 1 if any."""
    cfg = _load_or_exit(file)
    click.echo(
        f"{file}: ok (AS {cfg.bgp.asn}, {len(cfg.bgp.neighbors)} neighbor(s), "
        f"{len(cfg.bfd.profiles)} BFD profile(s))"
    )


@main.command()
@click.option("--config", "config_file", required=True, type=click.Path(dir_okay=False))
def run(config_file: str) -> None:
    """Run the agent on this chassis (until SIGTERM or Ctrl-C)."""
    cfg = _load_or_exit(config_file)
    redact.install(secrets(cfg))  # before anything could log a password
    try:
        chassis = cfg.ovn.chassis or local_chassis()
    except OSError as exc:
        click.echo(f"ovn.chassis: not set and {exc}", err=True)
        sys.exit(1)
    set_ssl(cfg.ovn.ssl_key, cfg.ovn.ssl_cert, cfg.ovn.ssl_ca)
    fpm = cfg.frr.fpm_listen
    try:
        sock = listening_socket(None, str(fpm.host), fpm.port)
    except OSError as exc:
        click.echo(f"frr.fpm_listen: cannot listen on {fpm}: {exc.strerror}", err=True)
        sys.exit(1)
    agent = Agent(
        cfg,
        chassis,
        Vtysh(cfg.frr.vty_socket_dir, no_fork=has_no_fork(run_subprocess)),
        nb_connection(cfg.ovn.nb, chassis),
        sb_connection(cfg.ovn.sb, chassis),
        sock,
        hostname=socket.gethostname(),
    )

    # The agent holds ~10 objects per imported route that live as long as the route, and each
    # pass allocates a few per route: with CPython's default thresholds (700, 10, 10) the
    # collector scanning them was half of a pass over 100k unchanged routes (0.65 s -> 0.30 s
    # measured with these). Reference counting still frees everything acyclic at once.
    gc.set_threshold(100_000, 50, 100)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await agent.run(stop)

    try:
        asyncio.run(main())
    except (OvnError, StartError) as exc:
        click.echo(f"ovn-frr run: {exc}", err=True)
        sys.exit(1)


@main.command()
def versions() -> None:
    """Show the FRR, OVN and Open vSwitch versions found on this machine."""
    v = detect()
    for name, ver in (("frr", v.frr), ("ovn", v.ovn), ("ovs", v.ovs)):
        click.echo(f"{name}: {ver if ver else 'not found'}")


def _socket(socket_path: str | None, config_file: str | None) -> str:
    if socket_path:
        return socket_path
    if config_file:
        return _load_or_exit(config_file).agent.status_socket
    return AgentConfig().status_socket


def _ask(path: str, request: str) -> dict[str, Any]:
    try:
        return ask(path, request)
    except (OSError, ValueError) as exc:
        click.echo(f"cannot reach the agent at {path}: {exc} (is `ovn-frr run` running?)",
                   err=True)  # fmt: skip
        sys.exit(2)


SOCKET_OPTION = click.option("--socket", "socket_path", help="The agent's status socket.")
CONFIG_OPTION = click.option("--config", "config_file", type=click.Path(dir_okay=False),
                             help="Read agent.status_socket from this node config.")  # fmt: skip


@main.command()
@SOCKET_OPTION
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--watch", type=float, default=None, metavar="SECONDS",
              help="Redraw every SECONDS until Ctrl-C.")  # fmt: skip
def status(socket_path: str | None, config_file: str | None, as_json: bool,
           watch: float | None) -> None:  # fmt: skip
    """What the running agent does: sessions, advertised, imported, rejected, last apply."""
    path = _socket(socket_path, config_file)
    if as_json:
        click.echo(json.dumps(_ask(path, "status"), indent=2))
        return
    if watch is None:
        out.print(status_view(_ask(path, "status")))
        return
    live = Live(status_view(_ask(path, "status")), console=out, auto_refresh=False)
    with live, contextlib.suppress(KeyboardInterrupt):
        while True:
            time.sleep(watch)
            live.update(status_view(_ask(path, "status")), refresh=True)


@main.command()
@click.argument("prefix")
@SOCKET_OPTION
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def trace(prefix: str, socket_path: str | None, config_file: str | None, as_json: bool) -> None:
    """The story of one prefix (OVN object -> FRR -> peers, or peer -> zebra -> OVN row), or
    of one MAC in EVPN (OVN port -> type-2 out, or type-2 in -> VTEP)."""
    doc = _ask(_socket(socket_path, config_file), f"trace {prefix}")
    if as_json:
        click.echo(json.dumps(doc, indent=2))
    else:
        out.print(trace_view(doc))
    if "error" in doc:
        sys.exit(1)


@main.command()
@click.option("--name", default="demo", show_default=True, help="Lab name ([a-z][a-z0-9]*).")
@click.option("--duration", type=float, default=None, metavar="SECONDS",
              help="Tear down after this long (default: on Ctrl-C).")  # fmt: skip
@click.option("--check", is_flag=True,
              help="No live view: wait until routes flow both ways, print a JSON summary, "
              "tear down; exit 1 if they did not within --timeout.")  # fmt: skip
@click.option("--timeout", type=float, default=120.0, show_default=True)
@click.option(
    "--topology",
    type=click.Choice(["demo", "ovn-kubernetes"]),
    default="demo",
    show_default=True,
    help="demo: an OpenShift-shaped NB with OVN's dynamic-routing options, and EVPN; "
    "ovn-kubernetes: the NB as ovn-kubernetes writes it, on two nodes, with an "
    "[ovn_kubernetes] section in each node's config (docs/openshift.md).",
)
@GATEWAY_MODE
def demo(
    name: str, duration: float | None, check: bool, timeout: float, topology: str,
    gateway_mode: str,
) -> None:  # fmt: skip
    """Lab + OpenShift-shaped OVN + ovn-frr: routes flowing both ways, live (needs root)."""
    the_demo = Demo(name) if topology == "demo" else OvnkDemo(name, gateway_mode=gateway_mode)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ok = False
    try:
        members = "node1, node2" if topology == "ovn-kubernetes" else "node1"
        with err.status(f"bringing up the demo lab (OVN, {members} with FRR + ovn-frr, tor1, "
                        f"tor2{', vtep1' if topology == 'demo' else ''})"):  # fmt: skip
            the_demo.up()
        announced, expected = the_demo.expected()
        deadline = time.monotonic() + (timeout if check else duration or float("inf"))
        if check:
            snap = the_demo.snapshot()
            while not the_demo.converged(snap) and time.monotonic() < deadline:
                if stop.wait(0.5):
                    break
                snap = the_demo.snapshot()
            ok = the_demo.converged(snap)
            click.echo(demo_summary(the_demo, snap))
        else:

            def view() -> RenderableType:
                snap = the_demo.snapshot()
                return demo_view(snap.at_tors, snap.imported, snap.status, announced, expected,
                                 TORS, (snap.evpn, the_demo.evpn_expected()))  # fmt: skip

            out.print(f"lab {the_demo.lab.name}: Ctrl-C tears everything down")
            with Live(view(), console=out, auto_refresh=False) as live:
                while not stop.wait(1.0) and time.monotonic() < deadline:
                    live.update(view(), refresh=True)
            ok = True
    except LabError as exc:
        err.print(f"[red]demo failed:[/] {exc}")
    finally:
        with err.status("tearing down the demo lab"):
            the_demo.down()
    sys.exit(0 if ok else 1)


# --- lab ----------------------------------------------------------------------------------------


@main.group()
@click.option(
    "--base",
    type=click.Path(file_okay=False, path_type=Path),
    default="/run/ovn-frr-lab",
    show_default=True,
    help="Where labs keep their run directories.",
)
@click.pass_context
def lab(ctx: click.Context, base: Path) -> None:
    """Bring up FRR + OVN in network namespaces (needs root)."""
    ctx.obj = base


@lab.command("up")
@click.option("--name", default="demo", show_default=True, help="Lab name ([a-z][a-z0-9]*).")
@click.option(
    "--topology",
    type=click.Choice(["demo", "minimal", "ovn-kubernetes"]),
    default="demo",
    show_default=True,
    help="demo: node1 (FRR + OVS + ovn-controller) with tor1 and tor2; "
    "minimal: node1 + tor1 with BGP rendered by the lab; "
    "ovn-kubernetes: node1 and node2, each with one uplink to tor1 and tor2, the NB as "
    "ovn-kubernetes writes it "
    "(default network, a Layer3 and a Layer2 user-defined network; docs/openshift.md).",
)
@GATEWAY_MODE
@click.option("--hold", is_flag=True, help="Stay in the foreground; tear down on Ctrl-C.")
@click.option(
    "--cluster",
    is_flag=True,
    help="NB and SB as 3-member RAFT clusters (clients get the member lists).",
)
@click.pass_obj
def lab_up(
    base: Path, name: str, topology: str, gateway_mode: str, hold: bool, cluster: bool
) -> None:
    """Create a lab (left running unless --hold)."""

    specs = {"demo": demo_spec, "minimal": minimal_spec, "ovn-kubernetes": ovnk_spec}
    spec = specs[topology]()
    if cluster:
        spec = dataclasses.replace(spec, ovn_members=3)
    the_lab = Lab(spec, name=name, base=base)
    try:
        with err.status(f"bringing up lab {name} ..."):
            the_lab.up()
            if topology == "ovn-kubernetes":
                ovnk_cluster(the_lab, gateway_mode)
    except LabError as exc:
        err.print(f"[red]lab up failed:[/] {exc}")
        sys.exit(1)
    _print_lab(the_lab.name, base)
    if not hold:
        out.print(f"tear down with: ovn-frr lab down {name}")
        return
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    out.print("lab running; Ctrl-C tears it down")
    try:
        stop.wait()
    finally:
        with err.status(f"tearing down lab {name} ..."):
            the_lab.down()


@lab.command("down")
@click.argument("names", nargs=-1)
@click.option("--all", "all_labs", is_flag=True, help="Every lab under --base.")
@click.pass_obj
def lab_down(base: Path, names: tuple[str, ...], all_labs: bool) -> None:
    """Tear labs down: processes, namespaces, sockets, run directories."""

    if not names and not all_labs:
        raise click.UsageError("name a lab, or --all")
    targets = [lab_["name"] for lab_ in list_labs(base)] if all_labs else list(names)
    if not targets:
        out.print("no labs")
    for name in targets:
        destroy(name, base)
        out.print(f"lab {name}: down")


@lab.command("status")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def lab_status(base: Path, as_json: bool) -> None:
    """Labs on this machine and their namespaces."""

    labs = list_labs(base)
    if as_json:
        click.echo(json.dumps(labs, indent=2))
        return
    if not labs:
        out.print("no labs")
    for entry in labs:
        _print_lab(str(entry["name"]), base)


def _print_lab(name: str, base: Path) -> None:

    entry = next((x for x in list_labs(base) if x["name"] == name), None)
    if entry is None:
        out.print(f"no lab {name}")
        return
    table = Table(title=f"lab {name}  ({base / name})")
    table.add_column("member")
    table.add_column("netns")
    table.add_column("BGP sessions / OVN members")
    for ns in entry.get("netns", []):
        member = ns[len(name) + 1 :]
        live = ns in entry["live_netns"]
        sessions = "-"
        frr_dir = base / name / member / "frr"
        if live and (frr_dir / "bgpd.vty").exists():
            try:
                data = Vtysh(str(frr_dir)).show_json("show bgp summary json")
                states = [
                    f"{addr} {peer.get('state', '?')}"
                    for af in data.values()
                    if isinstance(af, dict)
                    for addr, peer in af.get("peers", {}).items()
                ]
                sessions = ", ".join(sorted(set(states))) or "none configured"
            except VtyshError as exc:
                sessions = f"[red]{exc}[/]"
        bird = base / name / member / "bird" / "bird.ctl"
        if live and bird.exists():  # a BIRD peer: its BGP protocols and their states
            res = subprocess.run(["birdc", "-s", str(bird), "show", "protocols"],
                                 capture_output=True, text=True, check=False)  # fmt: skip
            rows = [line.split() for line in res.stdout.splitlines()]
            sessions = ", ".join(f"{r[0]} {r[-1]}" for r in rows
                                 if len(r) > 3 and r[1] == "BGP") or "bird: no BGP"  # fmt: skip
        if member == "ovn" and live:
            roles = cluster_roles(base / name / "ovn")
            sessions = ", ".join(f"{m} {r}" for m, r in roles.items()) or "standalone NB, SB"
        table.add_row(member, ns if live else f"[red]{ns} (missing)[/]", sessions)
    out.print(table)
