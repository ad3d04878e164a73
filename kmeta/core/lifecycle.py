"""The lives of brokers and controllers (KIP-631), told from the metadata records that
change their registrations, and the quorum's leaders from the log's epochs.

Facts (apache/kafka, read for behaviour only):

* ``ClusterControlManager.registerBroker``: a new incarnation writes a RegisterBrokerRecord
  whose broker epoch is its own offset, fenced; the same incarnation registering again
  ("amending") keeps its epoch, fenced and in-controlled-shutdown states from Kafka 3.9
  (KAFKA-16952, KAFKA-16757), while older controllers gave it a new epoch, fenced;
* ``ReplicationControlManager.handleBrokerFenced``/``Unfenced``/``InControlledShutdown``/
  ``Unregistered``: the controller writes a state change and the PartitionChangeRecords
  it causes in one batch: ISR removals and leader moves before a fence or an unregister,
  after an entry into controlled shutdown; leader elections after an unfence;
* a fence after a session timeout and a requested fence write the same records, and
  heartbeats are never written: neither the cause of a fence nor a broker's liveness
  between changes is on disk;
* ``BrokerRegistration.cloneWith``: a registration leaves controlled shutdown only by
  being replaced (a new RegisterBrokerRecord); controlled shutdown is on disk from
  metadata.version 3.3-IV3 (level 7) only
  (``ReplicationControlManager.handleBrokerInControlledShutdown`` writes the
  in-controlled-shutdown change only when ``isInControlledShutdownStateSupported``; below
  it, only the leader moves);
* ``BrokerHeartbeatManager.calculateNextBrokerState``: an unfenced broker that asks to
  shut down enters controlled shutdown only while it leads a partition; leading nothing,
  it is granted SHUTDOWN_NOW at once, which ``handleBrokerFenced`` writes as a plain fence.
  A controlled shutdown ends the same way once it leads nothing.  So a clean shutdown's
  fence never takes a leadership away, and a fence of a broker that leads nothing, without
  an in-controlled-shutdown change before it, is a clean shutdown or a lost session: the
  log cannot tell which.  A fence that takes leaderships away was no clean shutdown (an
  unfenced broker asks to be fenced only before it is ready, ``BrokerLifecycleManager``);
* ``ClusterControlManager.registerBroker`` refuses a new incarnation while the old one's
  session is valid, and a controller that becomes active gives every unfenced broker a new
  session (``activate``), so a process that died is fenced by the session timeout before
  it registers again;
* ``ClusterControlManager.activate``: that new session is a fresh
  ``broker.session.timeout.ms`` (9 s by default) from the moment the controller becomes
  active, and ``BrokerHeartbeatManager`` fences a broker whose session runs out with its
  ISR removals and leader moves.  So when every controller registered anew (a new
  incarnation each, ``RegisterControllerRecord``, Kafka 3.7 on) within a minute before a
  fence, the whole quorum restarted: the broker stopped while no controller could record
  its controlled shutdown, and the fence that takes its leaderships away is the new
  controller's session expiry, which a clean stop and a crash write alike;
* ``KafkaConfig``: a broker-only process may not take a voter's node id, so a broker with
  the id of the quorum's leader is that controller's own process (a combined node).  A
  leader's term ends when its process stops, so a fence written by the broker's own
  controller in the term the broker registered in means the process was alive: not a
  crash (in a single combined node, the restarted controller fences the dead incarnation
  in a later term).

The state machine itself is :class:`~kmeta.core.image.MetadataImage`'s: :class:`Lifecycles`
reads a registration before and after the image applies each record and tells what
changed, so a record the image refuses (V108, V109) changes no one's story.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from kmeta.core.image import MetadataImage
from kmeta.findings import Finding

__all__ = ["CONTROLLED_SHUTDOWN_LEVEL", "FENCE_KINDS", "QUORUM_RESTARTED", "SILENT_MS",
           "STATE_RECORDS", "STORM_WINDOW_MS", "UNKNOWN", "LeaderSpan", "Lifecycles",
           "NodeEvent", "NodeSummary", "Silence", "broker_state", "count_moves"]

#: metadata.version 3.3-IV3: the first level whose registrations hold controlled shutdown
CONTROLLED_SHUTDOWN_LEVEL = 7
#: The most a live quorum leader leaves between two batches, counted generously: from
#: Kafka 3.3 an idle leader appends a NoOpRecord every ``metadata.max.idle.interval.ms``
#: (500 ms by default), and any restart of the leader opens a new epoch with a batch of
#: its own, so a stretch longer than this per batch between two batches heard is time
#: the log holds no record of (a powered-off cluster, or a log without NoOps, before 3.3).
QUIET_MS_PER_BATCH = 60_000
#: Silences shorter than this are not told: a restart's few seconds are not one.
SILENT_MS = 10 * 60_000
#: Uncontrolled fences of several brokers this close together are one event: their
#: sessions (9 s, ``broker.session.timeout.ms``) ran out together.
STORM_WINDOW_MS = 10_000

# The states of a broker, as its registration holds them.
UNREGISTERED, FENCED, UNFENCED = "unregistered", "fenced", "unfenced"
CONTROLLED_SHUTDOWN, SHUT_DOWN = "controlled_shutdown", "shut_down"
_DOWN = (FENCED, SHUT_DOWN)
#: A node's state before the log on disk says it (the replay started without an image)
UNKNOWN = "unknown"

#: What a fence of an unfenced broker tells about how it stopped (``NodeEvent.fence_kind``):
#: after its controlled shutdown (clean); it lost leaderships, so it was no clean shutdown
#: (a crash or a lost session); its own controller wrote it in the term the broker
#: registered in (a combined node: the process was alive); or it led nothing and no
#: controlled shutdown is on disk, so a clean shutdown and a lost session look the same.
#: Or every controller had just restarted (the new active controller's session expiry
#: after a whole-cluster restart): how the broker stopped is not on disk.
CONTROLLED, UNCONTROLLED, OWN_CONTROLLER, CANNOT_TELL, QUORUM_RESTARTED = (
    "controlled_shutdown", "uncontrolled", "own_controller", "cannot_tell",
    "quorum_restarted")
FENCE_KINDS = (CONTROLLED, UNCONTROLLED, OWN_CONTROLLER, CANNOT_TELL, QUORUM_RESTARTED)
#: The fences after which a crash cannot be told from a clean stop or a lost session.
_UNTOLD_FENCES = (UNCONTROLLED, CANNOT_TELL, QUORUM_RESTARTED)
#: A fence this soon after every controller registered anew follows a restart of the
#: whole quorum: the new active controller's sessions (9 s) ran out, with room to spare.
QUORUM_RESTART_WINDOW_MS = 60_000

_BROKER_KEYS = {"REGISTER_BROKER_RECORD": "brokerId", "UNREGISTER_BROKER_RECORD": "brokerId",
                "BROKER_REGISTRATION_CHANGE_RECORD": "brokerId", "FENCE_BROKER_RECORD": "id",
                "UNFENCE_BROKER_RECORD": "id"}
#: what before() keeps of a partition change: the image keeps the rest
_PARTITION_CHANGE = ("partition",)
_CONTROLLER_KEYS = {"REGISTER_CONTROLLER_RECORD": "controllerId",
                    "UNREGISTER_CONTROLLER_RECORD": "controllerId"}
#: The records that may change a node's state: only in a batch holding one do that
#: batch's partition moves count (:meth:`Lifecycles.batch` drops them)
STATE_RECORDS = (*_BROKER_KEYS, *_CONTROLLER_KEYS)


def broker_state(registration: dict[str, Any] | None) -> str:
    """The state a broker registration of the image is in."""
    if registration is None:
        return UNREGISTERED
    if registration["inControlledShutdown"]:
        return SHUT_DOWN if registration["fenced"] else CONTROLLED_SHUTDOWN
    return FENCED if registration["fenced"] else UNFENCED


@dataclass
class NodeEvent:
    """One change of a broker's or a controller's registration."""

    role: str  # broker or controller
    node: int
    #: registered (a first incarnation), re_registered (a new incarnation), amended (the
    #: same incarnation again), fenced, unfenced, controlled_shutdown, unregistered,
    #: log_dirs (only its log dirs changed)
    event: str
    offset: int
    timestamp: int
    record: str
    state_before: str
    state: str
    #: how long the node was in ``state_before``; None when it entered it before the replay
    in_state_ms: int | None
    broker_epoch: int | None = None
    incarnation_id: str | None = None
    #: PartitionChangeRecords of the same batch: ISRs it left, leaderships it lost and won
    #: (None before the first exact state: the partitions are not known)
    left_isr: int | None = 0
    lost_leadership: int | None = 0
    gained_leadership: int | None = 0
    #: on an unfence: how long it had been fenced (across re-registrations), if known
    fenced_ms: int | None = None
    #: how much of ``in_state_ms`` and of ``fenced_ms`` the log holds no record of (the
    #: cluster was off, or the log was not kept): no state the node was seen in
    silent_ms: int = 0
    fenced_silent_ms: int = 0
    #: on a new incarnation: whether the one before shut down cleanly (True: through
    #: controlled shutdown; False: it was never fenced, or fenced while it led partitions;
    #: None: the log cannot tell, see ``fence_kind``)
    controlled_shutdown_first: bool | None = None
    #: on a fence of an unfenced broker: one of :data:`FENCE_KINDS`; on a new incarnation:
    #: the kind of the fence that stopped the one before (None: it was not fenced, or was
    #: fenced before the replay began or while it was still fenced after registering)
    fence_kind: str | None = None
    #: the registration's listeners, rack, features and log dirs (registrations only)
    registration: dict[str, Any] | None = None


@dataclass
class LeaderSpan:
    """One epoch of the quorum: who led it, from which offset and time."""

    epoch: int
    #: None when no LeaderChange record of the epoch was read
    leader: int | None
    offset: int
    timestamp: int
    voters: list[int] | None = None
    #: until the next epoch began, or the last batch read for the last epoch
    duration_ms: int = 0


@dataclass
class Silence:
    """A stretch of time the log holds no record of, at least: from ``start`` to
    ``end`` (ms), which is when the batch at ``offset`` was written; ``after``: the
    offset of the last batch heard before it."""

    start: int
    end: int
    after: int
    offset: int

    @property
    def ms(self) -> int:
        return self.end - self.start


@dataclass
class NodeSummary:
    """A node over the events told: how often it changed, how long it was down."""

    role: str
    node: int
    state: str
    broker_epoch: int | None
    incarnation_id: str | None
    # Each count is None where the log cannot know it: everything of a lone snapshot,
    # controlled shutdowns below metadata.version 3.3-IV3, crashes when a restart cannot
    # be told apart, fenced time when a fence began before the replay.
    registrations: int | None = 0
    incarnations: int | None = 0
    fences: int | None = 0
    controlled_shutdowns: int | None = 0
    crashes: int | None = 0
    fenced_ms: int | None = 0
    longest_fenced_ms: int | None = 0
    last_offset: int | None = None
    last_timestamp: int | None = None


def count_moves(counts: dict[int, list[int]], old: dict[str, Any], new: dict[str, Any]
                ) -> None:
    """Add one partition change's effects to ``counts`` (node -> [ISRs left, leaderships
    lost, leaderships won]): each replica of the ISR before that is not in the ISR
    after, and the leader before and after where they differ (a leader of -1 is none).
    The reference of the compiled core's count in ``apply_changes``."""
    isr_after = new["isr"]
    for node in old["isr"]:
        if node not in isr_after:
            _bump(counts, node, 0)
    before, after = old["leader"], new["leader"]
    if before != after:
        if before >= 0:
            _bump(counts, before, 1)
        if after >= 0:
            _bump(counts, after, 2)


def _bump(counts: dict[int, list[int]], node: int, which: int) -> None:
    c = counts.get(node)
    if c is None:
        c = counts[node] = [0, 0, 0]
    c[which] += 1


class Lifecycles:
    """Follows every broker and controller through the records applied to ``image``
    after ``offset``: call :meth:`batch` for each batch, :meth:`leader_change` for a
    LeaderChange record, and :meth:`before`/:meth:`after` around each metadata record
    the image applies; :meth:`finish` at the end of the log.

    ``exact=False``: ``image`` is empty but the log does not start at offset 0 (the
    snapshot that covered its start is gone), so every node's state before its first
    record here is :data:`UNKNOWN`; :meth:`exact_from` hands over the first exact image."""

    def __init__(self, image: MetadataImage, *, fenced_longer_than_ms: int,
                 exact: bool = True) -> None:
        self.image = image
        self.exact = exact
        self.fenced_longer_than_ms = fenced_longer_than_ms
        self.events: list[NodeEvent] = []
        self.leaders: list[LeaderSpan] = []
        self.findings: list[Finding] = []
        self.last_timestamp: int | None = None
        #: the newest batch time read (a log's clock may go back: its last batch's time
        #: is not always its newest)
        self.newest_timestamp: int | None = None
        #: the stretches the log holds no record of (:class:`Silence`), in log order
        self.silences: list[Silence] = []
        # the silences' starts in order, each one's end beside it, and the longest: what
        # silent_ms looks up (a log's clock may go back: the list is not in log order)
        self._silence_starts: list[int] = []
        self._silence_ends: list[int] = []
        self._longest_silence = 0
        self._heard: tuple[int, int] | None = None
        #: the offset of the last metadata record applied, and of the last batch begun
        self.last_offset: int | None = None
        self.last_batch: int | None = None
        # when each broker entered its state, and when it was last fenced from running
        self._since: dict[int, int | None] = dict.fromkeys(image.brokers)
        self._fenced_since: dict[int, int | None] = dict.fromkeys(
            (b for b, r in image.brokers.items() if broker_state(r) in _DOWN))
        self._fenced_at: dict[int, int] = {}
        # the quorum epoch each broker's incarnation registered in; the kind of the fence
        # that stopped each broker (until it is unfenced); the state of each broker the
        # records of an inexact start have told, though the image does not hold it
        self._registered_in: dict[int, int] = {}
        # when each controller last registered an incarnation (RegisterControllerRecord)
        self._controller_since: dict[int, int] = {}
        self._stopped_by: dict[int, str] = {}
        self._partial: dict[int, str] = {}
        #: some broker record was applied at a metadata.version that writes no controlled
        #: shutdown (or an unknown one): the count of controlled shutdowns is not known
        self.shutdowns_unknown = False
        #: at :meth:`finish`, the brokers still fenced: since when (None: before the replay)
        self.open_fences: dict[int, int | None] = {}
        #: the quorum's voters as the log last names them, and the record that did: a
        #: VotersRecord (KIP-853, kraft.version 1) or a LeaderChange (its voters field):
        #: before Kafka 3.7 no RegisterControllerRecord names a controller
        self.voters: list[int] | None = None
        self.voters_from: str | None = None
        self._epoch: int | None = None
        # Of the current batch: PartitionChangeRecord effects not yet tied to a state
        # change (node -> [ISRs left, leaderships lost, leaderships won]), and the state
        # change of each node, which later effects in the batch join.
        self._pending: dict[int, list[int]] = {}
        self._changes: dict[int, NodeEvent] = {}
        # what :meth:`before` saw: (role, node or partition, ...), for :meth:`after`
        self._before: tuple | None = None

    # ------------------------------------------------------------------ input

    def batch(self, offset: int, epoch: int, timestamp: int) -> None:
        """A batch of the log starts (control batches too; of a run of NoOp heartbeats,
        the first is enough)."""
        if self._pending:
            self._pending = {}
        if self._changes:
            self._changes = {}
        leaders = self.leaders
        if not leaders or leaders[-1].epoch != epoch:
            leaders.append(LeaderSpan(epoch, None, offset, timestamp))
        self._epoch = epoch
        self._heard_at(offset, timestamp)
        self.last_timestamp = timestamp
        self.last_batch = offset

    def _heard_at(self, offset: int, timestamp: int) -> None:
        """A batch heard: the time since the one before that the batches between cannot
        account for (:data:`QUIET_MS_PER_BATCH` each) is a silence, at its end."""
        if self._heard is not None:
            after, then = self._heard
            unaccounted = timestamp - then - max(0, offset - after - 1) * QUIET_MS_PER_BATCH
            if unaccounted >= SILENT_MS:
                silence = Silence(timestamp - unaccounted, timestamp, after, offset)
                self.silences.append(silence)
                at = bisect.bisect_right(self._silence_starts, silence.start)
                self._silence_starts.insert(at, silence.start)
                self._silence_ends.insert(at, silence.end)
                self._longest_silence = max(self._longest_silence, silence.ms)
        self._heard = (offset, timestamp)
        if self.newest_timestamp is None or timestamp > self.newest_timestamp:
            self.newest_timestamp = timestamp

    def silent_ms(self, start: int, end: int) -> int:
        """How much of [start, end] the log holds no record of."""
        # only a silence starting before ``end`` and within the longest one's length of
        # ``start`` can end after it (a report asks this for each of thousands of events)
        starts, ends = self._silence_starts, self._silence_ends
        total = 0
        for i in range(bisect.bisect_left(starts, start - self._longest_silence),
                       bisect.bisect_left(starts, end)):
            e, s = ends[i], starts[i]
            overlap = (end if end < e else e) - (start if start > s else s)
            if overlap > 0:
                total += overlap
        return total

    def exact_from(self, image: MetadataImage) -> None:
        """From here on ``image`` (a snapshot's) is the state: what the inexact start told
        of a node stands where the image agrees with it."""
        self.image, self.exact = image, True
        told = {}
        for e in self.events:
            if e.role == "broker":
                told[e.node] = e
        since: dict[int, int | None] = {}
        fenced: dict[int, int | None] = {}
        for node, reg in image.brokers.items():
            state, last = broker_state(reg), told.get(node)
            since[node] = last.timestamp if last is not None and last.state == state else None
            if state in _DOWN:
                fenced[node] = self._fenced_since.get(node)
        self._since, self._fenced_since = since, fenced
        self._fenced_at = {n: o for n, o in self._fenced_at.items() if n in fenced}
        self._partial = {}

    def end(self, offset: int, timestamp: int) -> None:
        """The last offset read, and its batch's time."""
        if self.newest_timestamp is None or timestamp > self.newest_timestamp:
            self.newest_timestamp = timestamp
        self.last_batch = offset
        self.last_timestamp = timestamp

    def control(self, epoch: int, payload: Any) -> None:
        """A control record of the current batch (a LeaderChange names the leader)."""
        if payload.type == "LEADER_CHANGE" and isinstance(payload.data, dict):
            self.leader_change(epoch, payload.data)
        elif payload.type == "KRAFT_VOTERS" and isinstance(payload.data, dict):
            self.voters = sorted(v["voterId"] for v in payload.data.get("voters") or ())
            self.voters_from = f"the VotersRecord at offset {self.last_batch}"

    def leader_change(self, epoch: int, data: dict[str, Any]) -> None:
        """A LeaderChange control record of the current batch."""
        span = self.leaders[-1] if self.leaders else None
        if span is None or span.epoch != epoch:
            return
        span.leader = data.get("leaderId")
        span.voters = sorted(v["voterId"] for v in data.get("voters") or ())
        if span.voters:
            self.voters, self.voters_from = span.voters, f"the LeaderChange of epoch {epoch}"

    def before(self, type_name: str, data: Any) -> None:
        """A metadata record is about to be applied to the image."""
        self._before = None
        if not isinstance(data, dict):
            return
        if type_name == "PARTITION_CHANGE_RECORD":  # most records of a busy log: first
            if "isr" in data or "leader" in data:  # else neither can change (KIP-631)
                # the image says what the record replaced (MetadataImage.changed_partition)
                self.image.changed_partition = None
                self._before = _PARTITION_CHANGE
            return
        key = _BROKER_KEYS.get(type_name)
        if key is not None:
            node = data.get(key)
            reg = self.image.brokers.get(node)
            level = self.image.metadata_version
            if level is None or level < CONTROLLED_SHUTDOWN_LEVEL:
                self.shutdowns_unknown = True
            self._before = ("broker", node, reg, dict(reg) if reg else None, level)
            return
        key = _CONTROLLER_KEYS.get(type_name)
        if key is not None:
            node = data.get(key)
            reg = self.image.controllers.get(node)
            self._before = ("controller", node, reg, None, None)
            return

    def after(self, type_name: str, data: Any, offset: int, timestamp: int) -> None:
        """The record of the last :meth:`before` was applied, at ``offset``."""
        seen, self._before = self._before, None
        self.last_offset = offset
        if seen is None:
            return
        if seen[0] != "partition":  # a registration's time: a batch heard (silences)
            self._heard_at(offset, timestamp)
        role = seen[0]
        if role == "partition":
            self._partition_changed(seen, data)
        elif role == "broker":
            self._broker_changed(seen, type_name, data, offset, timestamp)
        else:
            self._controller_changed(seen, type_name, offset, timestamp)

    def finish(self) -> None:
        """The log has ended (at :meth:`end`): close the leader spans and judge who is
        still fenced."""
        timestamp = self.newest_timestamp
        self.open_fences = dict(self._fenced_since)
        for i, span in enumerate(self.leaders):
            end = self.leaders[i + 1].timestamp if i + 1 < len(self.leaders) else timestamp
            span.duration_ms = max(0, (end or span.timestamp) - span.timestamp)
        if timestamp is not None:
            for node, since in sorted(self._fenced_since.items()):
                silent = 0 if since is None else self.silent_ms(since, timestamp)
                if since is not None and \
                        timestamp - since - silent > self.fenced_longer_than_ms:
                    self.findings.append(Finding(
                        "V132", f"broker {node} is still fenced at the end of the log, "
                        f"{duration(timestamp - since)} after it was fenced"
                        f"{_silent_words(silent)}{self._over()}",
                        offset=self._fenced_at.get(node),
                        details={"broker": node, "fenced_ms": timestamp - since,
                                 "ongoing": True, "silent_ms": silent}))
        self.findings += _storms(self.events, self.leaders)
        self.findings.sort(key=lambda f: (f.offset is None, f.offset or 0))

    def _over(self) -> str:
        """V132's threshold, named with the option that sets it (report has none: it is
        brokers')."""
        return (f", over {duration(self.fenced_longer_than_ms)} "
                "(kmeta brokers --fenced-longer-than)")

    # ------------------------------------------------------------------ judging

    def applied(self, moves: list[Any]) -> None:
        """Records the replay applied in bulk, none with a word to say (the replay's
        quiet path): ``moves`` is [the offset of the last one, what
        :func:`count_moves` counted of its PartitionChangeRecords], what :meth:`before`
        and :meth:`after` hear of each, summed."""
        last, counts = moves[0], moves[1]
        if last is not None:
            self.last_offset = last
        if counts and self.exact:  # before the first exact state: not known
            self._effects(counts)

    def _partition_changed(self, seen: tuple, data: dict[str, Any]) -> None:
        change = self.image.changed_partition
        if change is None:  # not applied (a partition that is not there, a transaction)
            return
        self._moved(*change)

    def _moved(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """The ISR departures and leadership moves of one partition change."""
        if self.exact:
            counts: dict[int, list[int]] = {}
            count_moves(counts, old, new)
            self._effects(counts)

    def _effects(self, counts: dict[int, list[int]]) -> None:
        """Moves counted per node: to the node's state change in this batch, or pending
        until one comes."""
        for node, (isr, lost, won) in counts.items():
            change = self._changes.get(node)
            if change is not None:
                change.left_isr += isr
                change.lost_leadership += lost
                change.gained_leadership += won
            else:
                pending = self._pending.get(node)
                if pending is None:
                    self._pending[node] = [isr, lost, won]
                else:
                    pending[0] += isr
                    pending[1] += lost
                    pending[2] += won

    def _broker_changed(self, seen: tuple, type_name: str, data: dict[str, Any],
                        offset: int, timestamp: int) -> None:
        _, node, reg_before, was, level = seen
        reg = self.image.brokers.get(node)
        if type_name == "REGISTER_BROKER_RECORD":
            if reg is None or reg is reg_before:
                return  # the image refused it
            event = self._registration(node, was, reg, level, offset)
        elif reg is None and reg_before is None:
            if not self.exact:
                self._partial_change(node, type_name, data, offset, timestamp)
            return  # refused (or, before the first exact state, told from the record)
        elif reg is reg_before and reg == was:
            return  # a change that changes nothing (Kafka ignores it too)
        elif reg is None:
            event = "unregistered"
        else:
            state = broker_state(reg)
            if state == broker_state(was):
                event = "log_dirs"
            elif state in _DOWN:
                event = "fenced"
            else:
                event = {UNFENCED: "unfenced", CONTROLLED_SHUTDOWN: "controlled_shutdown"}[state]
        before, after = broker_state(was), broker_state(reg)
        if was is None and not self.exact:
            before = self._partial.pop(node, UNKNOWN)
        since = self._since.get(node)
        e = NodeEvent("broker", node, event, offset, timestamp, type_name, before, after,
                      None if since is None or before in (UNREGISTERED, UNKNOWN)
                      else timestamp - since,
                      reg["epoch"] if reg else (was or {}).get("epoch"),
                      (reg or was or {}).get("incarnationId"))
        if e.in_state_ms is not None and since is not None:
            e.silent_ms = self.silent_ms(since, timestamp)
        if event in ("registered", "re_registered", "amended"):
            e.registration = {"listeners": reg["endPoints"], "rack": reg["rack"],
                              "features": reg["features"], "log_dirs": reg["logDirs"]}
            if event != "amended":
                self._registered_in[node] = self._epoch
        if event == "re_registered":
            self._restart(e, node, before, offset)
        if before != after:
            self._since[node] = timestamp
        self._tell(e, node, before, after, offset, timestamp)
        if event == "fenced" and before == UNFENCED:
            e.fence_kind = self._fence_kind(e, node)
        if e.fence_kind is not None and event == "fenced":
            self._stopped_by[node] = e.fence_kind
        elif after in (UNFENCED, UNREGISTERED) or event in ("registered", "re_registered"):
            self._stopped_by.pop(node, None)  # a new life: the last stop is told

    def _tell(self, e: NodeEvent, node: int, before: str, after: str, offset: int,
              timestamp: int) -> None:
        """Add ``e`` with the moves of its batch (unknown before the first exact state)."""
        self._fenced_spans(e, node, before, after, offset, timestamp)
        if e.event == "fenced" and before == CONTROLLED_SHUTDOWN:
            e.fence_kind = CONTROLLED
        pending = self._pending.pop(node, None)
        if not self.exact:
            e.left_isr = e.lost_leadership = e.gained_leadership = None
        elif pending is not None:
            e.left_isr += pending[0]
            e.lost_leadership += pending[1]
            e.gained_leadership += pending[2]
        self._changes[node] = e
        self.events.append(e)

    def _fence_kind(self, e: NodeEvent, node: int) -> str:
        """How a broker fenced while unfenced stopped, as far as the log can tell (see
        ``BrokerHeartbeatManager.calculateNextBrokerState`` in the module's notes)."""
        span = self.leaders[-1] if self.leaders else None
        if span is not None and span.epoch == self._epoch and span.leader == node \
                and self._registered_in.get(node) == self._epoch:
            return OWN_CONTROLLER
        if e.lost_leadership:
            return QUORUM_RESTARTED if self._quorum_restarted(node, e.timestamp) \
                else UNCONTROLLED
        return CANNOT_TELL

    def _quorum_restarted(self, node: int, timestamp: int) -> bool:
        """Whether every controller (the registered ones and the voters) registered a
        new incarnation within :data:`QUORUM_RESTART_WINDOW_MS` before ``timestamp``.
        Not where the quorum is ``node``'s own controller alone (a single combined
        node): its broker stops before its controller in one process, so a clean stop
        writes its controlled shutdown, and none on disk is a crash."""
        nodes = set(self.image.controllers) | set(self.voters or ())
        since = self._controller_since
        return bool(nodes) and nodes != {node} and all(
            n in since and 0 <= timestamp - since[n] <= QUORUM_RESTART_WINDOW_MS
            for n in nodes)

    def _restart(self, e: NodeEvent, node: int, before: str, offset: int) -> None:
        """Whether the incarnation a new one replaces shut down cleanly; V131 when the log
        says it did not."""
        kind = None
        if before in (CONTROLLED_SHUTDOWN, SHUT_DOWN):
            shut: bool | None = True
            kind = self._stopped_by.get(node, CONTROLLED)
        elif before == UNFENCED:
            shut = False  # every clean shutdown ends in a fence (SHUTDOWN_NOW)
        else:
            kind = self._stopped_by.get(node)
            shut = False if kind == UNCONTROLLED else None
        e.controlled_shutdown_first, e.fence_kind = shut, kind
        if shut is not False:
            return
        if kind == UNCONTROLLED:
            why = (f"the one before was fenced at offset {self._fenced_at.get(node)} while it "
                   "led partitions, without controlled shutdown (a clean shutdown moves its "
                   "leaderships away before its fence)")
        else:
            why = ("the one before was never fenced, and a clean shutdown always ends in "
                   "a fence")
        self.findings.append(Finding(
            "V131", f"broker {node} registered a new incarnation and {why}: it crashed "
            "(kill -9, out of memory, host lost) or lost its session", offset=offset,
            details={"broker": node, "state_before": before, "fence_kind": kind}))

    def _partial_change(self, node: int, type_name: str, data: dict[str, Any],
                        offset: int, timestamp: int) -> None:
        """A change of a broker whose registration is before the log on disk: told from
        the record alone, with the state before it unknown."""
        if type_name == "UNREGISTER_BROKER_RECORD":
            event, state = "unregistered", UNREGISTERED
        elif type_name == "FENCE_BROKER_RECORD" or data.get("fenced") == 1:
            event, state = "fenced", FENCED
        elif type_name == "UNFENCE_BROKER_RECORD" or data.get("fenced") == -1:
            event, state = "unfenced", UNFENCED
        elif data.get("inControlledShutdown") == 1:
            event, state = "controlled_shutdown", CONTROLLED_SHUTDOWN
        else:
            event, state = "log_dirs", self._partial.get(node, UNKNOWN)
        before = self._partial.get(node, UNKNOWN)
        if state == before:
            return
        self._partial[node] = state
        e = NodeEvent("broker", node, event, offset, timestamp, type_name, before, state,
                      None, data.get("brokerEpoch", data.get("epoch")))
        if before != UNKNOWN:
            since = self._since.get(node)
            e.in_state_ms = None if since is None else timestamp - since
            e.silent_ms = 0 if since is None else self.silent_ms(since, timestamp)
        self._since[node] = timestamp
        self._tell(e, node, before, state, offset, timestamp)
        if event == "fenced":
            e.fence_kind = CONTROLLED if before == CONTROLLED_SHUTDOWN else CANNOT_TELL
            self._stopped_by[node] = e.fence_kind

    def _registration(self, node: int, was: dict[str, Any] | None, reg: dict[str, Any],
                      level: int | None, offset: int) -> str:
        if was is None:
            # before the first exact state, a broker whose fence or unfence was told
            # had an incarnation before this one
            told = self._partial.get(node, UNREGISTERED)
            return "registered" if self.exact or told == UNREGISTERED else "re_registered"
        if was["incarnationId"] != reg["incarnationId"]:
            return "re_registered"
        if was["epoch"] != reg["epoch"]:
            self.findings.append(Finding(
                "V130", f"broker {node} registered again as the same incarnation "
                f"{reg['incarnationId']} with a new broker epoch ({was['epoch']} -> "
                f"{reg['epoch']}): a controller before Kafka 3.9 gives an amended "
                "registration a new epoch (and fences it), 3.9 on keeps both "
                "(KAFKA-16952), so a newer controller did not write this", offset=offset,
                details={"broker": node, "epoch_before": was["epoch"], "epoch": reg["epoch"]}))
        return "amended"

    def _fenced_spans(self, e: NodeEvent, node: int, before: str, after: str, offset: int,
                      timestamp: int) -> None:
        """Fenced time runs from the fence (or a fenced registration) to the unfence,
        across new incarnations in between."""
        if after in _DOWN and before not in _DOWN:
            self._fenced_since[node] = timestamp
            self._fenced_at[node] = offset
        elif after == UNFENCED and node in self._fenced_since:
            since = self._fenced_since.pop(node)
            at = self._fenced_at.pop(node, None)
            if since is not None:
                e.fenced_ms = timestamp - since
                silent = e.fenced_silent_ms = self.silent_ms(since, timestamp)
                # a stretch the log holds no record of (the cluster was off) is no
                # fence a broker stayed in while the others ran
                if e.fenced_ms - silent > self.fenced_longer_than_ms:
                    self.findings.append(Finding(
                        "V132", f"broker {node} was fenced for {duration(e.fenced_ms)} "
                        f"(from offset {at} to {offset}){_silent_words(silent)}"
                        f"{self._over()}",
                        offset=offset,
                        details={"broker": node, "fenced_ms": e.fenced_ms, "from_offset": at,
                                 "silent_ms": silent}))
        elif after == UNREGISTERED:
            since = self._fenced_since.pop(node, None)
            self._fenced_at.pop(node, None)
            if since is not None and before in _DOWN:
                e.fenced_ms = timestamp - since
                e.fenced_silent_ms = self.silent_ms(since, timestamp)

    def _controller_changed(self, seen: tuple, type_name: str, offset: int,
                            timestamp: int) -> None:
        _, node, reg_before, _, _ = seen
        reg = self.image.controllers.get(node)
        if reg is reg_before:
            return  # refused
        if reg is None:
            event = "unregistered"
        elif reg_before is None:
            event = "registered"
        elif reg_before["incarnationId"] != reg["incarnationId"]:
            event = "re_registered"
        else:
            event = "amended"
        before = UNREGISTERED if reg_before is None else "registered"
        after = UNREGISTERED if reg is None else "registered"
        if event in ("registered", "re_registered"):
            self._controller_since[node] = timestamp
        e = NodeEvent("controller", node, event, offset, timestamp, type_name, before, after,
                      None, None, (reg or reg_before or {}).get("incarnationId"))
        if reg is not None:
            e.registration = {"listeners": reg["endPoints"], "features": reg["features"]}
        self.events.append(e)

    # ------------------------------------------------------------------ summary

    def summaries(self, events: list[NodeEvent] | None = None, *, to_the_end: bool = True,
                  lone: bool = False) -> list[NodeSummary]:
        """Per node, what ``events`` (default: all) tell, and its state in the image.
        ``to_the_end``: the events reach the end of the log, so a fence still open there
        counts to the last batch read; ``lone``: the image is a snapshot without a log,
        whose counts are all unknown."""
        out: dict[tuple[str, int], NodeSummary] = {}
        for node, reg in self.image.brokers.items():
            out["broker", node] = NodeSummary("broker", node, broker_state(reg), reg["epoch"],
                                              reg["incarnationId"])
        for node, reg in self.image.controllers.items():
            out["controller", node] = NodeSummary("controller", node, "registered", None,
                                                  reg["incarnationId"])
        crashed = {f.offset for f in self.findings if f.code == "V131"}
        # brokers whose last fence shown cannot tell a crash from a clean stop or a lost
        # session, and that neither came back unfenced (the process lived) nor
        # registered anew (whose restart is judged on its own) after it
        untold: set[int] = set()
        for e in self.events if events is None else events:
            s = out.get((e.role, e.node))
            if s is None:
                s = out[e.role, e.node] = NodeSummary(e.role, e.node, UNREGISTERED, None,
                                                      None)
            if e.event in ("registered", "re_registered"):
                s.registrations += 1
                s.incarnations += 1
            elif e.event == "amended":
                s.registrations += 1
            elif e.event == "fenced":
                s.fences += 1
            elif e.event == "controlled_shutdown":
                s.controlled_shutdowns += 1
            if e.event == "re_registered" and e.role == "broker" and s.crashes is not None:
                # a restart the log cannot judge leaves the count unknown
                s.crashes = None if e.controlled_shutdown_first is None \
                    else s.crashes + (e.offset in crashed)
            if e.fenced_ms is not None:
                _add_fenced(s, e.fenced_ms - e.fenced_silent_ms)
            elif e.event == "unfenced" or (e.event == "unregistered"
                                           and e.state_before in _DOWN):
                s.fenced_ms = s.longest_fenced_ms = None  # fenced since before the log
            if e.role == "broker":
                if e.event == "fenced" and e.fence_kind in _UNTOLD_FENCES:
                    untold.add(e.node)
                elif e.event in ("unfenced", "re_registered"):
                    untold.discard(e.node)
            s.last_offset, s.last_timestamp = e.offset, e.timestamp
        for node in untold:  # what the timeline says "cannot tell", the count does not
            out["broker", node].crashes = None
        end = self.newest_timestamp
        for node, since in self.open_fences.items():
            s = out.get(("broker", node))
            if s is None or not to_the_end:
                continue
            if since is None or end is None:
                s.fenced_ms = s.longest_fenced_ms = None
            else:
                _add_fenced(s, end - since - self.silent_ms(since, end))
        for s in out.values():
            if lone:
                s.registrations = s.incarnations = s.fences = s.crashes = None
                s.controlled_shutdowns = s.fenced_ms = s.longest_fenced_ms = None
            elif s.role == "broker" and self.shutdowns_unknown:
                s.controlled_shutdowns = None
        return sorted(out.values(), key=lambda s: (s.role != "broker", s.node))


def _silent_words(silent: int) -> str:
    return "" if not silent else \
        f", {duration(silent)} of it with no record in the log"


def _add_fenced(s: NodeSummary, ms: int) -> None:
    if s.fenced_ms is not None and s.longest_fenced_ms is not None:
        s.fenced_ms += ms
        s.longest_fenced_ms = max(s.longest_fenced_ms, ms)


def _storms(events: list[NodeEvent], leaders: list[LeaderSpan]) -> list[Finding]:
    """V133 for every group of uncontrolled fences of two or more brokers within
    :data:`STORM_WINDOW_MS` of the group's first."""
    # only fences that were no clean shutdown: several brokers shutting down cleanly at
    # once (a whole cluster stopped) write fences that look the same otherwise
    fences = [e for e in events if e.event == "fenced" and e.fence_kind == UNCONTROLLED]
    out: list[Finding] = []
    i = 0
    while i < len(fences):
        first = fences[i]
        j = i
        while j + 1 < len(fences) and fences[j + 1].timestamp - first.timestamp \
                <= STORM_WINDOW_MS:
            j += 1
        group = fences[i:j + 1]
        nodes = sorted({e.node for e in group})
        if len(nodes) >= 2:
            last = group[-1]
            spread = last.timestamp - first.timestamp
            message = (f"brokers {', '.join(map(str, nodes))} were fenced within "
                       f"{duration(spread)} of each other (offsets {first.offset}.."
                       f"{last.offset}), each while it led partitions and none in "
                       "controlled shutdown: a controller or network event, not one broker")
            nearby = [s for s in leaders if s.leader is not None and abs(
                s.timestamp - first.timestamp) <= 6 * STORM_WINDOW_MS]
            if nearby:
                s = nearby[0]
                message += (f"; the quorum leader changed near it (epoch {s.epoch}, "
                            f"controller {s.leader}, offset {s.offset})")
            out.append(Finding("V133", message, offset=first.offset,
                               details={"brokers": nodes, "first_offset": first.offset,
                                        "last_offset": last.offset, "spread_ms": spread}))
        i = j + 1
    return out


def duration(ms: int) -> str:
    """A duration as people say it: 850 ms, 12 s, 7 min 4 s, 3 h 20 min, 2 d 5 h."""
    if ms < 1000:
        return f"{ms} ms"
    s = ms // 1000
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s} s" if s else f"{m} min"
    h, m = divmod(m, 60)
    if h < 24:
        return f"{h} h {m} min" if m else f"{h} h"
    d, h = divmod(h, 24)
    return f"{d} d {h} h" if h else f"{d} d"
