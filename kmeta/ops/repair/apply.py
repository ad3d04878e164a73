"""Writing a planned repair: a new directory (:func:`apply_repair`), or in the place of
the original after a backup (:func:`apply_repair_in_place`).  The input is opened read-only
and never changed, except by the final swap of the in-place mode.

Kafka facts behind it (``apache/kafka``, read for behaviour only): ``LogManager`` locks
``<data dir>/.lock`` while a broker runs, and at start-up parses the name of *every*
directory in a data dir as ``topic-partition``, failing on a name it cannot parse; so
the in-place mode refuses while the lock is held, and what it leaves beside the partition
has a name Kafka refuses rather than loads (``storage.tree.temp_beside``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kmeta.errors import KmetaError, UnreadableInput, UsageError
from kmeta.findings import Finding, Severity
from kmeta.formats.filenames import classify
from kmeta.ops.repair.plan import Action, RepairPlan, checkpoint_entries, metadata_partition
from kmeta.ops.verify import verify_discovery
from kmeta.storage import targets, tree
from kmeta.storage.discover import QUARANTINE, Discovery, LogFile, PartitionDir, discover
from kmeta.storage.swap import data_dir_lock, swap_in
from kmeta.storage.writer import atomic_write, fsync_directory, write_leader_epoch_checkpoint


@dataclass
class RepairResult:
    """A repair that was written."""

    plan: RepairPlan
    out: Path
    in_place: bool = False
    backup: Path | None = None
    #: findings of ``verify`` over the output (None when not checked)
    findings: list[Finding] | None = None
    #: what people should know about where it was written
    notes: list[str] = field(default_factory=list)

    @property
    def remaining_errors(self) -> list[Finding]:
        return [f for f in self.findings or () if f.severity is Severity.ERROR]


def _check_unchanged(plan: RepairPlan) -> None:
    if tree.fingerprint(plan.part_dir) != plan.fingerprint:
        raise UsageError("the input changed since the repair was planned",
                         context=str(plan.part_dir), hint="stop what writes to it and run "
                         "repair again")


def _check_target(target: Path, part: Path, what: str, into_data_dir: bool | None = None
                  ) -> None:
    """``target`` must be absent or an empty directory, outside the input and
    outside Kafka's directories; directly in a data dir only if ``into_data_dir`` (None:
    never, not even with the flag)."""
    targets.check_target(target, [part], what=f"the {what}",
                         permit=None if into_data_dir is None else targets.INTO_DATA_DIR,
                         permitted=bool(into_data_dir))
    target = target.resolve()
    if target.exists() or target.is_symlink():
        if not target.is_dir():
            raise UsageError(f"the {what} exists and is not a directory",
                             context=str(target))
        if any(target.iterdir()):
            raise UsageError(f"the {what} is not empty", context=str(target),
                             hint=f"give a new or empty {what}")


def _write(plan: RepairPlan, dest: Path, durable: bool) -> None:
    """Write the repaired partition into the empty directory ``dest``."""
    src = plan.part_dir
    quarantine = dest / QUARANTINE
    for c in plan.changes:
        if c.action is Action.REBUILT and c.kind == "segment":
            atomic_write(dest / c.name, b"", durable=durable)  # an empty segment
        elif c.action in (Action.COPIED, Action.CUT):
            tree.copy_file(src / c.name, dest / c.name, durable=durable,
                       limit=c.bytes_out if c.action is Action.CUT else None)
        elif c.action is Action.REBUILT:
            write_leader_epoch_checkpoint(dest, checkpoint_entries(plan.epoch_cache),
                                          durable=durable)
        elif c.action is Action.QUARANTINED:
            quarantine.mkdir(exist_ok=True)
            if c.kind == "directory":
                tree.copy_tree(src / c.name, quarantine / c.name, durable)
            else:
                tree.copy_file(src / c.name, quarantine / c.name, durable=durable)
    if durable:
        if quarantine.exists():
            fsync_directory(quarantine)
        fsync_directory(dest)


@contextlib.contextmanager
def _writing(where: Path) -> Iterator[None]:
    """An OSError while writing (a full disk …) becomes one clear line."""
    try:
        yield
    except OSError as e:
        raise KmetaError(f"cannot write the repaired copy: {e.strerror or e}",
                         context=str(getattr(e, "filename", None) or where)) from e


def _as_partition(out: Path, like: PartitionDir) -> tuple[Discovery, bool]:
    """The output discovered as the partition ``like`` is, and whether kmeta knows it as
    that on its own (by name or content; else it is built by hand here)."""
    found = discover([out])
    if [p.path for p in found.partitions] == [out] and found.partitions[0].is_metadata:
        return found, True
    # Not known as a metadata partition: discovery would take its files as loose ones (and
    # the quarantine as more of them); check them as the partition they are.
    files = [LogFile(p, kind, like.topic) for p in sorted(out.iterdir())
             if p.is_file() and (kind := classify(p.name)).kind != "unknown"]
    return Discovery(partitions=[PartitionDir(out, like.topic, like.partition,
                                              sorted(files, key=LogFile.sort_key))]), False


def _check(out: Path, found: Discovery) -> list[Finding]:
    """``verify`` over the output, less its note about the quarantine folder (S007: a
    directory inside a partition directory), which repair put there on purpose and which
    Kafka ignores (it loads regular files only)."""
    quarantine = str(out / QUARANTINE)
    return [f for f in verify_discovery(found).findings
            if not (f.code == "S007" and f.file == quarantine)]


def _name_note(out: Path, part: Path, recognised: bool) -> list[str]:
    if out.name == part.name:
        return []
    note = (f"the output is named {out.name}: Kafka finds a partition by its directory "
            f"name, so it must be named {part.name} to be used")
    if not recognised:  # nothing in it tells kmeta what it is either
        note += "; kmeta verify, diff and image also need that name to read it as one"
    return [note]


def apply_repair(plan: RepairPlan, out: str | os.PathLike[str], *, check: bool = True,
                 durable: bool = True, into_data_dir: bool = False) -> RepairResult:
    """Write the repaired copy to ``out`` (absent or an empty directory, outside the
    input, and in a Kafka data dir only with ``into_data_dir``).  With ``check``, the
    output is verified and the findings kept in the result.  The input is only read."""
    part = plan.part_dir.resolve()
    target = Path(out).absolute()
    _check_target(target, part, "output directory", into_data_dir)
    _check_unchanged(plan)
    with _writing(target):
        tree.materialize(target, lambda d: _write(plan, d, durable), durable)
    _check_unchanged(plan)  # a writer racing us would make the copy a mix
    found, recognised = _as_partition(target, metadata_partition(part))
    result = RepairResult(plan, target, notes=_name_note(target, part, recognised))
    if check:
        result.findings = _check(target, found)
    return result


def apply_repair_in_place(plan: RepairPlan, backup: str | os.PathLike[str] | None, *,
                          check: bool = True) -> RepairResult:
    """Replace the partition directory with its repaired copy, after copying the original
    to ``backup`` (required; absent or empty, outside the data directory).

    Refuses while a process holds the data directory's ``.lock``, and holds it itself
    meanwhile.  Every file and directory is fsynced before each rename.
    """
    if backup is None:
        raise UsageError("repairing in place needs a backup directory",
                         hint="give --backup DIR; the original partition is copied there")
    part = plan.part_dir.resolve()
    data_dir = part.parent
    backup_path = Path(backup).absolute()
    _check_target(backup_path, part, "backup directory")
    if tree.is_within(backup_path.resolve(), data_dir):
        raise UsageError("the backup is inside the data directory", context=str(backup_path),
                         hint="Kafka treats every directory there as a partition: put the "
                         "backup elsewhere")
    with data_dir_lock(data_dir), _writing(part):
        _check_unchanged(plan)
        # Crash safety, step by step (the input is a partition dir P in data dir D):
        # 1. Copy P to the backup (built beside it, renamed into place when complete).
        #    A crash leaves P untouched and at most a hidden temp directory beside the
        #    backup.
        tree.materialize(backup_path, lambda d: tree.copy_tree(part, d), True)
        _check_unchanged(plan)
        if not tree.same_tree(part, backup_path):
            raise UnreadableInput("the backup differs from the original after copying",
                                  context=str(backup_path), hint="check the disk; nothing "
                                  "was changed")
        # 2. Write the repaired copy to a hidden temp directory N in D, fsynced.  A crash
        #    leaves P untouched and N in D: Kafka refuses to start on N's name (see
        #    _temp_beside), pointing at it; delete it and run again.
        new = tree.temp_beside(part, "repair")
        new.mkdir()
        try:
            _write(plan, new, True)
            fsync_directory(new)
            fsync_directory(data_dir)
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            raise
        # 3. Swap N and P (see swap_in for what a crash leaves).  The backup holds the
        #    original throughout.
        old = swap_in(new, part)
        # 4. Remove the original (now under a hidden name): the backup holds it (checked
        #    in step 1).  A crash here leaves the repaired P and part of the original
        #    beside it, which a broker refuses to start on: delete it.
        shutil.rmtree(old)
        fsync_directory(data_dir)
    result = RepairResult(plan, part, in_place=True, backup=backup_path)
    if check:
        result.findings = _check(part, _as_partition(part, metadata_partition(part))[0])
    return result
