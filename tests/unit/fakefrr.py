"""A model of how FRR takes ``vtysh -f`` batches, for tests without an FRR.

It keeps the config as a tree and applies a batch line by line the way FRR treats the
commands ovn-frr sends (measured on FRR 8.4 and 10.3, see FIELD-NOTES): ``no X`` removes X
with what it holds; ``no neighbor X remote-as A`` removes the neighbor everywhere in its
instance; a neighbor line needs the neighbor; a second ``router bgp`` with another AS is
refused; values such as ``neighbor X remote-as``, a network's route-map, ``bgp router-id``
and ``fpm address`` are replaced in place; ``neighbor X bfd profile P`` shows an extra
``neighbor X bfd``; a VRF's BGP instance is not removed while the VRF has an L3VNI. Lines
can be made to fail (``reject``); a failed context line makes the rest of its block fail, and
its ``exit`` leaves config mode (FRR 8.4: every later line fails) or ends the batch (FRR >=
9.1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ovn_frr.frr.diff import Node, parse, render_tree
from ovn_frr.frr.vtysh import LineError, VtyshError

Path = tuple[str, ...]
#: a line is refused when this returns a reason
Reject = Callable[[Path], str | None]
#: values a new line replaces (by its first words)
REPLACED = ("bgp router-id", "fpm address", "receive-interval", "transmit-interval",
            "detect-multiplier")  # fmt: skip


EXITS = ("exit", "exit-address-family", "exit-vni", "exit-vrf")


class FakeFrr:
    def __init__(self, reject: Reject = lambda _p: None, early_exit: bool = False) -> None:
        self.tree = Node("")
        self.reject = reject
        self.early_exit = early_exit
        self.batches: list[str] = []
        self.up = True
        self.shows: dict[str, Any] = {}
        self.reads = 0

    # --- what the applier and the reconciler call --------------------------------------------

    def running_config(self) -> str:
        self.reads += 1
        if not self.up:
            raise VtyshError("vtysh: failed to connect to any daemons")
        shown = parse(render_tree(self.tree))
        _hide_empty_families(shown)  # FRR shows no address family with nothing in it
        return "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n" + (
            render_tree(shown)
        )

    def close(self) -> None:
        return None

    def show_json(self, command: str, daemon: str | None = None) -> Any:
        if not self.up:
            raise VtyshError("vtysh: failed to connect to any daemons")
        return self.shows.get(command, {})

    def apply_batch(self, config: str) -> tuple[LineError, ...]:
        if not self.up:
            raise VtyshError("vtysh -f failed: failed to connect to any daemons")
        self.batches.append(config)
        errors: list[LineError] = []
        stack: list[Node] = [self.tree]
        path: list[str] = []
        failed: int | None = None  # depth of the last refused line, while its block lasts
        out_of_config = False
        for number, raw in enumerate(config.splitlines(), 1):
            line = raw.strip()
            depth = len(raw) - len(raw.lstrip(" "))
            if out_of_config:
                if line not in EXITS:
                    errors.append(LineError(number, "Unknown command"))
                continue
            if line in EXITS:
                if failed is not None and depth == failed:
                    # the exit of a context vtysh never entered leaves its parent
                    if depth == 0 and self.early_exit:
                        return tuple(errors)  # FRR >= 9.1: the batch ends here
                    out_of_config = depth == 0  # FRR 8.4: vtysh left config mode
                    failed = None
                del stack[depth + 1 :]
                del path[depth:]
                continue
            if failed is not None and depth > failed:
                errors.append(LineError(number, "Unknown command"))  # inside the refused block
                continue
            failed = None
            del stack[depth + 1 :]
            del path[depth:]
            reason = self.reject((*path, line)) or self._refuse(path, line)
            if reason:
                errors.append(LineError(number, reason))
                failed = depth
                continue
            node = self._apply(stack[depth], path, line)
            path.append(line)
            stack.append(node)
        return tuple(errors)

    # --- FRR's semantics ---------------------------------------------------------------------

    def _refuse(self, path: list[str], line: str) -> str | None:
        words = line.split()
        ctx = self.tree
        for part in path:
            ctx = ctx.children.get(part, Node(part))
        if (
            words[0] == "no"
            and words[1] in ("network", "route-map")
            and (
                line[3:] not in ctx.children  # removing what is not there
            )
        ):
            return {"network": "Can't find static route specified"}.get(
                words[1], "Could not find route-map entry"
            )
        if words[0] == "no" and words[1] == "advertise" and "route-map" in words:
            return "Unknown command"  # FRR 8.4: the no form takes no route-map
        if not path and line.startswith("no router bgp ") and " vrf " in line:
            vrf = self.tree.children.get(f"vrf {words[-1]}", Node(""))
            if any(k.startswith("vni ") for k in vrf.children):
                return "% Please unconfigure l3vni"
        if not path and line.startswith("router bgp ") and " vrf " not in line:
            for other in self.tree.children:
                if other.startswith("router bgp ") and " vrf " not in other and other != line:
                    return f"BGP is already running; AS is {other.split()[2]}"
        if words[0] == "neighbor" and path and path[0].startswith("router bgp "):
            instance = self.tree.children.get(path[0])
            known = instance is not None and any(
                k.startswith(f"neighbor {words[1]} remote-as ") for k in instance.children
            )
            if not known and words[2] != "remote-as":
                return "Specify remote-as or peer-group commands first"
        return None

    def _apply(self, ctx: Node, path: list[str], line: str) -> Node:
        if line.startswith("no "):
            target = line[3:]
            words = target.split()
            if words[0] == "neighbor" and len(words) >= 3 and words[2] == "remote-as":
                _drop_neighbor(self.tree.children[path[0]], words[1])
            for k in [k for k in ctx.children if k == target or (
                    target.startswith(REPLACED) and _key(k) == _key(target))]:  # fmt: skip
                del ctx.children[k]
            if target.startswith("advertise "):  # `no advertise ipv4 unicast`: any route-map
                for k in [k for k in ctx.children if k.startswith(f"{target} route-map ")]:
                    del ctx.children[k]
            if target in ("bgp default ipv4-unicast", "bgp network import-check"):
                ctx.children.setdefault(line, Node(line))  # a default turned off
            if target.startswith("neighbor ") and target.endswith(" bfd"):
                for k in [k for k in ctx.children if k.startswith(f"{target} profile ")]:
                    del ctx.children[k]
            return Node(line)
        if f"no {line}" in ctx.children:  # back to the default: shows nothing
            del ctx.children[f"no {line}"]
            return Node(line)
        words = line.split()
        if line.startswith(REPLACED) or (
            len(words) == 4 and words[2] in ("remote-as", "route-map")
        ):
            key = _key(line)
            for k in [k for k in ctx.children if _key(k) == key]:
                del ctx.children[k]
        if words[0] == "neighbor" and words[2:4] == ["bfd", "profile"]:
            ctx.children.setdefault(f"neighbor {words[1]} bfd", Node(f"neighbor {words[1]} bfd"))
            for k in [k for k in ctx.children if k.startswith(f"neighbor {words[1]} bfd profile")]:
                del ctx.children[k]
        return ctx.children.setdefault(line, Node(line))


def _hide_empty_families(node: Node) -> None:
    for line, child in list(node.children.items()):
        _hide_empty_families(child)
        if line.startswith("address-family ") and not child.children:
            del node.children[line]


def _key(line: str) -> str:
    words = line.split()
    if len(words) == 4 and words[0] == "neighbor" and words[2] == "remote-as":
        return " ".join(words[:3])
    if len(words) == 4 and words[0] == "network" and words[2] == "route-map":
        return " ".join(words[:2])  # a network's route-map is replaced in place
    for r in REPLACED:
        if line.startswith(r):
            return r
    return line


def _drop_neighbor(node: Node, addr: str) -> None:
    for k in [k for k in node.children if k.startswith(f"neighbor {addr} ")]:
        del node.children[k]
    for child in node.children.values():
        _drop_neighbor(child, addr)


def load(frr: FakeFrr, text: str) -> None:
    """Configure ``text`` as an operator would (every line must be accepted)."""
    assert frr.apply_batch(text) == (), f"FakeFrr refused part of {text!r}"


def tree_of(frr: FakeFrr) -> Node:
    return parse(render_tree(frr.tree))
