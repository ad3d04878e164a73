"""A generated broker the size of a real one: ``--partitions`` partition dirs (4,000 by
default) holding ``--segments`` segments each (40,000 segment files by default), each
segment with its ``.index`` and ``.timeindex``, written with kmeta's writer.

    python tests/bench/broker.py [--partitions 4000] [--segments 10] [--damage N] [--out DIR]

``--damage N`` flips a byte in one segment of each of N partitions (spread over the
topics, at a seeded random place after the segment's first batch header): verify then has
findings in N partitions, which its text must still say in two screens.

The broker is node 4 of a simulated KRaft cluster (fixtures/generate.py's Simulator:
controllers 1-3, brokers 4-8): its data dir holds ``meta.properties`` (node.id 4, the
directory id its replicas are assigned to), the cluster's ``__cluster_metadata-0`` (every
topic and partition record, so the image knows each partition dir on the disk), the four
offset checkpoint files and ``.kafka_cleanshutdown``, and one dir per partition the image
assigns to node 4 (replication factor 3 over brokers 4-8, node 4 always among them):
``partition.metadata``, ``leader-epoch-checkpoint``, segments of keyed batches (sizes
vary from partition to partition, as a real broker's do) and a producer snapshot.

Used by ``bench_broker.py`` (info, verify, startup on it) and kept under fixtures/big/
(not committed): built once, reused.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from kmeta.formats.batch import build_batch  # noqa: E402
from kmeta.formats.textfiles import (  # noqa: E402
    MetaProperties,
    OffsetCheckpoint,
    TopicPartitionOffset,
)
from kmeta.storage import writer as W  # noqa: E402

NODE = 4
#: Topics of this many partitions each; the broker holds three fifths of them (rf 3 of 5).
PARTITIONS_PER_TOPIC = 60
BROKERS = (4, 5, 6, 7, 8)


def _generate_module():
    spec = importlib.util.spec_from_file_location("kmeta_fixtures_generate",
                                                  REPO / "fixtures" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _cluster(topics: int, seed: int, partitions: int):
    """The simulated cluster's metadata entries and, per topic, (name, id, partitions of
    node 4).  The last topic has only as many partitions as it takes to give node 4
    ``partitions`` replicas in all: the image assigns node 4 exactly the dirs on its disk
    (verify's placement check would otherwise find the rest missing)."""
    g = _generate_module()
    sim = g.Simulator(seed, max_topics=10**9)
    entries: list = []
    for action in [("failover", 1), ("bootstrap",), ("upgrade", g.MAX_MV),
                   *(("register_broker", b) for b in BROKERS),
                   *(("unfence", b) for b in BROKERS)]:
        entries += sim.inject(action)
    owned: list[tuple[str, str, list[int]]] = []
    for t in range(topics):
        name = f"{('orders', 'payments', 'clicks', 'events', 'audit')[t % 5]}.{t:03d}"
        mine = []
        count = PARTITIONS_PER_TOPIC
        wanted = partitions - sum(len(o[2]) for o in owned)
        for p in range(PARTITIONS_PER_TOPIC):
            if len(mine) == wanted:
                count = p
                break
            start = (p + t) % len(BROKERS)
            replicas = [BROKERS[(start + i) % len(BROKERS)] for i in range(3)]
            if NODE in replicas:
                mine.append(p)
        # fixed placements: the simulator's own draws would leave node 4 out at random
        before = len(sim.state.topics)
        entries += _create(sim, name, t, count)
        assert len(sim.state.topics) == before + 1
        topic_id = sim.state.topic_by_name(name)
        owned.append((name, topic_id, mine))
    return g, sim, entries, owned


def _create(sim, name: str, t: int, count: int = PARTITIONS_PER_TOPIC) -> list:
    """CreateTopics of ``name`` with replicas placed round-robin from broker (p + t)."""
    out: list = []
    place = sim._placement

    def placement(pid: int, rf: int, brokers):  # the same rotation as _cluster counts
        start = (pid + t) % len(BROKERS)
        return [BROKERS[(start + i) % len(BROKERS)] for i in range(3)]

    sim._placement = placement
    try:
        out += sim.inject(("create_topic", name, count, 3, None))
    finally:
        sim._placement = place
    return out


def _partition(pdir: Path, topic_id: str, segments: int, rng: random.Random,
               t0: int) -> tuple[int, int]:
    """One partition dir; returns (log start offset, log end offset)."""
    records_per_batch = rng.choice((1, 5, 20, 50))
    value = bytes(rng.randrange(32, 127) for _ in range(rng.choice((60, 200, 700))))
    batches_per_segment = rng.choice((2, 4, 8, 16))
    start = rng.choice((0, 0, 0, 1000 * segments))  # some logs start above 0 (retention)
    offset, ts = start, t0
    with W.SegmentWriter(pdir, base_offset=start, segment_bytes=1 << 40,
                         durable=False) as w:
        for s in range(segments):
            if s:
                w.roll()
            for _ in range(batches_per_segment):
                recs = [(f"key-{rng.randrange(10_000)}".encode(), value)
                        for _ in range(records_per_batch)]
                w.append(build_batch(offset, recs, leader_epoch=s // 4,
                                     base_timestamp=ts))
                offset += records_per_batch
                ts += rng.randrange(1, 60_000)
    w.write_leader_epoch_checkpoint()
    W.write_partition_metadata(pdir, topic_id, durable=False)
    W.write_producer_snapshot(pdir, w.log_end_offset, durable=False)
    return start, w.log_end_offset


def damage(data: Path, partitions: int, seed: int = 2024) -> list[Path]:
    """Flip one byte in one segment of each of ``partitions`` partition dirs of ``data``
    (every len/N-th dir in name order); the segments changed."""
    rng = random.Random(seed)
    dirs = sorted(d for d in data.iterdir() if d.is_dir() and not d.name.startswith("__"))
    step = max(1, len(dirs) // max(1, partitions))
    changed = []
    for d in dirs[::step][:partitions]:
        logs = sorted(d.glob("*.log"))
        log = logs[rng.randrange(len(logs))]
        size = log.stat().st_size
        if size <= 61:
            continue
        at = rng.randrange(61, size)
        with open(log, "r+b") as f:
            f.seek(at)
            byte = f.read(1)
            f.seek(at)
            f.write(bytes([byte[0] ^ 0xFF]))
        changed.append(log)
    return changed


def generate(partitions: int, segments: int, out: Path | None = None,
             seed: int = 2024, damaged: int = 0) -> Path:
    """The broker's data dir (built once: an existing one is returned as it is);
    ``damaged``: partitions with a flipped byte (see ``damage``)."""
    name = f"broker-{partitions}x{segments}" + (f"-damage{damaged}" if damaged else "")
    out = out or REPO / "fixtures" / "big" / name / "data"
    if (out / "meta.properties").is_file():
        return out
    started = time.perf_counter()
    topics = -(-partitions * 5 // (3 * PARTITIONS_PER_TOPIC))
    g, sim, entries, owned = _cluster(topics, seed, partitions)
    out.mkdir(parents=True)
    g.write_metadata_partition(out / "__cluster_metadata-0", entries, segment_bytes=1 << 30,
                               keep_snapshots=0, durable=False)
    rng = random.Random(seed)
    ends: list[tuple[str, int, int, int]] = []
    made = 0
    for name, topic_id, mine in owned:
        for p in mine:
            if made == partitions:
                break
            start, end = _partition(out / f"{name}-{p}", topic_id, segments, rng,
                                    g.T0 + made * 1000)
            ends.append((name, p, start, end))
            made += 1
    W.write_meta_properties(out, MetaProperties(
        version=1, cluster_id="bench-broker-cluster", node_id=NODE,
        directory_id=sim.replica_dir(NODE, 0)), durable=False)
    for file, pick in (("recovery-point-offset-checkpoint", lambda s, e: e),
                       ("replication-offset-checkpoint", lambda s, e: e),
                       ("log-start-offset-checkpoint", lambda s, e: s),
                       ("cleaner-offset-checkpoint", None)):
        rows = [] if pick is None else [TopicPartitionOffset(n, p, pick(s, e))
                                        for n, p, s, e in ends]
        W.write_offset_checkpoint(out / file, OffsetCheckpoint(tuple(rows)), durable=False)
    (out / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":42}')
    if damaged:
        damage(out, damaged, seed)
    print(f"generated {out}: {made} partitions x {segments} segments in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=4000)
    ap.add_argument("--segments", type=int, default=10)
    ap.add_argument("--damage", type=int, default=0, metavar="N",
                    help="flip a byte in one segment of N partitions")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    print(generate(a.partitions, a.segments, a.out, damaged=a.damage))


if __name__ == "__main__":
    main()
