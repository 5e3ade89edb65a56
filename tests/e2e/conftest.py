from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ovn_frr.lab import Lab, LabSpec, LinkSpec, NodeSpec, PeerSpec, wait_for
from ovn_frr.lab.agent import AgentProcess
from ovn_frr.lab.nbtopo import OpenShiftNode, openshift_node

SPEC = LabSpec(
    nodes=(NodeSpec("node1"),),
    peers=(PeerSpec("tor1", 65001), PeerSpec("tor2", 65002)),
    links=(LinkSpec("node1", "tor1"), LinkSpec("node1", "tor2")),
)


@dataclass
class ImportLab:
    lab: Lab
    topo: OpenShiftNode
    agent: AgentProcess
    agent_config: str = ""

    def routes(self, router: str = "GR_node1") -> dict[str, set[tuple[str, str]]]:
        """prefix -> {(nexthop, output_port)} of the rows ovn-frr owns on ``router``."""
        assert self.lab.ovn is not None
        result: dict[str, set[tuple[str, str]]] = {}
        for prefix, nexthop, port in self.lab.ovn.owned_rows(router, "node1"):
            result.setdefault(prefix, set()).add((nexthop, port))
        return result

    def restart_agent(self) -> None:
        self.agent.stop()
        self.agent = AgentProcess.start(self.lab, "node1", self.agent_config)


#: Tests that do not restart FRR need not wait out the default 15 s replay hold.
FAST_SYNC = "[import]\nreplay_hold_ms = 2000\n"


@contextlib.contextmanager
def import_lab(spec: LabSpec = SPEC, agent_config: str = FAST_SYNC) -> Iterator[ImportLab]:
    """A lab with an OpenShift-shaped NB and the agent running on node1."""
    lab = Lab(spec)
    lab.up()
    state = None
    try:
        topo = openshift_node(lab)
        state = ImportLab(lab, topo, AgentProcess.start(lab, "node1", agent_config), agent_config)
        lab.wait_bgp_up()
        wait_for(lambda: "fpm_replay_complete" in state.agent.output(), timeout=30,
                 what="agent synced")  # fmt: skip
        yield state
    finally:
        if state is not None:
            state.agent.stop()
        lab.down()


@pytest.fixture(scope="module")
def imp() -> Iterator[ImportLab]:
    with import_lab() as state:
        yield state
