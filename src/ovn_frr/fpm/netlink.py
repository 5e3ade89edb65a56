"""Netlink route messages as zebra sends them over FPM (sans-I/O, host byte order).

A payload holds netlink messages back to back, each padded to 4 bytes::

    nlmsghdr:  len u32 | type u16 | flags u16 | seq u32 | pid u32
    rtmsg:     family u8 | dst_len u8 | src_len u8 | tos u8 | table u8 | protocol u8 |
               scope u8 | type u8 | flags u32
    rtattr*:   len u16 | type u16 | value (len - 4 bytes), padded to 4

RTA_MULTIPATH holds ``rtnexthop`` records (len u16 | flags u8 | hops u8 | ifindex i32) each
followed by its own attributes (RTA_GATEWAY, RTA_VIA for an IPv6 next hop of an IPv4 route).

Next-hop objects (zebra's default, routes then carry RTA_NH_ID)::

    nhmsg:     family u8 | scope u8 | protocol u8 | resvd u8 | flags u32
    nhattr*:   NHA_ID u32 | NHA_GATEWAY addr | NHA_OIF u32 | NHA_BLACKHOLE (flag) |
               NHA_GROUP: (id u32 | weight u8 | resvd u8 | resvd u16)*  (weight is stored - 1)
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ovn_frr.fpm.framing import FramingError

NLMSG = struct.Struct("=IHHII")
RTMSG = struct.Struct("=BBBBBBBBI")
RTATTR = struct.Struct("=HH")
RTNH = struct.Struct("=HBBi")

NHMSG = struct.Struct("=BBBBI")
NH_GRP = struct.Struct("=IBBH")

RTM_NEWROUTE = 24
RTM_DELROUTE = 25
RTM_NEWNEXTHOP = 104
RTM_DELNEXTHOP = 105
NLM_F_REPLACE = 0x100

RTA_DST = 1
RTA_OIF = 4
RTA_GATEWAY = 5
RTA_PRIORITY = 6
RTA_MULTIPATH = 9
RTA_TABLE = 15
RTA_VIA = 18
RTA_NH_ID = 30

NHA_ID = 1
NHA_GROUP = 2
NHA_BLACKHOLE = 4
NHA_OIF = 5
NHA_GATEWAY = 6

RTN_NAMES = {0: "unspec", 1: "unicast", 6: "blackhole", 7: "unreachable", 8: "prohibit"}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _align(n: int) -> int:
    return (n + 3) & ~3


@dataclass(frozen=True, slots=True)
class NextHop:
    gateway: Address | None
    ifindex: int
    weight: int = 1


@dataclass(frozen=True, slots=True)
class RouteMessage:
    """One RTM_NEWROUTE (``add``) or RTM_DELROUTE."""

    add: bool
    replace: bool
    #: normalized text, host bits cleared ("198.51.100.0/24"): what the RIB keys on and the
    #: rows carry, without an ipaddress object per route on the hot path
    prefix: str
    table: int
    protocol: int
    kind: str
    nexthops: tuple[NextHop, ...]
    nh_id: int | None
    priority: int | None


@dataclass(frozen=True, slots=True)
class NexthopMessage:
    """One RTM_NEWNEXTHOP (``add``) or RTM_DELNEXTHOP: a single next hop or a group."""

    add: bool
    id: int
    gateway: Address | None = None
    ifindex: int = 0
    blackhole: bool = False
    #: (member id, weight) for a group; empty for a single next hop
    group: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class OtherMessage:
    """A netlink message this decoder does not interpret (still counted)."""

    type: int


Message = RouteMessage | NexthopMessage | OtherMessage


def split_messages(payload: bytes) -> Iterator[tuple[int, int, bytes]]:
    """(type, flags, body) of each netlink message in a frame payload."""
    pos = 0
    while pos < len(payload):
        if len(payload) - pos < NLMSG.size:
            raise FramingError("truncated netlink header", payload[pos:])
        length, mtype, flags, _seq, _pid = NLMSG.unpack_from(payload, pos)
        if length < NLMSG.size or pos + length > len(payload):
            raise FramingError(f"bad netlink length {length}", payload[pos:])
        yield mtype, flags, payload[pos + NLMSG.size : pos + length]
        pos += _align(length)


def _attrs(data: bytes, pos: int = 0) -> Iterator[tuple[int, bytes]]:
    while len(data) - pos >= RTATTR.size:
        length, atype = RTATTR.unpack_from(data, pos)
        if length < RTATTR.size or pos + length > len(data):
            raise FramingError(f"bad rtattr length {length}", data[pos:])
        yield atype & 0x3FFF, data[pos + RTATTR.size : pos + length]
        pos += _align(length)


def _addr(family: int, raw: bytes) -> Address:
    if family == socket.AF_INET and len(raw) == 4:
        return ipaddress.IPv4Address(raw)
    if family == socket.AF_INET6 and len(raw) == 16:
        return ipaddress.IPv6Address(raw)
    raise FramingError(f"bad address for family {family}", raw)


def prefix_text(family: int, raw: bytes, length: int) -> str | None:
    """``raw``/``length`` as normalized text (host bits cleared, ipaddress's notation), or
    None if they do not make a prefix of ``family``. No RTA_DST means the default route."""
    size = 4 if family == socket.AF_INET else 16
    if not raw:
        raw = bytes(size)
    if len(raw) != size or length > size * 8:
        return None
    bits = size * 8
    value = int.from_bytes(raw, "big") & (((1 << length) - 1) << (bits - length))
    if family == socket.AF_INET:
        return f"{socket.inet_ntop(socket.AF_INET, value.to_bytes(4, 'big'))}/{length}"
    return str(ipaddress.IPv6Network((value, length)))


def _via(raw: bytes) -> Address:
    if len(raw) < 2:
        raise FramingError("short RTA_VIA", raw)
    (family,) = struct.unpack_from("=H", raw)
    return _addr(family, raw[2:])


def _multipath(family: int, raw: bytes) -> tuple[NextHop, ...]:
    out = []
    pos = 0
    while len(raw) - pos >= RTNH.size:
        length, _flags, hops, ifindex = RTNH.unpack_from(raw, pos)
        if length < RTNH.size or pos + length > len(raw):
            raise FramingError(f"bad rtnexthop length {length}", raw[pos:])
        gw: Address | None = None
        for atype, value in _attrs(raw[pos + RTNH.size : pos + length]):
            if atype == RTA_GATEWAY:
                gw = _addr(family, value)
            elif atype == RTA_VIA:
                gw = _via(value)
        out.append(NextHop(gw, ifindex, hops + 1))
        pos += _align(length)
    return tuple(out)


def decode_route(mtype: int, flags: int, body: bytes) -> RouteMessage:
    if len(body) < RTMSG.size:
        raise FramingError("truncated rtmsg", body)
    family, dst_len, _src_len, _tos, table, protocol, _scope, rtype, _f = RTMSG.unpack_from(body)
    if family not in (socket.AF_INET, socket.AF_INET6):
        raise FramingError(f"route family {family}", body[:16])
    dst = b""
    gw: Address | None = None
    oif = 0
    nexthops: tuple[NextHop, ...] = ()
    nh_id = priority = None
    for atype, value in _attrs(body, RTMSG.size):
        if atype == RTA_DST:
            dst = value
        elif atype == RTA_GATEWAY:
            gw = _addr(family, value)
        elif atype == RTA_VIA:
            gw = _via(value)
        elif atype == RTA_OIF and len(value) == 4:
            (oif,) = struct.unpack("=i", value)
        elif atype == RTA_TABLE and len(value) == 4:
            (table,) = struct.unpack("=I", value)
        elif atype == RTA_PRIORITY and len(value) == 4:
            (priority,) = struct.unpack("=I", value)
        elif atype == RTA_NH_ID and len(value) == 4:
            (nh_id,) = struct.unpack("=I", value)
        elif atype == RTA_MULTIPATH:
            nexthops = _multipath(family, value)
    if not nexthops and (gw is not None or oif):
        nexthops = (NextHop(gw, oif),)
    prefix = prefix_text(family, dst, dst_len)
    if prefix is None:
        raise FramingError(f"bad destination ({len(dst)} bytes) /{dst_len}", body[:32])
    return RouteMessage(
        add=mtype == RTM_NEWROUTE,
        replace=bool(flags & NLM_F_REPLACE),
        prefix=prefix,
        table=table,
        protocol=protocol,
        kind=RTN_NAMES.get(rtype, str(rtype)),
        nexthops=nexthops,
        nh_id=nh_id,
        priority=priority,
    )


def decode_nexthop(mtype: int, body: bytes) -> NexthopMessage:
    if len(body) < NHMSG.size:
        raise FramingError("truncated nhmsg", body)
    family = body[0]
    nh_id = 0
    gw: Address | None = None
    oif = 0
    blackhole = False
    group: list[tuple[int, int]] = []
    for atype, value in _attrs(body, NHMSG.size):
        if atype == NHA_ID and len(value) == 4:
            (nh_id,) = struct.unpack("=I", value)
        elif atype == NHA_GATEWAY:
            gw = _addr(family, value)
        elif atype == NHA_OIF and len(value) == 4:
            (oif,) = struct.unpack("=I", value)
        elif atype == NHA_BLACKHOLE:
            blackhole = True
        elif atype == NHA_GROUP:
            if len(value) % NH_GRP.size:
                raise FramingError("bad NHA_GROUP length", value)
            for off in range(0, len(value), NH_GRP.size):
                member, weight, _r1, _r2 = NH_GRP.unpack_from(value, off)
                group.append((member, weight + 1))
    if nh_id == 0:
        raise FramingError("next hop without NHA_ID", body[:32])
    return NexthopMessage(mtype == RTM_NEWNEXTHOP, nh_id, gw, oif, blackhole, tuple(group))


def decode(payload: bytes) -> list[Message]:
    """Every message of one FPM frame payload; raises FramingError on malformed input."""
    out: list[Message] = []
    for mtype, flags, body in split_messages(payload):
        if mtype in (RTM_NEWROUTE, RTM_DELROUTE):
            out.append(decode_route(mtype, flags, body))
        elif mtype in (RTM_NEWNEXTHOP, RTM_DELNEXTHOP):
            out.append(decode_nexthop(mtype, body))
        else:
            out.append(OtherMessage(mtype))
    return out
