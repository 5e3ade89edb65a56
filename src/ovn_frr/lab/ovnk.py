"""ovn-kubernetes' NB as ovn-kubernetes writes it, for the nodes of a lab (``--topology
ovn-kubernetes``): the default network, one primary Layer3 user-defined network (a
ClusterUserDefinedNetwork ``blue``) and one primary Layer2 one (the namespaced UDN ``ns1/green``,
transit-router topology), in shared or local gateway mode.

Every name, option and ``external_ids`` key written here is one ovn-kubernetes writes (source
commit 8871cd9c; each with its file in docs/openshift.md, which a test checks against that
source); no ``dynamic-routing*`` option anywhere, as in a real cluster. Addresses are the lab's
own. The lab has one NB for all its nodes: ovn-kubernetes' multi-node zone. With a zone per
node (OpenShift's default) each node's NB holds its own rows and stand-ins for the others,
which changes nothing that an agent reading only its chassis' share sees.

Left out (they carry nothing an announcement or an import depends on): load balancers and
their groups, CoPP, ACLs and port groups, address sets, the masquerade routes and addresses,
remote-zone ports and routes, EgressIP reroute policies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ovn_frr.lab.lab import Lab
from ovn_frr.lab.nbtopo import Nbctl
from ovn_frr.lab.spec import LinkAddrs

#: types/const.go
CLUSTER_ROUTER, JOIN, TRANSIT_SWITCH = "ovn_cluster_router", "join", "transit_switch"
LAYER2_SWITCH, TRANSIT_ROUTER = "ovn_layer2_switch", "transit_router"
NETWORK, ROLE, TOPOLOGY = "k8s.ovn.org/network", "k8s.ovn.org/role", "k8s.ovn.org/topology"
OWNER_CONTROLLER, OWNER_TYPE = "k8s.ovn.org/owner-controller", "k8s.ovn.org/owner-type"
OBJECT_NAME, OBJECT_ID = "k8s.ovn.org/name", "k8s.ovn.org/id"
DEFAULT_CONTROLLER = "default-network-controller"


@dataclass(frozen=True, slots=True)
class OvnkNetwork:
    """A network by ovn-kubernetes' name (``default``, ``cluster_udn_<name>``, ``<ns>_<name>``)."""

    name: str
    topology: str  # layer3 | layer2
    subnet: str  # the cluster subnet (IPv4)
    join: str  # the join subnet's first two octets
    #: the NetworkAttachmentDefinition ("<namespace>/<name>") whose pods' ports are named after it
    nad: str = ""

    @property
    def default(self) -> bool:
        return self.name == "default"

    @property
    def prefix(self) -> str:
        """util.GetUserDefinedNetworkPrefix: "" for the default network."""
        return "" if self.default else _prefix(self.name)

    def scoped(self, name: str) -> str:
        return self.prefix + name

    def ids(self, role: bool = True) -> list[str]:
        """util.GenerateExternalIDsForSwitchOrRouter (none on the default network)."""
        if self.default:
            return []
        out = [f"{NETWORK}={self.name}", f"{TOPOLOGY}={self.topology}"]
        return [*out, f"{ROLE}=primary"] if role else out


def _prefix(name: str) -> str:
    return name.replace("-", ".").replace("/", ".") + "_"


DEFAULT = OvnkNetwork("default", "layer3", "10.244.0.0/16", "100.64")
BLUE = OvnkNetwork("cluster_udn_blue", "layer3", "10.100.0.0/16", "100.65", nad="ns2/blue")
GREEN = OvnkNetwork("ns1_green", "layer2", "10.200.0.0/16", "100.65", nad="ns1/green")
NETWORKS = (DEFAULT, BLUE, GREEN)


@dataclass(frozen=True, slots=True)
class OvnkNode:
    name: str
    node_ip: str  # the node's address on its first lab link (the GRs' physical IP)
    #: network name -> its gateway router, the node's subnet in it, pods (LSP -> IPv4)
    routers: dict[str, str] = field(default_factory=dict)
    subnets: dict[str, str] = field(default_factory=dict)
    pods: dict[str, dict[str, str]] = field(default_factory=dict)
    #: default network EgressIPs served here -> the pod behind each
    egress_ips: dict[str, str] = field(default_factory=dict)


def ovnk_cluster(
    lab: Lab,
    gateway_mode: str = "shared",
    egress_ips: dict[str, str] | None = None,
    nbctl: Nbctl | None = None,
    uplinks: Mapping[str, str] | None = None,
) -> list[OvnkNode]:
    """Build every node of ``lab``. ``egress_ips``: EgressIP -> the node it is assigned to
    (default: ``172.20.0.10`` on the first node); ``uplinks``: network name -> the VRF of the
    lab links its gateway routers' external ports are on (a user-defined network with an
    uplink of its own, VRF-Lite; default: every network on the node's first link)."""
    if gateway_mode not in ("shared", "local"):
        raise ValueError(f"gateway mode {gateway_mode!r}: shared or local")
    assert lab.ovn is not None
    b = _Builder(gateway_mode)
    nodes = [n.name for n in lab.spec.nodes]
    eips = {"172.20.0.10": nodes[0]} if egress_ips is None else egress_ips
    for net in NETWORKS:
        b.network(net)
    out = []
    for i, node in enumerate(nodes, start=1):
        la = lab.links(node)[0]
        mine = [ip for ip, n in eips.items() if n == node]
        b.uplinks = {net: lab.links_by_vrf(node)[vrf][0]
                     for net, vrf in (uplinks or {}).items()}  # fmt: skip
        out.append(b.node(node, i, str(la.v4), str(la.peer_v4), mine))
    args: list[str] = []
    for cmd in b.cmds:
        args += ["--", *cmd]
    (nbctl or lab.ovn.nbctl)(*args[1:])
    return out


def move_egress_ip(lab: Lab, eip: str, to: OvnkNode | None) -> None:
    """What ovn-kubernetes' EgressIP controller writes when ``eip`` moves to node ``to`` (its
    first default-network pod behind it), or when its last pod goes (``to`` None): the SNATs
    on the old gateway router deleted, one on the new one made, in one transaction."""
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    b = _Builder("shared")
    found = nb("--bare", "--columns=_uuid", "find", "NAT", f"external_ip={eip}",
               f'external_ids:"{OWNER_TYPE}"=EgressIP').split()  # fmt: skip
    for uuid in found:
        router = nb("--bare", "--columns=name", "find", "Logical_Router", f"nat{{>=}}{uuid}")
        b.c("remove", "Logical_Router", router.strip(), "nat", uuid)
    if to is not None:
        pod, pod_ip = next(iter(to.pods[DEFAULT.name].items()))
        b.node_ip = to.node_ip
        b._egress_ip(to.name, eip, pod.replace("_", "/", 1), pod_ip)
    args: list[str] = []
    for cmd in b.cmds:
        args += ["--", *cmd]
    if args:
        nb(*args[1:])


class _Builder:
    def __init__(self, gateway_mode: str) -> None:
        self.mode = gateway_mode
        self.cmds: list[list[str]] = []
        self.node_ip = ""
        self.n = 0
        #: network name -> the link its gateway router's external port is on (this node)
        self.uplinks: dict[str, LinkAddrs] = {}

    def c(self, *args: str) -> None:
        self.cmds.append(list(args))

    def lsp_router(self, switch: str, lsp: str, lrp: str, *opts: str, ids: list[str]) -> None:
        """A switch's port to a router port (type router, addresses "router")."""
        self.c("lsp-add", switch, lsp)
        self.c("lsp-set-type", lsp, "router")
        self.c("lsp-set-addresses", lsp, "router")
        self.c("lsp-set-options", lsp, f"router-port={lrp}", *opts)
        if ids:
            self.c("set", "Logical_Switch_Port", lsp, *(f"external_ids:{_q(i)}" for i in ids))

    def router(self, name: str, *opts: str, ids: list[str]) -> None:
        self.c("lr-add", name)
        sets = [*(f"options:{o}" for o in opts), *(f"external_ids:{_q(i)}" for i in ids)]
        if sets:
            self.c("set", "Logical_Router", name, *sets)

    def switch(self, name: str, *other: str, ids: list[str]) -> None:
        self.c("ls-add", name)
        sets = [*(f"other_config:{o}" for o in other), *(f"external_ids:{_q(i)}" for i in ids)]
        if sets:
            self.c("set", "Logical_Switch", name, *sets)

    def lrp(self, router: str, port: str, mac: str, *nets: str, ids: list[str]) -> None:
        self.c("lrp-add", router, port, mac, *nets)
        if ids:
            self.c("set", "Logical_Router_Port", port, *(f"external_ids:{_q(i)}" for i in ids))

    def network(self, net: OvnkNetwork) -> None:
        """What one network has once, whatever its nodes (topologyfactory.go)."""
        ids = net.ids(role=False)
        if net.topology == "layer3":
            lr = net.scoped(CLUSTER_ROUTER)
            local = ["ct-commit-all=true"] if self.mode == "local" and not net.default else []
            self.router(lr, *local, ids=["k8s-cluster-router=yes", *ids])
            join = net.scoped(JOIN)
            self.switch(join, ids=ids)
            port = f"rtoj-{lr}"
            self.lrp(lr, port, _mac(net, 0, 1), f"{net.join}.0.1/16", ids=ids)
            self.lsp_router(join, f"jtor-{lr}", port, ids=ids)
            self.switch(net.scoped(TRANSIT_SWITCH), ids=net.ids())
            return
        tr = net.scoped(TRANSIT_ROUTER)
        local = ["ct-commit-all=true"] if self.mode == "local" else []
        self.router(tr, *local, ids=["k8s-cluster-router=yes", *ids])
        ls = net.scoped(LAYER2_SWITCH)
        self.switch(ls, f"subnet={net.subnet}", ids=net.ids())
        gw = net.subnet.replace(".0.0/", ".0.1/")
        self.lrp(tr, f"trtos-{ls}", _mac(net, 0, 1), gw, ids=ids)
        self.lsp_router(ls, f"stotr-{ls}", f"trtos-{ls}", ids=ids)

    def node(self, node: str, i: int, node_ip: str, tor_ip: str, eips: list[str]) -> OvnkNode:
        self.node_ip = node_ip.split("/", maxsplit=1)[0]
        out = OvnkNode(node, self.node_ip)
        for net in NETWORKS:
            gr = f"GR_{net.scoped(node)}"
            out.routers[net.name] = gr
            out.pods[net.name] = (self._layer3(net, node, i, gr) if net.topology == "layer3"
                                  else self._layer2(net, node, i, gr))  # fmt: skip
            out.subnets[net.name] = (_node_subnet(net, i) if net.topology == "layer3"
                                     else net.subnet)  # fmt: skip
            own = self.uplinks.get(net.name)
            if own is None:
                self._external(net, node, i, gr, node_ip, tor_ip)
            else:
                self._external(net, node, i, gr, str(own.v4), str(own.peer_v4))
        pod, pod_ip = next(iter(out.pods[DEFAULT.name].items()))
        for eip in eips:
            out.egress_ips[eip] = pod_ip
            self._egress_ip(node, eip, pod.replace("_", "/", 1), pod_ip)
        return out

    def _gateway_router(self, net: OvnkNetwork, node: str, gr: str, snat_ip: str) -> None:
        """gateway.go createGWRouter: physical_ip(s) are the node's addresses, the chassis
        the node's (the lab's chassis are named after their nodes)."""
        opts = ["always_learn_from_arp_request=false", "dynamic_neigh_routers=false",
                f"chassis={node}", f"lb_force_snat_ip={snat_ip}",
                "mac_binding_age_threshold=300"]  # fmt: skip
        opts += ["snat-ct-zone=0"] if net.default else ["disable_garp_rarp=true"]
        ids = [f"physical_ip={self.node_ip}", f"physical_ips={self.node_ip}", *net.ids()]
        self.router(gr, *opts, ids=ids)

    def _layer3(self, net: OvnkNetwork, node: str, i: int, gr: str) -> dict[str, str]:
        lr, ls = net.scoped(CLUSTER_ROUTER), net.scoped(node)
        subnet = _node_subnet(net, i)
        base = subnet.rsplit(".", 1)[0]
        mgmt = f"{base}.2"
        ids = net.ids(role=False)
        self.switch(ls, f"subnet={subnet}", f"exclude_ips={mgmt}", ids=net.ids())
        self.lrp(lr, f"rtos-{ls}", _mac(net, i, 1), f"{base}.1/24", ids=ids)
        self.lsp_router(ls, f"stor-{ls}", f"rtos-{ls}", ids=ids)
        self.c("lsp-add", ls, f"k8s-{ls}")
        self.c("lsp-set-addresses", f"k8s-{ls}", f"{_mac(net, i, 2)} {mgmt}")
        pods = self._pods(net, ls, i, base)
        # the GR and its join port
        join_ip = f"{net.join}.0.{1 + i}"
        self._gateway_router(net, node, gr, "router_ip")
        self.lrp(gr, f"rtoj-{gr}", _mac(net, i, 3), f"{join_ip}/16", ids=ids)
        self.lsp_router(net.scoped(JOIN), f"jtor-{gr}", f"rtoj-{gr}", ids=ids)
        # gateway.go updateGWRouterStaticRoutes / updateClusterRouterStaticRoutes;
        # base_network_controller.go syncNodeManagementPort (local gateway mode)
        self.c("lr-route-add", gr, net.subnet, f"{net.join}.0.1")
        via = join_ip if self.mode == "shared" else mgmt
        self.c("--policy=src-ip", "lr-route-add", lr, subnet, via)
        self.c("lr-nat-add", gr, "snat", self.node_ip, subnet)
        return pods

    def _layer2(self, net: OvnkNetwork, node: str, i: int, gr: str) -> dict[str, str]:
        ls, tr = net.scoped(LAYER2_SWITCH), net.scoped(TRANSIT_ROUTER)
        base = net.subnet.split("/")[0].rsplit(".", 1)[0]
        ids = net.ids(role=False)
        self.c("lsp-add", ls, f"k8s-{net.scoped(node)}")
        self.c("lsp-set-addresses", f"k8s-{net.scoped(node)}",
               f"{_mac(net, i, 2)} {base}.{1 + i}")  # fmt: skip
        pods = self._pods(net, ls, i, base, first=10 * i)
        # gateway.go createGWRouterPeerRouterPort: the GR <-> transit router link
        join_ip = f"{net.join}.0.{1 + i}"
        self._gateway_router(net, node, gr, join_ip)
        gr_ip, tr_ip = f"100.88.0.{4 * i + 1}", f"100.88.0.{4 * i}"
        self.lrp(gr, f"rtotr-{gr}", _mac(net, i, 3), f"{gr_ip}/31", f"{join_ip}/16", ids=ids)
        self.lrp(tr, f"trtor-{gr}", _mac(net, i, 4), f"{tr_ip}/31", ids=ids)
        self.c("set", "Logical_Router_Port", f"rtotr-{gr}", f"peer=trtor-{gr}")
        self.c("set", "Logical_Router_Port", f"trtor-{gr}", f"peer=rtotr-{gr}")
        self.c("lr-route-add", gr, net.subnet, tr_ip, f"rtotr-{gr}")
        self.c("lr-nat-add", gr, "snat", self.node_ip, net.subnet)
        return pods

    def _pods(
        self, net: OvnkNetwork, switch: str, i: int, base: str, first: int = 0
    ) -> dict[str, str]:
        """Two pods: ``<ns>_<pod>`` (util.GetLogicalPortName), on a UDN prefixed with its
        NAD's (util.GetUserDefinedNetworkLogicalPortName)."""
        ns = "default" if net.default else net.nad.split("/")[0]
        pods = {}
        for k in range(2):
            lsp = f"{_prefix(net.nad) if net.nad else ''}{ns}_pod-{i}-{k}"
            ip = f"{base}.{first + 5 + k}"
            self.c("lsp-add", switch, lsp)
            self.c("lsp-set-addresses", lsp, f"{_mac(net, i, 5 + k)} {ip}")
            pods[lsp] = ip
        return pods

    def _external(
        self, net: OvnkNetwork, node: str, i: int, gr: str, node_ip: str, tor: str
    ) -> None:
        """gateway.go addExternalSwitch; bridgeconfig.go names the localnet port."""
        ext, ids = f"ext_{net.scoped(node)}", net.ids(role=False)
        self.switch(ext, ids=net.ids())
        port_ids = ["gateway-physical-ip=yes"] if net.default else ids
        self.lrp(gr, f"rtoe-{gr}", _mac(net, i, 0x10), node_ip, ids=port_ids)
        garp = ["nat-addresses=router", "exclude-lb-vips-from-garp=true"] if net.default else []
        self.lsp_router(ext, f"etor-{gr}", f"rtoe-{gr}", *garp, ids=ids)
        localnet = f"breth0_{net.scoped(node)}"
        self.c("lsp-add", ext, localnet)
        self.c("lsp-set-type", localnet, "localnet")
        self.c("lsp-set-addresses", localnet, "unknown")
        self.c("lsp-set-options", localnet, "network_name=physnet")
        self.c("lr-route-add", gr, "0.0.0.0/0", tor, f"rtoe-{gr}")

    def _egress_ip(self, node: str, eip: str, pod: str, pod_ip: str) -> None:
        """egressip.go createNATRuleOps: one SNAT per (pod, EgressIP) on the egress node's GR
        (default network; a UDN's EgressIP is SNATed on the host: no NB row)."""
        name = f"eip-{eip.replace('.', '-')}_{pod}"
        self.n += 1
        ids = [f"{OWNER_CONTROLLER}={DEFAULT_CONTROLLER}", f"{OWNER_TYPE}=EgressIP",
               f"{OBJECT_NAME}={name}", "ip-family=ip4",
               f"{OBJECT_ID}={DEFAULT_CONTROLLER}:EgressIP:{name}:ip4"]  # fmt: skip
        self.c(f"--id=@eip{self.n}", "create", "NAT", "type=snat", f"external_ip={eip}",
               f"logical_ip={pod_ip}", f"logical_port=k8s-{node}",
               *(f"external_ids:{_q(i)}" for i in ids))  # fmt: skip
        self.c("add", "Logical_Router", f"GR_{node}", "nat", f"@eip{self.n}")


def _node_subnet(net: OvnkNetwork, i: int) -> str:
    return net.subnet.replace(".0.0/16", f".{i}.0/24")


def _mac(net: OvnkNetwork, i: int, host: int) -> str:
    return f"0a:58:{NETWORKS.index(net):02x}:{i:02x}:00:{host:02x}"


def _q(item: str) -> str:
    """An ``external_ids`` key=value for ovn-nbctl (keys with ':' or '/' quoted)."""
    key, value = item.split("=", 1)
    return f'"{key}"="{value}"'
