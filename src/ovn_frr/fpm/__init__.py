"""FPM adapter: zebra's forwarding-plane stream. Codecs here are sans-I/O."""

from ovn_frr.fpm.framing import FpmFramer, FramingError, encode_frame
from ovn_frr.fpm.netlink import (
    Message,
    NextHop,
    NexthopMessage,
    OtherMessage,
    RouteMessage,
    decode,
)

__all__ = [
    "FpmFramer",
    "FramingError",
    "Message",
    "NextHop",
    "NexthopMessage",
    "OtherMessage",
    "RouteMessage",
    "decode",
    "encode_frame",
]
