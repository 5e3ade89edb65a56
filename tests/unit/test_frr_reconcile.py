"""FRR kept at ovn-frr's config, compared with what FRR runs: ownership, drift repair, rejected
lines isolated and rolled back, back-off (on a model of FRR: tests/unit/fakefrr.py)."""

from __future__ import annotations

import ipaddress

import pytest

from ovn_frr import config
from ovn_frr.config.convert import frr_settings
from ovn_frr.core.frr_model import desired_frr
from ovn_frr.frr.apply import FrrApplier, show
from ovn_frr.frr.diff import parse, paths
from ovn_frr.frr.plan import plan
from ovn_frr.frr.render import render
from ovn_frr.frr.vtysh import VtyshError
from tests.unit.fakefrr import FakeFrr, load

TOR1 = '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\nbfd_profile = "fast"\n'
TOR2 = '[[bgp.neighbors]]\naddress = "10.255.1.2"\nremote_as = 65002\n'
#: the node's own address: FRR refuses it as a neighbor, check-config cannot know it
BAD = '[[bgp.neighbors]]\naddress = "10.255.0.1"\nremote_as = 65003\n'
BASE = '[bgp]\nasn = 64512\nrouter_id = "192.0.2.10"\n[bfd.profiles.fast]\n'
OPERATOR = "ip prefix-list operator-list seq 5 permit 10.0.0.0/8\n"


def desired(*neighbors: str, nets: tuple[str, ...] = ("10.128.0.0/23",), vrf: str = "") -> str:
    cfg = frr_settings(config.parse(BASE + "".join(neighbors)))
    return render(desired_frr(cfg, {vrf: [ipaddress.ip_network(n) for n in nets]}))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def lines(frr: FakeFrr) -> set[tuple[str, ...]]:
    return set(paths(parse(frr.running_config())))


def converge(applier: FrrApplier, text: str, adopt: bool = False) -> int:
    """Checks until FRR matches (what a reconciler does when a check asks for another)."""
    for i in range(10):
        if not applier.check(text, adopt).again:
            return i + 1
    raise AssertionError("no convergence")


def test_an_agent_restart_adopts_what_frr_has_and_sends_nothing() -> None:
    frr = FakeFrr()
    text = desired(TOR1, TOR2)
    load(frr, text)
    applier = FrrApplier(frr)
    result = applier.check(text)
    assert (result.sent, result.drift, frr.batches[1:]) == (0, 0, [])


def test_lost_lines_come_back_as_drift_and_operator_lines_stay() -> None:
    frr = FakeFrr()
    load(frr, OPERATOR + "router bgp 64512\n neighbor 10.99.0.2 remote-as 65099\nexit\n")
    text = desired(TOR1, TOR2)
    applier = FrrApplier(frr)
    first = applier.check(text)
    assert first.sent > 10 and first.drift == 0  # the start: adopted, not drift
    want = lines(frr)
    load(frr, "router bgp 64512\n no neighbor 10.255.1.2 remote-as 65002\nexit\n")
    result = applier.check(text)
    assert result.drift == result.sent == 4  # the neighbor, its 3 address-family lines
    assert lines(frr) == want
    assert "no " not in frr.batches[-1]  # nothing removed: only what was missing
    assert (applier.drift_lines, applier.drift_checks) == (4, 1)
    # the whole instance removed and re-created by hand with only an operator neighbor
    load(frr, "no router bgp 64512\nrouter bgp 64512\n neighbor 10.99.0.2 remote-as 65099\nexit\n")
    applier.check(text)
    assert lines(frr) == want
    assert ("router bgp 64512", "neighbor 10.99.0.2 remote-as 65099") in want
    assert ("ip prefix-list operator-list seq 5 permit 10.0.0.0/8",) in want


def test_a_rejected_neighbor_never_takes_the_good_one_down() -> None:
    """The agent restarts with a neighbor FRR rejects; FRR already runs the rest."""
    frr = FakeFrr()
    load(frr, desired(TOR1, TOR2))
    clock = Clock()
    applier = FrrApplier(frr, clock)
    bad_unit = ("router bgp 64512", "neighbor 10.255.0.1")

    def reject(path: tuple[str, ...]) -> str | None:
        return (
            "Can not configure the local system as neighbor" if "10.255.0.1" in path[-1] else None
        )

    frr.reject = reject
    text = desired(TOR1, TOR2, BAD)
    result = applier.check(text)
    assert result.again and result.rejected[0][0][-1] == "neighbor 10.255.0.1 remote-as 65003"
    assert list(applier.held) == [bad_unit]
    assert applier.held[bad_unit].reason == "Can not configure the local system as neighbor"
    converge(applier, text)
    # the good neighbors were never touched: no batch removed any of their lines
    assert not any("no neighbor 10.255" in b for b in frr.batches)
    assert ("router bgp 64512", "neighbor 10.255.0.2 remote-as 65001") in lines(frr)
    # held: not sent again until its retry (1 s, then 2 s, ...)
    sent = len(frr.batches)
    applier.check(text)
    assert len(frr.batches) == sent
    clock.now += 1.0
    applier.check(text)
    assert len(frr.batches) == sent + 1 and applier.held[bad_unit].attempts == 2
    assert applier.held[bad_unit].retry_at == clock.now + 2.0
    # FRR takes it now: released at its retry
    frr.reject = lambda _p: None
    clock.now += 2.0
    converge(applier, text)
    assert applier.held == {}
    assert ("router bgp 64512", "neighbor 10.255.0.1 remote-as 65003") in lines(frr)


def test_a_neighbor_with_a_rejected_line_is_rolled_back_whole() -> None:
    frr = FakeFrr()
    load(frr, desired(TOR1))
    applier = FrrApplier(frr)
    frr.reject = lambda p: "bad password" if p[-1].endswith("password s3cr3t") else None
    tor2 = TOR2 + 'password = "s3cr3t"\n'
    result = applier.check(desired(TOR1, tor2))
    assert result.again
    # the neighbor landed (remote-as before the password), its password did not
    assert ("router bgp 64512", "neighbor 10.255.1.2 remote-as 65002") in lines(frr)
    applier.check(desired(TOR1, tor2))
    assert not any("10.255.1.2" in p[-1] for p in lines(frr) if p[0].startswith("router bgp"))
    assert ("router bgp 64512", "neighbor 10.255.0.2 remote-as 65001") in lines(frr)


def test_an_operator_bgp_instance_with_another_as_is_reported_and_the_rest_applied() -> None:
    for early_exit in (False, True):  # FRR 8.4 leaves config mode, FRR >= 9.1 ends the batch
        frr = FakeFrr(early_exit=early_exit)
        load(frr, "router bgp 65099\n neighbor 10.99.0.2 remote-as 65099\nexit\n")
        applier = FrrApplier(frr)
        text = desired(TOR1)
        converge(applier, text)
        (held,) = applier.held.values()
        assert held.line == ("router bgp 64512",)
        assert held.reason == "BGP is already running; AS is 65099"
        got = lines(frr)
        assert ("route-map ovnfrr-origin permit 10",) in got
        assert ("fpm address 127.0.0.1",) in got
        assert ("router bgp 65099", "neighbor 10.99.0.2 remote-as 65099") in got


def test_what_a_previous_config_left_is_swept_and_only_that() -> None:
    frr = FakeFrr()
    load(frr, desired(TOR1, TOR2, nets=("10.128.0.0/23", "10.9.0.0/16")))
    load(frr, OPERATOR + "router bgp 64512\n neighbor 10.255.0.2 shutdown\nexit\n")
    load(frr, desired(nets=("10.200.0.0/24",), vrf="blue"))  # a VRF ovn-frr no longer needs
    # the node config lost tor2 and tor1's BFD; one prefix is no longer announced
    text = desired('[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\n')
    converge(FrrApplier(frr), text)
    got = lines(frr)
    assert not any("10.255.1.2" in p[-1] for p in got)  # tor2: removed, with its maps
    assert not any("ovnfrr-in-10_255_1_2" in p[0] for p in got)
    assert ("router bgp 64512", "neighbor 10.255.0.2 bfd profile fast") not in got
    assert ("router bgp 64512", "neighbor 10.255.0.2 shutdown") in got  # the operator's
    assert not any("10.9.0.0/16" in p[-1] for p in got)
    assert not any(p[0] == "router bgp 64512 vrf blue" for p in got)  # wholly ovn-frr's
    assert ("ip prefix-list operator-list seq 5 permit 10.0.0.0/8",) in got
    assert set(paths(parse(text))) <= got


def test_a_vrf_instance_with_operator_lines_is_kept() -> None:
    frr = FakeFrr()
    load(frr, desired(nets=("10.200.0.0/24",), vrf="blue"))
    load(frr, "router bgp 64512 vrf blue\n neighbor 10.77.0.2 remote-as 65077\nexit\n")
    converge(FrrApplier(frr), desired())
    got = lines(frr)
    assert ("router bgp 64512 vrf blue", "neighbor 10.77.0.2 remote-as 65077") in got
    assert not any("10.200.0.0/24" in p[-1] for p in got)


def test_networks_stay_while_the_intent_is_not_known() -> None:
    frr = FakeFrr()
    load(frr, desired(TOR1, nets=("10.128.0.0/23", "10.9.0.0/16")))
    applier = FrrApplier(frr)
    assert applier.check(desired(TOR1, nets=()), adopt_networks=True).sent == 0
    assert applier.check(desired(TOR1, nets=())).sent == 2


def test_a_line_frr_does_not_keep_is_reported_not_resent_forever() -> None:
    class Forgetful(FakeFrr):
        def running_config(self) -> str:
            return super().running_config().replace(" bgp bestpath as-path multipath-relax\n", "")

    frr = Forgetful()
    applier = FrrApplier(frr)
    text = desired(TOR1)
    applier.check(text)
    for _ in range(5):
        applier.check(text)
    assert len(frr.batches) == 4  # the first, then the same drift three times
    assert applier.unkept == {("router bgp 64512", "bgp bestpath as-path multipath-relax")}


def test_the_plan_owns_only_marked_or_desired_lines() -> None:
    running = (
        OPERATOR + "route-map operator-map permit 10\nexit\n"
        "route-map ovnfrr-old permit 10\n match ip address prefix-list x\nexit\n"
        "router bgp 64512\n neighbor 10.99.0.2 remote-as 65099\n"
        " address-family ipv4 unicast\n  network 10.1.0.0/16\n"
        "  network 10.2.0.0/16 route-map ovnfrr-origin\n exit-address-family\nexit\n"
    )
    batch = plan(running, "").batch.text
    assert batch == (  # route-map entries go last (after what named them)
        "router bgp 64512\n address-family ipv4 unicast\n"
        "  no network 10.2.0.0/16 route-map ovnfrr-origin\n exit-address-family\nexit\n"
        "no route-map ovnfrr-old permit 10\n"
    )


def test_a_change_between_checks_is_planned_without_reading_frr() -> None:
    frr = FakeFrr()
    applier = FrrApplier(frr)
    applier.check(desired(TOR1))
    reads = frr.reads
    result = applier.check(desired(TOR1, nets=("10.128.0.0/23", "10.9.0.0/16")), read=False)
    assert result.sent == 1 and frr.reads == reads
    assert applier.check(desired(TOR1, nets=("10.9.0.0/16",)), read=False).sent == 1
    assert frr.reads == reads
    # a whole VRF instance in or out needs the running config (is it wholly ovn-frr's?)
    applier.check(desired(TOR1, nets=("10.200.0.0/24",), vrf="blue"), read=False)
    assert frr.reads == reads + 1
    want = set(paths(parse(desired(TOR1, nets=("10.200.0.0/24",), vrf="blue"))))
    assert want <= lines(frr)
    # and the next check, reading, finds nothing to do
    assert applier.check(desired(TOR1, nets=("10.200.0.0/24",), vrf="blue")).sent == 0


def test_a_running_config_read_across_a_batch_is_not_used() -> None:
    frr = FakeFrr()
    applier = FrrApplier(frr)
    generation = applier.generation
    before = frr.running_config()  # read elsewhere (the observer), then a batch lands
    applier.check(desired(TOR1))
    sent = len(frr.batches)
    # against that stale read everything would look missing: it is ignored instead
    assert applier.check(desired(TOR1), running=(before, generation)).sent == 0
    assert len(frr.batches) == sent
    fresh = (frr.running_config(), applier.generation)
    load(frr, "router bgp 64512\n no neighbor 10.255.0.2 remote-as 65001\nexit\n")
    assert applier.check(desired(TOR1), running=fresh).sent == 0  # matched when it was read
    stale_drift = (frr.running_config(), applier.generation)
    assert applier.check(desired(TOR1), running=stale_drift).drift > 0


def test_a_rejected_removal_is_held_and_retried_with_back_off_not_in_a_loop() -> None:
    frr = FakeFrr()
    load(frr, desired(TOR1, nets=("10.128.0.0/23", "10.9.0.0/16")))
    clock = Clock()
    applier = FrrApplier(frr, clock)
    frr.reject = lambda p: "in use" if p[-1].startswith("no network 10.9.0.0/16") else None
    text = desired(TOR1)
    first = applier.check(text)
    assert first.again and first.rejected[0][0][-1].startswith("no network 10.9.0.0/16")
    assert applier.check(text).sent == 0  # held as it is: not sent again
    assert applier.check(text).sent == 0
    assert [h.attempts for h in applier.held.values()] == [1]
    clock.now += 1.0
    retried = applier.check(text)
    assert retried.rejected and not retried.again  # a retry that fails waits for the next
    assert [h.attempts for h in applier.held.values()] == [2]


def test_lines_not_kept_are_sent_again_with_back_off() -> None:
    class Forgetful(FakeFrr):
        def running_config(self) -> str:
            return super().running_config().replace(" bgp bestpath as-path multipath-relax\n", "")

    frr = Forgetful()
    clock = Clock()
    applier = FrrApplier(frr, clock)
    text = desired(TOR1)
    for _ in range(6):
        applier.check(text)
    assert len(frr.batches) == 4 and applier.unkept
    clock.now += 5.0
    applier.check(text)
    assert len(frr.batches) == 5  # tried again after 5 s, then after 10 s
    clock.now += 5.0
    applier.check(text)
    assert len(frr.batches) == 5
    clock.now += 5.0
    applier.check(text)
    assert len(frr.batches) == 6


def test_frr_gone_forgets_what_it_ran() -> None:
    frr = FakeFrr()
    applier = FrrApplier(frr)
    applier.check(desired(TOR1))
    assert applier.matched
    frr.up = False
    with pytest.raises(VtyshError):
        applier.check(desired(TOR1))
    assert not applier.matched  # a change now reads before it plans
    frr.up = True
    frr.tree = parse("")  # it came back empty
    reads = frr.reads
    applier.check(desired(TOR1, nets=("10.9.0.0/16",)), read=False)
    assert frr.reads == reads + 1
    assert set(paths(parse(desired(TOR1, nets=("10.9.0.0/16",))))) <= lines(frr)


def test_a_held_neighbor_alone_in_its_family_is_no_drift() -> None:
    """FRR shows no empty address family: the held neighbor's must not look missing."""
    frr = FakeFrr(reject=lambda p: "bad" if "fd00:9::2" in p[-1] else None)
    applier = FrrApplier(frr)
    v6 = '[[bgp.neighbors]]\naddress = "fd00:9::2"\nremote_as = 65009\n'
    text = desired(TOR1, v6, nets=())
    converge(applier, text)
    for _ in range(4):
        assert applier.check(text).sent == 0
    assert applier.drift_checks == 0 and not applier.unkept


def test_an_operator_address_family_of_a_managed_neighbor_stays() -> None:
    frr = FakeFrr()
    applier = FrrApplier(frr)
    converge(applier, desired(TOR2))
    load(frr, "router bgp 64512\n address-family ipv6 unicast\n  neighbor 10.255.1.2 activate\n"
              " exit-address-family\nexit\n")  # fmt: skip
    assert applier.check(desired(TOR2)).sent == 0
    got = ("router bgp 64512", "address-family ipv6 unicast", "neighbor 10.255.1.2 activate")
    assert got in lines(frr)


def test_a_rejected_password_line_is_shown_masked() -> None:
    frr = FakeFrr(reject=lambda p: "bad" if " password " in p[-1] else None)
    applier = FrrApplier(frr)
    converge(applier, desired(TOR1 + 'password = "s3cr3t"\n'))
    (held,) = applier.held.values()
    assert show(held.line) == "router bgp 64512 > neighbor 10.255.0.2 password ****"


def with_hops(hops: dict[str, str | None], vrf: str = "red") -> str:
    """The desired config announcing prefix -> next hop (None: FRR's own) in ``vrf``."""
    cfg = frr_settings(config.parse(BASE + TOR1))
    nets = {ipaddress.ip_network(p): ipaddress.ip_address(h) if h else None
            for p, h in hops.items()}  # fmt: skip
    return render(desired_frr(cfg, {vrf: nets}))


def test_a_prefix_next_hop_is_a_route_map_of_its_own_changed_in_place() -> None:
    """dynamic-routing-v4/v6-prefix-nexthop: the prefix is originated through a route-map that
    sets the next hop; a new next hop swaps the route-map on the same network line (no
    withdrawal), and a route-map no prefix uses any more goes."""
    text = with_hops({"10.0.0.0/24": "10.255.0.3", "fd00:10::/64": "fd00:255::3",
                      "10.9.0.0/16": None})  # fmt: skip
    assert "route-map ovnfrr-origin-nh-10.255.0.3 permit 10\n" in text
    assert " set ip next-hop 10.255.0.3\n" in text
    assert " set ipv6 next-hop global fd00:255::3\n" in text
    assert "  network 10.0.0.0/24 route-map ovnfrr-origin-nh-10.255.0.3\n" in text
    assert "  network 10.9.0.0/16 route-map ovnfrr-origin\n" in text
    frr = FakeFrr()
    applier = FrrApplier(frr)
    converge(applier, text)
    assert "network 10.0.0.0/24 route-map ovnfrr-origin-nh-10.255.0.3" in frr.running_config()
    moved = with_hops({"10.0.0.0/24": "10.255.0.4", "fd00:10::/64": "fd00:255::3",
                       "10.9.0.0/16": None})  # fmt: skip
    sent = len(frr.batches)
    converge(applier, moved)
    batch = "".join(frr.batches[sent:])
    assert "no network" not in batch, batch
    assert "  network 10.0.0.0/24 route-map ovnfrr-origin-nh-10.255.0.4\n" in batch
    assert "no route-map ovnfrr-origin-nh-10.255.0.3 permit 10\n" in batch
    assert lines(frr) >= set(paths(parse(moved)))
    assert "10.255.0.3" not in frr.running_config()
    # a restarted agent adopts them as its own: nothing sent
    assert FrrApplier(frr).check(moved).sent == 0


def with_l3vni(
    l3vni: int | None, vrfs: str = "[vrfs.red]\n", nets: tuple[str, ...] = ("10.0.0.0/24",)
) -> str:
    evpn = (
        '[[bgp.neighbors]]\naddress = "10.255.0.2"\nremote_as = 65001\n'
        'address_families = ["ipv4-unicast", "l2vpn-evpn"]\n'
    )
    vni = f"l3vni = {l3vni}\n" if l3vni else ""
    cfg = frr_settings(config.parse(BASE + evpn + vrfs + vni))
    return render(desired_frr(cfg, {"red": [ipaddress.ip_network(n) for n in nets]}))


def test_an_l3vni_maps_the_vrf_and_announces_type5_and_goes_without_the_vrf() -> None:
    """[vrfs.red] l3vni: FRR's `vrf red / vni N` and `advertise ipv4/ipv6 unicast` in red's
    instance; without it both go (the L3VNI first: FRR refuses to remove an instance whose
    VRF has one), and `vrf red` itself is never negated. An operator's line in `vrf red`
    stays."""
    text = with_l3vni(1000)
    assert "vrf red\n vni 1000\nexit-vrf\n" in text
    assert (" address-family l2vpn evpn\n  advertise ipv4 unicast route-map ovnfrr-type5\n"
            "  advertise ipv6 unicast route-map ovnfrr-type5\n") in text  # fmt: skip
    frr = FakeFrr()
    frr.apply_batch("vrf red\n ip route 192.0.2.0/24 blackhole\nexit-vrf\n")
    applier = FrrApplier(frr)
    converge(applier, text)
    assert lines(frr) >= set(paths(parse(text)))
    assert FrrApplier(frr).check(text).sent == 0
    sent = len(frr.batches)
    converge(applier, with_l3vni(None))  # the L3VNI first,
    converge(applier, with_l3vni(None))  # its type-5 lines at the next check
    batch = "".join(frr.batches[sent:])
    assert "vrf red\n no vni 1000\nexit-vrf\n" in batch, batch
    assert "no vrf red" not in batch
    assert batch.index("no vni 1000") < batch.index("advertise")
    running = frr.running_config()
    assert "vni 1000" not in running and "advertise ipv4 unicast" not in running
    assert "ip route 192.0.2.0/24 blackhole" in running
    # the L3VNI was all red's instance had: the instance goes too, after the L3VNI
    converge(applier, with_l3vni(1000))
    cfg_only = frr_settings(config.parse(BASE + TOR1 + "[vrfs.red]\n"))
    converge(applier, render(desired_frr(cfg_only, {})))
    converge(applier, render(desired_frr(cfg_only, {})))
    assert "router bgp 64512 vrf red" not in frr.running_config()
    assert "vni 1000" not in frr.running_config()
    # an operator's L3VNI and type-5 lines (no ovn-frr route-map), even in a VRF of the node
    # config: never touched
    frr.apply_batch(
        "vrf blue\n vni 2000\nexit-vrf\nvrf red\n vni 3000\nexit-vrf\n"
        "router bgp 64512 vrf red\n address-family l2vpn evpn\n"
        "  advertise ipv4 unicast route-map OPS\n exit-address-family\nexit\n"
    )
    converge(applier, with_l3vni(None))
    running = frr.running_config()
    assert "vni 2000" in running and "vni 3000" in running
    assert "advertise ipv4 unicast route-map OPS" in running


def test_a_restart_before_ovn_is_known_keeps_next_hop_route_maps() -> None:
    """While OVN's intent is not known, the network lines FRR has stay, and so do the origin
    route-maps they name (FRR treats a missing route-map as deny: the prefix would go)."""
    frr = FakeFrr()
    text = with_hops({"10.0.0.0/24": "10.255.0.3"})
    converge(FrrApplier(frr), text)
    bare = with_hops({})
    sent = len(frr.batches)
    FrrApplier(frr).check(bare, adopt_networks=True)
    assert "ovnfrr-origin-nh" not in "".join(frr.batches[sent:])
    assert "route-map ovnfrr-origin-nh-10.255.0.3 permit 10" in frr.running_config()
    assert "network 10.0.0.0/24 route-map ovnfrr-origin-nh-10.255.0.3" in frr.running_config()


def test_the_l3vni_goes_before_the_type5_lines_that_make_it_ovn_frrs() -> None:
    """Until FRR no longer shows the L3VNI, ovn-frr's type-5 lines stay: they are what makes
    the L3VNI its own (were they gone first and the L3VNI not, nobody would remove it)."""
    running = with_l3vni(1000)
    batch = plan(running, with_l3vni(None)).batch.text
    assert "vrf red\n no vni 1000\nexit-vrf\n" in batch
    assert "advertise" not in batch and "ovnfrr-type5" not in batch
    later = running.replace("vrf red\n vni 1000\nexit-vrf\n", "")
    batch = plan(later, with_l3vni(None)).batch.text
    assert "no advertise ipv4 unicast" in batch and "no route-map ovnfrr-type5 permit 10" in batch


def test_type5_lines_stay_while_frr_shows_the_l3vni_even_when_planned_without_a_read() -> None:
    """FRR 10.3 can show an L3VNI after the batch that removed it (seen in CI). A change of
    the desired config planned from what FRR last matched (no read) must not take the type-5
    lines while it does: the L3VNI would be no one's and stay for good."""
    frr = FakeFrr()
    applier = FrrApplier(frr)
    converge(applier, with_l3vni(1000))
    assert applier.check(with_l3vni(None)).sent  # `no vni 1000`, the type-5 lines kept
    load(frr, "vrf red\n vni 1000\nexit-vrf\n")  # ... and FRR still shows the L3VNI
    more = with_l3vni(None, nets=("10.0.0.0/24", "10.1.0.0/24"))
    applier.check(more, read=False)  # a change of the announcements, between two reads
    assert "advertise ipv4 unicast route-map ovnfrr-type5" in frr.running_config()
    converge(applier, more)  # the L3VNI again,
    converge(applier, more)  # and then the type-5 lines
    running = frr.running_config()
    assert "network 10.1.0.0/24 route-map ovnfrr-origin" in running
    assert "vni 1000" not in running and "ovnfrr-type5" not in running, running


def test_type5_lines_stay_while_frr_refuses_to_drop_the_l3vni() -> None:
    """A refused ``no vni`` is held (the L3VNI stays as FRR has it): the type-5 lines that
    make it ovn-frr's stay too, and both go once FRR takes the removal."""
    refuse = [True]
    now = [0.0]
    frr = FakeFrr(reject=lambda p: "busy" if refuse[0] and p[-1] == "no vni 1000" else None)
    applier = FrrApplier(frr, clock=lambda: now[0])
    converge(applier, with_l3vni(1000))
    for _ in range(3):  # checks while the removal is held (before its retry)
        applier.check(with_l3vni(None))
        running = frr.running_config()
        assert "vni 1000" in running and "advertise ipv4 unicast route-map ovnfrr-type5" in running
    refuse[0] = False
    for _ in range(3):
        now[0] += 1000.0
        converge(applier, with_l3vni(None))
    running = frr.running_config()
    assert "vni 1000" not in running and "ovnfrr-type5" not in running, running


def test_graceful_restart_follows_the_node_config_and_preserve_fw_state_stays() -> None:
    """A neighbor's graceful_restart: its ``graceful-restart`` line, removed when the node
    config drops it, and the instance's preserve-fw-state (the F bit), added and never removed
    (an operator may have set it; alone it does nothing)."""
    gr = TOR2.replace("65002\n", "65002\ngraceful_restart = true\n")
    frr = FakeFrr()
    load(frr, "router bgp 64512 vrf ops\n bgp graceful-restart preserve-fw-state\nexit\n")
    applier = FrrApplier(frr)
    converge(applier, desired(TOR1, gr))
    got = lines(frr)
    assert ("router bgp 64512", "neighbor 10.255.1.2 graceful-restart") in got
    assert ("router bgp 64512", "bgp graceful-restart preserve-fw-state") in got
    assert ("router bgp 64512", "neighbor 10.255.0.2 graceful-restart") not in got
    converge(applier, desired(TOR1, TOR2))
    got = lines(frr)
    assert [p[-1] for p in got if p[0] == "router bgp 64512" and "graceful" in p[-1]] == [
        "bgp graceful-restart preserve-fw-state"
    ]
    assert ("router bgp 64512 vrf ops", "bgp graceful-restart preserve-fw-state") in got
