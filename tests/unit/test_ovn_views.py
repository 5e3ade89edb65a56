"""What the reader keeps of IDL rows (ovn.views): made once per row, made again once the IDL
reports the row changed."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ovn_frr.ovn.views import RowCache, lsp_entries


@dataclass(frozen=True)
class Row:
    uuid: int
    name: str


def test_a_row_is_made_once_until_it_changes() -> None:
    made: list[str] = []

    def make(row: Row) -> str:
        made.append(row.name)
        return row.name.upper()

    cache = RowCache(make)
    a, b = Row(1, "a"), Row(2, "b")
    assert [cache(a), cache(b), cache(a)] == ["A", "B", "A"]
    assert made == ["a", "b"]
    cache.forget([1], rows=2)  # the IDL reported row 1 changed
    assert cache(Row(1, "a2")) == "A2" and cache(b) == "B"
    assert made == ["a", "b", "a2"]


def test_rows_gone_unreported_are_not_kept_for_ever() -> None:
    """Rows deleted while the IDL reconnected are never reported: past twice the table's
    size (and a margin), the cache starts over."""
    cache = RowCache(lambda r: r.name)
    for i in range(200):
        cache(Row(i, str(i)))
    cache.forget([], rows=200)
    assert cache(Row(0, "new")) == "0"  # still kept: the table has them
    cache.forget([], rows=10)
    assert cache(Row(0, "new")) == "new"


def test_address_entries_of_a_port() -> None:
    entries = lsp_entries(["0A:58:0A:F4:01:02 10.244.1.2 fd00::2", "router", "dynamic",
                           "0a:58:0a:f4:01:02 10.244.1.2 10.244.1.3"])  # fmt: skip
    ip = ipaddress.ip_address
    assert entries == (("0a:58:0a:f4:01:02", (ip("10.244.1.2"), ip("fd00::2"), ip("10.244.1.3"))),)
