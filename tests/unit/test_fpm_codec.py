"""FPM framing and netlink route decoding: captured zebra bytes, edge cases, fuzzing."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovn_frr.fpm import (
    FpmFramer,
    FramingError,
    Message,
    NexthopMessage,
    RouteMessage,
    decode,
    encode_frame,
)
from ovn_frr.fpm.netlink import RTM_NEWROUTE, prefix_text
from tests.unit.nlbuild import route

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fpm"


def decode_stream(data: bytes, chunks: list[int] | None = None) -> list[Message]:
    framer = FpmFramer()
    out: list[Message] = []
    pos = 0
    for size in [*(chunks or []), len(data)]:
        for payload in framer.feed(data[pos : pos + size]):
            out += decode(payload)
        pos += size
        if pos >= len(data):
            break
    assert framer.pending == 0
    return out


def routes(msgs: list[Message]) -> list[RouteMessage]:
    return [m for m in msgs if isinstance(m, RouteMessage)]


def test_captured_inline_ecmp_stream() -> None:
    """zebra 8.4 with `no fpm use-next-hop-groups`: tor1+tor2 announce, tor2 withdraws."""
    msgs = routes(decode_stream((FIXTURES / "ecmp-inline.bin").read_bytes()))
    bgp = [m for m in msgs if m.protocol == 186 and m.prefix == "198.51.100.0/24"]
    assert [m.add for m in bgp] == [True, False, True, False, True]
    first, _, ecmp, _, single = bgp
    assert [str(n.gateway) for n in first.nexthops] == ["10.255.0.2"]
    assert sorted(str(n.gateway) for n in ecmp.nexthops) == ["10.255.0.2", "10.255.1.2"]
    assert {n.ifindex for n in ecmp.nexthops} == {2, 3}
    assert [str(n.gateway) for n in single.nexthops] == ["10.255.0.2"]
    assert all(m.table == 254 and m.kind == "unicast" for m in bgp if m.add)
    v6 = [m for m in msgs if ":" in m.prefix and m.protocol == 186 and m.add]
    assert all(n.gateway is not None and n.gateway.is_link_local for m in v6 for n in m.nexthops)
    connected = [m for m in msgs if m.protocol == 2]
    assert {m.prefix for m in connected} >= {"10.255.0.0/24", "10.255.1.0/24"}
    # the final withdrawal of 203.0.113.128/25 is the last message
    assert not msgs[-1].add and msgs[-1].prefix == "203.0.113.128/25"


def test_captured_nexthop_group_stream() -> None:
    """zebra's default: routes reference next-hop groups (RTA_NH_ID), sent as RTM_NEWNEXTHOP."""
    msgs = decode_stream((FIXTURES / "ecmp-nhg.bin").read_bytes())
    nhs = [m for m in msgs if isinstance(m, NexthopMessage)]
    groups = [m for m in nhs if m.group]
    assert groups, "the ECMP step creates a group"
    members = {m.id: m for m in nhs if not m.group}
    for g in groups:  # in this capture, members precede their group
        assert all(member in members for member, _w in g.group)
    assert {str(members[mid].gateway) for mid, _w in groups[0].group} == {
        "10.255.0.2",
        "10.255.1.2",
    }
    bgp = [m for m in routes(msgs) if m.protocol == 186 and m.add]
    assert bgp and all(m.nh_id is not None and not m.nexthops for m in bgp)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=300), max_size=40))
def test_chunking_does_not_change_the_result(chunks: list[int]) -> None:
    data = (FIXTURES / "ecmp-inline.bin").read_bytes()
    assert decode_stream(data, chunks) == decode_stream(data)


def test_several_messages_per_frame_and_large_frames() -> None:
    msgs = [route(f"10.{i // 256}.{i % 256}.0/24", gateways=("10.255.0.2",)) for i in range(300)]
    frame = encode_frame(b"".join(msgs))
    assert len(frame) > 4096
    out = routes(decode_stream(frame + frame, [4000, 4000, 5]))
    assert len(out) == 600
    assert out[299].prefix == "10.1.43.0/24"


def test_rfc5549_ipv6_next_hop_for_ipv4_prefix() -> None:
    (m,) = decode(route("192.0.2.0/24", gateways=("fe80::1",), oif=7, rfc5549=True))
    assert isinstance(m, RouteMessage)
    assert m.prefix == "192.0.2.0/24"
    assert m.nexthops[0].gateway == ipaddress.ip_address("fe80::1")
    assert m.nexthops[0].ifindex == 7


def test_multipath_weights_and_rta_table() -> None:
    (m,) = decode(route("2001:db8::/32", gateways=("fd00::1", "fd00::2"), table=1000))
    assert isinstance(m, RouteMessage)
    assert m.table == 1000
    assert [(str(n.gateway), n.weight, n.ifindex) for n in m.nexthops] == [
        ("fd00::1", 1, 10),
        ("fd00::2", 2, 11),
    ]


@pytest.mark.parametrize(("rtype", "kind"), [(6, "blackhole"), (7, "unreachable"), (8, "prohibit")])
def test_route_types(rtype: int, kind: str) -> None:
    (m,) = decode(route("10.0.0.0/8", rtype=rtype))
    assert isinstance(m, RouteMessage)
    assert m.kind == kind
    assert m.nexthops == ()


def test_delete() -> None:
    (m,) = decode(route("10.0.0.0/8", add=False))
    assert isinstance(m, RouteMessage) and not m.add


def test_bad_header_is_a_framing_error() -> None:
    with pytest.raises(FramingError, match="bad FPM header"):
        FpmFramer().feed(b"\x02\x01\x00\x08abcd")
    with pytest.raises(FramingError, match="bad FPM header"):
        FpmFramer().feed(b"\x01\x01\x00\x02")


def test_truncated_netlink_is_a_framing_error() -> None:
    msg = route("10.0.0.0/8", gateways=("10.0.0.1",))
    bad = msg[:4] + b"\xff\x00" + msg[6:]  # message type stays; length field intact
    assert decode(bad)  # unknown type → still decodes the header
    with pytest.raises(FramingError):
        decode(msg[:-3])


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=2048), st.lists(st.integers(min_value=1, max_value=64), max_size=20))
def test_fuzz_arbitrary_bytes_only_raise_framing_error(data: bytes, chunks: list[int]) -> None:
    framer = FpmFramer()
    pos = 0
    try:
        for size in [*chunks, len(data)]:
            for payload in framer.feed(data[pos : pos + size]):
                decode(payload)
            pos += size
    except FramingError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=512))
def test_fuzz_valid_frame_with_garbage_payload(payload: bytes) -> None:
    """A well-framed payload of garbage: decoded or rejected, never another exception."""
    header = route("10.0.0.0/8")[:16]
    body = header[:4] + RTM_NEWROUTE.to_bytes(2, "little") + header[6:] + payload
    body = (len(body)).to_bytes(4, "little") + body[4:]
    try:
        for p in FpmFramer().feed(encode_frame(body)):
            decode(p)
    except FramingError:
        pass


@given(st.booleans(), st.binary(min_size=16, max_size=16), st.integers(min_value=0, max_value=128))
def test_prefix_text_is_ipaddress_notation(v6: bool, raw: bytes, length: int) -> None:
    family, size = (socket.AF_INET6, 16) if v6 else (socket.AF_INET, 4)
    text = prefix_text(family, raw[:size], length)
    if length > size * 8:
        assert text is None
    else:
        assert text == str(ipaddress.ip_network((raw[:size], length), strict=False))


def test_prefix_text_rejects_a_wrong_size_and_reads_no_dst_as_default() -> None:
    assert prefix_text(socket.AF_INET, bytes(16), 24) is None
    assert prefix_text(socket.AF_INET6, b"", 0) == "::/0"
    assert prefix_text(socket.AF_INET, b"", 0) == "0.0.0.0/0"
