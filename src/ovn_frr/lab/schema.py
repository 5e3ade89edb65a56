"""This machine's NB schema with the columns OVN-native BGP CMSs write and OVN 23.03 lacks.

OpenStack Neutron's BGP plugin (2026.1) and the tests' random NBs write two things newer NB
schemas have: router ports without networks (unnumbered, OVN >= 25.03) and
``Logical_Router_Policy.output_port``. The lab's NB can take them on an older OVN: its schema
gets them (the version's minor number raised), and ovn-northd, which ignores what it does not
know, serves the rest as ever. Nothing of ovn-frr depends on it but its tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def patch(schema: dict[str, Any]) -> bool:
    """Add what is missing (in place); whether anything was."""
    tables = schema["tables"]
    changed = False
    policy = tables["Logical_Router_Policy"]["columns"]
    if "output_port" not in policy:
        key = {"type": "uuid", "refTable": "Logical_Router_Port", "refType": "weak"}
        policy["output_port"] = {"type": {"key": key, "min": 0, "max": 1}}
        changed = True
    networks = tables["Logical_Router_Port"]["columns"]["networks"]["type"]
    if networks.get("min", 1) != 0:
        networks["min"] = 0
        changed = True
    if changed:
        major, minor, rest = schema["version"].split(".", 2)
        schema["version"] = f"{major}.{int(minor) + 1}.{rest}"
    return changed


def patched_nb_schema(source: Path, dest: Path) -> Path:
    """``source`` with :func:`patch` applied, written to ``dest`` (``source`` itself when it
    has everything already)."""
    schema = json.loads(source.read_text())
    if not patch(schema):
        return source
    dest.write_text(json.dumps(schema, indent=1))
    return dest
