"""vtysh output -> errors, on output captured from FRR 8.4 (runner injected: no FRR needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from ovn_frr.frr.diff import held_by, parse, paths
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
    # FRR 10.7's mgmtd: a commit that succeeded with a note (mgmt_vty_frontend.c)
    notes = "No changes found to be committed!\n% Configuration applied with notes:\n"
    assert config_errors(notes) == []


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
        if argv[3:5] == ["-d", "bgpd"] and not bgpd["up"]:
            return Result(1, "", "Exiting: failed to connect to any daemons.\n")
        return Result(0, "router bgp 64512\n", "")

    vtysh = Vtysh("/run/frr", run=run)
    with pytest.raises(VtyshError, match="failed to connect"):
        vtysh.running_config()
    assert asked == [["-d", "bgpd", "-c", "show running-config"]]
    bgpd["up"] = True
    assert vtysh.running_config() == "router bgp 64512\n"


ZEBRA_AND_BGPD = (
    "frr version 8.4.4\n!\nrouter bgp 64512\n neighbor 10.99.0.2 remote-as 65099\n"
    " address-family ipv4 unicast\n  neighbor 10.99.0.2 route-map rm-in in\n"
    " exit-address-family\nexit\n!\nip prefix-list pl seq 5 permit 10.0.0.0/8\n!\n"
    "route-map rm-in permit 10\nexit\n!\nroute-map rm-out permit 10\n"
    " match ip address prefix-list pl\n set large-community 64512:1:1 additive\nexit\n!\nend\n"
)


def test_route_maps_and_prefix_lists_count_only_as_bgpd_holds_them() -> None:
    """watchfrr restarted bgpd alone: zebra still holds the route-maps and prefix-lists and
    vtysh's merged config shows them; bgpd's own config decides (measured on FRR 8.4)."""
    bgpd_alone = ("frr version 8.4.4\n!\nrouter bgp 64512\n neighbor 10.99.0.2 remote-as 65099\n"
                  " address-family ipv4 unicast\n  neighbor 10.99.0.2 route-map rm-in in\n"
                  " exit-address-family\nexit\n!\nroute-map rm-out permit 10\n"
                  " set large-community 64512:1:1 additive\nexit\n!\nend\n")  # fmt: skip

    def run(argv: Sequence[str], timeout: float = 120.0) -> Result:
        return Result(0, bgpd_alone if "-d" in argv else ZEBRA_AND_BGPD, "")

    seen = set(paths(parse(Vtysh("/run/frr", run=run).running_config())))
    assert ("ip prefix-list pl seq 5 permit 10.0.0.0/8",) not in seen
    assert ("route-map rm-in permit 10",) not in seen
    assert ("route-map rm-out permit 10", "match ip address prefix-list pl") not in seen
    assert ("route-map rm-out permit 10", "set large-community 64512:1:1 additive") in seen
    assert ("router bgp 64512", "address-family ipv4 unicast",
            "neighbor 10.99.0.2 route-map rm-in in") in seen  # fmt: skip
    # bgpd holding all of it: the merged text as vtysh gave it
    assert held_by(ZEBRA_AND_BGPD, ZEBRA_AND_BGPD) == ZEBRA_AND_BGPD


def test_bgpds_own_config_is_read_until_it_holds_everything_and_when_its_pid_changes(
    tmp_path: Path,
) -> None:
    frr, proc = tmp_path / "frr", tmp_path / "proc"
    frr.mkdir()

    def start(pid: int, comm: str = "bgpd") -> None:
        (frr / "bgpd.pid").write_text(f"{pid}\n")
        (proc / str(pid)).mkdir(parents=True, exist_ok=True)
        (proc / str(pid) / "comm").write_text(f"{comm}\n")

    own = {"text": ZEBRA_AND_BGPD}
    asked: list[bool] = []

    def run(argv: Sequence[str], timeout: float = 120.0) -> Result:
        asked.append("-d" in argv)  # bgpd's own config, or the merged one
        return Result(0, own["text"] if "-d" in argv else ZEBRA_AND_BGPD, "")

    def reads(n: int) -> list[bool]:
        asked.clear()
        for _ in range(n):
            vtysh.running_config()
        return list(asked)

    vtysh = Vtysh(str(frr), run=run, proc=proc)
    start(100)
    assert reads(3) == [True, False, False, False]  # bgpd held it all: the merged one alone
    start(200)  # watchfrr started bgpd again, without the route-maps zebra kept
    own["text"] = "router bgp 64512\n"
    assert "route-map rm-in permit 10" not in vtysh.running_config()
    assert reads(2) == [True, False] * 2  # read until it holds them again
    own["text"] = ZEBRA_AND_BGPD
    assert reads(2) == [True, False, False]
    start(300, comm="python3")  # not bgpd (a pid file left behind, the pid reused)
    assert reads(2) == [True, False] * 2
