"""The lab's ovn-kubernetes NB (``--topology ovn-kubernetes``) against docs/openshift.md, and
docs/openshift.md against ovn-kubernetes' source."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ovn_frr.lab import Lab, LabSpec
from ovn_frr.lab.ovnk import ovnk_cluster
from ovn_frr.lab.spec import ovnk_spec

DOC = Path(__file__).parents[2] / "docs" / "openshift.md"
#: ovn-kubernetes as fetched into this workplace (absent elsewhere: that check is skipped)
OVNK = Path("/work/.mirror/ovn-kubernetes+ovn-kubernetes/repo")
COMMIT = "8871cd9cec9c"
TABLES = ("Logical_Router", "Logical_Router_Port", "Logical_Switch", "Logical_Switch_Port", "NAT")


def rows() -> list[tuple[str, str, str, str]]:
    """docs/openshift.md's table: (what, lab example, source file, text in it)."""
    out = []
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[2].startswith("`") and cells[2].endswith(".go`"):
            example, source, text = (c.strip("`") for c in cells[1:])
            out.append((cells[0], example, source, text))
    return out


def _blanks(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_doc_lists_the_names() -> None:
    assert len(rows()) >= 40


@pytest.mark.skipif(not OVNK.exists(), reason=f"no copy of ovn-kubernetes at {OVNK}")
@pytest.mark.parametrize(("what", "example", "source", "text"), rows())
def test_each_name_is_in_ovn_kubernetes_source(
    what: str, example: str, source: str, text: str
) -> None:
    found = subprocess.run(
        ["git", f"--git-dir={OVNK}", "show", f"{COMMIT}:go-controller/pkg/{source}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert _blanks(text) in _blanks(found), f"{what}: not in {source} at {COMMIT}"


def _get(lab: Lab, table: str, name: str, column: str) -> str:
    return lab.ovn.nbctl("get", table, name, column).strip().strip('"')  # type: ignore[union-attr]


def _everything(lab: Lab) -> str:
    assert lab.ovn is not None
    return "\n".join(lab.ovn.nbctl("list", t) for t in TABLES)


def test_the_lab_has_ovn_kubernetes_names_and_no_dynamic_routing_option(
    make_lab: Callable[[LabSpec], Lab],
) -> None:
    lab = make_lab(ovnk_spec())
    nodes = ovnk_cluster(lab, "shared")
    assert lab.ovn is not None
    for what, example, _source, _text in rows():
        if example == "-":
            continue
        table, name, *rest = example.split("/", 2)
        if not rest:
            assert _get(lab, table, name, "name") == name, what
            continue
        column, kv = rest[0].split(":", 1)
        key, value = kv.split("=", 1)
        assert _get(lab, table, name, f'{column}:"{key}"') == value, what
    assert "dynamic-routing" not in _everything(lab)
    eip = lab.ovn.nbctl("--bare", "--columns=external_ip,logical_ip,logical_port", "find", "NAT",
                        'external_ids:"k8s.ovn.org/owner-type"=EgressIP')  # fmt: skip
    assert eip.split() == ["172.20.0.10", nodes[0].egress_ips["172.20.0.10"], "k8s-node1"]
    # shared gateway mode: a node subnet's traffic leaves through its GR (join address)
    routes = lab.ovn.nbctl("lr-route-list", "ovn_cluster_router")
    assert re.search(r"10\.244\.1\.0/24\s+100\.64\.0\.2 src-ip", routes), routes
    assert "ct-commit-all" not in _everything(lab)


def test_local_gateway_mode(make_lab: Callable[[LabSpec], Lab]) -> None:
    lab = make_lab(ovnk_spec())
    ovnk_cluster(lab, "local")
    assert lab.ovn is not None
    # base_network_controller.go syncNodeManagementPort: to the management port
    routes = lab.ovn.nbctl("lr-route-list", "ovn_cluster_router")
    assert re.search(r"10\.244\.1\.0/24\s+10\.244\.1\.2 src-ip", routes), routes
    for router in ("cluster_udn_blue_ovn_cluster_router", "ns1_green_transit_router"):
        assert _get(lab, "Logical_Router", router, "options:ct-commit-all") == "true"
    assert _get(lab, "Logical_Router", "ovn_cluster_router", "options") == "{}"
