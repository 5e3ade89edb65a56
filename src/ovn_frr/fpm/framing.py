"""FPM framing (sans-I/O): bytes in, netlink payloads out.

Every FPM frame carries a 4-byte header::

     0               1               2               3
    +---------------+---------------+-------------------------------+
    |  version (1)  |  type (1=nl)  |  length (u16, big-endian,     |
    |               |               |  header included)             |
    +---------------+---------------+-------------------------------+
    |  payload: one or more netlink messages (length - 4 bytes) ... |

zebra's ``dplane_fpm_nl`` packs several netlink messages into one frame and frames may exceed
4096 bytes. A frame with another version or type, or a length below 4, means the stream is not
FPM (or is out of sync): :class:`FramingError`, after which the caller resets the connection.
"""

from __future__ import annotations

import struct

FPM_VERSION = 1
FPM_TYPE_NETLINK = 1
HEADER = struct.Struct("!BBH")
HEADER_LEN = HEADER.size


class FramingError(Exception):
    """The byte stream is not valid FPM; ``excerpt`` holds the offending bytes and ``frames``
    the payloads completed before them (still valid, for the caller to apply)."""

    def __init__(self, message: str, excerpt: bytes, frames: list[bytes] | None = None) -> None:
        super().__init__(f"{message}: {excerpt[:32].hex(' ')}")
        self.excerpt = excerpt
        self.frames = frames or []


def encode_frame(payload: bytes) -> bytes:
    return HEADER.pack(FPM_VERSION, FPM_TYPE_NETLINK, HEADER_LEN + len(payload)) + payload


class FpmFramer:
    """Reassembles FPM frames from arbitrary chunks of a stream."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.frames = 0

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return the payloads of every frame completed by them."""
        self._buf += data
        out: list[bytes] = []
        buf = self._buf
        pos = 0
        while len(buf) - pos >= HEADER_LEN:
            version, ftype, length = HEADER.unpack_from(buf, pos)
            if version != FPM_VERSION or ftype != FPM_TYPE_NETLINK or length < HEADER_LEN:
                bad = bytes(buf[pos : pos + 32])
                self._buf = bytearray()
                raise FramingError(
                    f"bad FPM header (version={version} type={ftype} length={length})", bad, out
                )
            if len(buf) - pos < length:
                break
            out.append(bytes(buf[pos + HEADER_LEN : pos + length]))
            pos += length
        if pos:
            del buf[:pos]
        self.frames += len(out)
        return out

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back."""
        return len(self._buf)
