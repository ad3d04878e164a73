"""A tree of named nodes built on demand, and the path rules of Kafka's metadata shell
over it (``shell/.../glob/GlobVisitor.java``, ``GlobComponent.java``,
``command/CommandUtils.java``): relative paths, lexical ``.``/``..``, globs per component;
with the walks and the diff that ``kmeta shell`` prints.  Pure, no I/O.

:mod:`kmeta.core.image_nodes` builds the metadata image's tree out of these nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Change", "Node", "change_dir", "complete_path", "diff_nodes", "flatten", "glob_escape",
           "glob_regex", "java_sorted", "join", "path_of", "related", "resolve", "split_path",
           "walk"]

UNSET: Any = object()  # a node whose json is made from its children or text


class Node:
    """A directory (children by name, built on demand) or a leaf (its ``text``).

    ``value`` is what the node shows is made from (the broker dict, the topic dict …):
    two nodes of trees built with the same options whose values are equal show the same,
    which is how :func:`diff_nodes` skips unchanged subtrees without building their text.
    """

    __slots__ = ("_entries", "_json", "_make", "_names", "_text", "name", "value")

    def __init__(self, name: str, *, entries: Callable[[], dict[str, Any]] | None = None,
                 make: Callable[[str, Any], Node] | None = None,
                 text: str | Callable[[], str] | None = None,
                 json: Any = UNSET, value: Any = None) -> None:
        self.name = name
        self._entries = entries
        self._make = make
        self._text = text
        self._json = json
        self._names: list[str] | None = None
        self.value = value

    @property
    def is_dir(self) -> bool:
        return self._entries is not None

    def _map(self) -> dict[str, Any]:
        assert self._entries is not None
        m = self._entries()
        self._entries = lambda: m  # computed once
        return m

    def names(self) -> list[str]:
        """The children's names, sorted as Java sorts strings ([] for a leaf)."""
        if self._entries is None:
            return []
        if self._names is None:
            self._names = java_sorted(self._map())
        return self._names

    def child(self, name: str) -> Node | None:
        if self._entries is None:
            return None
        m = self._map()
        if name not in m:
            return None
        assert self._make is not None
        return self._make(name, m[name])

    def children(self) -> Iterator[Node]:
        for n in self.names():
            c = self.child(n)
            if c is not None:
                yield c

    @property
    def text(self) -> str:
        """A leaf's text (Kafka's ``cat``); '' for a directory."""
        t = self._text
        if t is None:
            return ""
        if not isinstance(t, str):
            t = self._text = t()
        return t

    @property
    def json(self) -> Any:
        j = self._json
        if j is UNSET:
            j = {c.name: c.json for c in self.children()} if self.is_dir else self.text
            self._json = j
        elif callable(j):
            j = self._json = j()
        return j

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {'dir' if self.is_dir else 'leaf'})"


def _java_key(s: str) -> bytes:
    return s.encode("utf-16-be", "surrogatepass")


def java_sorted(names: Any) -> list[str]:
    """Sorted as Java's String.compareTo (UTF-16 code units)."""
    names = list(names)
    if all(c < "\ud800" for n in names for c in n):  # the common case: code points agree
        return sorted(names)
    return sorted(names, key=_java_key)



# ---------------------------------------------------------------------- paths

def split_path(cwd: str, path: str) -> list[str]:
    """Kafka's path rules: relative to ``cwd``, split on ``/`` with empty components
    dropped, then ``.`` removed and ``..`` popping one component (lexically, before any
    lookup; ``..`` at the root stays there)."""
    return [c for c, _ in _components(cwd, path)]


def _components(cwd: str, path: str) -> list[tuple[str, bool]]:
    """:func:`split_path` with, per component, whether it came from ``cwd``: the working
    directory is a real path, its names are never read as globs (Kafka reads them so,
    and cannot ``ls .`` inside a node whose name holds a ``\\`` or ``*``)."""
    out: list[tuple[str, bool]] = []
    if not path.startswith("/"):
        out = [(c, True) for c in cwd.split("/") if c]
    for c in path.split("/"):
        if c in ("", "."):
            continue
        if c == "..":
            if out:
                out.pop()
            continue
        out.append((c, False))
    return out


def glob_regex(component: str) -> re.Pattern[str] | None:
    """The regular expression of a glob component (``*``, ``?``, ``{a,b}``, ``\\x``), or
    None when it has no glob syntax.  No ``[...]`` ranges; a nested ``{`` or one left open
    makes the whole component a literal, as Kafka's GlobComponent does."""
    if not any(ch in component for ch in "*?{\\"):
        return None
    out: list[str] = []
    in_alt = False
    i = 0
    while i < len(component):
        ch = component[i]
        if ch == "\\":
            i += 1
            if i < len(component):
                out.append(re.escape(component[i]))
        elif ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "{":
            if in_alt:
                return None
            in_alt = True
            out.append("(?:")
        elif ch == "}" and in_alt:
            in_alt = False
            out.append(")")
        elif ch == "," and in_alt:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    if in_alt:
        return None
    return re.compile("".join(out), re.DOTALL)


def glob_escape(name: str) -> str:
    """A node name as a path component that matches only it (``\\`` before each glob
    character): what completion inserts and what a script should type for a name such as
    ``clientId(a\\(b)``."""
    if not any(ch in name for ch in "*?{}\\,"):
        return name
    return "".join("\\" + ch if ch in "*?{}\\," else ch for ch in name)


def path_of(components: list[str]) -> str:
    """The path that :func:`resolve` turns back into exactly these node names."""
    return "/" + "/".join(glob_escape(c) for c in components)


def resolve(root: Node, cwd: str, path: str) -> list[tuple[str, Node]]:
    """Every node ``path`` names (globs expanded per component, in sorted order), as
    (real absolute path, node); [] when nothing matches.  Never raises on any string."""
    found: list[tuple[str, Node]] = [("", root)]
    for comp, literal in _components(cwd, path):
        rx = None if literal else glob_regex(comp)
        nxt: list[tuple[str, Node]] = []
        for base, node in found:
            if not node.is_dir:
                continue
            if rx is None:
                c = node.child(comp)
                if c is not None:
                    nxt.append((f"{base}/{comp}", c))
                continue
            for n in node.names():
                if rx.fullmatch(n):
                    c = node.child(n)
                    if c is not None:
                        nxt.append((f"{base}/{n}", c))
        found = nxt
        if not found:
            return []
    return [(p or "/", n) for p, n in found]


def complete_path(root: Node, cwd: str, prefix: str) -> list[tuple[str, bool]]:
    """Tab completion of a path as Kafka's shell completes it (CommandUtils.completePath):
    the names of the directory ``prefix`` ends in that start with its last part, each
    after the text typed up to the last ``/``; a directory gets a trailing ``/`` and is
    not complete (False).  Names are glob-escaped, so that the completed path resolves
    to the node (Kafka inserts them raw)."""
    head, _, partial = prefix.rpartition("/")
    typed = prefix[:len(head) + 1] if "/" in prefix else ""
    if "/" in prefix:
        found = resolve(root, cwd, (head or "/") if prefix.startswith("/") else head or ".")
    else:
        found = resolve(root, cwd, ".")
    if len(found) != 1 or not found[0][1].is_dir:
        return []
    directory = found[0][1]
    want = re.sub(r"\\(.)", r"\1", partial)
    out = []
    for name in directory.names():
        if name.startswith(want):
            child = directory.child(name)
            is_dir = child is not None and child.is_dir
            out.append((typed + glob_escape(name) + ("/" if is_dir else ""), not is_dir))
    return out


def related(a: str, b: str) -> bool:
    """Whether two real paths are the same node or one is under the other (what
    ``changes PATH`` asks of each path a record touched)."""
    if a == b or a == "/" or b == "/":
        return True
    return b.startswith(a + "/") or a.startswith(b + "/")


def change_dir(root: Node, cwd: str, target: str | None) -> tuple[str, list[str]]:
    """Kafka's ``cd``: (the new working directory, error lines).  No target is ``/``; a
    glob that matches several directories ends at the last one, and each leaf it matches
    is an error."""
    if target is None:
        return "/", []
    found = resolve(root, cwd, target)
    if not found:
        return cwd, [f"cd: {target}: no such directory."]
    new, errors = cwd, []
    for path, node in found:
        if node.is_dir:
            new = path
        else:
            errors.append(f"cd: {target}: not a directory.")
    return new, errors


def join(path: str, name: str) -> str:
    return f"{path.rstrip('/')}/{name}"


def walk(node: Node, path: str) -> Iterator[tuple[str, Node]]:
    """``node`` and every node under it, depth first in sorted order, with its path."""
    yield path, node
    for c in node.children():
        yield from walk(c, join(path, c.name))


def flatten(node: Node, path: str = "/") -> dict[str, str]:
    """Every leaf under ``node`` (``node`` itself if a leaf): path -> text."""
    return {p: n.text for p, n in walk(node, path) if not n.is_dir}


# ---------------------------------------------------------------------- diff

Change = tuple[str, str, "str | None", "str | None"]


def diff_nodes(before: Node, after: Node, path: str = "/") -> list[Change]:
    """The leaves added, removed and changed from ``before`` to ``after`` (trees built
    with the same options), as (path, "added"|"removed"|"changed", old text, new text) in
    path order.  A subtree whose value is equal on both sides is skipped unread."""
    out: list[Change] = []
    _diff(before, after, path, out)
    return out


def _diff(a: Node, b: Node, path: str, out: list[Change]) -> None:
    if a.value is not None and (a.value is b.value or a.value == b.value) \
            and a.is_dir == b.is_dir and a.name == b.name:
        return
    if not a.is_dir and not b.is_dir:
        if a.text != b.text:
            out.append((path, "changed", a.text, b.text))
        return
    if a.is_dir != b.is_dir:
        out.extend((p, "removed", t, None) for p, t in flatten(a, path).items())
        out.extend((p, "added", None, t) for p, t in flatten(b, path).items())
        return
    names_a, names_b = a.names(), b.names()
    merged = names_a if names_a == names_b else java_sorted(set(names_a) | set(names_b))
    set_a = set(names_a) if names_a is not names_b else None
    set_b = set(names_b) if names_a is not names_b else None
    for n in merged:
        ca = a.child(n) if set_a is None or n in set_a else None
        cb = b.child(n) if set_b is None or n in set_b else None
        p = join(path, n)
        if ca is None and cb is not None:
            out.extend((q, "added", None, t) for q, t in flatten(cb, p).items())
        elif cb is None and ca is not None:
            out.extend((q, "removed", t, None) for q, t in flatten(ca, p).items())
        elif ca is not None and cb is not None:
            _diff(ca, cb, p, out)
