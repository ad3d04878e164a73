"""The rich console every people-facing renderer prints through."""

from __future__ import annotations

import os
import sys

from rich.console import Console


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich would exit 1 here; the reader (``| head``) went away, which the command
        # turns into a quiet exit 0.
        raise BrokenPipeError


def make_console() -> Console:
    """NO_COLOR means no escape codes at all (rich alone would still send bold); a pipe
    gets wide lines instead of 80 columns."""
    plain = bool(os.environ.get("NO_COLOR"))
    return _Console(soft_wrap=True, color_system=None if plain else "auto",
                    width=None if sys.stdout.isatty() else 200)
