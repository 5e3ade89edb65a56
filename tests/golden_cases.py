"""Node configs and intents whose rendered FRR config is kept as golden files."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from ovn_frr import config
from ovn_frr.config.convert import frr_settings
from ovn_frr.core.frr_model import FrrModel, desired_frr
from ovn_frr.core.model import Network

GOLDEN = Path(__file__).parent / "golden"
EXAMPLES = Path(__file__).parents[1] / "examples"

BASE = '[bgp]\nasn = 64512\nrouter_id = "192.0.2.10"\n'


def _nets(*prefixes: str) -> list[Network]:
    return [ipaddress.ip_network(p) for p in prefixes]


def cases() -> dict[str, FrrModel]:
    example = config.load(EXAMPLES / "node.toml")
    dual = config.parse(
        BASE
        + '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\n'
        + 'address_families = ["ipv4-unicast", "ipv6-unicast"]\n'
        + '[[bgp.neighbors]]\naddress = "fd00:255::2"\nremote_as = "external"\n'
        + 'password = "s3cret"\nebgp_multihop = 2\nupdate_source = "fd00:255::1"\n'
        + 'description = "tor1-v6"\nconnect_retry = 5\n'
        + 'import_filters = [{ prefix = "2001:db8::/32", le = 64 }]\n'
        + 'export_filters = [{ prefix = "2001:db8:10::/48", le = 64, action = "deny" },'
        + ' { prefix = "::/0", le = 128 }]\n'
        # the same characters as fd00:255::2 in another order: names of its own
        + '[[bgp.neighbors]]\naddress = "fd00::255:2"\nremote_as = 65002\n'
        + 'export_filters = [{ prefix = "2001:db8:20::/48", le = 64 }]\n'
    )
    vrf = config.parse(
        BASE
        + '[[bgp.neighbors]]\naddress = "10.255.9.2"\nremote_as = 65009\nvrf = "blue"\n'
        + 'address_families = ["ipv4-unicast"]\n'
        # EVPN L2 in the default VRF: the VTEP address announced, one VNI's RD/RT overridden,
        # graceful restart with the route reflector
        + '[[bgp.neighbors]]\naddress = "10.255.8.2"\nremote_as = "internal"\n'
        + 'address_families = ["ipv4-unicast", "l2vpn-evpn"]\ngraceful_restart = true\n'
        + '[evpn]\nlocal_ip = "192.0.2.10"\n'
        + '[evpn.vnis.100]\nrd = "192.0.2.10:100"\n'
        + 'route_targets_import = ["65000:100", "65001:100"]\n'
        + 'route_targets_export = ["65000:100"]\n'
    )
    # EVPN type-5: VRF red's L3VNI, its tenant announced with the router as next hop
    type5 = config.parse(
        BASE
        + '[[bgp.neighbors]]\naddress = "10.255.8.2"\nremote_as = 65001\n'
        + 'address_families = ["ipv4-unicast", "l2vpn-evpn"]\n'
        + "[vrfs.red]\nl3vni = 1000\n"
    )
    return {
        "example-no-intent": desired_frr(frr_settings(example)),
        "type5-l3vni": desired_frr(
            frr_settings(type5),
            {
                "red": {
                    ipaddress.ip_network("10.0.0.0/24"): ipaddress.ip_address("169.254.0.3"),
                    ipaddress.ip_network("fd00:10::/64"): None,
                }
            },
        ),
        "example-with-intent": desired_frr(
            frr_settings(example),
            {"": _nets("10.128.0.0/23", "10.128.2.5/32", "172.20.0.10/32", "10.9.0.0/16")},
        ),
        "dual-stack-filters": desired_frr(
            frr_settings(dual), {"": _nets("10.128.0.0/23", "2001:db8:10::/64", "2001:db8:20::/64")}
        ),
        # as on an FRR older than 10.3: no coalescing window (Versions.frr_withdraws_...)
        "vrf-evpn": desired_frr(
            frr_settings(vrf, coalescing_safe=False), {"blue": _nets("10.200.0.0/24")}
        ),
    }
