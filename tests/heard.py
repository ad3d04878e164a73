"""A :class:`kmeta.storage.progress.Progress` that keeps what it hears, for the tests of
what a run tells the observer it is given (the command line's bar is another one)."""

from __future__ import annotations

from kmeta.storage.progress import Found, Progress


class Heard(Progress):
    """Every call, in order: the files each discovery listed, each read's (path, position)
    and the bytes read elsewhere."""

    def __init__(self) -> None:
        self.found_files: list[str] = []
        self.reads: list[tuple[str, int]] = []
        self.elsewhere = 0

    def found(self, discovery: Found) -> None:
        self.found_files += [str(f.path) for f in discovery.listed_files()]

    def read(self, path: str, position: int) -> None:
        self.reads.append((path, position))

    def read_elsewhere(self, size: int) -> None:
        self.elsewhere += size

    def furthest(self) -> dict[str, int]:
        """How far each file was read."""
        out: dict[str, int] = {}
        for path, position in self.reads:
            out[path] = max(out.get(path, 0), position)
        return out
