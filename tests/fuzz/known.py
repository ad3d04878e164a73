"""Failure classes the campaign has found that are not fixed yet.

Each entry: a name, a pattern that the failure's signature matches, and a repro the
strict xfail test in ``test_campaign.py`` runs.  When a fix lands, that xfail passes
unexpectedly and fails the suite: delete the entry then, and the campaign judges the
class strictly again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class OpenBug:
    name: str
    signature: str  # a regular expression searched in the failure signature
    where: str  # the repro in /work/notes/fuzz-finds or the report


OPEN_BUGS: tuple[OpenBug, ...] = (
    OpenBug("diff-legacy-records-count",
            r"^internal \| (diff|truncate) \| .*TypeError: unsupported operand type\(s\) "
            r"for \+=: 'int' and 'NoneType'",
            "diff/truncate on a metadata log with a magic 0/1 message: LegacyBatch has "
            "records_count None (kmeta/ops/diff.py _batches -> layout.batch)"),
    OpenBug("stdout-write-error",
            r"^internal \| \w+ \| .*OSError: \[Errno N\] No space left on device",
            "a full stdout (> /dev/full) is exit 70 'internal error'; cli.write_lines "
            "handles only BrokenPipeError"),
    OpenBug("legacy-wrapper-without-messages",
            r"^$",  # never a CLI failure class: exit 1/3, caught by test_properties.py
            "a magic 0/1 compressed wrapper with a null value or no inner messages: "
            "LegacyBatch.base_offset raises FormatError inside scan(); the segment becomes "
            "S008 unreadable, repair --dry-run a context-less KM003 line"),
    OpenBug("non-utf8-name-utf8-locale",
            r"^internal \| (verify|info) \| .*PYTHONIOENCODING",
            "a file name that is not UTF-8, under a UTF-8 locale (stdout errors 'strict'): "
            "verify and info print it through rich and exit 70 with UnicodeEncodeError"),
)


def open_bug(signature: str) -> OpenBug | None:
    for bug in OPEN_BUGS:
        if re.search(bug.signature, signature):
            return bug
    return None
