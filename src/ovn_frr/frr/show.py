"""FRR's ``show ... json`` output as frozen values (pure parsing; the calls are the caller's).

Shapes read (FRR 8.4 and 10.x agree on these keys):
- ``show bgp vrf all summary json``: ``{vrf: {"ipv4Unicast": {"peers": {addr: {...}}}, ...}}``
  with per peer ``state``, ``peerUptime``, ``pfxRcd``, ``pfxSnt``, ``remoteAs``;
- ``show bfd peers json``: a list of ``{"peer", "vrf", "status", ...}``;
- ``show bgp [vrf V] ipv4|ipv6 unicast PREFIX json``: ``{"prefix", "paths": [...],
  "advertisedTo": {peer: {...}}}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: address families in the summary, as FRR names them
AFI_KEYS = ("ipv4Unicast", "ipv6Unicast", "l2VpnEvpn")


@dataclass(frozen=True, slots=True)
class Session:
    vrf: str
    neighbor: str
    afi: str
    state: str
    uptime: str
    received: int
    sent: int
    remote_as: int
    #: BFD session state ("up", "down", "init", ...) or "" when the neighbor has none
    bfd: str = ""

    @property
    def up(self) -> bool:
        return self.state == "Established"


def sessions(summary: Any, bfd: Any = ()) -> tuple[Session, ...]:
    """BGP sessions per VRF and address family, with the BFD state of each neighbor."""
    bfd_state: dict[tuple[str, str], str] = {}
    for peer in bfd if isinstance(bfd, list) else ():
        if isinstance(peer, dict) and "peer" in peer:
            bfd_state[(str(peer.get("vrf", "default")), str(peer["peer"]))] = str(
                peer.get("status", "")
            )
    out = []
    for vrf, families in (summary or {}).items():
        if not isinstance(families, dict):
            continue
        for afi in AFI_KEYS:
            peers = families.get(afi, {}).get("peers", {})
            for addr, p in peers.items():
                out.append(Session(
                    vrf=vrf, neighbor=addr, afi=afi, state=str(p.get("state", "?")),
                    uptime=str(p.get("peerUptime", "")), received=_int(p.get("pfxRcd")),
                    sent=_int(p.get("pfxSnt")), remote_as=_int(p.get("remoteAs")),
                    bfd=bfd_state.get((vrf, addr), ""),
                ))  # fmt: skip
    return tuple(sorted(out, key=lambda s: (s.vrf, s.neighbor, s.afi)))


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def advertised_to(prefix_json: Any) -> tuple[str, ...]:
    """The peers FRR sent a prefix to (empty when FRR does not have it)."""
    peers = (prefix_json or {}).get("advertisedTo", {})
    return tuple(sorted(peers)) if isinstance(peers, dict) else ()


def best_paths(prefix_json: Any) -> tuple[str, ...]:
    """Where FRR's paths for a prefix came from: ``peer (AS path)``, best first."""
    out = []
    for path in (prefix_json or {}).get("paths", []):
        peer = path.get("peer", {}).get("peerId") or path.get("nexthops", [{}])[0].get("ip", "?")
        aspath = path.get("aspath", {}).get("string", "") or "local"
        best = path.get("bestpath", {}).get("overall", False)
        out.append((not best, f"{peer} ({aspath})"))
    return tuple(text for _rank, text in sorted(out))


#: zebra's flag of a route it read back from the kernel as its own (``lib/zclient.h``
#: ZEBRA_FLAG_SELFROUTE): an earlier zebra's, kept until a client gives it again or zebra sweeps
SELFROUTE = 0x02


def self_routes(doc: Any) -> list[str]:
    """The prefixes of the BGP routes zebra holds only because it read them back from the
    kernel after a restart (``internalFlags`` has :data:`SELFROUTE`: no bgpd gave them since),
    from ``show ip[v6] route vrf all json`` (prefix -> entries, or VRF -> that with several
    VRFs); in a VRF as ``VRF:prefix``."""
    if not isinstance(doc, dict):
        return []
    nested = any(isinstance(v, dict) for v in doc.values())
    tables = doc.items() if nested else (("", doc),)
    out = []
    for vrf, table in tables:
        if not isinstance(table, dict):
            continue
        for prefix, entries in table.items():
            marked = [
                e
                for e in entries or ()
                if isinstance(e, dict)
                and e.get("protocol") == "bgp"
                and _int(e.get("internalFlags")) & SELFROUTE
            ]
            if marked:
                out.append(f"{vrf}:{prefix}" if vrf and vrf != "default" else prefix)
    return out
