"""The local Open vSwitch as EVPN needs it (blocking; ``ovs-vsctl`` and ``ovs-ofctl``).

Per VNI an OVS bridge (``br-evN``, marked ``external_ids:ovn-frr-evpn=N``) holds the veth
end toward the kernel bridge; ``ovn-bridge-mappings`` maps the switch's localnet network
``ovnfrr-evpn-N`` to it, so ovn-controller patches it to br-int. Only mappings of that
network prefix are ovn-frr's: the operator's stay as they are. The bridge's flow table is
ovn-frr's alone (``fail-mode=secure``): ``ovs-ofctl replace-flows`` makes it exactly the
desired one, comparing with what the switch holds and sending only the difference.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ovn_frr.command import Runner, run_command

log = logging.getLogger(__name__)

MARK = "ovn-frr-evpn"
MAPPINGS = "ovn-bridge-mappings"
#: the responder's second table and its set_field actions need OpenFlow 1.3 (or NXM)
OPENFLOW = "OpenFlow13"
#: flow changes go as one OpenFlow bundle: applied all or nothing, and ~4x faster than the
#: same flow mods one by one (10k ARP responder flows added in 0.18 s instead of 0.8 s,
#: OVS 3.1 userspace datapath, measured). With OpenFlow 1.3 OVS takes bundles as the ONF
#: extension (EXT-230, OVS >= 2.6; ovs-ofctl's man page still says 1.4 is needed).
BUNDLE = "--bundle"


class OvsError(OSError):
    """An ovs-vsctl or ovs-ofctl command failed."""


def run(argv: Sequence[str], stdin: str | None = None) -> str:
    return run_command(argv, stdin, OvsError, timeout=60)


def parse_mappings(text: str) -> dict[str, str]:
    """``net:bridge,net:bridge`` as a dict (order kept)."""
    out: dict[str, str] = {}
    for part in text.split(","):
        net, sep, br = part.strip().partition(":")
        if sep and net:
            out[net] = br
    return out


def format_mappings(mappings: Mapping[str, str]) -> str:
    return ",".join(f"{n}:{b}" for n, b in mappings.items())


@dataclass(frozen=True, slots=True)
class OvsState:
    #: ovn-frr's bridges: VNI -> bridge name
    bridges: Mapping[int, str] = field(default_factory=dict)
    #: bridge -> its port names
    ports: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    mappings: Mapping[str, str] = field(default_factory=dict)
    #: br-int's datapath type ("" system)
    datapath_type: str = ""
    #: interface name -> OpenFlow port number (absent: none assigned yet). Flows use the
    #: numbers: OpenFlow cuts port names to 15 characters, longer ones do not resolve.
    ofports: Mapping[str, int] = field(default_factory=dict)
    #: bridge -> its datapath type ("" system)
    datapath_types: Mapping[str, str] = field(default_factory=dict)
    #: the ``Open_vSwitch`` row's ``external_ids``
    external_ids: Mapping[str, str] = field(default_factory=dict)


def _map(datum: Any) -> dict[str, str]:
    if isinstance(datum, list) and len(datum) == 2 and datum[0] == "map":
        return {str(k): str(v) for k, v in datum[1]}
    return {}


def _mappings(open_vswitch_rows: Any) -> dict[str, str]:
    """``ovn-bridge-mappings`` of the ``Open_vSwitch`` row (``list`` of external_ids)."""
    rows = list(open_vswitch_rows)
    return parse_mappings(_map(rows[0][0]).get(MAPPINGS, "")) if rows else {}


class LocalOvs:
    def __init__(
        self, db: str, rundir: str, runner: Runner = run, integration_bridge: str = "br-int"
    ) -> None:
        self.db = db
        self.rundir = rundir
        self._run = runner
        self.br_int = integration_bridge

    def vsctl(self, *args: str) -> str:
        return self._run(["ovs-vsctl", f"--db={self.db}", "--timeout=10", *args], None)

    def state(self) -> OvsState:
        """Bridges, ports, mappings and OpenFlow port numbers in one ``ovs-vsctl`` run (four
        ``list`` commands, one JSON document each, one per line)."""
        out = self.vsctl(
            "--format=json", "--data=json",
            "--", "--columns=name,external_ids,datapath_type,ports", "list", "Bridge",
            "--", "--columns=_uuid,name", "list", "Port",
            "--", "--columns=external_ids", "list", "Open_vSwitch",
            "--", "--columns=name,ofport", "list", "Interface",
        )  # fmt: skip
        docs = [json.loads(line) for line in out.splitlines() if line.strip()]
        if len(docs) != 4:
            raise OSError(f"ovs-vsctl: {len(docs)} answers to 4 list commands")
        bridge_rows, port_rows, ovs_rows, iface_rows = (d["data"] for d in docs)
        port_names = {str(row[0][1]): str(row[1]) for row in port_rows}
        bridges: dict[int, str] = {}
        ports: dict[str, tuple[str, ...]] = {}
        dtypes: dict[str, str] = {}
        dp = ""
        for name, ext, dtype, port_set in bridge_rows:
            dtypes[str(name)] = str(dtype) if isinstance(dtype, str) else ""
            refs = port_set[1] if port_set[0] == "set" else [port_set]
            names = tuple(sorted(port_names.get(str(r[1]), "") for r in refs))
            ports[str(name)] = names
            vni = _map(ext).get(MARK, "")
            if vni.isdigit():
                bridges[int(vni)] = str(name)
            if name == self.br_int:
                dp = str(dtype) if isinstance(dtype, str) else ""
        ids = _map(ovs_rows[0][0]) if ovs_rows else {}
        mappings = parse_mappings(ids.get(MAPPINGS, ""))
        ofports = {str(name): int(ofport) for name, ofport in iface_rows
                   if isinstance(ofport, int) and ofport > 0}  # fmt: skip
        return OvsState(bridges, ports, mappings, dp, ofports, dtypes, ids)

    def external_id(self, key: str) -> str:
        """One ``external_ids`` value of the ``Open_vSwitch`` row ("" absent, or no OVS)."""
        try:
            doc = json.loads(self.vsctl("--format=json", "--data=json", "--columns=external_ids",
                                        "list", "Open_vSwitch"))  # fmt: skip
        except (OSError, ValueError):
            return ""
        rows = doc.get("data", [])
        return _map(rows[0][0]).get(key, "") if rows else ""

    def update_external_ids(self, put: Mapping[str, str], remove: Sequence[str]) -> None:
        """Set and remove keys of the ``Open_vSwitch`` row's ``external_ids`` in one
        transaction (other keys are untouched)."""
        args: list[str] = []
        if put:
            args += ["--", "set", "Open_vSwitch", ".",
                     *(f'external_ids:{k}="{v}"' for k, v in sorted(put.items()))]  # fmt: skip
        if remove:
            args += ["--", "remove", "Open_vSwitch", ".", "external_ids", *remove]
        if args:
            self.vsctl(*args)
            log.info("ovs_external_ids set=%s removed=%s", ",".join(sorted(put)),
                     ",".join(remove))  # fmt: skip

    def mappings(self) -> dict[str, str]:
        """``ovn-bridge-mappings`` as it is now."""
        return _mappings(json.loads(self.vsctl("--format=json", "--data=json",
                                               "--columns=external_ids", "list",
                                               "Open_vSwitch"))["data"])  # fmt: skip

    def ensure_bridge(self, vni: int, bridge: str, port: str, datapath_type: str) -> None:
        args = [
            "--may-exist",
            "add-br",
            bridge,
            "--",
            "set",
            "Bridge",
            bridge,
            "fail-mode=secure",
            f"external_ids:{MARK}={vni}",
        ]
        if datapath_type:
            args.append(f"datapath_type={datapath_type}")
        self.vsctl(*args, "--", "--may-exist", "add-port", bridge, port)
        log.info("evpn_ovs_bridge vni=%d bridge=%s port=%s", vni, bridge, port)

    def remove_bridge(self, bridge: str) -> None:
        self.vsctl("--if-exists", "del-br", bridge)
        log.info("evpn_ovs_bridge_removed bridge=%s", bridge)

    def set_mappings(self, mappings: Mapping[str, str]) -> None:
        if mappings:
            self.vsctl(
                "set", "Open_vSwitch", ".", f'external_ids:{MAPPINGS}="{format_mappings(mappings)}"'
            )
        else:
            self.vsctl("remove", "Open_vSwitch", ".", "external_ids", MAPPINGS)

    def replace_flows(self, bridge: str, flows: Sequence[str]) -> None:
        """Make ``bridge``'s flow table exactly ``flows`` (only differences are sent, in one
        bundle: see :data:`BUNDLE`)."""
        target = f"unix:{self.rundir}/{bridge}.mgmt"
        self._run(["ovs-ofctl", "-O", OPENFLOW, BUNDLE, "replace-flows", target, "-"],
                  "\n".join(flows) + "\n")  # fmt: skip

    def change_flows(
        self, bridge: str, add: Sequence[str], delete: Sequence[str], clear: str | None = None
    ) -> None:
        """Send only a change, in one bundle: every flow with cookie ``clear`` deleted (if
        given), ``delete`` flows deleted (strict: match and priority, whatever their cookie),
        ``add`` flows added."""
        target = f"unix:{self.rundir}/{bridge}.mgmt"
        lines = [f"delete cookie={clear}/-1"] if clear else []
        lines += [f"delete_strict {_match(f)}" for f in delete]
        lines += [f"add {f}" for f in add]
        if lines:
            self._run(["ovs-ofctl", "-O", OPENFLOW, BUNDLE, "add-flows", target, "-"],
                      "\n".join(lines) + "\n")  # fmt: skip

    def flow_count(self, bridge: str) -> int:
        """How many flows the bridge holds (one cheap request)."""
        target = f"unix:{self.rundir}/{bridge}.mgmt"
        out = self._run(["ovs-ofctl", "-O", OPENFLOW, "dump-aggregate", target], None)
        for word in out.split():
            if word.startswith("flow_count="):
                return int(word.split("=", 1)[1])
        return -1


def _match(flow: str) -> str:
    """A flow's match and priority (what a strict deletion names): no actions, no cookie (a
    cookie to match needs a mask)."""
    match = flow.split(" actions=", 1)[0]
    if match.startswith("cookie="):
        match = match.split(",", 1)[1] if "," in match else ""
    return match
