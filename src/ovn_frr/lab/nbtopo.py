"""OVN NB layouts of real deployments, built in a lab's NB with ovn-nbctl.

``openshift_node``: ovn-kubernetes (interconnect mode) for one node: ``ovn_cluster_router`` with the
node switch (pods) and the ``join`` switch, the gateway router ``GR_<node>`` pinned to the node
with one external port per uplink (``rtoe-GR_<node>``, ``rtoe2-...``), SNAT and an EgressIP-style
NAT. Names, port prefixes and options are those ovn-kubernetes writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ovn_frr.lab.lab import Lab


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

    c("--may-exist", "lr-add", "ovn_cluster_router")
    c("--may-exist", "ls-add", "join")
    c("lrp-add", "ovn_cluster_router", "rtoj-ovn_cluster_router", "0a:58:64:40:00:01",
      "100.64.0.1/16")  # fmt: skip
    attach("join", "jtor-ovn_cluster_router", "rtoj-ovn_cluster_router")
    # node switch with pods
    c("ls-add", node)
    c("lrp-add", "ovn_cluster_router", f"rtos-{node}", "0a:58:0a:f4:01:01", f"{gw_ip}/{plen}")
    attach(node, f"stor-{node}", f"rtos-{node}")
    pod_ips = {}
    for i in range(pods):
        name = f"default_pod-{i}"
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
    c("lrp-add", gr, f"rtoj-{gr}", "0a:58:64:40:00:02", "100.64.0.2/16")
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
    c("--policy=src-ip", "lr-route-add", "ovn_cluster_router", node_subnet, "100.64.0.2")
    # SNAT of the node's pods to the node IP, and an EgressIP for the first pod
    first = lab.links(node)[0]
    c("lr-nat-add", gr, "snat", str(first.v4.ip), node_subnet)
    c("lr-nat-add", gr, "snat", egress_ip, next(iter(pod_ips.values())))
    args: list[str] = []
    for cmd in cmds:
        args += ["--", *cmd]
    nb(*args[1:])
    return OpenShiftNode(node, gr, node_subnet, pod_ips, egress_ip, tuple(uplinks))
