"""The OVN adapter's error."""

from __future__ import annotations


class OvnError(Exception):
    """An OVSDB operation failed (connection, schema or transaction)."""
