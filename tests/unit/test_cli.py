"""The command line, where it needs no root."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ovn_frr.cli import main


def test_lab_down_all_without_labs_is_not_an_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["lab", "--base", str(tmp_path), "down", "--all"])
    assert res.exit_code == 0, res.output
    assert "no labs" in res.output
