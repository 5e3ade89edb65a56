"""VRF-Lite with a data path in the lab: ovn-kubernetes' shared gateway on each VRF link.

On the node, a VRF link's interface goes into an OVS bridge ``br-<vrf>`` (userspace datapath)
and the node's link addresses move to the bridge's internal port, enslaved to the VRF: FRR keeps
its sessions on the same addresses. OVN reaches the link through a localnet port mapped to the
bridge (``ovn-bridge-mappings`` ``phys-<vrf>:br-<vrf>``); its gateway router has addresses of
its own there (:func:`ovn_frr.lab.nbtopo.vrf_lite_node` with ``gateway=True``), so a ToR's next
hop is on the router's uplink and the router's prefixes go out with the router as next hop.

Behind each ToR VRF, a host ``h<vrf>`` on a subnet of the VRF (the same in every VRF: the
tenants overlap), and in OVN a VM per tenant switch plugged into br-int.

    vm-red ── GR_red ── ln-red ─ br-red ─ to-tor1-red ═══ tor1 (VRF red) ── hred
    10.0.0.5  .3 on the link    (node1: .1 on br-red, VRF red)   .2        198.51.100.10
"""

from __future__ import annotations

import ipaddress
import sys

from ovn_frr.lab.evpn import TX_OFF, Host, plug, veth_host
from ovn_frr.lab.lab import Lab
from ovn_frr.lab.nbtopo import VrfTenant, vrf_lite_node
from ovn_frr.lab.proc import run

#: the subnet behind each ToR VRF, and its hosts' number in it (the ToR is .1)
HOST_NET = ipaddress.IPv4Network("198.51.100.0/24")
HOST_NUM = 10


def bridge_of(vrf: str) -> str:
    return f"br-{vrf}"


def shared_gateway(lab: Lab, node: str, vrf: str) -> str:
    """Put ``node``'s links in ``vrf`` behind the OVS bridge ``br-<vrf>``; returns its name."""
    ns, chassis, br = lab.netns(node), lab.chassis[node], bridge_of(vrf)
    links = lab.links_by_vrf(node).get(vrf, [])
    assert len(links) == 1, f"one link per VRF on {node}: {links}"
    la = links[0]
    chassis.vsctl("--may-exist", "add-br", br, "--", "set", "Bridge", br, "datapath_type=netdev")
    run(["ip", "addr", "flush", "dev", la.ifname], netns=ns)
    chassis.vsctl("--may-exist", "add-port", br, la.ifname)
    run(["ip", "link", "set", br, "master", vrf], netns=ns)
    for knob in ("accept_dad=0", "accept_ra=0", "autoconf=0"):
        run(["sysctl", "-qw", f"net.ipv6.conf.{br}.{knob}"], netns=ns)
    run(["ip", "addr", "add", str(la.v4), "dev", br], netns=ns)
    run(["ip", "addr", "add", str(la.v6), "dev", br, "nodad"], netns=ns)
    run(["ip", "link", "set", br, "up"], netns=ns)
    # OVS's userspace datapath does not complete offloaded checksums: not from the node's own
    # stack (BGP, BFD through br-<vrf>), not from the ToR's (its end of the link)
    run([sys.executable, "-c", TX_OFF, br], netns=ns)
    run([sys.executable, "-c", TX_OFF, lab.link(la.remote, node, vrf).ifname],
        netns=lab.netns(la.remote))  # fmt: skip
    mappings = _mappings(lab, node)
    mappings[f"phys-{vrf}"] = br
    chassis.vsctl("set", "Open_vSwitch", ".", "external_ids:ovn-bridge-mappings="
                  + ",".join(f"{k}:{v}" for k, v in sorted(mappings.items())))  # fmt: skip
    return br


def shared_gateway_tenants(lab: Lab, node: str = "node1", peer: str = "tor1"
                           ) -> dict[str, VrfTenant]:  # fmt: skip
    """VRF-Lite wired as ovn-kubernetes' shared gateway (:func:`vrf_lite_node` with
    ``gateway``): per VRF of ``node`` its links behind ``br-<vrf>``, a host behind ``peer``'s
    VRF and the tenant's VM; the tenants by VRF."""
    tenants = {t.vrf: t for t in vrf_lite_node(lab, node, gateway=True)}
    for i, (vrf, tenant) in enumerate(sorted(tenants.items())):
        shared_gateway(lab, node, vrf)
        tor_host(lab, peer, vrf, f"0a:00:00:00:03:{i:02x}")
        tenant_vm(lab, node, tenant)
    return tenants


def wait_vrf_sessions(lab: Lab, vrfs: tuple[str, ...], node: str = "node1",
                      peer: str = "tor1") -> None:  # fmt: skip
    """Until ``peer`` has its session with ``node`` up in each of ``vrfs``."""
    for vrf in vrfs:
        la = lab.link(peer, node, vrf)
        lab.frr[peer].wait_established([str(la.peer_v4)], timeout=180, vrf=vrf)


def _mappings(lab: Lab, node: str) -> dict[str, str]:
    text = lab.chassis[node].vsctl("--if-exists", "get", "Open_vSwitch", ".",
                                   "external_ids:ovn-bridge-mappings").strip('"')  # fmt: skip
    return dict(x.split(":", 1) for x in text.split(",") if ":" in x)


def tor_host(lab: Lab, peer: str, vrf: str, mac: str) -> Host:
    """A host on :data:`HOST_NET` behind ``peer``'s VRF ``vrf`` (the peer is .1)."""
    h = Host(f"h{vrf}", mac, str(HOST_NET.network_address + HOST_NUM), "")
    port = veth_host(lab, h, peer, "h-", ipv6=False)
    pns = lab.netns(peer)
    run(["sysctl", "-qw", "net.ipv4.ip_forward=1"], netns=pns)  # a router now, not just BGP
    run(["ip", "link", "set", port, "master", vrf], netns=pns)
    run(["ip", "addr", "add", f"{HOST_NET.network_address + 1}/{HOST_NET.prefixlen}",
         "dev", port], netns=pns)  # fmt: skip
    run(["ip", "link", "set", port, "up"], netns=pns)
    run(["ip", "route", "add", "default", "via", str(HOST_NET.network_address + 1)],
        netns=lab.netns(h.name))  # fmt: skip
    return h


def tenant_vm(lab: Lab, node: str, tenant: VrfTenant) -> Host:
    """The tenant's VM port, plugged on ``node``, its default route via the router."""
    name, mac, ip = tenant.vm
    h = Host(name, mac, ip, "")
    plug(lab, h, node, ipv6=False)
    gw = ipaddress.ip_network(tenant.subnet).network_address + 1
    run(["ip", "route", "add", "default", "via", str(gw)], netns=lab.netns(name))
    return h


def diagnose(lab: Lab, node: str, peer: str, vrf: str) -> str:
    """What a failed ping in ``vrf`` needs looked at: counters on both ends of the link, the
    bridge's ports, neighbours, OVN's MAC bindings and the node's OVS/OVN logs."""
    from ovn_frr.lab.ovn import _env  # noqa: PLC0415 - the lab's own OVS environment

    chassis = lab.chassis[node]
    env = _env(chassis.rundir)
    link = lab.link(node, peer, vrf)
    parts = []

    def add(title: str, argv: list[str], netns: str | None = None, use_env: bool = False) -> None:
        out = run(argv, netns=netns, env=env if use_env else None, check=False)
        parts.append(f"--- {title}\n{out.strip()}")

    add(f"{node} link", ["ip", "-s", "link", "show", link.ifname], lab.netns(node))
    add(f"{node} neigh {vrf}", ["ip", "neigh", "show", "vrf", vrf], lab.netns(node))
    add(f"{peer} link", ["ip", "-s", "link", "show", lab.link(peer, node, vrf).ifname],
        lab.netns(peer))  # fmt: skip
    add(f"{peer} neigh {vrf}", ["ip", "neigh", "show", "vrf", vrf], lab.netns(peer))
    add("br ports", ["ovs-ofctl", "dump-ports", bridge_of(vrf)], use_env=True)
    add("br flows", ["ovs-ofctl", "dump-flows", bridge_of(vrf)], use_env=True)
    if lab.ovn is not None:
        parts.append("--- MAC bindings\n" + lab.ovn.sbctl("list", "MAC_Binding"))
        parts.append("--- port bindings\n" + lab.ovn.sbctl("--columns=logical_port,chassis,type",
                                                          "list", "Port_Binding"))  # fmt: skip
    for log in ("ovs-vswitchd.log", "ovn-controller.log"):
        path = chassis.rundir / log
        if path.exists():
            parts.append(f"--- {log}\n" + "\n".join(path.read_text().splitlines()[-30:]))
    return "\n".join(parts)
