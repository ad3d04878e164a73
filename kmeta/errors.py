"""The error base class, the exit codes and the policy that picks one: what every layer
may raise, and what a command's result comes to.

Bad *data* is not an error here: it becomes a :class:`~kmeta.findings.Finding`.  An error
is a condition that stops a command — a path that cannot be read, a usage mistake.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

from kmeta.findings import CODES, Finding, Severity


class ExitCode(IntEnum):
    """Process exit codes; part of kmeta's interface (documented in ``man/kmeta.1``)."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    UNREADABLE = 3
    INTERNAL = 70  # a bug in kmeta (EX_SOFTWARE); reported in one line
    INTERRUPTED = 130  # Ctrl-C


class Verdict:
    """What the findings of a command come to, counted as they stream past (a dump may
    meet millions): how many of each severity, and how many files could not be read."""

    def __init__(self, findings: Iterable[Finding] = ()) -> None:
        self.errors = 0
        self.warnings = 0
        self.infos = 0
        self.unreadable = 0
        for f in findings:
            self.count(f)

    def count(self, finding: Finding) -> None:
        code = CODES[finding.code]
        if code.unreadable:
            self.unreadable += 1
        if code.severity is Severity.ERROR:
            self.errors += 1
        elif code.severity is Severity.WARNING:
            self.warnings += 1
        else:
            self.infos += 1

    @property
    def total(self) -> int:
        return self.errors + self.warnings + self.infos

    def exit_code(self, failed: bool | None = None) -> ExitCode:
        """The exit policy of every command that ends normally.

        3 when a file could not be read at all: an answer about the rest would be about
        part of the input.  Else 1 when the command's question failed: ``failed`` when
        the command answers it itself (replicas diverged, a repaired copy still has
        errors), else a finding of severity error.  Else 0.
        """
        if self.unreadable:
            return ExitCode.UNREADABLE
        if failed is None:
            failed = self.errors > 0
        return ExitCode.FINDINGS if failed else ExitCode.OK


class KmetaError(Exception):
    """A condition that stops a command, reported to the user as one line.

    ``reference`` is a stable short code; ``context`` names the file (and byte offset);
    ``hint`` says what the user can do about it.
    """

    reference = "KM000"
    exit_code = ExitCode.UNREADABLE

    def __init__(self, message: str, *, context: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.context = context
        self.hint = hint

    def one_line(self) -> str:
        parts = [f"kmeta: error[{self.reference}]:"]
        if self.context:
            parts.append(f"{self.context}:")
        parts.append(self.message)
        line = " ".join(parts)
        if self.hint:
            line += f" ({self.hint})"
        return line

    def finding(self, file: str) -> Finding:
        """What this error says of ``file`` when it stops only the reading of that file:
        S008, it could not be read."""
        return Finding("S008", self.message, file)


class UnreadableInput(KmetaError):
    """A path that does not exist, cannot be opened, or holds none of the Kafka files the
    command reads."""

    reference = "KM001"
    exit_code = ExitCode.UNREADABLE


class VanishedInput(UnreadableInput):
    """A file kmeta listed that was gone when it came to read it: removed or renamed by
    whoever writes the dir (a running broker's retention, roll, log cleaner or checkpoint
    rewrite).  Alone it stops a command as any unreadable input does (exit 3); met while
    reading a dir, it is S013, an info: the file is no longer part of the log."""

    def finding(self, file: str) -> Finding:
        return Finding("S013", self.message, file)


class UsageError(KmetaError):
    """Options that contradict each other, hold a bad value or name things that do not
    exist; a path at the wrong level (the message names the right one)."""

    reference = "KM002"
    exit_code = ExitCode.USAGE


class OutputError(KmetaError):
    """Standard output is closed or cannot take what kmeta writes (a full disk, /dev/full)."""

    reference = "KM004"
    exit_code = ExitCode.USAGE


class FormatError(KmetaError):
    """Bytes that do not follow a format; callers turn it into a Finding with a position."""

    reference = "KM003"
    exit_code = ExitCode.FINDINGS

    def __init__(self, message: str, *, position: int | None = None, **kw):
        super().__init__(message, **kw)
        self.position = position

    def finding(self, file: str) -> Finding:
        """F010: the file was read, and its content breaks its format at ``position``."""
        return Finding("F010", self.message, file, self.position)
