"""The command line, where it needs no root."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from ovn_frr.cli import main


def test_lab_down_all_without_labs_is_not_an_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["lab", "--base", str(tmp_path), "down", "--all"])
    assert res.exit_code == 0, res.output
    assert "no labs" in res.output


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.toml")), ids=str)
def test_example_configs_are_valid(example: Path) -> None:
    res = CliRunner().invoke(main, ["check-config", str(example)])
    assert res.exit_code == 0, res.output
    assert ": ok (AS " in res.output


def test_packaged_commands_are_commands_of_this_cli() -> None:
    """The systemd unit and the container run sub-commands and options that exist."""
    unit = (ROOT / "packaging/systemd/ovn-frr.service").read_text()
    image = (ROOT / "packaging/container/Containerfile").read_text()
    for line in unit.splitlines():
        if line.startswith(("ExecStart=", "ExecStartPre=")):
            args = shlex.split(line.split("=", 1)[1])[1:]
            args = [a.replace("/etc/ovn-frr/ovn-frr.toml", str(ROOT / "examples/node.toml"))
                    for a in args]  # fmt: skip
            if "run" in args:
                args = [*args[: args.index("run") + 1], "--help"]
            res = CliRunner().invoke(main, args)
            assert res.exit_code == 0, (line, res.output)
    assert 'ENTRYPOINT ["ovn-frr"]' in image
    assert 'CMD ["-v", "run", "--config", "/etc/ovn-frr/ovn-frr.toml"]' in image


def test_status_and_trace_without_an_agent(tmp_path: Path) -> None:
    for args in (["status"], ["trace", "10.0.0.0/8"]):
        res = CliRunner().invoke(main, [*args, "--socket", str(tmp_path / "none.sock")])
        assert res.exit_code == 2
        assert "cannot reach the agent" in res.output and "ovn-frr run" in res.output
