"""The agent: wiring of the pipelines, each a reconciler on its own asyncio task.

    OVSDB change ──> ovn ──(OvnState)──┬──> import <── FPM (zebra's RIB) ──> OVN NB rows
                                       ├──> advertise ──(networks)──> frr <── every frr_check_ms
                                       │                               └──> FRR (vtysh)
                                       └──> evpn <── kernel FDB/neighbour changes, check_ms
                                             └──> kernel bridges/VXLAN/FDB, OVS bridges and
                                                  flows, NB localnet ports

One failing, slow or stuck pipeline never stops another: an NB outage leaves FRR configured
from the last OVN state, a hung vtysh delays no import or BFD withdrawal.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ovn_frr import __version__
from ovn_frr.config import NodeConfig
from ovn_frr.config.convert import (
    evpn_uses,
    frr_settings,
    import_policy,
    ovnk_intent,
    vrf_config,
    vtep_ip,
)
from ovn_frr.core.evpn import LOCALNET_OWNER
from ovn_frr.core.ovn import PORT_MAPPING, OvnState
from ovn_frr.core.vrf import Type5Hops
from ovn_frr.fpm.peer import ZebraCheck
from ovn_frr.fpm.rib import Rib
from ovn_frr.fpm.server import FpmServer
from ovn_frr.frr.vtysh import Vtysh, VtyshError
from ovn_frr.kernel.evpn import KernelEvpn
from ovn_frr.kernel.vrf import KernelVrfs
from ovn_frr.ovn.bulk import BulkWriter
from ovn_frr.ovn.db import OvnError, OvsdbConnection
from ovn_frr.ovn.localnet import LocalnetWriter
from ovn_frr.ovn.reader import OvnReader
from ovn_frr.ovn.sbmonitor import SbMonitor
from ovn_frr.reconcilers.advertise import AdvertiseReconciler, Networks
from ovn_frr.reconcilers.base import Cell, Reconciler, Runner, Signal, stop_all
from ovn_frr.reconcilers.evpn import EvpnReconciler, EvpnSettings
from ovn_frr.reconcilers.frr import FrrReconciler
from ovn_frr.reconcilers.importer import ImportReconciler
from ovn_frr.reconcilers.ovn import OvnWatch
from ovn_frr.reconcilers.selfroutes import SelfRouteCheck
from ovn_frr.reconcilers.vrf import VrfReconciler
from ovn_frr.redact import Redactor
from ovn_frr.report import AgentInfo, samples, status_doc, trace_doc
from ovn_frr.status import Metrics, MetricsServer, StatusServer
from ovn_frr.versions import Versions, detect
from ovn_frr.vswitch.bridges import LocalOvs
from ovn_frr.vswitch.controller import OvnController

log = logging.getLogger(__name__)

#: errors of the systems the pipelines talk to: logged without a traceback
EXPECTED = (OvnError, VtyshError, OSError)


def secrets(cfg: NodeConfig) -> Redactor:
    """The node config's secrets, masked wherever they could be printed."""
    return Redactor(nb.password for nb in cfg.bgp.neighbors)


def zebra_routes(vtysh: Vtysh) -> list[Any]:
    """zebra's IPv4 and IPv6 routes in every VRF (JSON)."""
    return [vtysh.show_json(f"show {afi} route vrf all json") for afi in ("ip", "ipv6")]


class StartError(Exception):
    """The agent cannot start (a socket it must serve cannot be bound)."""


class Agent:
    def __init__(
        self,
        cfg: NodeConfig,
        chassis: str,
        vtysh: Vtysh,
        nb: OvsdbConnection,
        sb: SbMonitor,
        fpm_socket: socket.socket,
        clock: Callable[[], float] = time.monotonic,
        ifnames: Callable[[], dict[int, str]] = lambda: dict(socket.if_nameindex()),
        versions: Versions | None = None,
        hostname: str = "",
    ) -> None:
        self.cfg = cfg
        self.chassis = chassis
        self.clock = clock
        self.versions = versions or detect()
        #: what status and trace answer is masked like the logs (cli installs the log filter)
        self.redactor = secrets(cfg)
        self.nb, self.sb = nb, sb
        imp = cfg.import_
        self.rib = Rib(
            imp.coalesce_ms / 1000, imp.replay_quiet_ms / 1000, imp.replay_hold_ms / 1000
        )
        # what wakes whom
        ovsdb_changed = Signal("ovsdb")
        fpm_changed = Signal("fpm")
        state: Cell[OvnState | None] = Cell("ovn-state", None)
        networks: Cell[Networks] = Cell("networks", None)
        #: VRFs announcing OVN 25.03+'s own routes (advertise -> FRR)
        redistribute: Cell[frozenset[str]] = Cell("redistribute", frozenset())
        vrf_tables: Cell[Mapping[str, int]] = Cell("vrf-tables", {})
        type5: Cell[Type5Hops] = Cell("type5", Type5Hops())
        self._ovsdb_changed = ovsdb_changed
        self._fpm_socket = fpm_socket
        peer_check = None
        if cfg.frr.fpm_check_peer:
            peer_check = ZebraCheck(Path(cfg.frr.vty_socket_dir) / "zebra.pid")
        self.fpm = FpmServer(self.rib, fpm_changed.notify, clock, peer_check)
        self.metrics = Metrics(lambda: samples(self.runners))
        #: the node config's ovn-kubernetes intent (node: the host name unless set)
        ovnk = ovnk_intent(cfg, hostname)
        reconcilers: list[Reconciler] = [
            OvnWatch(OvnReader(nb, sb, chassis, imp.resync_s, clock,
                               ovnk.switch_names() if ovnk else frozenset(),
                               ovnk.gateway_routers() if ovnk else frozenset()),
                     ovsdb_changed, state, clock, cfg.bgp.vrf_map, ovnk,
                     (self.versions.ovn_native_dynamic_routing, self.versions.ovn_vrf_id)),
            ImportReconciler(self.rib, self.fpm.counters, fpm_changed, state,
                             BulkWriter(nb.remote, chassis),
                             import_policy(cfg, self.versions.ovn_mixed_family_routes),
                             imp.resync_s, clock, ifnames, vrf_tables, type5,
                             SelfRouteCheck(lambda: zebra_routes(vtysh), imp.stale_check_s),
                             lambda: LocalOvs(cfg.ovs.db, cfg.ovs.rundir).external_id(
                                 PORT_MAPPING)),
            AdvertiseReconciler(state, networks, redistribute),
            FrrReconciler(frr_settings(cfg, self.versions.frr_withdraws_while_coalescing),
                          vtysh, networks, cfg.agent.frr_check_ms / 1000,
                          clock, observe_apply=self.metrics.apply_seconds.observe,
                          version=str(self.versions.frr or ""),
                          redistribute=redistribute),
            evpn := EvpnReconciler(EvpnSettings(evpn_uses(cfg), str(vtep_ip(cfg)),
                                                cfg.evpn.udp_port, cfg.evpn.mtu,
                                                cfg.evpn.check_ms / 1000,
                                                self.versions.ovn_native_evpn,
                                                cfg.evpn.control_udp_port,
                                                self.versions.ovn_evpn_names_required),
                                   state, KernelEvpn(), LocalOvs(cfg.ovs.db, cfg.ovs.rundir),
                                   LocalnetWriter(nb.remote, LOCALNET_OWNER), clock,
                                   controller=OvnController(cfg.ovs.ovn_rundir)),
            evpn.answers,
            VrfReconciler(vrf_config(cfg), state, KernelVrfs(), vrf_tables, clock=clock,
                          networks=networks, type5=type5),
        ]  # fmt: skip
        debounce = cfg.agent.debounce_ms / 1000
        check = cfg.agent.frr_check_ms / 1000
        # a restarted FRR is configured again within seconds of coming back; the FRR
        # pipeline needs no debounce of its own (bursts are coalesced before it, by advertise):
        # a check it just made must not delay an announcement
        backoff = {"frr": (check, max(5.0, check))}
        pause = {"frr": 0.0}
        self.runners = tuple(
            Runner(r, clock, pause.get(r.name, debounce), backoff.get(r.name, (1.0, 10.0)),
                   expected=EXPECTED)
            for r in reconcilers
        )  # fmt: skip
        self.info = AgentInfo(__version__, chassis, clock())
        self.status_server = StatusServer(cfg.agent.status_socket, self._request)
        listen = cfg.agent.metrics_listen
        self.metrics_server = (
            MetricsServer(str(listen.host), listen.port, self.metrics) if listen else None
        )

    async def _request(self, request: str) -> dict[str, Any]:
        verb, _, arg = request.partition(" ")
        if verb == "status":
            doc = status_doc(self.info, self.runners, self.clock())
        elif verb == "trace" and arg:
            doc = await trace_doc(arg, self.runners)
        else:
            doc = {"error": f"unknown request {request!r} (status | trace PREFIX)"}
        return dict(self.redactor.doc(doc))

    async def run(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        self.info = AgentInfo(__version__, self.chassis, self.clock())

        def changed() -> None:  # in the NB IDL's or the SB monitor's thread
            loop.call_soon_threadsafe(self._ovsdb_changed.notify)

        for db in (self.nb, self.sb):
            db.on_change = changed
        servers: list[StatusServer | MetricsServer] = [self.status_server]
        if self.metrics_server is not None:
            servers.append(self.metrics_server)
        for server in servers:
            try:
                await server.start()
            except OSError as exc:
                what = ("agent.status_socket" if server is self.status_server
                        else "agent.metrics_listen")  # fmt: skip
                raise StartError(f"{what}: cannot listen: {exc.strerror or exc}") from None
        await self.fpm.start(self._fpm_socket)
        log.info("agent_started chassis=%s fpm=%s reconcilers=%s", self.chassis,
                 self.cfg.frr.fpm_listen, ",".join(r.name for r in self.runners))  # fmt: skip
        tasks = [asyncio.create_task(r.run(stop), name=r.name) for r in self.runners]
        try:
            await stop.wait()
        finally:
            stop.set()
            await stop_all(tasks, timeout=10)
            for server in servers:
                await server.close()
            await self.fpm.close()
            for r in self.runners:
                try:
                    await r.reconciler.close()
                except Exception:  # one failing to close must not keep the others open
                    log.exception("reconciler_close_failed reconciler=%s", r.name)
