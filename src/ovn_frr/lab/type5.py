"""EVPN type-5 (symmetric IRB) in the lab: node1 (OVN, FRR, the agent) and a remote VTEP
``vtep1`` (FRR, VRF ``red`` with L3VNI 1000, a host behind it) on an underlay through ``tor1``
(the route reflector, as in :mod:`ovn_frr.lab.evpn`). Needs a kernel with VRFs (the kernel
tier).

On node1 the agent makes VRF ``red`` and its L3VNI devices (``[vrfs.red] l3vni``); OVN's
gateway router ``GR_red`` names the VRF and reaches it through an OVS bridge ``br-red`` whose
internal port the agent puts in the VRF (``[vrfs.red] interfaces``): the way into OVN on
versions without EVPN of their own.

    vm-red ── GR_red ── br-red (node1, VRF red) ══ L3VNI 1000 ══ vtep1 (VRF red) ── host5
    10.0.0.5  169.254.100.3    169.254.100.1                                       198.51.100.10
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from ovn_frr.lab.evpn import ASN, TX_OFF, Host, _bgp_common, plug, route_reflector, veth_host
from ovn_frr.lab.lab import Lab
from ovn_frr.lab.proc import LabError, run
from ovn_frr.lab.spec import LabSpec, LinkSpec, NodeSpec, PeerSpec

VRF = "red"
L3VNI = 1000
VTEP_TABLE = 1001
#: the transit between node1's VRF and the gateway router (host .1, router .3)
TRANSIT = ipaddress.IPv4Network("169.254.100.0/24")
GATEWAY = str(TRANSIT.network_address + 3)
TENANT = "10.0.0.0/24"
HOST_NET = "198.51.100.0/24"
HOST5 = Host("host5", "0a:00:00:00:05:10", "198.51.100.10", "")
VM5 = Host("vm-red", "02:00:0a:00:64:05", "10.0.0.5", "")


def type5_spec() -> LabSpec:
    return LabSpec(
        nodes=(NodeSpec("node1", bgp=False, chassis=True),),
        peers=(PeerSpec("tor1", ASN, bgp=False), PeerSpec("vtep1", ASN, bgp=False)),
        links=(LinkSpec("node1", "tor1"), LinkSpec("vtep1", "tor1")),
    )


def node_config(lab: Lab) -> str:
    """node1's agent: iBGP with l2vpn evpn to tor1, VRF red with its L3VNI and transit port."""
    tor = lab.link("node1", "tor1").peer_v4
    ovs = lab.rundir / "node1" / "ovs"  # the Chassis' run directory (EVPN's bridges)
    return (
        f'[[bgp.neighbors]]\naddress = "{tor}"\nremote_as = "internal"\n'
        'address_families = ["ipv4-unicast", "l2vpn-evpn"]\n'
        "keepalive = 1\nhold = 3\nconnect_retry = 1\n\n"
        f'[evpn]\nlocal_ip = "{lab.spec.router_id("node1")}"\ncheck_ms = 1000\n\n'
        f'[vrfs.{VRF}]\nl3vni = {L3VNI}\ninterfaces = ["br-{VRF}"]\n\n'
        f'[ovs]\ndb = "unix:{ovs}/conf.sock"\nrundir = "{ovs}"\n'
    )


def vtep(lab: Lab, member: str = "vtep1") -> None:
    """A plain FRR VTEP with VRF red, its L3VNI (bridge = SVI in the VRF, VXLAN on it) and
    HOST5 behind it, announced as a type-5 route."""
    ns = lab.netns(member)
    local = str(lab.spec.router_id(member))
    br, vx = f"br{L3VNI}", f"vxlan{L3VNI}"
    for argv in (
        ["ip", "link", "add", VRF, "type", "vrf", "table", str(VTEP_TABLE)],
        ["ip", "link", "set", VRF, "up"],
        ["ip", "link", "add", br, "type", "bridge"],
        ["ip", "link", "set", br, "master", VRF, "addrgenmode", "none"],
        ["ip", "link", "add", vx, "type", "vxlan", "id", str(L3VNI), "local", local,
         "dstport", "4789", "nolearning"],
        ["ip", "link", "set", vx, "master", br, "addrgenmode", "none"],
        ["bridge", "link", "set", "dev", vx, "learning", "off", "neigh_suppress", "on"],
        ["ip", "link", "set", vx, "up"],
        ["ip", "link", "set", br, "up"],
        ["sysctl", "-qw", "net.ipv4.ip_forward=1"],
    ):  # fmt: skip
        run(argv, netns=ns)
    port = veth_host(lab, HOST5, member, "h-", ipv6=False)
    gw = str(ipaddress.ip_network(HOST_NET).network_address + 1)
    run(["ip", "link", "set", port, "master", VRF], netns=ns)
    run(["ip", "addr", "add", f"{gw}/24", "dev", port], netns=ns)
    run(["ip", "link", "set", port, "up"], netns=ns)
    run(["ip", "route", "add", "default", "via", gw], netns=lab.netns(HOST5.name))
    tor = str(lab.link(member, "tor1").peer_v4)
    lines = [f"vrf {VRF}", f" vni {L3VNI}", "exit-vrf", *_bgp_common(lab, member)]
    lines += [f" neighbor {tor} remote-as internal", f" neighbor {tor} timers connect 1",
              f" neighbor {tor} advertisement-interval 0",
              " address-family ipv4 unicast", f"  network {local}/32",
              f"  neighbor {tor} activate", " exit-address-family",
              " address-family l2vpn evpn", f"  neighbor {tor} activate",
              "  advertise-all-vni", " exit-address-family", "exit",
              f"router bgp {ASN} vrf {VRF}", " no bgp network import-check",
              " address-family ipv4 unicast", f"  network {HOST_NET}", " exit-address-family",
              " address-family l2vpn evpn", "  advertise ipv4 unicast", " exit-address-family",
              "exit"]  # fmt: skip
    lab.frr[member].apply("\n".join(lines) + "\n")


def node_side(lab: Lab, node: str = "node1") -> None:
    """OVN's side on ``node``: GR_red pinned there, its uplink on the transit through the OVS
    bridge br-red (whose internal port the agent puts in VRF red), a tenant switch with vm-red."""
    assert lab.ovn is not None
    chassis, ns, br = lab.chassis[node], lab.netns(node), f"br-{VRF}"
    chassis.vsctl("--may-exist", "add-br", br, "--", "set", "Bridge", br, "datapath_type=netdev")
    run(["ip", "addr", "add", f"{TRANSIT.network_address + 1}/{TRANSIT.prefixlen}", "dev", br],
        netns=ns)  # fmt: skip
    run(["ip", "link", "set", br, "up"], netns=ns)
    run([sys.executable, "-c", TX_OFF, br], netns=ns)
    # the host routes between OVN and the L3VNI in the VRF (FRR leaves forwarding as it is)
    run(["sysctl", "-qw", "net.ipv4.ip_forward=1"], netns=ns)
    chassis.vsctl("set", "Open_vSwitch", ".", f"external_ids:ovn-bridge-mappings=phys-{VRF}:{br}")
    gr = f"GR_{VRF}"
    cmds = [
        ["lr-add", gr],
        ["set", "Logical_Router", gr, f"options:chassis={node}", "options:dynamic-routing=true",
         f"options:dynamic-routing-vrf-name={VRF}",
         "options:dynamic-routing-redistribute=connected",
         f"options:dynamic-routing-v4-prefix-nexthop={GATEWAY}"],
        ["lrp-add", gr, f"rtoe-{gr}", "02:00:0a:ff:64:03", f"{GATEWAY}/{TRANSIT.prefixlen}"],
        ["set", "Logical_Router_Port", f"rtoe-{gr}", f"options:dynamic-routing-port-name={br}"],
        ["lrp-add", gr, f"rtos-{gr}", "02:00:0a:00:64:01", "10.0.0.1/24"],
        ["ls-add", f"ext-{VRF}"],
        ["lsp-add", f"ext-{VRF}", f"ln-{VRF}"],
        ["lsp-set-type", f"ln-{VRF}", "localnet"],
        ["lsp-set-addresses", f"ln-{VRF}", "unknown"],
        ["lsp-set-options", f"ln-{VRF}", f"network_name=phys-{VRF}"],
        ["lsp-add", f"ext-{VRF}", f"etor-{gr}"],
        ["lsp-set-type", f"etor-{gr}", "router"],
        ["lsp-set-addresses", f"etor-{gr}", "router"],
        ["lsp-set-options", f"etor-{gr}", f"router-port=rtoe-{gr}"],
        ["ls-add", f"net-{VRF}"],
        ["lsp-add", f"net-{VRF}", f"stor-{gr}"],
        ["lsp-set-type", f"stor-{gr}", "router"],
        ["lsp-set-addresses", f"stor-{gr}", "router"],
        ["lsp-set-options", f"stor-{gr}", f"router-port=rtos-{gr}"],
        ["lsp-add", f"net-{VRF}", VM5.name],
        ["lsp-set-addresses", VM5.name, f"{VM5.mac} {VM5.ip}"],
    ]  # fmt: skip
    args: list[str] = []
    for cmd in cmds:
        args += ["--", *cmd]
    lab.ovn.nbctl(*args[1:])
    plug(lab, VM5, node, ipv6=False)
    run(["ip", "route", "add", "default", "via", "10.0.0.1"], netns=lab.netns(VM5.name))


def build(lab: Lab) -> None:
    """The scenario on a lab of :func:`type5_spec` that is up."""
    route_reflector(lab, "tor1")
    vtep(lab)
    node_side(lab)


def type5_routes(lab: Lab, member: str) -> dict[str, list[dict[str, Any]]]:
    """``member``'s EVPN type-5 routes: prefix -> paths (next hop, router MAC, VNI, ...)."""
    data = lab.frr[member].show("show bgp l2vpn evpn route type prefix json")
    out: dict[str, list[dict[str, Any]]] = {}
    for rd, routes in data.items():
        if not isinstance(routes, dict) or ":" not in rd:
            continue
        for key, entry in routes.items():
            if not isinstance(entry, dict):
                continue
            for path in entry.get("paths", []):
                for p in path if isinstance(path, list) else [path]:
                    pfx = f"{p.get('ip')}/{p.get('ipLen')}" if p.get("ip") else key
                    out.setdefault(pfx, []).append(p)
    return out


def vrf_routes(lab: Lab, member: str, vrf: str = VRF) -> dict[str, dict[str, Any]]:
    """The kernel's routes in ``vrf`` of ``member``: destination -> the route."""
    text = run(["ip", "-json", "route", "show", "vrf", vrf], netns=lab.netns(member))
    return {str(r.get("dst")): r for r in json.loads(text or "[]")}


#: counts the VXLAN packets (UDP 4789, IPv4 underlay) a device receives, by VNI, for a while
_SNIFF = """
import json, socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
end, seen = time.monotonic() + float(sys.argv[2]), {}
print("ready", flush=True)
while time.monotonic() < end:
    try:
        pkt = s.recv(65535)
    except socket.timeout:
        continue
    if len(pkt) < 50 or pkt[12:14] != b"\\x08\\x00" or pkt[23] != 17:
        continue
    udp = 14 + (pkt[14] & 15) * 4
    if struct.unpack("!H", pkt[udp + 2:udp + 4])[0] == 4789:
        vni = int.from_bytes(pkt[udp + 12:udp + 15], "big")
        seen[vni] = seen.get(vni, 0) + 1
print(json.dumps(seen), flush=True)
"""


def vxlan_on_the_wire(
    lab: Lab, member: str, dev: str, seconds: float, action: Callable[[], object]
) -> dict[int, int]:
    """Run ``action`` while ``dev`` of ``member`` is watched: VXLAN packets seen, by VNI."""
    proc = subprocess.Popen(
        ["ip", "netns", "exec", lab.netns(member), sys.executable, "-c", _SNIFF, dev,
         str(seconds)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise LabError(f"sniffer on {member}/{dev} did not start")
        action()
        out, _ = proc.communicate(timeout=seconds + 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return {int(k): v for k, v in json.loads(out.strip().splitlines()[-1]).items()}
