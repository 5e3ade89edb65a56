"""The localnet ports ovn-frr keeps on EVPN switches (NB writes, blocking).

One localnet port per EVPN switch, shared by every chassis: each chassis maps its network
name (``ovnfrr-evpn-N``) to its own OVS bridge in ``ovn-bridge-mappings``. Any agent that
serves the switch may create it; the insert is guarded by a ``wait`` for the name to be
absent, so agents racing each other make one row, not several. The row carries the owner
pair every ovn-frr row has and ``ovn-frr:evpn=N``; removal first reads the port by name and
takes off only a row that carries both (by its UUID), so a port of the same name that someone
else made is never removed.
"""

from __future__ import annotations

import logging
from typing import Any

from ovn_frr.ovn.bulk import OWNER
from ovn_frr.ovn.errors import OvnError
from ovn_frr.ovn.jsonrpc import Client

log = logging.getLogger(__name__)

LSP = "Logical_Switch_Port"


class LocalnetWriter:
    def __init__(self, remote: str, owner_key: str) -> None:
        self._client = Client(remote)
        self._key = owner_key

    def close(self) -> None:
        self._client.close()

    def create(self, switch_uuid: str, name: str, vni: int) -> bool:
        """Add localnet port ``name`` to the switch; False if a port of that name exists."""
        ops: list[dict[str, Any]] = [
            {
                "op": "wait",
                "timeout": 0,
                "table": LSP,
                "where": [["name", "==", name]],
                "columns": ["name"],
                "until": "==",
                "rows": [],
            },
            {
                "op": "insert",
                "table": LSP,
                "uuid-name": "ln",
                "row": {
                    "name": name,
                    "type": "localnet",
                    "addresses": ["set", ["unknown"]],
                    "options": ["map", [["network_name", name]]],
                    "external_ids": ["map", [list(OWNER), [self._key, str(vni)]]],
                },
            },
            {
                "op": "mutate",
                "table": "Logical_Switch",
                "where": [["_uuid", "==", ["uuid", switch_uuid]]],
                "mutations": [["ports", "insert", ["set", [["named-uuid", "ln"]]]]],
            },
        ]
        try:
            self._client.call(ops)
        except OvnError as exc:
            if exc.op == 0:  # the wait: a port of that name is there already
                return False
            raise
        log.info("evpn_localnet_created port=%s vni=%d", name, vni)
        return True

    def remove(self, switch_uuid: str, name: str) -> bool:
        """Take ovn-frr's localnet port ``name`` off the switch (the row goes with it: ports
        are not root rows). False if no such port of ovn-frr's is there."""
        rows = self._client.call(
            [
                {
                    "op": "select",
                    "table": LSP,
                    "where": [["name", "==", name]],
                    "columns": ["_uuid", "external_ids"],
                },
            ]
        )[0].get("rows", [])
        ours = [r["_uuid"][1] for r in rows if _owned(r.get("external_ids"), self._key)]
        if not ours:
            return False
        self._client.call(
            [
                {
                    "op": "mutate",
                    "table": "Logical_Switch",
                    "where": [["_uuid", "==", ["uuid", switch_uuid]]],
                    "mutations": [["ports", "delete", ["set", [["uuid", u] for u in ours]]]],
                },
            ]
        )
        log.info("evpn_localnet_removed port=%s", name)
        return True


def _owned(external_ids: Any, key: str) -> bool:
    pairs = dict(external_ids[1]) if isinstance(external_ids, list) else {}
    return pairs.get(OWNER[0]) == OWNER[1] and key in pairs
