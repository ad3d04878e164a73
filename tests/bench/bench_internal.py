"""The internal topics' decoders against the metadata decoder, and against the peer, in one
run on inputs written by kmeta's writer; prints MB/s and ratios.

    python tests/bench/bench_internal.py [--size 20MB] [--repeat 3]

Each input is scanned in process: every batch (CRC checked), every record's key and
value decoded into fields by the topic's decoder, as ``dump`` does.  The reference is the
metadata decoder on a metadata log of real records: the generated big log
(``fixtures/generate.py --size``) without its NoOp heartbeat batches, which the scanner
decodes once per run of equal values and would flatter the reference.  The peer is
kafka-python's MemoryRecords iteration with CRC checks, decoding no payload (it has no
decoder for these topics; ``kafka-dump-log.sh --offsets-decoder`` needs a JVM).  The
target: each decoder within 20% of the metadata decoder's MB/s.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer  # noqa: E402
from bench_dump import big_log  # noqa: E402

from kmeta.formats.batch import build_batch  # noqa: E402
from kmeta.formats.coordinator import (  # noqa: E402
    SHARE_STATE_KEYS,
    TRANSACTION_KEYS,
    encode_coordinator,
)
from kmeta.formats.decoders import record_decoder  # noqa: E402
from kmeta.formats.group_schemas import OFFSETS_KEYS  # noqa: E402
from kmeta.formats.payload import NOOP_VALUE, encode_framed  # noqa: E402
from kmeta.formats.remote_log_metadata import REMOTE_LOG_MESSAGES  # noqa: E402
from kmeta.storage import writer as W  # noqa: E402
from kmeta.storage.segments import batch_records, mapped, scan_batches  # noqa: E402

OUT = REPO / "fixtures" / "big" / "internal"  # git ignores fixtures/big
T = 1_700_000_000_000
TOPIC_ID = "ZXZlbnRzLXRvcGljLWlkAA"


def _offsets(rng: random.Random) -> list[tuple[bytes, bytes | None]]:
    """A consumer's commit of 1-12 partitions; now and then its group's metadata."""
    group = f"group-{rng.randrange(40)}"
    out = []
    for _ in range(rng.choice((1, 1, 1, 3, 6, 12))):
        version = rng.choice((3, 4))
        out.append(encode_coordinator(OFFSETS_KEYS, 1, {
            "group": group, "topic": f"topic-{rng.randrange(20)}",
            "partition": rng.randrange(12)}, version, {
            "offset": rng.randrange(10**9), "leaderEpoch": rng.randrange(30), "metadata": "",
            "commitTimestamp": T}))
    if rng.random() < 0.03:
        out.append(encode_coordinator(OFFSETS_KEYS, 2, {"group": group}, 3, {
            "protocolType": "consumer", "generation": rng.randrange(100), "protocol": "range",
            "leader": "m-0", "currentStateTimestamp": T, "members": [{
                "memberId": f"m-{i}", "groupInstanceId": None, "clientId": "c",
                "clientHost": "/10.0.0.1", "rebalanceTimeout": 300000, "sessionTimeout": 45000,
                "subscription": bytes(40), "assignment": bytes(60)}
                for i in range(rng.randrange(1, 6))]}))
    return out


def _transactions(rng: random.Random) -> list[tuple[bytes, bytes | None]]:
    parts = [{"topic": f"topic-{rng.randrange(20)}", "partitionIds": [rng.randrange(12)]}
             for _ in range(rng.randrange(0, 4))]
    version = rng.choice((0, 1))
    value = {"producerId": rng.randrange(10**6), "producerEpoch": rng.randrange(50),
             "transactionTimeoutMs": 60000, "transactionStatus": rng.randrange(6),
             "transactionPartitions": parts or None,
             "transactionLastUpdateTimestampMs": T, "transactionStartTimestampMs": T}
    if version:
        value.update(previousProducerId=7, clientTransactionVersion=2)
    return [encode_coordinator(TRANSACTION_KEYS, 0, {
        "transactionalId": f"txn-{rng.randrange(500)}"}, version, value)]


def _remote(rng: random.Random) -> list[tuple[bytes, bytes | None]]:
    seg = {"topicIdPartition": {"name": "events", "id": TOPIC_ID,
                                "partition": rng.randrange(12)}, "id": TOPIC_ID}
    if rng.random() < 0.4:
        value = encode_framed(REMOTE_LOG_MESSAGES[0], 0, {
            "remoteLogSegmentId": seg, "startOffset": 0, "endOffset": 1000, "brokerId": 1,
            "maxTimestampMs": T, "eventTimestampMs": T,
            "segmentLeaderEpochs": [{"leaderEpoch": e, "offset": e * 100}
                                    for e in range(rng.randrange(1, 4))],
            "segmentSizeInBytes": 1 << 30, "customMetadata": None,
            "remoteLogSegmentState": 0})
    else:
        value = encode_framed(REMOTE_LOG_MESSAGES[1], 0, {
            "remoteLogSegmentId": seg, "brokerId": 1, "eventTimestampMs": T,
            "customMetadata": None, "remoteLogSegmentState": rng.randrange(1, 4)})
    return [(None, value)]


def _share_state(rng: random.Random) -> list[tuple[bytes, bytes | None]]:
    key = {"groupId": f"sg-{rng.randrange(20)}", "topicId": TOPIC_ID,
           "partition": rng.randrange(12)}
    batches = [{"firstOffset": i * 10, "lastOffset": i * 10 + 9, "deliveryState": 2,
                "deliveryCount": 1} for i in range(rng.randrange(1, 8))]
    if rng.random() < 0.2:
        return [encode_coordinator(SHARE_STATE_KEYS, 0, key, 0, {
            "snapshotEpoch": 1, "stateEpoch": 0, "leaderEpoch": 3, "startOffset": 0,
            "createTimestamp": T, "writeTimestamp": T, "stateBatches": batches})]
    return [encode_coordinator(SHARE_STATE_KEYS, 1, key, 0, {
        "snapshotEpoch": 1, "leaderEpoch": 3, "startOffset": 0, "stateBatches": batches})]


INPUTS: dict[str, tuple[str, Callable[[random.Random], list]]] = {
    "__consumer_offsets-0": ("offsets", _offsets),
    "__transaction_state-0": ("transactions", _transactions),
    "__remote_log_metadata-0": ("remote-log-metadata", _remote),
    "__share_group_state-0": ("share-group-state", _share_state),
}


def generate(name: str, make: Callable[[random.Random], list], size: int) -> Path:
    """One partition of about ``size`` bytes, written once and reused."""
    pdir = OUT / f"{size}" / name
    if not (pdir / "00000000000000000000.log").is_file():
        rng = random.Random(name)
        batches, offset, total = [], 0, 0
        while total < size:
            records = make(rng)
            batch = build_batch(offset, records, leader_epoch=3, base_timestamp=T + offset)
            batches.append(batch)
            offset, total = offset + len(records), total + len(batch)
        W.write_segments(pdir, batches, segment_bytes=1 << 30)
    return pdir / "00000000000000000000.log"


def metadata_records(size: str) -> Path:
    """The generated metadata log's batches of real records (no NoOp batch), one file."""
    out = OUT / f"metadata-records-{size}.log"
    if not out.is_file():
        data = bytearray()
        for f in sorted(big_log(size).glob("*.log")):
            with mapped(f) as buf:
                for b in scan_batches(buf, str(f)):
                    records, _ = batch_records(b)
                    if b.is_control or all(r.value == NOOP_VALUE for r in records):
                        continue
                    data += bytes(buf[b.position:b.position + b.size])
        OUT.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    return out


def decode_all(path: Path, decoder: str) -> int:
    decode = record_decoder(decoder)
    n = 0
    with mapped(path) as buf:
        for b in scan_batches(buf, str(path)):
            records, problems = batch_records(b)
            if problems:
                raise SystemExit(f"finding in benchmark input: {problems[0]}")
            if b.is_control:
                continue
            for r in records:
                p = decode(r.key, r.value)
                if p.finding is not None:
                    raise SystemExit(f"{path}: {p.finding}")
                n += 1
    return n


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - t)
    return min(times), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=20_000_000, help="bytes per internal topic")
    ap.add_argument("--metadata-size", default="256MiB", help="the generated metadata log "
                    "the reference's records come from")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    reference = metadata_records(args.metadata_size)
    inputs = [("metadata (reference)", reference, "metadata")] + [
        (name, generate(name, make, args.size), decoder)
        for name, (decoder, make) in INPUTS.items()]
    results = {}
    for _ in range(args.repeat):  # interleaved: a noisy moment hurts every input alike
        for label, path, decoder in inputs:
            t, n = best(lambda p=path, d=decoder: decode_all(p, d), 1)
            tp, _ = best(lambda p=path: peer.iterate(p.read_bytes()), 1)
            old = results.get(label)
            results[label] = (min(t, old[0]) if old else t, n, min(tp, old[2]) if old else tp)
    ref_t, _, _ = results["metadata (reference)"]
    ref = reference.stat().st_size / 1e6 / ref_t
    print(f"{'input':<24} {'MB':>6} {'records':>9} {'kmeta MB/s':>10} {'vs metadata':>11} "
          f"{'peer MB/s':>9} {'kmeta/peer':>10}")
    for label, path, _ in inputs:
        t, n, tp = results[label]
        mb = path.stat().st_size / 1e6
        print(f"{label:<24} {mb:6.1f} {n:9,} {mb / t:10.1f} {mb / t / ref:10.2f}x "
              f"{mb / tp:9.1f} {tp / t:9.2f}x")
    print("target: every internal topic >= 0.80x the metadata decoder's MB/s")


if __name__ == "__main__":
    main()
