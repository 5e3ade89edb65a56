from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ovn_frr.lab import Lab, LabSpec


@pytest.fixture
def lab_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Short path: unix socket paths are limited to 107 bytes.
    return Path("/run/ovn-frr-lab")


@pytest.fixture
def make_lab(lab_base: Path) -> Iterator[Callable[[LabSpec], Lab]]:
    """Build labs; each one is torn down when the test ends, whatever happened."""
    labs: list[Lab] = []

    def make(spec: LabSpec) -> Lab:
        lab = Lab(spec, base=lab_base)
        labs.append(lab)
        lab.up()
        return lab

    yield make
    for lab in labs:
        lab.down()
