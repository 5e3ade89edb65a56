"""The FRR config diff: minimal batches, operator contexts kept, FRR's semantics respected."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from ovn_frr import config
from ovn_frr.config.convert import frr_settings
from ovn_frr.core.frr_model import desired_frr
from ovn_frr.frr.diff import Node, diff, negate, parse
from ovn_frr.frr.render import render
from tests.golden_cases import cases
from tests.unit.fakefrr import FakeFrr

BGP = """router bgp 64512
 bgp router-id 192.0.2.10
 neighbor 10.255.0.2 remote-as 65001
 neighbor 10.255.0.2 description tor1
 address-family ipv4 unicast
  network 10.128.0.0/23
  neighbor 10.255.0.2 activate
  neighbor 10.255.0.2 route-map ovnfrr-in-x in
 exit-address-family
exit
route-map ovnfrr-in-x permit 10
 match ip address prefix-list ovnfrr-any-ipv4
exit
ip prefix-list ovnfrr-any-ipv4 seq 5 permit 0.0.0.0/0 le 32
"""


def test_same_config_no_batch() -> None:
    assert diff(BGP, BGP) == ""


def test_added_and_removed_networks_in_their_context() -> None:
    new = BGP.replace("  network 10.128.0.0/23\n", "  network 10.128.2.0/23\n")
    assert diff(BGP, new) == (
        "router bgp 64512\n address-family ipv4 unicast\n  no network 10.128.0.0/23\n"
        "  network 10.128.2.0/23\n exit-address-family\nexit\n"
    )


def test_removed_neighbor_is_one_line() -> None:
    new = "\n".join(line for line in BGP.splitlines() if "10.255.0.2" not in line) + "\n"
    assert diff(BGP, new) == "router bgp 64512\n no neighbor 10.255.0.2 remote-as 65001\nexit\n"


def test_remote_as_change_is_set_in_place() -> None:
    new = BGP.replace("remote-as 65001", "remote-as 65002")
    assert diff(BGP, new) == "router bgp 64512\n neighbor 10.255.0.2 remote-as 65002\nexit\n"


def test_own_objects_are_removed_whole_shared_contexts_never() -> None:
    batch = diff(BGP, "")
    assert "no route-map ovnfrr-in-x permit 10\n" in batch
    assert "no ip prefix-list ovnfrr-any-ipv4 seq 5 permit 0.0.0.0/0 le 32\n" in batch
    assert "no router bgp" not in batch  # the operator may have neighbors in it
    assert " no bgp router-id 192.0.2.10\n" in batch
    assert "no match" not in batch  # inside a removed route-map entry: goes with it


def test_negate() -> None:
    assert negate("no bgp default ipv4-unicast") == "bgp default ipv4-unicast"
    assert negate("network 10.0.0.0/8") == "no network 10.0.0.0/8"
    assert negate("fpm address 127.0.0.1 port 2620") == "no fpm address"
    assert negate("advertise ipv6 unicast route-map ovnfrr-type5") == "no advertise ipv6 unicast"


# --- property: replaying the batch on a model of FRR gives the new config --------------------


def _replay(tree: Node, batch: str) -> None:
    """Apply a vtysh batch to a config tree the way FRR treats these commands."""
    frr = FakeFrr()
    frr.tree = tree
    assert frr.apply_batch(batch) == ()


def _lines(node: Node, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    out = set()
    for line, child in node.children.items():
        sub = _lines(child, (*path, line))
        if not (line.startswith(("router bgp ", "bfd", "address-family ", "vrf ")) and not sub):
            out.add((*path, line))  # an emptied shared context is left in place: ignore it
        out |= sub
    return out


NEIGHBORS = [
    '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\nbfd_profile = "fast"\n',
    '[[bgp.neighbors]]\naddress = "10.255.1.2"\nremote_as = 65002\nkeepalive = 3\nhold = 9\n'
    'export_filters = [{ prefix = "10.128.0.0/14", le = 32 }]\n',
    '[[bgp.neighbors]]\naddress = "10.255.1.2"\nremote_as = 65003\n',  # remote-as changed
    '[[bgp.neighbors]]\naddress = "fd00:255::2"\nremote_as = "external"\n'
    'import_filters = [{ prefix = "2001:db8::/32", le = 64 }]\n',
]
PREFIXES = ["10.128.0.0/23", "10.128.2.5/32", "172.20.0.10/32", "2001:db8:10::/64"]


def _config(neighbors: list[int], prefixes: list[bool], asn: int) -> str:
    chosen = {i for i in neighbors if not (i == 2 and 1 in neighbors)}  # one 10.255.1.2
    text = f'[bgp]\nasn = {asn}\nrouter_id = "192.0.2.10"\n[bfd.profiles.fast]\n'
    text += "".join(NEIGHBORS[i] for i in sorted(chosen))
    nets = [ipaddress.ip_network(p) for p, keep in zip(PREFIXES, prefixes, strict=True) if keep]
    return render(desired_frr(frr_settings(config.parse(text)), {"": nets}))


configs = st.builds(
    _config,
    st.lists(st.integers(0, len(NEIGHBORS) - 1), unique=True),
    st.lists(st.booleans(), min_size=len(PREFIXES), max_size=len(PREFIXES)),
    st.just(64512),
)


@settings(max_examples=150, deadline=None)
@given(configs, configs)
def test_replayed_batch_reaches_the_new_config(old: str, new: str) -> None:
    state = parse(old)
    _replay(state, diff(old, new))
    assert _lines(state) == _lines(parse(new))


def test_goldens_diff_to_each_other() -> None:
    texts = [render(m) for m in cases().values()]
    for old in texts:
        for new in texts:
            state = parse(old)
            _replay(state, diff(old, new))
            assert _lines(state) == _lines(parse(new))
