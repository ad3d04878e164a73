"""What the harness knows independently of kmeta: the valid batch prefix of a log, and a
fingerprint of a directory tree (to prove a command left its input alone).

The batch walker is deliberately not kmeta's reader: it only checks what Kafka's recovery
checks (frame, CRC32C, contiguous offsets, non-decreasing epochs), so that "repair lost a
valid batch" is judged by a second opinion rather than by the code under test.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from crc32c import crc32c

from kmeta.formats.batch import CRC_START, HEADER, HEADER_SIZE, LOG_OVERHEAD


@dataclass(frozen=True)
class BatchSpan:
    """One v2 batch found by the walker: where it sits and what it holds."""

    position: int
    size: int
    base_offset: int
    last_offset: int
    epoch: int
    raw: bytes


def batches(data: bytes) -> list[BatchSpan]:
    """Every v2 batch from the start of ``data`` while the frame and CRC hold (no offset
    judgement): the view of a file that mutators use to find fields."""
    out = []
    pos = 0
    while pos + HEADER_SIZE <= len(data):
        f = HEADER.unpack_from(data, pos)
        length = f[1]
        end = pos + LOG_OVERHEAD + length
        if f[3] != 2 or length < HEADER_SIZE - LOG_OVERHEAD or end > len(data):
            break
        raw = data[pos:end]
        if crc32c(raw[CRC_START:]) != f[4]:
            break
        out.append(BatchSpan(pos, end - pos, f[0], f[0] + f[6], f[2], raw))
        pos = end
    return out


def segment_files(partition: Path) -> list[Path]:
    """The ``.log`` files of a partition dir in base-offset order."""
    logs = [p for p in partition.iterdir() if p.name.endswith(".log") and p.is_file()
            and p.name[:-4].isdigit()]
    return sorted(logs, key=lambda p: int(p.name[:-4]))


def valid_prefix(partition: Path) -> list[BatchSpan]:
    """The batches Kafka's recovery (and any sane repair) must keep: in offset order from
    the first segment, each with a valid frame and CRC, its base offset the previous
    batch's last offset + 1 and an epoch not below the previous one; the walk stops at
    the first batch that breaks a rule, in whichever segment it is."""
    kept: list[BatchSpan] = []
    expected: int | None = None
    epoch = -1
    for seg in segment_files(partition):
        data = seg.read_bytes()
        found = batches(data)
        covered = sum(b.size for b in found)
        for b in found:
            if b.last_offset < b.base_offset or b.epoch < epoch:
                return kept
            if expected is not None and b.base_offset != expected:
                return kept
            if expected is None and b.base_offset != int(seg.name[:-4]):
                return kept
            kept.append(b)
            expected, epoch = b.last_offset + 1, b.epoch
        if covered != len(data):
            return kept  # damage after the last good batch: later segments do not count
    return kept


def tree_fingerprint(root: Path) -> dict[str, tuple]:
    """Path -> (kind, size, mtime_ns, sha256) for everything under ``root`` (symlinks are
    not followed: a FIFO or a link to /dev/zero is fingerprinted by what it is)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isfile(p) and not os.path.islink(p):
                try:
                    digest = hashlib.sha256(Path(p).read_bytes()).hexdigest()
                except OSError:
                    digest = "unreadable"
                out[rel] = ("file", st.st_size, st.st_mtime_ns, digest)
            elif os.path.isdir(p):
                out[rel] = ("dir",)
            else:
                out[rel] = ("other", st.st_mode, st.st_mtime_ns)
    return out


def tree_changes(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """What differs between two fingerprints, as short lines."""
    changes = []
    for rel in sorted(set(before) | set(after)):
        a, b = before.get(rel), after.get(rel)
        if a != b:
            what = "added" if a is None else "removed" if b is None else "changed"
            changes.append(f"{what}: {rel}")
    return changes
