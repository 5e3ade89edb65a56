"""The node config schema (TOML), as immutable typed models.

Only the shape and per-value rules live here; rules that relate several keys (a neighbor's BFD
profile must exist, ge <= le, ...) are in :mod:`ovn_frr.config.checks` so that every problem is
reported with its own key path.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ovn_frr.config.types import (
    ASN,
    Endpoint,
    IPv4,
    NeighborIP,
    OvsdbRemote,
    Prefix,
    RdRt,
    RemoteAS,
    Secret,
    Text,
    Word,
)


class _Model(BaseModel):
    # strict: TOML is typed, so "64512" (a string) is not silently an integer.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class OvnConfig(_Model):
    nb: OvsdbRemote = "unix:/run/ovn/ovnnb_db.sock"
    sb: OvsdbRemote = "unix:/run/ovn/ovnsb_db.sock"
    #: None: the local Open vSwitch's external_ids:system-id, read at start.
    chassis: Annotated[str, Field(min_length=1)] | None = None
    ssl_key: str | None = None
    ssl_cert: str | None = None
    ssl_ca: str | None = None


class FrrConfig(_Model):
    vty_socket_dir: Annotated[str, Field(min_length=1)] = "/run/frr"
    fpm_listen: Endpoint = Field(default="127.0.0.1:2620", validate_default=True)
    #: Take FPM connections only from this node's zebra (the peer socket's process, checked
    #: through /proc; zebra's pid file ``vty_socket_dir/zebra.pid`` when readable). Turn off
    #: only where /proc cannot show zebra (FRR in another pod without a shared process
    #: namespace): then any local process could feed routes into OVN.
    fpm_check_peer: bool = True


class PrefixFilter(_Model):
    """One prefix-list entry: ``prefix`` matched exactly, or with lengths ge..le."""

    prefix: Prefix
    ge: Annotated[int, Field(ge=0, le=128)] | None = None
    le: Annotated[int, Field(ge=0, le=128)] | None = None
    action: Literal["permit", "deny"] = "permit"


AddressFamily = Literal["ipv4-unicast", "ipv6-unicast", "l2vpn-evpn"]
#: TOML arrays arrive as lists; they are kept as (immutable) tuples.
LAX = Field(strict=False)
#: a Linux interface name: 1-15 characters, no blank, '/' or ':'
IFNAME = r"^[A-Za-z0-9_.@-]{1,15}$"


class Neighbor(_Model):
    address: NeighborIP
    remote_as: RemoteAS
    description: Text | None = None
    #: TCP MD5 secret; never logged or shown. ``password_file`` (a Kubernetes Secret mounted as
    #: a file, say; relative to the config file) is read when the config is loaded, at start.
    password: Secret | None = None
    password_file: Word | None = None
    keepalive: Annotated[int, Field(ge=0, le=65535)] | None = None
    hold: Annotated[int, Field(ge=0, le=65535)] | None = None
    connect_retry: Annotated[int, Field(ge=1, le=65535)] | None = None
    ebgp_multihop: Annotated[int, Field(ge=1, le=255)] | None = None
    update_source: Word | None = None
    bfd_profile: Annotated[str, Field(min_length=1)] | None = None
    #: None: ipv4-unicast for an IPv4 neighbor, ipv6-unicast for an IPv6 one.
    address_families: Annotated[tuple[AddressFamily, ...], LAX] | None = None
    #: Empty: accept what the neighbor sends (the import guard still applies).
    import_filters: Annotated[tuple[PrefixFilter, ...], LAX] = ()
    #: Empty: send what the OVN intent produced, nothing else.
    export_filters: Annotated[tuple[PrefixFilter, ...], LAX] = ()
    max_prefix: Annotated[int, Field(ge=1, le=4_294_967_295)] | None = None
    vrf: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,15}$")] | None = None
    #: BGP graceful restart with this neighbor (FRR's ``neighbor X graceful-restart``, with
    #: the forwarding state preserved): it keeps what this node announced while FRR restarts.
    graceful_restart: bool = False


VrfName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,15}$")]


class BgpConfig(_Model):
    asn: ASN
    router_id: IPv4
    neighbors: Annotated[tuple[Neighbor, ...], LAX] = ()
    #: A router's VRF as OVN names it (``dynamic-routing-vrf-name``, else ``ovnvrf<N>`` of
    #: ``-vrf-id=N``) -> the FRR VRF that carries it here ("default": the default VRF): the
    #: router imports from and announces in that VRF instead (say, OpenStack Neutron's
    #: ``ovnvrf42`` and ``ovnvrf10`` on a host without kernel VRFs, or sharing one VRF)
    vrf_map: dict[VrfName, VrfName] = {}


class BfdProfile(_Model):
    receive_interval_ms: Annotated[int, Field(ge=10, le=60000)] = 300
    transmit_interval_ms: Annotated[int, Field(ge=10, le=60000)] = 300
    detect_multiplier: Annotated[int, Field(ge=2, le=255)] = 3
    passive: bool = False


class BfdConfig(_Model):
    profiles: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")], BfdProfile] = {}


ImportProtocol = Literal["bgp", "static", "ospf", "isis"]


class ImportConfig(_Model):
    """Which routes zebra selected are imported into OVN (never connected/kernel routes)."""

    protocols: Annotated[tuple[ImportProtocol, ...], LAX] = ("bgp",)
    allow_default: bool = False
    #: Prefixes that may be imported although they overlap what OVN owns.
    allow_overlap: Annotated[tuple[Prefix, ...], LAX] = ()
    #: Per router: beyond it nothing new is added, what is in OVN stays.
    max_prefix: Annotated[int, Field(ge=1, le=10_000_000)] = 1_000_000
    #: How long an FPM delete waits for the add that may follow it (a route update).
    coalesce_ms: Annotated[int, Field(ge=0, le=5000)] = 50
    #: Quiet time after which a (re)connect replay is taken as complete.
    replay_quiet_ms: Annotated[int, Field(ge=100, le=60000)] = 1000
    #: After an FPM (re)connect, routes not replayed are kept at least this long: an FRR restart
    #: replays zebra at once but bgpd re-learns its routes only when its sessions are back.
    replay_hold_ms: Annotated[int, Field(ge=0, le=600000)] = 15000
    #: How often the rows ovn-frr owns are counted in NB (between reads they are known from
    #: ovn-frr's own writes); a count that differs has them read back in full, which repairs
    #: rows someone else removed or added.
    resync_s: Annotated[int, Field(ge=5, le=86400)] = 120
    #: After each FPM replay of a zebra started without -K: when zebra's routes are read for
    #: routes of an earlier bgpd that it kept (reported; again every resync_s while any).
    stale_check_s: Annotated[int, Field(ge=1, le=3600)] = 60


class AgentConfig(_Model):
    #: Minimum spacing of reconcile passes during bursts (a lone change is not delayed).
    debounce_ms: Annotated[int, Field(ge=0, le=10000)] = 50
    #: How often FRR is asked for its BGP instances (a restarted FRR lost ovn-frr's: everything
    #: is applied again), sessions and BFD peers (status, metrics). Two or three vtysh calls.
    frr_check_ms: Annotated[int, Field(ge=100, le=60000)] = 1000
    #: The unix socket ``ovn-frr status`` and ``ovn-frr trace`` ask.
    status_socket: Annotated[str, Field(min_length=1)] = "/run/ovn-frr/status.sock"
    #: Serve Prometheus metrics (``/metrics``) on this address; unset: no metrics endpoint.
    metrics_listen: Endpoint | None = None


class OvsConfig(_Model):
    """The local Open vSwitch (EVPN's bridges and OVN's bridge mappings live there)."""

    db: OvsdbRemote = "unix:/run/openvswitch/db.sock"
    #: where ``ovs-ofctl`` finds the bridges' management sockets (``<rundir>/<bridge>.mgmt``)
    rundir: Annotated[str, Field(min_length=1)] = "/run/openvswitch"
    #: where ovn-controller keeps its pid file and control socket (OVN_RUNDIR): OVN 25.09+'s
    #: own EVPN state is read from it (``ovn-appctl evpn/*``)
    ovn_rundir: Annotated[str, Field(min_length=1)] = "/run/ovn"


class EvpnVni(_Model):
    """Overrides for one VNI (default: FRR's auto RD and RT, ASN:VNI)."""

    rd: RdRt | None = None
    route_targets_import: Annotated[tuple[RdRt, ...], LAX] = ()
    route_targets_export: Annotated[tuple[RdRt, ...], LAX] = ()


class EvpnConfig(_Model):
    """EVPN L2 (logical switches with ``other_config:dynamic-routing-vni``). The neighbors
    that carry it list ``l2vpn-evpn`` in their ``address_families``."""

    #: The VTEP source address (on a local interface, reachable over the underlay);
    #: None: bgp.router_id.
    local_ip: IPv4 | None = None
    udp_port: Annotated[int, Field(ge=1, le=65535)] = 4789
    #: OVN 25.09+ carries EVPN in OVS itself (on ``udp_port``): the kernel VXLAN devices, which
    #: exist for zebra alone, are bound to this port, one no VTEP sends to.
    control_udp_port: Annotated[int, Field(ge=1, le=65535)] = 60000
    #: Announce local_ip/32 in ipv4 unicast to the neighbors (the underlay route to this VTEP).
    advertise_local_ip: bool = True
    #: MTU of the VXLAN device and the veth toward OVN (the underlay's MTU minus 50).
    mtu: Annotated[int, Field(ge=576, le=9000)] = 1450
    #: How often the kernel's EVPN entries are read when no change woke the pipeline.
    check_ms: Annotated[int, Field(ge=100, le=60000)] = 2000
    vnis: dict[Annotated[str, Field(pattern=r"^[1-9][0-9]{0,7}$")], EvpnVni] = {}


class VrfEntry(_Model):
    """A VRF this chassis needs whether or not a router names it. ovn-frr makes it when the
    kernel lacks it (an operator's VRF of that name is used as it is, never changed)."""

    #: the VRF's kernel table when ovn-frr makes it (None: the router's
    #: dynamic-routing-vrf-id, else the lowest free table from 10000)
    table: Annotated[int, Field(ge=1, le=4294967294)] | None = None
    #: the dedicated links ovn-frr puts in the VRF it made (enslaving drops their IPv6
    #: addresses: configure those after, or with the link in the VRF)
    interfaces: Annotated[tuple[Annotated[str, Field(pattern=IFNAME)], ...], LAX] = ()
    #: EVPN type-5 (symmetric IRB): the VRF's L3VNI. ovn-frr makes the L3VNI's bridge (the
    #: SVI, in the VRF) and VXLAN device (the VTEP of ``[evpn]``), maps the VRF to the VNI in
    #: FRR and announces the VRF's prefixes as type-5 (``advertise ipv4/ipv6 unicast``).
    l3vni: Annotated[int, Field(ge=1, le=16_777_215)] | None = None


#: a network as RouteAdvertisements selects it: ``default``, a ClusterUserDefinedNetwork's
#: name, or a namespaced UserDefinedNetwork as ``NAMESPACE/NAME`` (Kubernetes names)
_K8S = r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?"
OvnkNetwork = Annotated[str, Field(pattern=rf"^{_K8S}(/{_K8S})?$")]
Advertisement = Literal["PodNetwork", "EgressIP"]


class RouteAdvertisement(_Model):
    """What one of ovn-kubernetes' RouteAdvertisements says for this node."""

    #: the networks it selects (its ``networkSelectors``)
    networks: Annotated[tuple[OvnkNetwork, ...], LAX, Field(min_length=1)]
    #: its ``advertisements``
    advertisements: Annotated[tuple[Advertisement, ...], LAX, Field(min_length=1)]
    #: its ``targetVRF``: ``default`` (RouteAdvertisements' "", the default VRF), ``auto``
    #: (each network's own VRF) or a VRF's name
    target_vrf: VrfName = "default"


class OvnKubernetesConfig(_Model):
    """The intent of an ovn-kubernetes cluster, whose NB has no ``dynamic-routing*`` option
    (docs/openshift.md)."""

    #: the Kubernetes node name (its gateway routers are ``GR_<network prefix><node>``);
    #: None: the host name
    node: Annotated[str, Field(pattern=rf"^{_K8S}$")] | None = None
    #: ovn-kubernetes' gateway mode (a Layer2 network's routes are imported in shared mode
    #: only, as ovn-kubernetes' route import does)
    gateway_mode: Literal["shared", "local"] = "shared"
    #: import BGP routes into the selected networks' gateway routers (ovn-kubernetes' route
    #: import, which runs wherever RouteAdvertisements is enabled)
    import_: bool = Field(default=True, alias="import")
    route_advertisements: Annotated[tuple[RouteAdvertisement, ...], LAX] = ()
    #: a network -> its VRF, where ``target_vrf = "auto"`` needs one that ovn-kubernetes names
    #: after the network's ID (``mp<ID>-udn-vrf``: a namespaced UserDefinedNetwork, or a
    #: ClusterUserDefinedNetwork name longer than 15 characters)
    vrfs: dict[OvnkNetwork, VrfName] = {}


class NodeConfig(_Model):
    ovn: OvnConfig = OvnConfig()
    frr: FrrConfig = FrrConfig()
    bgp: BgpConfig
    bfd: BfdConfig = BfdConfig()
    import_: ImportConfig = Field(default=ImportConfig(), alias="import")
    agent: AgentConfig = AgentConfig()
    ovs: OvsConfig = OvsConfig()
    evpn: EvpnConfig = EvpnConfig()
    vrfs: dict[VrfName, VrfEntry] = {}
    ovn_kubernetes: OvnKubernetesConfig | None = None
