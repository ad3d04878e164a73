"""The text of the node-tree commands (``ls``, ``cat``, ``tree``, ``find``) as Kafka 4.0's
``kafka-metadata-shell.sh`` prints it (``shell/.../command/*CommandHandler.java``), over
:mod:`kmeta.core.image_nodes`.

Each function yields :class:`Line` objects in Kafka's order; ``error`` marks Kafka's
"no such" lines (its exact strings, case and period included), which Kafka prints among
the output and kmeta's callers may send to stderr and count for the exit code.

Departures from Kafka, on purpose: ``find`` prints each node's real absolute path (Kafka
prints the path as typed, so a glob prints its own text once per match, a trailing ``/``
doubles, ``.`` stays relative), and it never stops at a child that is listed but cannot be
read (Kafka 4.0 stops the shell at ``/image/features/zkMigrationState``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from kmeta.core.image_nodes import Node, resolve, walk


class Line(NamedTuple):
    text: str
    error: bool = False


def _width(s: str) -> int:
    """Java's String.length(): UTF-16 code units."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def column_schema(entries: Sequence[str], width: int | None) -> tuple[list[int], int]:
    """Kafka's ``ls`` columns: (column widths, entries per column).  Without a terminal,
    one column; else the most columns (at most width/4) whose last column is not empty
    and whose total width (each column its longest entry + 2) fits."""
    n = len(entries)
    if width is None or width // 4 <= 1:
        return [0], n
    best: tuple[list[int], int] | None = None
    for cols in range(width // 4, 1, -1):
        per = (n + cols - 1) // cols
        if per == 0:
            continue
        widths = [0] * cols
        for i, e in enumerate(entries):
            c = i // per
            widths[c] = max(widths[c], _width(e) + 2)
        if widths[-1] != 0 and sum(widths) <= width:
            best = (widths, per)
            break
    if best is not None:
        return best
    return [max((_width(e) + 2 for e in entries), default=0)], n


def entry_lines(entries: Sequence[str], width: int | None) -> list[str]:
    """Entries laid out column-major; every column but the last padded to its width
    (trailing spaces included, as Kafka pads them)."""
    if not entries:
        return []
    widths, per = column_schema(entries, width)
    cols = len(widths)
    rows = (len(entries) + cols - 1) // cols
    out = []
    for r in range(rows):
        parts = []
        for c in range(cols):
            i = r + c * per
            if i < len(entries):
                e = entries[i]
                parts.append(e)
                if c < cols - 1:
                    parts.append(" " * (widths[c] - _width(e)))
        out.append("".join(parts))
    return out


def _last(path: str) -> str:
    return "/" if path == "/" else path.rsplit("/", 1)[1]


def ls_lines(root: Node, cwd: str, targets: Sequence[str] = (),
             width: int | None = None) -> Iterator[Line]:
    """Kafka's ``ls``: leaves' names first, then each directory's children, headed by
    ``<last component>:`` when there are files or several directories, a blank line
    before each header but the first.  ``width`` is the terminal's (None: one name a
    line, as Kafka prints when it has no terminal)."""
    found: list[tuple[str, Node]] = []
    for target in targets or ["."]:
        matches = resolve(root, cwd, target)
        if not matches:
            yield Line(f"ls: {target}: no such file or directory.", True)
        found += matches
    yield from ls_matches(found, width)


def ls_matches(found: Sequence[tuple[str, Node]], width: int | None = None
               ) -> Iterator[Line]:
    """``ls`` of nodes already resolved: (real path, node) pairs."""
    files = [_last(p) for p, n in found if not n.is_dir]
    dirs = [(_last(p), n.names()) for p, n in found if n.is_dir]
    for text in entry_lines(files, width):
        yield Line(text)
    need_intro = bool(files) or len(dirs) > 1
    first = not files
    for name, children in dirs:
        intro: list[str] = []
        if need_intro:
            if not first:
                intro.append("")
            intro.append(f"{name}:")
            first = False
        if not children:
            continue  # an empty directory prints nothing, not even its header
        for text in intro:
            yield Line(text)
        for text in entry_lines(children, width):
            yield Line(text)


def cat_lines(root: Node, cwd: str, targets: Sequence[str]) -> Iterator[Line]:
    """Kafka's ``cat``: each leaf's text; a directory is an error, with the target as
    typed."""
    for target in targets:
        found = resolve(root, cwd, target)
        if not found:
            yield Line(f"cat: {target}: No such file or directory.", True)
        for _, node in found:
            if node.is_dir:
                yield Line(f"cat: {target}: Is a directory", True)
            else:
                yield Line(node.text)


def tree_of(node: Node, indent: str = "") -> Iterator[str]:
    """A leaf's text, or a directory's descendants: ``name:`` then its content indented
    two more spaces (Kafka's ShellNodePrinter)."""
    if not node.is_dir:
        yield indent + node.text
        return
    for c in node.children():
        yield f"{indent}{c.name}:"
        yield from tree_of(c, indent + "  ")


def tree_lines(root: Node, cwd: str, targets: Sequence[str]) -> Iterator[Line]:
    for target in targets:
        found = resolve(root, cwd, target)
        if not found:
            yield Line(f"tree: {target}: No such file or directory.", True)
        for _, node in found:
            for text in tree_of(node):
                yield Line(text)


def find_lines(root: Node, cwd: str, paths: Sequence[str] = ()) -> Iterator[Line]:
    """Kafka's ``find``: each matched node and everything under it, one path a line,
    depth first in sorted order (real absolute paths)."""
    for path in paths or ["."]:
        found = resolve(root, cwd, path)
        if not found:
            yield Line(f"find: {path}: no such file or directory.", True)
        for real, node in found:
            for p, _ in walk(node, real):
                yield Line(p)


def pwd_line(cwd: str) -> str:
    return cwd if cwd == "/" else cwd.rstrip("/")


__all__ = ["Line", "cat_lines", "column_schema", "entry_lines", "find_lines",
           "ls_lines", "ls_matches", "pwd_line", "tree_lines", "tree_of"]
