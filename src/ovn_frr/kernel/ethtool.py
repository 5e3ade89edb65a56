"""Transmit checksum offload of an interface (the SIOCETHTOOL ioctl, as ``ethtool -K IF tx``).

Open vSwitch's userspace datapath reads and writes veths through packet sockets and does not
complete a checksum the sender left to the hardware: TCP through such a veth fails (measured
with OVS 3.1). The veth ends ovn-frr puts between the kernel bridge and OVS send with it off.
"""

from __future__ import annotations

import array
import fcntl
import socket
import struct

SIOCETHTOOL = 0x8946
ETHTOOL_GTXCSUM = 0x16
ETHTOOL_STXCSUM = 0x17


def _ethtool(ifname: str, cmd: int, data: int = 0) -> int:
    buf = array.array("B", struct.pack("II", cmd, data))
    addr, _ = buf.buffer_info()
    ifr = struct.pack("16sP", ifname.encode(), addr)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifr)
    return int(struct.unpack("II", buf.tobytes())[1])


def tx_checksum(ifname: str) -> bool:
    return bool(_ethtool(ifname, ETHTOOL_GTXCSUM))


def set_tx_checksum(ifname: str, on: bool) -> None:
    _ethtool(ifname, ETHTOOL_STXCSUM, int(on))
