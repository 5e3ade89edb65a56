"""Node config: valid files parse to typed values; each bad config gives its exact error line."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from click.testing import CliRunner

from ovn_frr import config
from ovn_frr.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples"

BASE = """
[bgp]
asn = 64512
router_id = "192.0.2.10"
"""

NEIGHBOR = """
[[bgp.neighbors]]
address = "10.255.0.2"
remote_as = 65001
"""


def test_example_config_parses() -> None:
    cfg = config.load(EXAMPLES / "node.toml")
    assert cfg.bgp.asn == 64512
    assert cfg.bgp.router_id == ipaddress.IPv4Address("192.0.2.10")
    assert cfg.ovn.chassis == "node-1"
    assert str(cfg.frr.fpm_listen) == "127.0.0.1:2620"
    nb0, nb1 = cfg.bgp.neighbors
    assert nb0.address == ipaddress.ip_address("10.255.0.2")
    assert nb0.bfd_profile == "fast"
    assert nb1.export_filters[0].prefix == ipaddress.ip_network("10.128.0.0/14")
    assert cfg.bfd.profiles["fast"].detect_multiplier == 3


def test_defaults() -> None:
    cfg = config.parse(BASE)
    assert cfg.ovn.nb == "unix:/run/ovn/ovnnb_db.sock"
    assert cfg.ovn.chassis is None
    assert cfg.frr.vty_socket_dir == "/run/frr"
    assert cfg.frr.fpm_listen.port == 2620
    assert cfg.bgp.neighbors == ()


def test_config_is_immutable() -> None:
    cfg = config.parse(BASE + NEIGHBOR)
    with pytest.raises(Exception, match="frozen"):
        cfg.bgp.asn = 1


def test_ipv6_fpm_and_remote_as_keywords() -> None:
    cfg = config.parse(
        BASE
        + '[[bgp.neighbors]]\naddress = "fd00::2"\nremote_as = "external"\n'
        + '[frr]\nfpm_listen = "[::1]:2621"\n'
    )
    assert cfg.bgp.neighbors[0].remote_as == "external"
    assert str(cfg.frr.fpm_listen) == "[::1]:2621"


BAD_CONFIGS = [
    # (name, config text, expected error lines)
    (
        "bad neighbor address",
        BASE + NEIGHBOR + '[[bgp.neighbors]]\naddress = "10.0.0.300"\nremote_as = 65001\n',
        ["bgp.neighbors[1].address: '10.0.0.300' is not an IP address"],
    ),
    (
        "asn as string",
        '[bgp]\nasn = "64512"\nrouter_id = "192.0.2.10"\n',
        ["bgp.asn: expected an AS number (1..4294967295), got '64512'"],
    ),
    (
        "asn out of range",
        '[bgp]\nasn = 4294967296\nrouter_id = "192.0.2.10"\n',
        ["bgp.asn: 4294967296 is not an AS number (1..4294967295)"],
    ),
    (
        "router id is IPv6",
        '[bgp]\nasn = 1\nrouter_id = "fd00::1"\n',
        ["bgp.router_id: 'fd00::1' is not an IPv4 address"],
    ),
    ("missing bgp", '[ovn]\nchassis = "n1"\n', ["bgp: required key is missing"]),
    (
        "typo in neighbor key",
        BASE + '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_asn = 65001\n',
        [
            "bgp.neighbors[0].remote_as: required key is missing",
            "bgp.neighbors[0].remote_asn: unknown key (did you mean 'remote_as'?)",
        ],
    ),
    ("unknown section", BASE + "[bgpp]\nx = 1\n", ["bgpp: unknown key (did you mean 'bgp'?)"]),
    (
        "undefined bfd profile",
        BASE + NEIGHBOR + 'bfd_profile = "fast"\n',
        ["bgp.neighbors[0].bfd_profile: no profile 'fast' in [bfd.profiles] (none defined)"],
    ),
    (
        "bfd multiplier too small",
        BASE + "[bfd.profiles.fast]\ndetect_multiplier = 1\n",
        ["bfd.profiles.fast.detect_multiplier: 1 is too small (minimum 2)"],
    ),
    (
        "typo in bfd profile",
        BASE + "[bfd.profiles.fast]\nrecieve_interval_ms = 100\n",
        [
            "bfd.profiles.fast.recieve_interval_ms: unknown key "
            "(did you mean 'receive_interval_ms'?)"
        ],
    ),
    (
        "keepalive not below hold",
        BASE + NEIGHBOR + "keepalive = 10\nhold = 9\n",
        ["bgp.neighbors[0].keepalive: 10 must be less than hold (9)"],
    ),
    (
        "filter le beyond prefix length",
        BASE + NEIGHBOR + 'import_filters = [{ prefix = "10.0.0.0/8", ge = 4, le = 33 }]\n',
        [
            "bgp.neighbors[0].import_filters[0].ge: 4 is shorter than the prefix length 8",
            "bgp.neighbors[0].import_filters[0].le: 33 is longer than an IPv4 prefix",
        ],
    ),
    (
        "filter prefix with host bits",
        BASE + NEIGHBOR + 'export_filters = [{ prefix = "10.1.2.3/16" }]\n',
        ["bgp.neighbors[0].export_filters[0].prefix: '10.1.2.3/16' has host bits set"],
    ),
    (
        "unknown address family",
        BASE + NEIGHBOR + 'address_families = ["ipv4-unicast", "ipv5"]\n',
        [
            "bgp.neighbors[0].address_families[1]: 'ipv5' is not one of "
            "'ipv4-unicast', 'ipv6-unicast' or 'l2vpn-evpn'"
        ],
    ),
    (
        "duplicate neighbor",
        BASE + NEIGHBOR + NEIGHBOR,
        ["bgp.neighbors[1].address: 10.255.0.2 is already neighbor 0"],
    ),
    (
        "bad nb remote",
        BASE + '[ovn]\nnb = "http://nb:6641"\n',
        [
            "ovn.nb: 'http://nb:6641' is not an OVSDB remote "
            "(unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT)"
        ],
    ),
    (
        "ssl without certificates",
        BASE + '[ovn]\nnb = "ssl:192.0.2.1:6641"\nssl_key = "/k"\n',
        [
            "ovn.ssl_cert: required when nb or sb uses ssl:",
            "ovn.ssl_ca: required when nb or sb uses ssl:",
        ],
    ),
    (
        "bad fpm port",
        BASE + '[frr]\nfpm_listen = "127.0.0.1:70000"\n',
        ["frr.fpm_listen: '127.0.0.1:70000': port must be 1..65535"],
    ),
    (
        "wrong type for neighbors",
        BASE + "[bgp.neighbors]\naddress = 1\n",
        ["bgp.neighbors: expected an array, got a table"],
    ),
    (
        "scoped link-local neighbor",
        BASE + '[[bgp.neighbors]]\naddress = "fe80::1%eth0"\nremote_as = 65001\n',
        [
            "bgp.neighbors[0].address: 'fe80::1%eth0': a scoped address is not supported; a "
            "link-local neighbor needs FRR's interface form (BGP unnumbered), which ovn-frr "
            "does not configure: use a global address"
        ],
    ),
    (
        "link-local neighbor",
        BASE + '[[bgp.neighbors]]\naddress = "fe80::1"\nremote_as = 65001\n',
        [
            "bgp.neighbors[0].address: 'fe80::1': a link-local neighbor is not supported "
            "(use a global address)"
        ],
    ),
    (
        "IPv4-mapped neighbor",
        BASE + '[[bgp.neighbors]]\naddress = "::ffff:10.0.0.1"\nremote_as = 65001\n',
        [
            "bgp.neighbors[0].address: '::ffff:10.0.0.1' is an IPv4-mapped IPv6 address: "
            "write the IPv4 address 10.0.0.1"
        ],
    ),
    (
        "multicast neighbor",
        BASE + '[[bgp.neighbors]]\naddress = "224.0.0.5"\nremote_as = 65001\n',
        ["bgp.neighbors[0].address: '224.0.0.5' is not a unicast address of a BGP neighbor"],
    ),
    (
        "control characters",
        BASE
        + NEIGHBOR
        + 'description = "tor1\\nrouter bgp 1"\npassword = "a\\tb"\n'
        + 'update_source = "eth0\\n"\n',
        [
            "bgp.neighbors[0].description: must not contain control characters (found '\\n')",
            "bgp.neighbors[0].password: must not contain control characters",
            "bgp.neighbors[0].update_source: must not contain control characters (found '\\n')",
        ],
    ),
    (
        "password of another type",
        BASE + NEIGHBOR + "password = 12345678\n",
        ["bgp.neighbors[0].password: expected a string"],
    ),
    (
        "a table for an array, with a password in it",
        BASE + '[bgp.neighbors]\naddress = "10.0.0.1"\npassword = "SuperSecret1"\n',
        ["bgp.neighbors: expected an array, got a table"],
    ),
    (
        "unicode line breaks",
        BASE + NEIGHBOR + 'description = "a\\u2028b"\nupdate_source = "x\\u0085y"\n',
        [
            "bgp.neighbors[0].description: must not contain control characters (found '\\u2028')",
            "bgp.neighbors[0].update_source: must not contain control characters (found '\\x85')",
        ],
    ),
    (
        "spaces",
        BASE + NEIGHBOR + 'password = " s3cret"\nupdate_source = "eth 0"\n',
        [
            "bgp.neighbors[0].password: must not start or end with a space",
            "bgp.neighbors[0].update_source: 'eth 0' must be one word (no spaces)",
        ],
    ),
    (
        "cross-key problems beside type errors",
        BASE
        + "[import]\nprotocols = []\n[agent]\ndebounce_ms = -1\n"
        + NEIGHBOR
        + 'bfd_profile = "fast"\nkeepalive = 30\nhold = 10\n'
        + '[[bgp.neighbors]]\naddress = "10.255.0.3"\nremote_as = "65001"\n',
        [
            "bgp.neighbors[1].remote_as: '65001' is not an AS number, 'internal' or 'external'",
            "agent.debounce_ms: -1 is too small (minimum 0)",
            "import.protocols: must name at least one protocol",
            "bgp.neighbors[0].bfd_profile: no profile 'fast' in [bfd.profiles] (none defined)",
            "bgp.neighbors[0].keepalive: 30 must be less than hold (10)",
        ],
    ),
    (
        "password and password_file",
        BASE + NEIGHBOR + 'password = "a"\npassword_file = "/nonexistent/secret"\n',
        [
            "bgp.neighbors[0].password: password and password_file are exclusive",
            "bgp.neighbors[0].password_file: cannot read '/nonexistent/secret': "
            "No such file or directory",
        ],
    ),
    (
        "l3vni",
        BASE
        + NEIGHBOR
        + "[evpn.vnis.100]\n[vrfs.red]\nl3vni = 100\n[vrfs.blue]\nl3vni = 100\n"
        + "[vrfs.green]\nl3vni = 16777216\n",
        [
            "vrfs.green.l3vni: 16777216 is too large (maximum 16777215)",
        ],
    ),
    (
        "l3vni cross-key",
        BASE + NEIGHBOR + "[evpn.vnis.100]\n[vrfs.red]\nl3vni = 100\n[vrfs.blue]\nl3vni = 100\n",
        [
            "vrfs.blue.l3vni: 100 is also in evpn.vnis (an L2VNI's overrides)",
            "vrfs.blue.l3vni: needs EVPN: a neighbor with l2vpn-evpn in its address_families",
            "vrfs.red.l3vni: 100 is already the L3VNI of VRF blue",
            "vrfs.red.l3vni: 100 is also in evpn.vnis (an L2VNI's overrides)",
            "vrfs.red.l3vni: needs EVPN: a neighbor with l2vpn-evpn in its address_families",
        ],
    ),
    (
        "the kernel VXLAN devices' port is not OVS's",
        BASE + "[evpn]\nudp_port = 4789\ncontrol_udp_port = 4789\n",
        ["evpn.control_udp_port: 4789 is also udp_port"],
    ),
    (
        "toml syntax",
        "[bgp\nasn = 1\n",
        [
            "test.toml: TOML syntax error: Expected ']' at the end of a table declaration "
            "(at line 1, column 5)"
        ],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS]
)
def test_bad_config_error_lines(text: str, expected: list[str]) -> None:
    with pytest.raises(config.ConfigError) as info:
        config.parse(text, source="test.toml")
    assert info.value.problems == expected


def test_check_config_cli_ok() -> None:
    res = CliRunner().invoke(main, ["check-config", str(EXAMPLES / "node.toml")])
    assert res.exit_code == 0, res.output
    assert "ok" in res.output


def test_check_config_cli_reports_each_problem_without_traceback(tmp_path: Path) -> None:
    f = tmp_path / "node.toml"
    f.write_text(BASE + '[[bgp.neighbors]]\naddress = "10.0.0.300"\nremote_as = 0\n')
    res = CliRunner().invoke(main, ["check-config", str(f)])
    assert res.exit_code == 1
    assert res.output.splitlines() == [
        "bgp.neighbors[0].address: '10.0.0.300' is not an IP address",
        "bgp.neighbors[0].remote_as: 0 is not an AS number (1..4294967295)",
    ]
    assert "Traceback" not in res.output


def test_check_config_cli_missing_file(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["check-config", str(tmp_path / "nope.toml")])
    assert res.exit_code == 1
    assert res.output.strip() == f"{tmp_path / 'nope.toml'}: cannot read: No such file or directory"


def test_run_validates_config_first(tmp_path: Path) -> None:
    f = tmp_path / "node.toml"
    f.write_text("[bgp]\n")
    res = CliRunner().invoke(main, ["run", "--config", str(f)])
    assert res.exit_code == 1
    assert "bgp.asn: required key is missing" in res.output


def test_password_file_is_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "tor1").write_text("s3cret\n")  # as `echo` or a Secret writes it
    (tmp_path / "node.toml").write_text(BASE + NEIGHBOR + 'password_file = "secrets/tor1"\n')
    cfg = config.load(tmp_path / "node.toml")
    assert cfg.bgp.neighbors[0].password == "s3cret"
    (tmp_path / "secrets" / "tor1").write_text("two\nlines\n")
    with pytest.raises(config.ConfigError) as info:
        config.load(tmp_path / "node.toml")
    (problem,) = info.value.problems
    assert problem.endswith("must not contain control characters")
    assert "two" not in problem  # a secret is never echoed
