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


#: Empty: the four classes the first campaigns found (diff/truncate on a legacy message,
#: a full stdout, a non-UTF-8 file name under a strict UTF-8 locale, a legacy wrapper with
#: no messages) are fixed and kept as regression tests in test_campaign.py and
#: test_properties.py.
OPEN_BUGS: tuple[OpenBug, ...] = ()


def open_bug(signature: str) -> OpenBug | None:
    for bug in OPEN_BUGS:
        if re.search(bug.signature, signature):
            return bug
    return None
