"""``kmeta brokers``: the life of every broker and controller, from the metadata log.

The log is replayed (from its start, or from the latest snapshot at or below ``--from``)
with :func:`kmeta.ops.replay.replay_log`, and :class:`kmeta.core.lifecycle.Lifecycles`
tells every registration change it applies: registrations and new incarnations, fences
and unfences, controlled shutdowns, unregistrations, each with the ISRs and leaderships
its batch moved, and the quorum's leader per epoch.  A lone snapshot, or a partition
whose log is gone, has no history: the state it holds is all there is, and the result
says so.  A log whose start no snapshot covers (it was deleted) is told from its start
all the same, each node's state unknown until the first snapshot makes it exact.

Nothing here prints or exits: bad data becomes Findings, bad options a UsageError.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from kmeta.core.image import PROBLEM_CODES, MetadataImage
from kmeta.core.lifecycle import LeaderSpan, Lifecycles, NodeEvent, NodeSummary, Silence
from kmeta.errors import FormatError, UnreadableInput, UsageError
from kmeta.findings import Finding, Severity, each_once
from kmeta.ops.replay import (
    Replay,
    check_offset,
    find_metadata,
    needs_the_log,
    replay_log,
    snapshot_image,
)
from kmeta.ops.replica import missing_log_finding
from kmeta.storage.discover import LogFile, PartitionDir
from kmeta.storage.progress import QUIET, Progress

__all__ = ["DEFAULT_FENCED_LONGER_THAN_MS", "Bound", "BrokersResult", "brokers",
           "parse_bound", "parse_duration"]

#: A broker fenced for longer than this is worth a finding (V132): five minutes, well
#: past a restart's few seconds and a session timeout's nine.
DEFAULT_FENCED_LONGER_THAN_MS = 5 * 60 * 1000
_LIFECYCLE_CODES = ("V130", "V131", "V132", "V133")


@dataclass(frozen=True)
class Bound:
    """An end of ``--since``/``--until``: an offset, or a time in ms since the epoch."""

    offset: int | None = None
    time_ms: int | None = None

    def __str__(self) -> str:
        if self.offset is not None:
            return f"offset {self.offset}"
        assert self.time_ms is not None
        return datetime.fromtimestamp(self.time_ms / 1000, UTC).strftime(
            "%Y-%m-%d %H:%M:%S UTC")


def parse_bound(text: str, option: str) -> Bound:
    """``1234`` (an offset) or an ISO 8601 time (``2024-05-01T12:00:00Z``, ``2024-05-01
    12:00``; UTC unless it says otherwise)."""
    t = text.strip()
    if t.isdigit():
        return Bound(offset=int(t))
    try:
        when = datetime.fromisoformat(t)
    except ValueError:
        raise UsageError(f"{option} {text!r}: give an offset (1234) or a time "
                         "(2024-05-01T12:00:00Z)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return Bound(time_ms=int(when.timestamp() * 1000))


_UNITS_MS = {"ms": 1, "s": 1000, "min": 60_000, "m": 60_000, "h": 3_600_000,
             "d": 86_400_000}


def parse_duration(text: str, option: str) -> int:
    """``90s``, ``5min`` (or ``5m``), ``2h``, ``1d``, ``1500ms``, in milliseconds."""
    t = text.strip().lower()
    for unit in sorted(_UNITS_MS, key=len, reverse=True):
        number = t[:-len(unit)].strip()
        if t.endswith(unit) and number.replace(".", "", 1).isdigit():
            return int(float(number) * _UNITS_MS[unit])
    raise UsageError(f"{option} {text!r}: give a duration such as 90s, 5min, 2h or 1d")


@dataclass
class BrokersResult:
    """Every registration change told, and where the telling started and ended."""

    events: list[NodeEvent]
    leaders: list[LeaderSpan]
    summary: list[NodeSummary]
    findings: list[Finding]
    #: the snapshot the replay started from, or None when it started empty at offset 0
    snapshot: Path | None
    start_offset: int
    #: the offset after the last record read (the log end offset), or None when no log
    #: was read
    log_end_offset: int | None
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    #: a snapshot without a log: the state at one offset, no history
    snapshot_only: bool = False
    #: the records read: metadata records (NoOps included) and control records
    metadata_records: int = 0
    control_records: int = 0
    #: the offset from which every node's state is exact: ``start_offset`` unless the log
    #: starts where no snapshot covers it; then the first snapshot's end, or None
    state_known_from: int | None = None
    #: the snapshot that made it exact, when the replay did not start from it
    exact_snapshot: Path | None = None
    #: the quorum's voters, as the log last names them (a VotersRecord or a
    #: LeaderChange) or else as quorum-state holds them; None when neither says
    voters: list[int] | None = None
    #: what said so: "the LeaderChange of epoch 31", "quorum-state", …
    voters_from: str | None = None
    #: what --broker, --since and --until kept (None: everything)
    broker: int | None = None
    since: Bound | None = None
    until: Bound | None = None
    #: the stretches the log holds no record of (a cluster powered off, a log before
    #: Kafka 3.3's NoOps): no node's state is seen there
    silences: list[Silence] = field(default_factory=list)
    not_on_disk: list[str] = field(default_factory=lambda: list(NOT_ON_DISK))

    @property
    def records(self) -> int:
        """Every record read, as ``verify`` and ``info`` count them."""
        return self.metadata_records + self.control_records


#: What the metadata log cannot say, however complete: said with every answer.
NOT_ON_DISK = (
    "heartbeats and session expiries are not written: a fence after a session timeout "
    "and a requested fence are the same records",
    "a broker's liveness between two changes is not written",
)


class _Watch:
    """The lifecycles, plus the offsets where --since and --until times fall."""

    def __init__(self, lives: Lifecycles, since: Bound | None, until: Bound | None) -> None:
        self.lives = lives
        self.controls = 0
        self.before = lives.before
        self.after = lives.after
        self.applied = lives.applied
        self.end = lives.end
        self.since_ms = since.time_ms if since else None
        self.until_ms = until.time_ms if until else None
        #: the first offset at or after --since, and the first after --until
        self.since_offset: int | None = None
        self.after_until: int | None = None
        self.first_timestamp: int | None = None
        #: the offset the replay heard started at
        self.start: int | None = None
        #: where the story starts when below the replay's start (lifecycle_watch)
        self.heard: HeardStart | None = None

    def control(self, epoch: int, payload: object) -> None:
        self.controls += 1
        self.lives.control(epoch, payload)

    def batch(self, offset: int, epoch: int, timestamp: int) -> None:
        if self.first_timestamp is None:
            self.first_timestamp = timestamp
        if self.since_ms is not None and self.since_offset is None \
                and timestamp >= self.since_ms:
            self.since_offset = offset
        if self.until_ms is not None and self.after_until is None \
                and timestamp > self.until_ms:
            self.after_until = offset
        self.lives.batch(offset, epoch, timestamp)


def _check_order(since: Bound | None, until: Bound | None) -> None:
    """A UsageError for --since after --until, as dump's --from-offset after --to-offset
    (an offset and a time are not compared: where a time falls needs the log)."""
    if since is None or until is None:
        return
    for lo, hi in ((since.offset, until.offset), (since.time_ms, until.time_ms)):
        if lo is not None and hi is not None and lo > hi:
            raise UsageError(f"--since {since} is after --until {until}")


def brokers(path: str | os.PathLike[str], *, broker: int | None = None,
            since: Bound | None = None, until: Bound | None = None,
            from_offset: int | None = None,
            fenced_longer_than_ms: int = DEFAULT_FENCED_LONGER_THAN_MS,
            progress: Progress = QUIET) -> BrokersResult:
    """The lifecycle of every broker and controller in the metadata log under ``path``;
    ``progress`` hears of the reading."""
    if fenced_longer_than_ms < 0:
        raise UsageError("--fenced-longer-than: a duration is 0 or more")
    check_offset(from_offset, "--from")
    _check_order(since, until)
    source = find_metadata(path, progress)
    if isinstance(source, LogFile):
        if from_offset is not None:
            raise needs_the_log("--from")
        image, found = snapshot_image(source, progress)
        return _snapshot_only(source, image, found, broker, fenced_longer_than_ms)
    part = source
    findings: list[Finding] = []
    if not part.segments:
        snap, image, found = _first_usable(_newest_first(part.snapshots), progress)
        if snap is None:
            raise UnreadableInput("no log segment and no usable snapshot to tell the brokers "
                                  "from", context=str(part.path))
        missing = missing_log_finding(part)  # verify's V020, as image and retention say
        # the log end as Kafka loads the dir (and info says): no segment, so the log is
        # made anew at the latest snapshot's end (KafkaMetadataLog.truncateToLatestSnapshot)
        at = max((s.kind.base_offset or 0 for s in part.snapshots if s.kind.suffix is None),
                 default=None)
        return _snapshot_only(snap, image, [*([missing] if missing else []), *found],
                              broker, fenced_longer_than_ms, log_end=at)
    plan = _start(part, from_offset, findings, progress)
    lives = Lifecycles(plan.image, fenced_longer_than_ms=fenced_longer_than_ms,
                       exact=plan.exact is None)
    watch = _Watch(lives, since, until)
    records, known = _replay(part, plan, lives, watch, findings, progress)
    result = _told(part, plan, watch, findings, records, known)
    result.broker, result.since, result.until = broker, since, until
    lo = since.offset if since and since.offset is not None else watch.since_offset
    hi = until.offset if until and until.offset is not None else (
        None if watch.after_until is None else watch.after_until - 1)
    if since is not None and lo is None:
        lo = sys.maxsize  # a time after the last batch: nothing is inside
    _keep(result, lives, broker, lo, hi)
    return result


def lifecycle_watch(replay: Replay, part: PartitionDir | None = None, *,
                    fenced_longer_than_ms: int = DEFAULT_FENCED_LONGER_THAN_MS) -> _Watch:
    """A watch that hears every broker's and controller's lifecycle in a replay someone
    else drives (verify's, for kmeta report): the lifecycles the replay's records tell
    from its start image on.  Given ``part``, the replay's partition, whose log starts
    below the snapshot the replay starts from and which no snapshot covers, the watch
    first hears the records of that stretch here, as :func:`brokers` tells them (each
    node's state unknown until the snapshot), so that the story is the one brokers tells
    from the log's start (:func:`brokers_heard` with the :class:`HeardStart` kept in
    ``watch.heard``)."""
    plan: _Plan | None = None
    findings: list[Finding] = []
    if part is not None and _uncovered(part) and replay.start_offset > _log_start(part):
        plan = _start(part, None, findings)
        exact = plan.exact
        if exact is None or exact.offset != replay.start_offset or plan.start >= exact.offset:
            plan = None  # told from where the replay starts, or not the same story
    if plan is None or plan.exact is None:
        watch = _Watch(Lifecycles(replay.image, fenced_longer_than_ms=fenced_longer_than_ms),
                       None, None)
        watch.start = replay.start_offset
        return watch
    exact = plan.exact
    lives = Lifecycles(plan.image, fenced_longer_than_ms=fenced_longer_than_ms, exact=False)
    watch = _Watch(lives, None, None)
    watch.start = plan.start
    _before_exact(part, plan, watch, findings)
    lives.exact_from(replay.image)
    # the images left behind: the watch goes to the replay's child and back
    watch.heard = HeardStart(replace(plan, image=MetadataImage.empty(),
                                     exact=replace(exact, image=MetadataImage.empty())),
                             findings)
    return watch


def _log_start(part: PartitionDir) -> int:
    return part.segments[0].kind.base_offset or 0


def _uncovered(part: PartitionDir) -> bool:
    """Whether no snapshot covers the start of ``part``'s log, by the files' names (what
    :func:`_start` then tells from the log's start, reading no snapshot to say so)."""
    if not part.segments:
        return False
    start = _log_start(part)
    return start > 0 and not any((s.kind.base_offset or 0) == start for s in part.snapshots)


@dataclass
class HeardStart:
    """Where a watch's story starts when it is not where the replay it hears starts
    (:func:`lifecycle_watch` with ``part``): brokers' plan, and the findings of reading
    its snapshot and replaying the stretch below it."""

    plan: _Plan
    findings: list[Finding]


def brokers_heard(part: PartitionDir, watch: _Watch, records: int) -> BrokersResult | None:
    """What :func:`brokers` says of ``part``, from a :func:`lifecycle_watch` that heard a
    whole replay of its log (``records``: the metadata records that replay read, NoOps
    included); None when brokers would start its story elsewhere (another snapshot, or a
    log start no snapshot covers that the watch did not hear from), so that the caller
    runs :func:`brokers`."""
    heard = watch.heard
    if heard is not None:
        plan, findings, known = heard.plan, list(heard.findings), heard.plan.exact.offset
    else:
        findings = []
        plan = _start(part, None, findings)
        if plan.exact is not None or plan.start != watch.start:
            return None
        known = plan.start
    result = _told(part, plan, watch, findings, records, known)
    _keep(result, watch.lives, None, None, None)
    return result


def _told(part: PartitionDir, plan: _Plan, watch: _Watch, findings: list[Finding],
          records: int, known: int | None) -> BrokersResult:
    """The result of a replay ``watch`` heard to the log's end, started as ``plan``
    says: ``records`` metadata records read, the state exact from ``known``."""
    lives, exact = watch.lives, plan.exact
    ends = [o for o in (lives.last_offset, lives.last_batch) if o is not None]
    end = max(ends) if ends else None
    lives.finish()
    # the anomalies are the partition's: a reader must know where they were found
    told = [replace(f, file=str(part.path)) for f in lives.findings]
    newest = max((t for t in (lives.newest_timestamp, _time_indexes_newest(part))
                  if t is not None), default=None)
    voters, voters_from = lives.voters, lives.voters_from
    if voters is None:
        voters, voters_from = _quorum_state_voters(part.path)
    return BrokersResult(lives.events, lives.leaders, [], each_once(findings) + told,
                         plan.snapshot, plan.start, None if end is None else end + 1,
                         watch.first_timestamp, newest,
                         metadata_records=records, control_records=watch.controls,
                         state_known_from=known,
                         exact_snapshot=None if exact is None or exact.snap is None
                         else exact.snap.path, voters=voters, voters_from=voters_from,
                         silences=lives.silences)


def _time_indexes_newest(part: PartitionDir) -> int | None:
    """The newest time the segments' time indexes hold: each entry is the largest batch
    time up to its offset (``TimeIndex``), and a segment's last entry is written when it
    rolls, so it covers the batches a replay hears of only in part (a run of NoOps)."""
    from kmeta.formats.indexes import TIME_INDEX_ENTRY_SIZE

    newest = None
    for f in part.files:
        if f.kind.kind != "time-index" or f.kind.suffix is not None:
            continue
        try:
            data = f.path.read_bytes().rstrip(b"\0")  # the preallocated tail is zeros
        except OSError:
            continue
        end = len(data) - len(data) % TIME_INDEX_ENTRY_SIZE
        if len(data) % TIME_INDEX_ENTRY_SIZE:  # the last entry's offset ends in zeros
            end += TIME_INDEX_ENTRY_SIZE
        if end < TIME_INDEX_ENTRY_SIZE:
            continue
        stamp = int.from_bytes(data[end - TIME_INDEX_ENTRY_SIZE:end - 4].ljust(8, b"\0"),
                               "big", signed=True)
        if stamp >= 0 and (newest is None or stamp > newest):
            newest = stamp
    return newest


def _quorum_state_voters(part: Path) -> tuple[list[int] | None, str | None]:
    """The voters a metadata partition's quorum-state names (its version 0 writes them,
    ``currentVoters``; version 1, from Kafka 3.8, does not)."""
    from kmeta.formats.textfiles import parse_quorum_state

    try:
        state = parse_quorum_state((part / "quorum-state").read_bytes())
    except (OSError, FormatError):  # absent or unreadable: verify says so
        return None, None
    if not state.current_voters:
        return None, None
    return sorted(state.current_voters), "quorum-state"


def _replay(part: PartitionDir, plan: _Plan, lives: Lifecycles, watch: _Watch,
            findings: list[Finding], progress: Progress) -> tuple[int, int | None]:
    """Replay the log as ``plan`` says; the metadata records read, and the offset from
    which the state is exact (None: never)."""
    records, exact = 0, plan.exact
    begin: int | None = plan.start
    image = plan.image
    if exact is not None:
        records = _before_exact(part, plan, watch, findings, progress)
        begin, image = exact.offset, exact.image
        if begin is not None:
            lives.exact_from(image)
    if begin is not None:
        records += replay_log(part, Replay(image, begin), sys.maxsize, findings, watch,
                              progress)
    return records, begin


def _before_exact(part: PartitionDir, plan: _Plan, watch: _Watch, findings: list[Finding],
                  progress: Progress = QUIET) -> int:
    """Replay the stretch no snapshot covers, from the log start up to the first exact
    state (``plan.exact``); the metadata records read.  What the image refuses there (a
    fence of a broker it has not seen) is the missing start, not a problem of the log."""
    assert plan.exact is not None
    stop = sys.maxsize if plan.exact.offset is None else plan.exact.offset
    early: list[Finding] = []
    records = replay_log(part, Replay(plan.image, plan.start), stop, early, watch, progress)
    findings += [f for f in early if f.code not in PROBLEM_CODES and f.code != "V120"]
    return records


@dataclass
class _Exact:
    """Where the state becomes exact after a start no snapshot covers: the first usable
    snapshot at or after the log start (None: none, the state is never exact)."""

    snap: LogFile | None
    image: MetadataImage
    offset: int | None


@dataclass
class _Plan:
    """Where the replay starts: ``image`` at ``start`` (from ``snapshot``, or empty);
    ``exact`` when that image is not the state (the log's start is not covered)."""

    image: MetadataImage
    start: int
    snapshot: Path | None
    exact: _Exact | None = None


def _start(part: PartitionDir, from_offset: int | None, findings: list[Finding],
           progress: Progress = QUIET) -> _Plan:
    """Where the replay starts: empty at offset 0 when the log starts there (and ``--from``
    is not past it); else the snapshot that starts the story latest at or below ``--from``;
    else, without ``--from`` or below every snapshot, the log start itself, though no
    snapshot covers it (Kafka deleted it): every record on disk is told, the state exact
    from the first usable snapshot on."""
    log_start = part.segments[0].kind.base_offset or 0
    if from_offset is not None and from_offset < log_start and log_start > 0:
        raise UsageError(f"--from {from_offset}: the log starts at offset {log_start}",
                         context=str(part.path))
    ends = sorted((s.kind.base_offset or 0, s) for s in part.snapshots
                  if (s.kind.base_offset or 0) >= log_start
                  and (from_offset is None or (s.kind.base_offset or 0) <= from_offset))
    if log_start == 0 and (from_offset is None or not ends):
        return _Plan(MetadataImage.empty(), 0, None)
    if from_offset is not None and ends:
        # --from: the latest snapshot below it that reads
        snap, image, found = _first_usable([s for _, s in ends][::-1], progress)
        findings += found
        if snap is not None:
            return _Plan(image, snap.kind.base_offset or 0, snap.path)
    elif from_offset is None and ends and ends[0][0] == log_start:
        snap, image, found = _first_usable([ends[0][1]], progress)
        findings += found
        if snap is not None:
            return _Plan(image, log_start, snap.path)
    # nothing covers the log start: tell it from there, exact from the first snapshot on
    later = sorted((s for s in part.snapshots if (s.kind.base_offset or 0) >= log_start),
                   key=lambda s: (s.kind.base_offset or 0, s.kind.epoch or 0))
    snap, image, found = _first_usable(later, progress)
    findings += found
    return _Plan(MetadataImage.empty(), log_start, None,
                 _Exact(snap, image, None if snap is None else snap.kind.base_offset or 0))


def _first_usable(snapshots: list[LogFile], progress: Progress
                  ) -> tuple[LogFile | None, MetadataImage, list[Finding]]:
    """The first of ``snapshots`` that reads without an error, its image, and what
    reading it and the ones passed over found."""
    passed: list[Finding] = []
    for snap in snapshots:
        image, found = snapshot_image(snap, progress)
        passed += found
        if not any(f.severity is Severity.ERROR for f in found):
            return snap, image, passed
    return None, MetadataImage.empty(), passed


def _newest_first(snapshots: list[LogFile]) -> list[LogFile]:
    return sorted(snapshots, key=lambda s: (s.kind.base_offset or 0, s.kind.epoch or 0),
                  reverse=True)


def _snapshot_only(snap: LogFile, image: MetadataImage, findings: list[Finding],
                   broker: int | None, fenced_longer_than_ms: int,
                   log_end: int | None = None) -> BrokersResult:
    lives = Lifecycles(image, fenced_longer_than_ms=fenced_longer_than_ms)
    end = snap.kind.base_offset or 0
    voters, voters_from = _quorum_state_voters(snap.path.parent)
    result = BrokersResult([], [], [], findings, snap.path, end, log_end,
                           snapshot_only=True, state_known_from=end, broker=broker,
                           voters=voters, voters_from=voters_from)
    _keep(result, lives, broker, None, None)
    return result


def _keep(result: BrokersResult, lives: Lifecycles, broker: int | None, lo: int | None,
          hi: int | None) -> None:
    """Narrow the result to --broker and the offsets [lo, hi]; the summary tells what is
    kept."""
    def inside(offset: int | None) -> bool:
        return offset is None or ((lo is None or offset >= lo) and (hi is None or offset <= hi))

    events = [e for e in result.events if inside(e.offset)
              and (broker is None or e.node == broker)]
    spans = result.leaders
    result.leaders = [s for i, s in enumerate(spans)
                      if (hi is None or s.offset <= hi)
                      and (lo is None or i + 1 >= len(spans) or spans[i + 1].offset > lo)
                      and (broker is None or s.leader == broker)]
    result.findings = [f for f in result.findings if inside(f.offset)
                       and (broker is None or f.code not in _LIFECYCLE_CODES
                            or f.details.get("broker") == broker
                            or broker in f.details.get("brokers", ()))]
    result.events = events
    result.silences = [s for s in result.silences if inside(s.offset)]
    result.summary = [s for s in lives.summaries(events, to_the_end=hi is None,
                                                 lone=result.snapshot_only)
                      if broker is None or s.node == broker]
