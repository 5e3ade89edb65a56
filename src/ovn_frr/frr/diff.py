"""The exact change between two FRR configs, as one vtysh batch (pure).

Both configs are parsed into a tree by indentation (``router bgp`` > ``address-family`` > lines).
Lines only in the old config are negated in their context, lines only in the new one are
added; unchanged lines are not sent. Removals come first, so that a value that changes
(``no X 1`` then ``X 2``) ends at the new one.

ovn-frr shares some contexts with the operator (``router bgp ASN``, ``bfd``, address
families): such a context is never negated as a whole; only the lines inside it that the old
tree holds are removed, so operator-written lines survive. Contexts that are ovn-frr's own
objects (its route-map entries, BFD profiles) are removed with one ``no`` line; a shared
context with no lines in the old tree is negated whole (``no router bgp ASN vrf X``: the caller
puts it there only when the whole instance is ovn-frr's).

Each line of the batch is annotated with the config path it enters or changes, so that a line
vtysh rejects (``line N:``) is traced back to what ovn-frr wanted.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

STRUCTURAL = ("exit", "exit-address-family", "exit-vrf", "exit-vni", "!", "end")
#: contexts shared with operator config: never removed as a whole
SHARED = ("router bgp ", "bfd", "address-family ", "vrf ")

#: a line with its contexts: ("router bgp 64512", "address-family ipv4 unicast", "network ...")
Path = tuple[str, ...]


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


#: top-level objects that vtysh sends to zebra and bgpd both, and shows merged
SHARED_OBJECTS = ("route-map ", "ip prefix-list ", "ipv6 prefix-list ")


def held_by(merged: str, bgpd: str) -> str:
    """``merged`` (vtysh's running config of all daemons) without the lines of route-maps and
    prefix-lists that ``bgpd`` (bgpd's own running config) does not hold: a line another
    daemon holds alone is not one bgpd acts on. ``merged`` itself when bgpd holds them all.
    A scan of lines, no parse: both texts hold every ``network`` line (10k of them) and are
    read at every check."""
    missing = shared_lines(merged) - shared_lines(bgpd)
    if not missing:
        return merged
    return "".join(raw for raw, path in _lines(merged) if path not in missing)


def shared_lines(text: str) -> set[Path]:
    """The route-map and prefix-list lines of ``text`` as paths (entries, and what they hold
    one level in)."""
    return {path for _raw, path in _lines(text) if path is not None}


def _lines(text: str) -> Iterator[tuple[str, Path | None]]:
    """Each line of ``text`` (with its end), and its path if it is a line of a route-map or
    prefix-list."""
    block: str | None = None
    for raw in text.splitlines(keepends=True):
        line = raw.strip()
        if raw[:1] not in (" ", "!") and line:
            block = line if line.startswith(SHARED_OBJECTS) else None
            yield raw, (block,) if block is not None else None
        elif block is not None and raw.startswith(" ") and line and line not in STRUCTURAL:
            yield raw, (block, line)
        else:
            yield raw, None


def paths(node: Node, prefix: Path = ()) -> Iterator[Path]:
    """Every line of the tree as its path, contexts before what they hold, in order."""
    for line, child in node.children.items():
        here = (*prefix, line)
        yield here
        yield from paths(child, here)


def build(lines: Iterable[Path]) -> Node:
    """The tree of ``lines`` (each path's contexts are created as needed)."""
    root = Node("")
    for path in lines:
        node = root
        for part in path:
            node = node.children.setdefault(part, Node(part))
    return root


def render_tree(node: Node, depth: int = 0) -> str:
    """Config text of a tree (contexts closed with ``exit``)."""
    out = []
    for line, child in node.children.items():
        out.append(f"{' ' * depth}{line}\n")
        if child.children:
            out.append(render_tree(child, depth + 1))
            out.append(f"{' ' * depth}{_exit(line)}\n")
    return "".join(out)


#: commands whose "no" form takes no arguments (FRR 8.4 rejects `no fpm address A port P`)
BARE_NO = ("fpm address",)


def negate(line: str) -> str:
    if line.startswith("no "):
        return line[3:]
    for bare in BARE_NO:
        if line.startswith(bare):
            return f"no {bare}"
    if line.startswith("advertise ") and " route-map " in line:
        # FRR 8.4: `no advertise ipv4 unicast` takes no route-map ("Unknown command")
        return f"no {line.split(' route-map ', 1)[0]}"
    return f"no {line}"


def _key(line: str) -> str | None:
    """Lines that a new value replaces in place: removing the old one first would do harm
    (``no neighbor X remote-as A`` deletes the whole neighbor; ``no network P`` withdraws P
    where a new route-map would only change what it is sent with)."""
    words = line.split()
    if len(words) == 4 and words[0] == "neighbor" and words[2] == "remote-as":
        return " ".join(words[:3])
    if len(words) == 4 and words[0] == "network" and words[2] == "route-map":
        return " ".join(words[:2])
    return None


Change = tuple[Path, str]  # (context path, command)


def _changes(old: Node, new: Node, path: Path) -> tuple[list[Change], list[Change]]:
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


def _all(node: Node, path: Path) -> list[Change]:
    out: list[Change] = []
    for line, child in node.children.items():
        out.append((path, line))
        out += _all(child, (*path, line))
    return out


def _exit(context: str) -> str:
    if context.startswith("vni "):
        return "exit-vni"
    if context.startswith("vrf "):
        return "exit-vrf"
    return "exit-address-family" if context.startswith("address-family ") else "exit"


@dataclass(frozen=True, slots=True)
class BatchLine:
    text: str
    #: the path it enters (a context line) or changes (a command); None for an exit
    path: Path | None
    command: bool = False


@dataclass(frozen=True, slots=True)
class Batch:
    """A vtysh batch, each line with the config path it enters or changes."""

    lines: tuple[BatchLine, ...] = ()

    @property
    def text(self) -> str:
        return "".join(f"{x.text}\n" for x in self.lines)

    @property
    def commands(self) -> tuple[Path, ...]:
        """The changes it makes (context lines and exits are not changes)."""
        return tuple(x.path for x in self.lines if x.command and x.path is not None)

    def line(self, number: int) -> BatchLine | None:
        """The batch's line ``number`` (1-based, as vtysh counts)."""
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else None

    def __bool__(self) -> bool:
        return bool(self.lines)


def _bgp(change: Change) -> bool:
    path, command = change
    return (path[0] if path else command).removeprefix("no ").startswith("router bgp ")


def diff_trees(old: Node, new: Node) -> Batch:
    """The vtysh batch that turns ``old`` into ``new`` (empty when they are the same)."""
    removals, additions = _changes(old, new, ())
    # `no neighbor X remote-as A` deletes the neighbor with all its lines: negating those as
    # well would fail ("Specify remote-as or peer-group commands first")
    gone = {
        (p[:1], c.split()[2])
        for p, c in removals if c.startswith("no neighbor ") and " remote-as " in c
    }  # fmt: skip
    removals = [
        (p, c) for p, c in removals
        if not (c.startswith("no neighbor ") and (p[:1], c.split()[2]) in gone
                and " remote-as " not in c)
    ]  # fmt: skip
    # deepest removals first: an object's lines before the object that holds them; additions
    # the other way round (a neighbor before its address-family lines, in an existing context)
    removals.sort(key=lambda c: -len(c[0]))
    additions.sort(key=lambda c: len(c[0]))
    # BGP instances last: a rejected `router bgp` line makes vtysh leave config mode at its
    # `exit` (FRR >= 9.1 then stops reading the batch): only BGP lines can be cut off, and
    # the next check sends them again
    changes = removals + additions
    # route-map entries that go, after the BGP lines: a network or neighbor that named one has
    # left it first (FRR takes a missing route-map as deny), also when FRR >= 9.1 stops the
    # batch at a rejected BGP line
    late = [c for c in removals if not c[0] and c[1].startswith("no route-map ")]
    changes = ([c for c in changes if not _bgp(c) and c not in late]
               + [c for c in changes if _bgp(c)] + late)  # fmt: skip
    lines: list[BatchLine] = []
    for path, group in itertools.groupby(changes, key=lambda c: c[0]):
        lines += [BatchLine(f"{' ' * i}{ctx}", path[: i + 1]) for i, ctx in enumerate(path)]
        lines += [BatchLine(f"{' ' * len(path)}{cmd}", (*path, cmd), True) for _p, cmd in group]
        lines += [BatchLine(f"{' ' * i}{_exit(ctx)}", None)
                  for i, ctx in reversed(list(enumerate(path)))]  # fmt: skip
    return Batch(tuple(lines))


def diff(old: str, new: str) -> str:
    """The vtysh batch text that turns ``old`` into ``new`` ("" when they are the same)."""
    return diff_trees(parse(old), parse(new)).text
