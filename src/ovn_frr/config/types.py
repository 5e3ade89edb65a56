"""Value types of the node config: addresses, endpoints, AS numbers.

Each type parses TOML values into typed Python values and raises :class:`ConfigValueError`
with an operator-readable reason (the caller prefixes the key path).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import PlainSerializer, PlainValidator
from pydantic_core import PydanticCustomError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ASN_MAX = 4_294_967_295


def _fail(reason: str) -> PydanticCustomError:
    # "{reason}" keeps pydantic from prefixing "Value error, " to our message.
    return PydanticCustomError("ovn_frr", "{reason}", {"reason": reason})


def _need_str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"expected {what} as a string, got {value!r}")
    return value


def parse_ip(value: Any) -> IPAddress:
    text = _need_str(value, "an IP address")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise _fail(f"{text!r} is not an IP address") from None


def parse_neighbor_ip(value: Any) -> IPAddress:
    """A BGP neighbor's address: a unicast address FRR accepts as ``neighbor ADDRESS``."""
    addr = parse_ip(value)
    text = str(value)
    if addr.version == 6:
        if addr.scope_id is not None:
            raise _fail(
                f"{text!r}: a scoped address is not supported; a link-local neighbor needs "
                "FRR's interface form (BGP unnumbered), which ovn-frr does not configure: "
                "use a global address"
            )
        if addr.is_link_local:
            raise _fail(f"{text!r}: a link-local neighbor is not supported (use a global address)")
        if addr.ipv4_mapped is not None:
            raise _fail(
                f"{text!r} is an IPv4-mapped IPv6 address: write the IPv4 address "
                f"{addr.ipv4_mapped}"
            )
    if addr.is_multicast or addr.is_unspecified or addr.is_loopback:
        raise _fail(f"{text!r} is not a unicast address of a BGP neighbor")
    return addr


#: control characters and what ``str.splitlines`` breaks lines at (U+0085, U+2028, U+2029)
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: a password is masked in logs by its value, also inside a repr or JSON: no quote or backslash
SECRET_REFUSED = re.compile(r"[\"'\\]")


def parse_text(value: Any) -> str:
    """Free text that goes into one FRR config line: no newline or other control character."""
    if not isinstance(value, str):
        raise _fail(f"expected a string, got {value!r}")
    text = value
    bad = CONTROL.search(text)
    if bad:
        raise _fail(f"must not contain control characters (found {bad.group()!r})")
    return text


def parse_word(value: Any) -> str:
    """One token of an FRR config line (an interface name, an address): no space either."""
    text = parse_text(value)
    if not text or any(c.isspace() for c in text):
        raise _fail(f"{text!r} must be one word (no spaces)")
    return text


def parse_secret(value: Any) -> str:
    """A password: 1..80 characters, no control character, no space at either end (FRR would
    keep a different password than the peer's)."""
    if not isinstance(value, str):
        raise _fail("expected a string")  # the value is never echoed
    text = value
    if CONTROL.search(text):
        raise _fail("must not contain control characters")
    if SECRET_REFUSED.search(text):
        raise _fail("must not contain quotes or backslashes")
    if not 1 <= len(text) <= 80:
        raise _fail("must be 1..80 characters")
    if text != text.strip():
        raise _fail("must not start or end with a space")
    return text


def parse_ipv4(value: Any) -> ipaddress.IPv4Address:
    text = _need_str(value, "an IPv4 address")
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        raise _fail(f"{text!r} is not an IPv4 address") from None


def parse_network(value: Any) -> IPNetwork:
    text = _need_str(value, "a prefix")
    if "/" not in text:
        raise _fail(f"{text!r} is not a prefix (expected address/length)")
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        if "host bits set" in str(exc):
            raise _fail(f"{text!r} has host bits set") from None
        raise _fail(f"{text!r} is not a prefix") from None


def parse_remote_as(value: Any) -> int | Literal["internal", "external"]:
    if isinstance(value, str):
        if value in ("internal", "external"):
            return value  # type: ignore[return-value]
        raise _fail(f"{value!r} is not an AS number, 'internal' or 'external'")
    return parse_asn(value)


def parse_asn(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"expected an AS number (1..{ASN_MAX}), got {value!r}")
    if not 1 <= value <= ASN_MAX:
        raise _fail(f"{value} is not an AS number (1..{ASN_MAX})")
    return value


@dataclass(frozen=True, slots=True)
class HostPort:
    host: IPAddress
    port: int

    def __str__(self) -> str:
        if self.host.version == 6:
            return f"[{self.host}]:{self.port}"
        return f"{self.host}:{self.port}"


def parse_hostport(value: Any) -> HostPort:
    text = _need_str(value, "an address:port")
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise _fail(f"{text!r} is not address:port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        raise _fail(f"{text!r}: {host!r} is not an IP address") from None
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise _fail(f"{text!r}: port must be 1..65535")
    return HostPort(addr, int(port))


OVSDB_METHODS = ("unix", "tcp", "ssl")


def parse_ovsdb_remote(value: Any) -> str:
    """An OVSDB connection string: ``unix:PATH``, ``tcp:HOST:PORT`` or ``ssl:HOST:PORT``,
    several separated by commas for a clustered database."""
    text = _need_str(value, "an OVSDB remote")
    for part in text.split(","):
        method, sep, rest = part.strip().partition(":")
        if not sep or method not in OVSDB_METHODS or not rest:
            raise _fail(
                f"{part!r} is not an OVSDB remote (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT)"
            )
        if method != "unix":
            try:
                parse_hostport(rest)
            except PydanticCustomError:
                raise _fail(f"{part!r}: expected {method}:ADDRESS:PORT") from None
    return text


RD_RT = re.compile(r"^(?:(\d{1,10})|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,10})$")


def parse_rd_rt(value: Any) -> str:
    """A route distinguisher or route target as FRR takes it: ``ASN:NN`` or ``IPv4:NN``."""
    text = _need_str(value, "ASN:NN or IPv4:NN")
    m = RD_RT.match(text)
    if not m:
        raise _fail(f"{text!r} is not ASN:NN or IPv4:NN")
    asn, ip, nn = m.groups()
    if asn is not None:
        if not 1 <= int(asn) <= ASN_MAX:
            raise _fail(f"{text!r}: {asn} is not an AS number")
        limit = 65535 if int(asn) > 65535 else ASN_MAX
    else:
        try:
            ipaddress.IPv4Address(ip)
        except ValueError:
            raise _fail(f"{text!r}: {ip} is not an IPv4 address") from None
        limit = 65535
    if int(nn) > limit:
        raise _fail(f"{text!r}: the number after ':' must be at most {limit} here")
    # as FRR shows it (065000:0100 is 65000:100): the running config compares equal
    return f"{int(asn) if asn is not None else ip}:{int(nn)}"


def _as_str(value: object) -> str:
    return str(value)


IP = Annotated[IPAddress, PlainValidator(parse_ip), PlainSerializer(_as_str)]
IPv4 = Annotated[ipaddress.IPv4Address, PlainValidator(parse_ipv4), PlainSerializer(_as_str)]
Prefix = Annotated[IPNetwork, PlainValidator(parse_network), PlainSerializer(_as_str)]
RemoteAS = Annotated[
    int | Literal["internal", "external"], PlainValidator(parse_remote_as), PlainSerializer(_as_str)
]
NeighborIP = Annotated[IPAddress, PlainValidator(parse_neighbor_ip), PlainSerializer(_as_str)]
Text = Annotated[str, PlainValidator(parse_text)]
Word = Annotated[str, PlainValidator(parse_word)]
Secret = Annotated[str, PlainValidator(parse_secret)]
ASN = Annotated[int, PlainValidator(parse_asn)]
Endpoint = Annotated[HostPort, PlainValidator(parse_hostport), PlainSerializer(_as_str)]
OvsdbRemote = Annotated[str, PlainValidator(parse_ovsdb_remote)]
RdRt = Annotated[str, PlainValidator(parse_rd_rt)]
