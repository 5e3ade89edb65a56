"""The exact change between two FRR configs ovn-frr rendered, as one vtysh batch (pure).

Both configs are parsed into a tree by indentation (``router bgp`` > ``address-family`` > lines).
Lines only in the old config are negated in their context, lines only in the new one are
added; unchanged lines are not sent. Removals come first, so that a value that changes
(``no X 1`` then ``X 2``) ends at the new one.

ovn-frr shares some contexts with the operator (``router bgp ASN``, ``bfd``, address
families): such a context is never negated as a whole; only ovn-frr's own lines inside it are
removed, so operator-written lines survive. Contexts that are ovn-frr's own objects (its
route-map entries, BFD profiles) are removed with one ``no`` line.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

STRUCTURAL = ("exit", "exit-address-family", "exit-vrf", "!", "end")
#: contexts shared with operator config: never removed as a whole
SHARED = ("router bgp ", "bfd", "address-family ")


@dataclass
class Node:
    line: str
    children: dict[str, Node] = field(default_factory=dict)


def parse(text: str) -> Node:
    root = Node("")
    stack: list[tuple[int, Node]] = [(-1, root)]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line in STRUCTURAL:
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        node = parent.children.setdefault(line, Node(line))
        stack.append((indent, node))
    return root


#: commands whose "no" form takes no arguments (FRR 8.4 rejects `no fpm address A port P`)
BARE_NO = ("fpm address",)


def negate(line: str) -> str:
    if line.startswith("no "):
        return line[3:]
    for bare in BARE_NO:
        if line.startswith(bare):
            return f"no {bare}"
    return f"no {line}"


def _key(line: str) -> str | None:
    """Lines that a new value replaces in place: removing the old one first would do harm
    (``no neighbor X remote-as A`` deletes the whole neighbor)."""
    words = line.split()
    if len(words) == 4 and words[0] == "neighbor" and words[2] == "remote-as":
        return " ".join(words[:3])
    return None


Change = tuple[tuple[str, ...], str]  # (context path, command)


def _changes(old: Node, new: Node, path: tuple[str, ...]) -> tuple[list[Change], list[Change]]:
    removals: list[Change] = []
    additions: list[Change] = []
    replaced = {k for line in new.children if line not in old.children if (k := _key(line))}
    for line, child in old.children.items():
        if line in new.children:
            r, a = _changes(child, new.children[line], (*path, line))
            removals += r
            additions += a
        elif child.children and line.startswith(SHARED):
            r, _ = _changes(child, Node(line), (*path, line))  # only our lines inside it
            removals += r
        elif _key(line) not in replaced or _key(line) is None:
            removals.append((path, negate(line)))
    for line, child in new.children.items():
        if line not in old.children:
            additions.append((path, line))
            additions += _all(child, (*path, line))
    return removals, additions


def _all(node: Node, path: tuple[str, ...]) -> list[Change]:
    out: list[Change] = []
    for line, child in node.children.items():
        out.append((path, line))
        out += _all(child, (*path, line))
    return out


def _exit(context: str) -> str:
    return "exit-address-family" if context.startswith("address-family ") else "exit"


def diff(old: str, new: str) -> str:
    """The vtysh batch that turns ``old`` into ``new`` ("" when they are the same)."""
    removals, additions = _changes(parse(old), parse(new), ())
    # `no neighbor X remote-as A` deletes the neighbor with all its lines: negating those as
    # well would fail ("Specify remote-as or peer-group commands first")
    gone = {
        c.split()[2] for _p, c in removals if c.startswith("no neighbor ") and " remote-as " in c
    }
    removals = [
        (p, c) for p, c in removals
        if not (c.startswith("no neighbor ") and c.split()[2] in gone and " remote-as " not in c)
    ]  # fmt: skip
    # deepest removals first: an object's lines before the object that holds them
    removals.sort(key=lambda c: -len(c[0]))
    lines: list[str] = []
    for path, group in itertools.groupby(removals + additions, key=lambda c: c[0]):
        lines += [f"{' ' * i}{ctx}" for i, ctx in enumerate(path)]
        lines += [f"{' ' * len(path)}{cmd}" for _p, cmd in group]
        lines += [f"{' ' * i}{_exit(ctx)}" for i, ctx in reversed(list(enumerate(path)))]
    return "".join(f"{line}\n" for line in lines)
