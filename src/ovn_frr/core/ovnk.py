"""ovn-kubernetes' intent: what RouteAdvertisements says, found in the NB ovn-kubernetes writes
(pure). docs/openshift.md lists every name and key used here with the ovn-kubernetes source file
that writes it.

ovn-kubernetes writes none of OVN's ``dynamic-routing*`` options. The node config's
``[ovn_kubernetes]`` section says what its RouteAdvertisements would (which networks,
``PodNetwork`` and/or ``EgressIP``, ``targetVRF``, whether BGP routes are imported), and
:func:`apply` turns it into what the pipelines already take from an :class:`OvnState`:

- **import**: the node's gateway router of each selected network (``GR_<prefix><node>``,
  ovn-kubernetes' ``GetNetworkScopedGWRouterName``) learns from the target VRF, as
  ovn-kubernetes' route import writes that router (``routeimport/route_import.go``), but a
  Layer2 network in local gateway mode, which its route import skips
  (``base_secondary_layer2_network_controller.go``). The router announces nothing through
  OVN's classes: it is given ``dynamic-routing`` with no ``-redistribute`` class;
- **PodNetwork**: a Layer3 network's node subnet(s) (the node switch ``<prefix><node>``:
  ``other_config:subnet``, and the router port on it for IPv6), a Layer2 network's whole
  subnet(s) (``<prefix>ovn_layer2_switch``), on every node, as ovn-kubernetes'
  ``getPrefixes`` does (``clustermanager/routeadvertisements/controller.go``);
- **EgressIP**: the ``external_ip`` of the NATs ovn-kubernetes' EgressIP controller writes on
  the node's default-network gateway router (``k8s.ovn.org/owner-type=EgressIP``): the
  EgressIPs this node serves now. A user-defined network's EgressIP has no NB row (it is
  SNATed on the host): reported, not announced;
- **the import's guard**: the prefixes the gateway router routes toward its cluster router
  (the network's cluster subnets, ``updateGWRouterStaticRoutes``) are the network's own, as
  ovn-kubernetes' route import skips routes inside the network's subnets.

The VRF of a network with ``target_vrf = "auto"`` is ovn-kubernetes' ``GetNetworkVRFName``:
the default VRF for the default network, a ClusterUserDefinedNetwork's own name (at most 15
characters), else what the node config maps the network to (``ovn_kubernetes.vrfs``: the name
needs the network's ID, which is not in NB).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from ovn_frr.core.model import Network
from ovn_frr.core.ovn import (
    Extra,
    LogicalRouter,
    LogicalSwitch,
    OvnState,
    RouterRouting,
    host_route,
)

#: ovn-kubernetes' names (types/const.go)
GR_PREFIX = "GR_"
LAYER2_SWITCH = "ovn_layer2_switch"
CLUSTER_ROUTER, TRANSIT_ROUTER = "ovn_cluster_router", "transit_router"
CUDN_PREFIX = "cluster_udn_"
#: the NAT owner type of an EgressIP (libovsdb/ops/db_object_types.go)
EGRESS_IP = "EgressIP"
#: the gateway router's ports toward the cluster (router) side: the join switch (Layer3) and
#: the transit router (Layer2); types/const.go
CLUSTER_SIDE = ("rtoj-", "rtotr-")


def network_name(name: str) -> str:
    """ovn-kubernetes' network name of a network as the node config names it: ``default``,
    a ClusterUserDefinedNetwork ``NAME`` (``cluster_udn_NAME``) or a namespaced
    UserDefinedNetwork ``NAMESPACE/NAME`` (``NAMESPACE_NAME``): util/multi_network.go."""
    if name == "default":
        return name
    if "/" in name:
        namespace, udn = name.split("/", 1)
        return f"{namespace}_{udn}"
    return CUDN_PREFIX + name


def object_prefix(network: str) -> str:
    """util.GetUserDefinedNetworkPrefix: "" for the default network, else the network name
    with '-' and '/' made '.', and '_'."""
    if network == "default":
        return ""
    return network.replace("-", ".").replace("/", ".") + "_"


def own_vrf(name: str, vrfs: Mapping[str, str]) -> str | None:
    """A network's own VRF ("" the default VRF), util.GetNetworkVRFName as far as NB-free
    knowledge goes: the default VRF for the default network, the node config's
    ``ovn_kubernetes.vrfs`` entry, a ClusterUserDefinedNetwork's name when it fits a device
    name; None when it needs the network's ID (``mp<ID>-udn-vrf``) and the config lacks it."""
    if name == "default":
        return ""
    if name in vrfs:
        return vrfs[name]
    if "/" not in name and len(name) <= 15:
        return name
    return None


def target_vrf(target: str, name: str, vrfs: Mapping[str, str]) -> str | None:
    """The VRF a RouteAdvertisements' ``target_vrf`` puts network ``name`` in ("" the default
    VRF; None: ``auto`` and the network's own VRF is not known)."""
    if target == "auto":
        return own_vrf(name, vrfs)
    return "" if target == "default" else target


@dataclass(frozen=True, slots=True)
class NetworkIntent:
    """One selected network: as the node config names it, the VRF it is announced in and
    imported from ("" the default VRF), and what is announced."""

    name: str
    vrf: str
    pod_network: bool = False
    egress_ip: bool = False

    @property
    def network(self) -> str:
        return network_name(self.name)

    @property
    def prefix(self) -> str:
        return object_prefix(self.network)


@dataclass(frozen=True, slots=True)
class OvnkIntent:
    node: str
    networks: tuple[NetworkIntent, ...]
    gateway_mode: str = "shared"
    learn: bool = True

    def gateway_router(self, net: NetworkIntent) -> str:
        return f"{GR_PREFIX}{net.prefix}{self.node}"

    def switch_names(self) -> frozenset[str]:
        """The switches that hold a selected network's subnets on this node, by the names they
        would have in either topology (the reader asks for them by name: a node switch is in
        this chassis' share only while a port on it is bound here)."""
        out: set[str] = set()
        for net in self.networks:
            out.add(net.prefix + self.node)
            out.add(net.prefix + LAYER2_SWITCH)
        return frozenset(out)

    def gateway_routers(self) -> frozenset[str]:
        """The routers whose static routes the reader needs (the guard)."""
        return frozenset(self.gateway_router(n) for n in self.networks)


def apply(state: OvnState, intent: OvnkIntent) -> OvnState:
    """The state with the selected networks' gateway routers learning in their VRFs and the
    node config's announcements and guard; problems for what cannot be found or done."""
    by_name: dict[str, list[LogicalRouter]] = {}
    for r in state.routers:
        by_name.setdefault(r.name, []).append(r)
    switches: dict[str, LogicalSwitch] = {}
    for sw in state.switches.values():
        switches.setdefault(sw.name, sw)
    learning: dict[str, RouterRouting] = {}
    announce: list[Extra] = []
    guard: list[Extra] = []
    problems: list[str] = []
    for net in intent.networks:
        gr_name = intent.gateway_router(net)
        found = by_name.get(gr_name, [])
        gr = found[0] if len(found) == 1 and found[0].pinned_here else None
        if gr is None:
            why = ("is not pinned to this chassis" if len(found) == 1 else
                   "is not in NB (the network is not active on this node?)" if not found
                   else "names more than one router")  # fmt: skip
            problems.append(f"ovn-kubernetes network {net.name}: gateway router {gr_name} "
                            f"{why}; is ovn_kubernetes.node {intent.node!r} this "
                            "node?")  # fmt: skip
        layer2 = switches.get(net.prefix + LAYER2_SWITCH)
        layer3 = switches.get(net.prefix + intent.node)
        where = layer2 if layer2 is not None else layer3
        if gr is not None:
            learn = intent.learn and not (layer2 is not None and intent.gateway_mode == "local")
            learning[gr_name] = RouterRouting(enabled=True, vrf=net.vrf, learning=learn)
            source = f"ovn-kubernetes network {net.name} (route on {gr_name})"
            guard.extend(Extra(net.vrf, p, source) for p in _cluster_subnets(state, gr))
        if net.vrf:
            # the network's cluster (or transit) router is in its VRF too: what is behind it
            # is guarded from that VRF's imports, not the default VRF's
            for name in (net.prefix + CLUSTER_ROUTER, net.prefix + TRANSIT_ROUTER):
                if name in by_name and name not in learning:
                    learning[name] = RouterRouting(enabled=True, vrf=net.vrf, learning=False)
        if net.pod_network:
            if where is None:
                problems.append(f"ovn-kubernetes network {net.name}: no switch "
                                f"{net.prefix + intent.node} or {net.prefix + LAYER2_SWITCH}"
                                " in NB: its PodNetwork is not announced")  # fmt: skip
            else:
                source = f"ovn-kubernetes PodNetwork {net.name} (switch {where.name})"
                subnets, why = _subnets(state, where)
                if why:
                    problems.append(f"ovn-kubernetes network {net.name}: {why}")
                for prefix in subnets:
                    announce.append(Extra(net.vrf, prefix, source))
                    guard.append(Extra(net.vrf, prefix, source))
        if net.egress_ip:
            if layer2 is not None:
                problems.append(f"ovn-kubernetes network {net.name}: EgressIP is not "
                                "advertised for a Layer2 network (ovn-kubernetes refuses "
                                "it)")  # fmt: skip
            elif net.network != "default":
                problems.append(f"ovn-kubernetes network {net.name}: a user-defined network's "
                                "EgressIPs have no NB row (SNATed on the host): not "
                                "announced")  # fmt: skip
            elif gr is not None:
                for nat in gr.nats:
                    if nat.owner_type == EGRESS_IP and nat.advertise:
                        announce.append(Extra(net.vrf, host_route(nat.external_ip),
                                              f"ovn-kubernetes EgressIP {nat.external_ip} "
                                              f"(NAT on {gr_name})"))  # fmt: skip
    routers = tuple(replace(r, routing=learning[r.name]) if r.name in learning else r
                    for r in state.routers)  # fmt: skip
    return replace(
        state,
        routers=routers,
        announce=state.announce + tuple(dict.fromkeys(announce)),
        guard=state.guard + tuple(dict.fromkeys(guard)),
        read_problems=state.read_problems + tuple(problems),
    )


def _subnets(state: OvnState, sw: LogicalSwitch) -> tuple[list[Network], str]:
    """A node or Layer2 switch's subnets: ``other_config:subnet`` (IPv4) and, for IPv6,
    ``other_config:ipv6_prefix`` (an address without a length) completed by the network of
    the router port on the switch that has that prefix (ovn-kubernetes puts the length only
    there: base_network_controller.go createNodeLogicalSwitch); and a problem ("" none)."""
    out: list[Network] = []
    for text in sw.other_config.get("subnet", "").split():
        try:
            out.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            return out, f"switch {sw.name}: other_config:subnet {text!r} is not a subnet"
    v6 = sw.other_config.get("ipv6_prefix", "").strip()
    if not v6:
        return out, ""
    try:
        base = ipaddress.ip_address(v6)
    except ValueError:
        return out, f"switch {sw.name}: other_config:ipv6_prefix {v6!r} is not an address"
    for r in state.routers:
        for p in r.ports:
            if p.switch == sw.uuid:
                for n in p.networks:
                    if n.network.network_address == base:
                        return [*out, n.network], ""
    return out, (
        f"switch {sw.name}: no router port on it has ipv6_prefix {v6}'s length: "
        "its IPv6 subnet is not announced"
    )


def _cluster_subnets(state: OvnState, gr: LogicalRouter) -> Iterable[Network]:
    """The gateway router's static routes toward its cluster router: through its join or
    transit-router port, or to a next hop on one (gateway.go updateGWRouterStaticRoutes)."""
    side = [p for p in gr.ports if p.name.startswith(CLUSTER_SIDE)]
    out = []
    for st in state.statics:
        if st.router != gr.name or st.policy != "dst-ip":
            continue
        if st.output_port:
            toward = any(p.name == st.output_port for p in side)
        else:
            try:
                hop = ipaddress.ip_address(st.nexthop)
            except ValueError:
                continue
            toward = any(hop in n.network for p in side for n in p.networks)
        if toward and st.prefix.prefixlen > 0:
            out.append(st.prefix)
    return out
