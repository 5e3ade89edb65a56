"""Builds netlink route messages the way zebra lays them out (for codec tests)."""

from __future__ import annotations

import ipaddress
import socket
import struct

from ovn_frr.fpm.netlink import (
    NLMSG,
    RTA_DST,
    RTA_GATEWAY,
    RTA_MULTIPATH,
    RTA_OIF,
    RTA_TABLE,
    RTA_VIA,
    RTM_DELROUTE,
    RTM_NEWROUTE,
    RTMSG,
    RTNH,
)


def attr(atype: int, value: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(value), atype) + value
    return raw + b"\0" * (-len(raw) % 4)


def via(addr: str) -> bytes:
    ip = ipaddress.ip_address(addr)
    fam = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    return struct.pack("=H", fam) + ip.packed


def route(
    prefix: str,
    *,
    add: bool = True,
    gateways: tuple[str, ...] = (),
    oif: int = 0,
    table: int = 254,
    protocol: int = 186,
    rtype: int = 1,
    rfc5549: bool = False,
) -> bytes:
    net = ipaddress.ip_network(prefix)
    fam = socket.AF_INET6 if net.version == 6 else socket.AF_INET
    body = RTMSG.pack(fam, net.prefixlen, 0, 0, min(table, 252), protocol, 0, rtype, 0)
    body += attr(RTA_DST, net.network_address.packed)
    if table >= 256:
        body += attr(RTA_TABLE, struct.pack("=I", table))

    def gw_attr(g: str) -> bytes:
        if rfc5549:
            return attr(RTA_VIA, via(g))
        return attr(RTA_GATEWAY, ipaddress.ip_address(g).packed)

    if len(gateways) == 1:
        body += gw_attr(gateways[0])
        if oif:
            body += attr(RTA_OIF, struct.pack("=i", oif))
    elif gateways:
        mp = b""
        for i, g in enumerate(gateways):
            nh_attrs = gw_attr(g)
            mp += RTNH.pack(RTNH.size + len(nh_attrs), 0, i, 10 + i) + nh_attrs
        body += attr(RTA_MULTIPATH, mp)
    mtype = RTM_NEWROUTE if add else RTM_DELROUTE
    return NLMSG.pack(NLMSG.size + len(body), mtype, 0, 0, 0) + body
