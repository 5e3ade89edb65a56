"""The ARP/ND answers pipeline on captured-shape iproute2 and ovs-ofctl output: what it sends
to OVS as the kernel's neighbours change, when it checks the table, when it sends it whole."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence

from ovn_frr.core.evpn import ANSWER_TAIL
from ovn_frr.kernel.evpn import KernelEvpn
from ovn_frr.reconcilers.base import Cell
from ovn_frr.reconcilers.evpn_answers import FLOWS_FULL_S, HOLD_MAX_S, EvpnAnswers, Wiring
from ovn_frr.vswitch.bridges import LocalOvs

WIRING = Wiring(100, "br-100", "br-ev100", patch=2, port=1)
#: the flows of a table without answers: the wiring and the answers' shared tail
WIRED = 3 + len(ANSWER_TAIL)


def neighbour(i: int) -> dict[str, object]:
    return {"dst": f"10.100.0.{i}", "lladdr": f"0a:00:00:00:02:{i:02x}", "extern_learn": None,
            "state": ["NOARP"]}  # fmt: skip


class Host:
    """The kernel's neighbours of br-100 and an OVS bridge's flow count, as the commands
    show them; keeps the ovs-ofctl runs."""

    def __init__(self) -> None:
        #: zebra's neighbours, and one ovn-frr wrote (local: never answered)
        local: dict[str, object] = {
            "dst": "10.100.0.11",
            "lladdr": "0a:00:00:00:01:01",
            "state": ["PERMANENT"],
        }
        self.neigh: list[dict[str, object]] = [neighbour(20), local]
        self.flow_count = -1
        #: called as the neighbours are read (what the kernel monitor asks meanwhile)
        self.on_read: Callable[[], object] = lambda: None
        self.ofctl: list[tuple[str, str | None]] = []

    def __call__(self, argv: Sequence[str], stdin: str | None) -> str:
        if argv[:3] == ["ip", "-j", "neigh"]:
            dev = argv[argv.index("dev") + 1]
            if dev != "br-100":
                raise OSError(f"{dev} is not on this host")
            self.on_read()
            if "nud" in argv:  # iproute2 keeps extern_learn entries whatever their state
                state = argv[argv.index("nud") + 1].upper()
                return json.dumps([n for n in self.neigh if "extern_learn" in n
                                   or state in n["state"]])  # type: ignore[operator]  # fmt: skip
            return json.dumps(self.neigh)
        assert argv[0] == "ovs-ofctl", argv
        verb = next(a for a in argv if a in ("replace-flows", "add-flows", "dump-aggregate"))
        self.ofctl.append((verb, stdin))
        return f"NXST_AGGREGATE reply: packet_count=0 byte_count=0 flow_count={self.flow_count}"

    def verbs(self) -> list[str]:
        out = [v for v, _ in self.ofctl]
        self.ofctl.clear()
        return out


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def answers(host: Host, clock: Clock) -> tuple[EvpnAnswers, Cell[tuple[Wiring, ...]]]:
    wiring: Cell[tuple[Wiring, ...]] = Cell("evpn-wiring", (WIRING,))
    ke = KernelEvpn(host, tx_get=lambda _n: False, tx_set=lambda _n, _on: None)
    return EvpnAnswers(wiring, ke, LocalOvs("unix:db", "/run", host), 2.0, clock), wiring


def test_changes_go_at_once_and_the_table_is_checked_every_interval() -> None:
    host, clock = Host(), Clock()
    a, _ = answers(host, clock)
    asyncio.run(a.step())
    # the first step sends the table whole: the wiring and one answer (the local IP: none)
    ((verb, text),) = host.ofctl
    assert verb == "replace-flows" and text is not None
    assert text.count("arp_tpa=") == 1 and "arp_tpa=10.100.0.20 " in text
    host.verbs()
    assert a.last[100].flows == WIRED + 1 and a.last[100].remote_ips == 1
    host.flow_count = WIRED + 2
    host.neigh.append(neighbour(21))
    clock.now += 0.1
    asyncio.run(a.step())
    # only what changed (a step that sends a change asks for no count)
    ((verb, text),) = host.ofctl
    assert verb == "add-flows" and text is not None
    assert text.startswith("add cookie=0xe1,priority=100,in_port=2,arp,arp_op=1,"
                           "arp_tpa=10.100.0.21 ")  # fmt: skip
    assert text.count("\n") == 1
    host.verbs()
    host.neigh.remove(neighbour(20))
    clock.now += 0.1
    asyncio.run(a.step())
    ((verb, text),) = host.ofctl
    assert text == "delete_strict priority=100,in_port=2,arp,arp_op=1,arp_tpa=10.100.0.20\n"
    host.verbs()
    # nothing changed, the interval passed: the count is asked, and it is right
    host.flow_count = WIRED + 1
    clock.now += 2.0
    asyncio.run(a.step())
    assert host.verbs() == ["dump-aggregate"]
    clock.now += 0.1
    asyncio.run(a.step())
    assert host.verbs() == []
    # remote IPs that change at every step still have their table checked, less often
    for i in range(30, 36):
        host.neigh.append(neighbour(i))
        host.flow_count += 1
        clock.now += 1.0
        asyncio.run(a.step())
        assert host.verbs() == (["add-flows", "dump-aggregate"] if i == 33 else ["add-flows"])
    # more answers go than stay: one deletion of them all, the one that stays added back
    host.neigh = [n for n in host.neigh if n["dst"] in ("10.100.0.11", "10.100.0.30")]
    clock.now += 0.1
    asyncio.run(a.step())
    ((verb, text),) = host.ofctl
    assert verb == "add-flows" and text is not None
    first, *rest = text.splitlines()
    assert first == "delete cookie=0xe1/-1"
    assert len(rest) == 1 and "arp_tpa=10.100.0.30 " in rest[0]


def test_a_table_changed_behind_its_back_or_made_again_is_sent_whole() -> None:
    host, clock = Host(), Clock()
    a, wiring = answers(host, clock)
    asyncio.run(a.step())
    host.verbs()
    host.flow_count = 2  # someone deleted flows
    clock.now += 2.0
    asyncio.run(a.step())
    assert host.verbs() == ["dump-aggregate", "replace-flows"]
    # the pass made the OVS bridge again: whole at once, whatever the count says
    wiring.publish((Wiring(100, "br-100", "br-ev100", patch=2, port=1, epoch=1),))
    clock.now += 0.1
    asyncio.run(a.step())
    assert host.verbs() == ["replace-flows"]
    # and once a minute regardless
    host.flow_count = WIRED + 1
    clock.now += FLOWS_FULL_S + 1
    asyncio.run(a.step())
    assert host.verbs() == ["replace-flows"]


def test_a_vni_that_goes_is_forgotten_and_its_failure_is_its_own() -> None:
    host, clock = Host(), Clock()
    a, wiring = answers(host, clock)
    wiring.publish((WIRING, Wiring(200, "br-200", "br-ev200", patch=5, port=4)))
    asyncio.run(a.step())  # br-200's neighbours cannot be read (the host only knows br-100)
    assert sorted(a.last) == [100]
    assert a.problems(clock.now) == [
        "VNI 200: ARP/ND answers not sent to br-ev200: br-200 is not on this host"
    ]
    wiring.publish(())
    assert asyncio.run(a.step()) is None
    assert a.last == {} and a.problems(clock.now) == []


def test_an_ip_asked_about_while_a_step_reads_wakes_the_answers_again_if_answered() -> None:
    """While a step reads, only the IPs answered before it count as answered (10k local IPs
    ovn-frr deletes must not wake the answers again and again); an IP asked about meanwhile
    that the step then answers wakes them once more (it may be gone since the read)."""
    host, clock = Host(), Clock()
    a, _ = answers(host, clock)
    asked: list[bool] = []

    async def step() -> bool:
        woken = asyncio.Event()
        a.neigh_changed.watch(woken)
        await a.step()
        return woken.is_set()

    ips = ("10.100.0.11", "10.100.0.20")  # ovn-frr's local IP, zebra's remote one
    host.on_read = lambda: asked.extend(ip in a.answered() for ip in ips)
    assert asyncio.run(step())
    assert asked == [False, False]
    assert "10.100.0.20" in a.answered() and "10.100.0.11" not in a.answered()
    # an IP answered before the step still counts while it reads (zebra removing it wakes
    # the answers, and holds back deletions: the kernel monitor touches them then)
    asked.clear()
    assert asyncio.run(step())  # and, still answered after the read, wakes them once more
    assert asked == [False, True]
    host.on_read = lambda: asked.append("10.100.0.11" in a.answered())
    assert not asyncio.run(step())


def test_answers_that_only_go_wait_while_the_kernel_keeps_changing_a_second_at_most() -> None:
    """zebra removing a VTEP's 10k hosts: a step whose read saw more changes coming sends no
    deletions; the step after the last change deletes them all at once."""
    host, clock = Host(), Clock()
    a, _ = answers(host, clock)
    host.neigh += [neighbour(i) for i in range(30, 40)]
    asyncio.run(a.step())
    host.verbs()
    host.neigh = host.neigh[:5]  # most go, and zebra goes on (the monitor saw more)
    host.on_read = a.touch
    clock.now += 0.3
    held_at = clock.now
    for _ in range(2):
        # the next step comes when the hold ends at the latest, whatever wakes it
        assert asyncio.run(a.step()) == held_at + HOLD_MAX_S
        assert host.verbs() == []
        clock.now += 0.3
    clock.now += 0.5  # held back for a second: sent however the kernel goes on
    asyncio.run(a.step())
    assert host.verbs() == ["add-flows"]
    host.neigh = host.neigh[:2]
    clock.now += 0.1
    asyncio.run(a.step())
    assert host.verbs() == []  # held back again
    host.on_read = lambda: None  # zebra is done
    clock.now += 0.1
    asyncio.run(a.step())
    assert host.verbs() == ["add-flows"]
    # answers that come are never held back
    host.neigh.append(neighbour(50))
    host.on_read = a.touch
    clock.now += 0.1
    asyncio.run(a.step())
    assert host.verbs() == ["add-flows"]
