"""vtysh output -> errors, on output captured from FRR 8.4 (runner injected: no FRR needed)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ovn_frr.frr.vtysh import Result, Vtysh, VtyshError, config_errors

# `vtysh -f` of a `router bgp 64512 vrf blue` batch while the operator runs AS 65099 there
STDOUT = "BGP is already running; AS is 65099\n% [ZEBRA] Unknown command: XFRR_end_configuration\n"
STDERR = (
    "line 1: Failure to communicate[13] to bgpd, line: router bgp 64512 vrf blue\n\n"
    "line 2: % Unknown command[4]:  bgp router-id 1.1.1.1\n"
    "line 3: % Unknown command[4]:  address-family ipv4 unicast\n"
)


def test_config_errors() -> None:
    assert config_errors(STDERR) == [
        "line 1: Failure to communicate[13] to bgpd, line: router bgp 64512 vrf blue",
        "line 2: % Unknown command[4]:  bgp router-id 1.1.1.1",
        "line 3: % Unknown command[4]:  address-family ipv4 unicast",
    ]
    assert config_errors(STDOUT) == []  # vtysh's end marker is noise
    assert config_errors("% Unknown command: show bgp nothing\n") == [
        "% Unknown command: show bgp nothing"
    ]
    assert config_errors("line vty\n exec-timeout 0\n") == []  # running-config is not an error


def test_a_rejected_batch_reports_the_daemons_words_first() -> None:
    def run(argv: Sequence[str], timeout: float = 120.0) -> Result:
        return Result(2, STDOUT, STDERR)

    with pytest.raises(VtyshError) as info:
        Vtysh("/run/frr", run=run).apply("router bgp 64512 vrf blue\n")
    message = str(info.value)
    assert message.startswith("vtysh -f rejected the batch: BGP is already running; AS is 65099; "
                              "line 1: Failure to communicate[13] to bgpd, line: router bgp "
                              "64512 vrf blue; line 2")  # fmt: skip
    assert "XFRR" not in message


def test_a_batch_waits_for_another_session_to_release_the_datastore() -> None:
    """FRR >= 9: a session refused because another holds the datastore applied nothing; the
    batch is sent again until it is taken, or ``lock_wait_s`` has passed."""
    locked = Result(1, "% Can't enter config; running datastore locked by another session\n", "")
    calls: list[int] = []

    def run(argv: Sequence[str], timeout: float = 120.0) -> Result:
        calls.append(1)
        return locked if len(calls) < 3 else Result(0, "", "")

    Vtysh("/run/frr", run=run).apply("router bgp 64512\n")
    assert len(calls) == 3

    def always(argv: Sequence[str], timeout: float = 120.0) -> Result:
        return locked

    with pytest.raises(VtyshError, match="locked by another session"):
        Vtysh("/run/frr", run=always, lock_wait_s=0.0).apply("x\n")


def test_no_running_config_while_bgpd_is_down() -> None:
    """A batch planned from zebra's config alone would land in zebra alone."""
    asked: list[list[str]] = []
    bgpd = {"up": False}

    def run(argv: Sequence[str], timeout: float = 120.0) -> Result:
        asked.append(list(argv[3:]))
        if argv[-1] == "show bgp vrfs json" and not bgpd["up"]:
            return Result(1, "", "bgpd is not running\n")
        return Result(0, "{}" if argv[-1].endswith("json") else "router bgp 64512\n", "")

    vtysh = Vtysh("/run/frr", run=run)
    with pytest.raises(VtyshError, match="bgpd is not running"):
        vtysh.running_config()
    assert asked == [["-c", "show bgp vrfs json"]]
    bgpd["up"] = True
    assert vtysh.running_config() == "router bgp 64512\n"
