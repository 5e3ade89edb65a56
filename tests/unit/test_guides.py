"""The guides' node configs are what the agent takes: every example (examples/*.toml) loads and
every ``toml`` block of docs/ parses (a block without ``[bgp]`` is a fragment: a minimal
``[bgp]`` is put before it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ovn_frr import config

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```toml\n(.*?)^```", re.S | re.M)
BGP = '[bgp]\nasn = 64512\nrouter_id = "10.0.0.1"\n'
GUIDES = sorted(p.name for p in DOCS.glob("*.md"))


def blocks() -> list[tuple[str, int, str]]:
    out = []
    for guide in GUIDES:
        for i, m in enumerate(BLOCK.finditer((DOCS / guide).read_text())):
            out.append((guide, i, m.group(1)))
    return out


@pytest.mark.parametrize(("guide", "index", "text"), blocks(),
                         ids=[f"{g}-{i}" for g, i, _t in blocks()])  # fmt: skip
def test_a_guides_config_parses(guide: str, index: int, text: str) -> None:
    full = text if re.search(r"^\[bgp\]", text, re.M) else BGP + text
    config.parse(full, source=f"{guide} block {index}")


def test_the_openshift_guide_has_its_config() -> None:
    assert any(g == "openshift.md" and "[ovn_kubernetes]" in t for g, _i, t in blocks())


@pytest.mark.parametrize("path", sorted((DOCS.parent / "examples").glob("*.toml")),
                         ids=lambda p: p.name)  # fmt: skip
def test_an_example_config_loads(path: Path) -> None:
    config.load(path)
