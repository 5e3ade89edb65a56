"""The OVN adapter's error."""

from __future__ import annotations


class OvnError(Exception):
    """An OVSDB operation failed (connection, schema or transaction)."""

    #: the index of the operation ovsdb-server refused (the transaction did not commit)
    op: int | None = None
