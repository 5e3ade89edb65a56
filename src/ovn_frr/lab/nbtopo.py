"""OVN NB layouts of real deployments, built in a lab's NB with ovn-nbctl.

``openshift_node``: ovn-kubernetes (interconnect mode) for one node: ``ovn_cluster_router`` with the
node switch (pods) and the ``join`` switch, the gateway router ``GR_<node>`` pinned to the node
with one external port per uplink (``rtoe-GR_<node>``, ``rtoe2-...``), SNAT and an EgressIP-style
NAT. Names, port prefixes and options are those ovn-kubernetes writes.

``openstack_router``: a Neutron router as the OVN ML2 driver writes it (distributed gateway
port, tenant network with VMs, distributed and centralized floating IPs, an Octavia LB).
Without ovn-controllers in the lab, bindings are set with ``ovn-sbctl lsp-bind``. Each
builder takes ``nbctl``: where its one ovn-nbctl run goes (default: the lab's NB).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ovn_frr.lab.lab import Lab

#: runs ovn-nbctl with these arguments (default: the lab's NB; the differential test gives one
#: that runs them on OVN 26.03's NB too)
Nbctl = Callable[..., str]


@dataclass(frozen=True, slots=True)
class OpenShiftNode:
    node: str
    gr: str
    node_subnet: str
    pods: dict[str, str]  # LSP name -> IPv4
    egress_ip: str
    uplinks: tuple[str, ...]  # GR external port names, in link order


def openshift_node(  # noqa: PLR0915 - a linear list of ovn-nbctl commands
    lab: Lab,
    node: str = "node1",
    node_subnet: str = "10.244.1.0/24",
    pods: int = 2,
    egress_ip: str = "172.20.0.10",
    dynamic_routing: bool = True,
    port_names: bool = True,
    nbctl: Nbctl | None = None,
) -> OpenShiftNode:
    """Build the node's part of an ovn-kubernetes NB. With ``port_names``, each GR uplink
    carries ``dynamic-routing-port-name=<host interface>`` (needed for link-local next hops)."""
    assert lab.ovn is not None
    nb = lab.ovn.nbctl
    gr = f"GR_{node}"
    base = node_subnet.rsplit(".", 1)[0]
    gw_ip = f"{base}.1"
    plen = node_subnet.split("/")[1]
    cmds: list[list[str]] = []

    def c(*args: str) -> None:
        cmds.append(list(args))

    def attach(switch: str, lsp: str, lrp: str) -> None:
        """The switch side of a router port."""
        c("lsp-add", switch, lsp)
        c("lsp-set-type", lsp, "router")
        c("lsp-set-addresses", lsp, "router")
        c("lsp-set-options", lsp, f"router-port={lrp}")

    # the cluster router and the join switch are shared by every node
    c("--may-exist", "lr-add", "ovn_cluster_router")
    c("--may-exist", "ls-add", "join")
    c("--may-exist", "lrp-add", "ovn_cluster_router", "rtoj-ovn_cluster_router",
      "0a:58:64:40:00:01", "100.64.0.1/16")  # fmt: skip
    c("--may-exist", "lsp-add", "join", "jtor-ovn_cluster_router")
    c("lsp-set-type", "jtor-ovn_cluster_router", "router")
    c("lsp-set-addresses", "jtor-ovn_cluster_router", "router")
    c("lsp-set-options", "jtor-ovn_cluster_router", "router-port=rtoj-ovn_cluster_router")
    # each node's gateway router has a join address of its own (node1: 100.64.0.2)
    number = int("".join(ch for ch in node if ch.isdigit()) or "1")
    join_ip = f"100.64.0.{1 + number}"
    # node switch with pods
    c("ls-add", node)
    c("lrp-add", "ovn_cluster_router", f"rtos-{node}", "0a:58:0a:f4:01:01", f"{gw_ip}/{plen}")
    attach(node, f"stor-{node}", f"rtos-{node}")
    pod_ips = {}
    for i in range(pods):
        name = f"default_pod-{i}" if node == "node1" else f"default_pod-{node}-{i}"
        ip = f"{base}.{5 + i}"
        pod_ips[name] = ip
        c("lsp-add", node, name)
        c("lsp-set-addresses", name, f"0a:58:0a:f4:01:{5 + i:02x} {ip}")
    # gateway router
    c("lr-add", gr)
    opts = [f"options:chassis={node}", "options:always_learn_from_arp_request=false"]
    if dynamic_routing:
        opts.append("options:dynamic-routing=true")
    c("set", "Logical_Router", gr, *opts)
    c("lrp-add", gr, f"rtoj-{gr}", f"0a:58:64:40:00:{1 + number:02x}", f"{join_ip}/16")
    attach("join", f"jtor-{gr}", f"rtoj-{gr}")
    uplinks = []
    for n, la in enumerate(lab.links(node)):
        sfx = "" if n == 0 else str(n + 1)
        port = f"rtoe{sfx}-{gr}"
        ext = f"ext{sfx}_{node}"
        uplinks.append(port)
        c("lrp-add", gr, port, f"02:00:0a:ff:{la.index:02x}:01", str(la.v4), str(la.v6))
        if port_names:
            c("set", "Logical_Router_Port", port, f"options:dynamic-routing-port-name={la.ifname}")
        c("ls-add", ext)
        attach(ext, f"etor{sfx}-{gr}", port)
        c("lsp-add", ext, f"breth{n}_{node}")
        c("lsp-set-type", f"breth{n}_{node}", "localnet")
        c("lsp-set-addresses", f"breth{n}_{node}", "unknown")
        c("lsp-set-options", f"breth{n}_{node}", f"network_name=physnet{n}")
    # routing between the cluster router and the GR, as ovn-kubernetes sets it up
    c("lr-route-add", gr, "10.244.0.0/16", "100.64.0.1")
    c("--policy=src-ip", "lr-route-add", "ovn_cluster_router", node_subnet, join_ip)
    # SNAT of the node's pods to the node IP, and an EgressIP for the first pod
    first = lab.links(node)[0]
    c("lr-nat-add", gr, "snat", str(first.v4.ip), node_subnet)
    c("lr-nat-add", gr, "snat", egress_ip, next(iter(pod_ips.values())))
    args: list[str] = []
    for cmd in cmds:
        args += ["--", *cmd]
    (nbctl or nb)(*args[1:])
    return OpenShiftNode(node, gr, node_subnet, pod_ips, egress_ip, tuple(uplinks))


@dataclass(frozen=True, slots=True)
class OpenStackRouter:
    router: str
    gateway_port: str  # the distributed gateway port (its chassisredirect is cr-<name>)
    tenant_subnet: str
    vms: dict[str, str]  # LSP name -> IPv4
    #: floating IPs: external IP -> (VM port, distributed?)
    fips: dict[str, tuple[str, bool]]
    snat_ip: str
    lb_vip: str
    lb_fip: str


def openstack_router(  # noqa: PLR0915 - a linear list of ovn-nbctl commands
    lab: Lab,
    gateway_chassis: tuple[str, ...] = ("node1", "node2"),
    tenant_subnet: str = "10.100.0.0/24",
    gateway_ip: str = "172.24.4.10/24",
    nbctl: Nbctl | None = None,
) -> OpenStackRouter:
    """A Neutron router as the OVN ML2 driver writes it: ``neutron-<id>`` with a gateway port on
    a provider network (localnet) scheduled on ``gateway_chassis`` (a distributed gateway port:
    northd creates the ``cr-lrp-...`` binding), a tenant network with three VMs, SNAT to the
    gateway IP, floating IPs (two distributed, one centralized), and an Octavia (OVN provider)
    load balancer on the router and the tenant switch with a floating IP on its VIP.
    ``gateway_ip``: the gateway port's address (on a lab link: the ToR's routes can be
    imported through it)."""
    assert lab.ovn is not None
    rid, ext_net, net = "5e1f0a1c", "b7c2e0d4", "c3d9a8f1"
    router = f"neutron-{rid}"
    gw = f"lrp-{rid}-gw"
    tenant_lrp = f"lrp-{rid}-t"
    base = tenant_subnet.rsplit(".", 1)[0]
    plen = tenant_subnet.split("/")[1]
    cmds: list[list[str]] = []

    def c(*args: str) -> None:
        cmds.append(list(args))

    def router_port(switch: str, lsp: str, lrp: str) -> None:
        c("lsp-add", switch, lsp)
        c("lsp-set-type", lsp, "router")
        c("lsp-set-addresses", lsp, "router")
        c("lsp-set-options", lsp, f"router-port={lrp}")

    c("lr-add", router)
    c("set", "Logical_Router", router, f"external_ids:neutron\\:router_name=router-{rid}")
    # provider network with the gateway port
    c("ls-add", f"neutron-{ext_net}")
    c("lsp-add", f"neutron-{ext_net}", f"provnet-{ext_net}")
    c("lsp-set-type", f"provnet-{ext_net}", "localnet")
    c("lsp-set-addresses", f"provnet-{ext_net}", "unknown")
    c("lsp-set-options", f"provnet-{ext_net}", "network_name=physnet1")
    c("lrp-add", router, gw, "fa:16:3e:00:00:01", gateway_ip)
    for prio, chassis in enumerate(gateway_chassis):
        c("lrp-set-gateway-chassis", gw, chassis, str(len(gateway_chassis) - prio))
    router_port(f"neutron-{ext_net}", f"{gw}-lsp", gw)
    # tenant network with VMs
    c("ls-add", f"neutron-{net}")
    c("lrp-add", router, tenant_lrp, "fa:16:3e:00:01:01", f"{base}.1/{plen}")
    router_port(f"neutron-{net}", f"{tenant_lrp}-lsp", tenant_lrp)
    vms = {}
    for i in range(3):
        name = f"vm{i}-port"
        vms[name] = f"{base}.{10 + i}"
        c("lsp-add", f"neutron-{net}", name)
        c("lsp-set-addresses", name, f"fa:16:3e:00:02:{10 + i:02x} {vms[name]}")
    # SNAT to the gateway IP, floating IPs
    snat = gateway_ip.split("/", maxsplit=1)[0]
    c("lr-nat-add", router, "snat", snat, tenant_subnet)
    fips = {"172.24.4.101": ("vm0-port", True), "172.24.4.102": ("vm1-port", True),
            "172.24.4.103": ("vm2-port", False)}  # fmt: skip
    for fip, (port, distributed) in fips.items():
        if distributed:
            mac = f"fa:16:3e:00:03:{fip.rsplit('.', 1)[1][-2:]}"
            c("lr-nat-add", router, "dnat_and_snat", fip, vms[port], port, mac)
        else:
            c("lr-nat-add", router, "dnat_and_snat", fip, vms[port])
    # Octavia's OVN provider: one Load_Balancer on the router and the tenant switch
    vip, lb_fip = f"{base}.100", "172.24.4.110"
    lb = "lb-0d5e7a2b"
    c("lb-add", lb, f"{vip}:80", f"{vms['vm0-port']}:8080,{vms['vm1-port']}:8080", "tcp")
    c("lr-lb-add", router, lb)
    c("ls-lb-add", f"neutron-{net}", lb)
    c("lr-nat-add", router, "dnat_and_snat", lb_fip, vip)
    args: list[str] = []
    for cmd in cmds:
        args += ["--", *cmd]
    (nbctl or lab.ovn.nbctl)(*args[1:])
    return OpenStackRouter(router, gw, tenant_subnet, vms, fips, snat, vip, lb_fip)


@dataclass(frozen=True, slots=True)
class VrfTenant:
    vrf: str
    router: str
    uplink: str  # the router's port on the VRF's link
    subnet: str  # the tenant network behind the router (the same in every VRF)
    vm: tuple[str, str, str]  # (LSP name, MAC, IPv4)
    #: with ``gateway``: the router's own addresses on the link (its announced next hops)
    gateway_v4: str = ""
    gateway_v6: str = ""


#: the host number of a gateway router on its VRF link (the node is 1, the ToR 2)
GATEWAY_HOST = 3


def vrf_lite_node(
    lab: Lab, node: str = "node1", subnet: str = "10.0.0.0/24", gateway: bool = False
) -> list[VrfTenant]:
    """VRF-Lite, one OVN network per VRF link of ``node``: a gateway router ``GR_<vrf>`` pinned
    to the node with ``dynamic-routing-vrf-name=<vrf>`` and a tenant switch behind it. Every
    tenant uses the same ``subnet`` (they never meet).

    Without ``gateway`` the router's uplink has the node's link addresses and no data path
    (control plane only). With ``gateway`` (see :mod:`ovn_frr.lab.vrflite`, which wires the
    node) the uplink has addresses of its own on the link (host ``GATEWAY_HOST``), reached
    through a localnet port on ``phys-<vrf>``, learns through the host interface ``br-<vrf>``
    and asks for its prefixes to be announced with its own addresses as next hops
    (``dynamic-routing-v4/v6-prefix-nexthop``, OVN 26.03's options)."""
    assert lab.ovn is not None
    net, plen = subnet.split("/")
    base = net.rsplit(".", 1)[0]
    args: list[str] = []
    out = []
    for la in lab.links(node):
        if not la.vrf:
            continue
        vrf, gr = la.vrf, f"GR_{la.vrf}"
        uplink, down, switch, vm = f"rtoe-{gr}", f"rtos-{gr}", f"net-{vrf}", f"vm-{vrf}"
        n = la.index
        vm_mac = f"02:00:0a:00:{n:02x}:05"
        gw4 = gw6 = ""
        if gateway:
            gw4 = str(la.v4.network.network_address + GATEWAY_HOST)
            gw6 = str(la.v6.network.network_address + GATEWAY_HOST)
            nets = [f"{gw4}/{la.v4.network.prefixlen}", f"{gw6}/{la.v6.network.prefixlen}"]
            ext, ln, etor = f"ext-{vrf}", f"ln-{vrf}", f"etor-{gr}"
            cmds = [
                ["ls-add", ext],
                ["lsp-add", ext, ln],
                ["lsp-set-type", ln, "localnet"],
                ["lsp-set-addresses", ln, "unknown"],
                ["lsp-set-options", ln, f"network_name=phys-{vrf}"],
                ["lsp-add", ext, etor],
                ["lsp-set-type", etor, "router"],
                ["lsp-set-addresses", etor, "router"],
                ["lsp-set-options", etor, f"router-port={uplink}"],
            ]
            port_name = f"br-{vrf}"
            nexthops = [f"options:dynamic-routing-v4-prefix-nexthop={gw4}",
                        f"options:dynamic-routing-v6-prefix-nexthop={gw6}"]  # fmt: skip
        else:
            nets, cmds, port_name, nexthops = [str(la.v4)], [], la.ifname, []
        cmds = [
            ["lr-add", gr],
            ["set", "Logical_Router", gr, f"options:chassis={node}",
             "options:dynamic-routing=true", f"options:dynamic-routing-vrf-name={vrf}",
             "options:dynamic-routing-redistribute=connected", *nexthops],
            ["lrp-add", gr, uplink, f"02:00:0a:ff:{n:02x}:01", *nets],
            ["set", "Logical_Router_Port", uplink,
             f"options:dynamic-routing-port-name={port_name}"],
            ["lrp-add", gr, down, f"02:00:0a:00:{n:02x}:01", f"{base}.1/{plen}"],
            ["ls-add", switch],
            ["lsp-add", switch, f"stor-{gr}"],
            ["lsp-set-type", f"stor-{gr}", "router"],
            ["lsp-set-addresses", f"stor-{gr}", "router"],
            ["lsp-set-options", f"stor-{gr}", f"router-port={down}"],
            ["lsp-add", switch, vm],
            ["lsp-set-addresses", vm, f"{vm_mac} {base}.5"],
            *cmds,
        ]  # fmt: skip
        for cmd in cmds:
            args += ["--", *cmd]
        out.append(VrfTenant(vrf, gr, uplink, subnet, (vm, vm_mac, f"{base}.5"), gw4, gw6))
    lab.ovn.nbctl(*args[1:])
    return out
