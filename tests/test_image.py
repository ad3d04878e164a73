"""MetadataImage: replay of real and fixture logs, problem codes, transactions, digest."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from conftest import HEALTHY_META
from hypothesis import given, settings
from hypothesis import strategies as st

from kmeta.core.image import (
    MIGRATING_DIR,
    PROBLEM_CODES,
    ImageProblem,
    MetadataImage,
    diff_images,
)
from kmeta.formats.payload import decode_control, decode_metadata
from kmeta.storage.segments import mapped, scan_records

# Digests of the real data-store snapshots (recorded with this implementation; they must
# never change unless the canonical form changes on purpose).
DATA_STORE_DIGESTS = {
    "00000000000000016435-0000000008.checkpoint": "dee06b809506a68413d24ef638d7cd92",
    "00000000000000023631-0000000008.checkpoint": "dee06b809506a68413d24ef638d7cd92",
    "00000000000000030827-0000000008.checkpoint": "dee06b809506a68413d24ef638d7cd92",
    "00000000000000038023-0000000008.checkpoint": "dee06b809506a68413d24ef638d7cd92",
    "00000000000000048831-0000000009.checkpoint": "bb446179a29bb725abcbab4cd7b18cba",
    "00000000000000056027-0000000009.checkpoint": "bb446179a29bb725abcbab4cd7b18cba",
    "00000000000000063224-0000000009.checkpoint": "bb446179a29bb725abcbab4cd7b18cba",
}
LDI_POC_DIGEST = "93850e83002a9707c87f2d0557a2c017"


def records(paths: list[Path], stop: int | None = None):
    """(type, version, data, offset) of every non-control record, below ``stop``."""
    for path in paths:
        with mapped(path) as buf:
            for item in scan_records(buf, str(path), decode_metadata, decode_control):
                assert isinstance(item, tuple), f"finding while reading {path}: {item}"
                batch, record, payload = item
                if batch.is_control:
                    continue
                if stop is not None and record.offset >= stop:
                    return
                yield payload.type, payload.version, payload.data, record.offset


def replay(paths: list[Path], stop: int | None = None
           ) -> tuple[MetadataImage, list[ImageProblem], Counter]:
    image = MetadataImage.empty()
    problems: list[ImageProblem] = []
    seen: Counter = Counter()
    for rec in records(paths, stop):
        seen[rec[0]] += 1
        problems.extend(image.apply(*rec))
    return image, problems, seen


# ------------------------------------------------------------------------- real data


def test_ldi_poc_log_final_state(real_data: Path) -> None:
    log = real_data / "ldi-poc" / "__cluster_metadata-0" / "00000000000000000000.log"
    image, problems, seen = replay([log])
    assert problems == []
    assert not image.in_transaction
    j = image.to_json()
    assert {name: len(t["partitions"]) for name, t in j["topics"].items()} == {
        "Retry.TestTopicPatient": 1,
        "TestTopicPatient": 1,
        "__consumer_offsets": 50,
        "batch2.work.notification.SHR_PROD.persistence": 1,
        "subscription.matching.SHR_PROD.persistence": 1,
    }
    # Two RegisterBrokerRecords, both for broker 1 (epochs 6 and 8): one broker remains.
    assert seen["REGISTER_BROKER_RECORD"] == 2
    assert list(j["brokers"]) == ["1"]
    broker = j["brokers"]["1"]
    assert broker["epoch"] == 8
    # The log ends with the broker shutting down: in controlled shutdown, then fenced.
    assert broker["fenced"] is True and broker["inControlledShutdown"] is True
    assert list(j["controllers"]) == ["1"]
    assert j["features"] == {"metadata.version": 19}
    assert image.metadata_version == 19
    assert j["zkMigrationState"] == "NONE"
    assert j["producerIds"] == {"nextProducerId": 1000}
    assert j["configs"]["TOPIC"]["__consumer_offsets"]["cleanup.policy"] == "compact"
    part = j["topics"]["__consumer_offsets"]["partitions"]["0"]
    assert part["replicas"] == [1] and part["leader"] == -1  # leader moved off at shutdown
    assert image.digest() == LDI_POC_DIGEST


def _data_store_snapshots(real_data: Path) -> list[Path]:
    snaps = sorted((real_data / "data-store" / "kafka-data" / "__cluster_metadata-0")
                   .glob("*.checkpoint"))
    assert len(snaps) == 7
    return snaps


def test_data_store_snapshots_load_with_stable_digest(real_data: Path) -> None:
    for snap in _data_store_snapshots(real_data):
        image, problems, _ = replay([snap])
        assert problems == [], snap.name
        first = image.digest()
        again, _, _ = replay([snap])
        assert first == image.digest() == again.digest() == image.copy().digest()
        assert first == DATA_STORE_DIGESTS[snap.name], snap.name
        assert image.metadata_version == 21


# ------------------------------------------------------------------ healthy fixture


def _healthy() -> tuple[list[Path], list[Path]]:
    logs = sorted(HEALTHY_META.glob("*.log"))
    snaps = sorted(HEALTHY_META.glob("*.checkpoint"))
    assert len(snaps) == 3 and logs
    return logs, snaps


def _snapshot_end(snap: Path) -> int:
    return int(snap.name.split("-")[0])


def test_healthy_log_replays_without_problems() -> None:
    logs, _ = _healthy()
    image, problems, _ = replay(logs)
    assert problems == []
    assert not image.in_transaction


def test_healthy_log_digest_equals_snapshot_digest() -> None:
    logs, snaps = _healthy()
    for snap in snaps:
        from_log, _, _ = replay(logs, stop=_snapshot_end(snap))
        from_snap, _, _ = replay([snap])
        assert from_log.digest() == from_snap.digest(), diff_images(from_log, from_snap)


# ------------------------------------------------------------------ hand-built records

U = "AAAAAAAAAAAAAAAAAAAAAA"  # any base64 uuid will do as an id
T1 = "dG9waWMtb25lLWlkLTAwMQ"
T2 = "dG9waWMtdHdvLWlkLTAwMg"
DIR_A = "ZGlyLWEtMDAwMDAwMDAwMQ"


def broker(bid: int, epoch: int = 10, **kw: Any) -> tuple:
    d = {"brokerId": bid, "isMigratingZkBroker": False, "incarnationId": U,
         "brokerEpoch": epoch, "endPoints": [], "features": [], "rack": None,
         "fenced": True, "inControlledShutdown": False}
    d.update(kw)
    return ("REGISTER_BROKER_RECORD", 1, d)


def topic(name: str, tid: str) -> tuple:
    return ("TOPIC_RECORD", 0, {"name": name, "topicId": tid})


def partition(tid: str, pid: int = 0, replicas=(1, 2), isr=(1, 2), leader: int = 1,
              leader_epoch: int = 0, partition_epoch: int = 0, **kw: Any) -> tuple:
    d = {"partitionId": pid, "topicId": tid, "replicas": list(replicas), "isr": list(isr),
         "removingReplicas": [], "addingReplicas": [], "leader": leader,
         "leaderEpoch": leader_epoch, "partitionEpoch": partition_epoch}
    d.update(kw)
    return ("PARTITION_RECORD", 0, d)


def change(tid: str, pid: int = 0, **kw: Any) -> tuple:
    return ("PARTITION_CHANGE_RECORD", 0, {"partitionId": pid, "topicId": tid, **kw})


def base() -> MetadataImage:
    image = MetadataImage.empty()
    assert image.apply_all([broker(1), broker(2), topic("orders", T1), partition(T1)]) == []
    return image


def codes(problems: list[ImageProblem]) -> list[str]:
    return [p.code for p in problems]


def test_problem_codes_table() -> None:
    for code, (severity, meaning) in PROBLEM_CODES.items():
        assert re.fullmatch(r"V1\d\d", code)
        assert severity in ("error", "warning", "info") and meaning
    assert ImageProblem("V101", "x").severity == "error"


def test_partition_change_semantics() -> None:
    image = base()
    assert image.apply(*change(T1, isr=[1]), offset=5) == []
    p = image.topics[T1]["partitions"][0]
    assert (p["isr"], p["leader"], p["leaderEpoch"], p["partitionEpoch"]) == ([1], 1, 0, 1)
    assert p["directories"] == [MIGRATING_DIR, MIGRATING_DIR]
    assert image.apply(*change(T1, leader=-1, isr=[])) == []  # no leader: epoch bumps
    p = image.topics[T1]["partitions"][0]
    assert (p["leader"], p["leaderEpoch"], p["partitionEpoch"]) == (-1, 1, 2)
    assert image.apply(*change(T1, leader=2, isr=[2], leaderRecoveryState=1)) == []
    p = image.topics[T1]["partitions"][0]
    assert (p["leader"], p["leaderEpoch"], p["leaderRecoveryState"]) == (2, 2, 1)
    assert image.apply(*change(T1, replicas=[2], isr=[2], directories=[DIR_A])) == []
    assert image.topics[T1]["partitions"][0]["directories"] == [DIR_A]


def test_v100_unknown_type_is_accepted() -> None:
    image = base()
    before = image.digest()
    assert codes(image.apply("SOMETHING_NEW_RECORD", 0, {}, 7)) == ["V100"]
    assert image.digest() == before
    assert image.apply("NO_OP_RECORD", 0, {}) == []


def test_v101_unknown_topic() -> None:
    image = base()
    before = image.digest()
    assert codes(image.apply(*partition(T2))) == ["V101"]
    assert codes(image.apply(*change(T2, isr=[1]))) == ["V101"]
    assert codes(image.apply("REMOVE_TOPIC_RECORD", 0, {"topicId": T2})) == ["V101"]
    assert codes(image.apply("CLEAR_ELR_RECORD", 0, {"topicName": "nope"})) == ["V101"]
    assert image.digest() == before


def test_v102_change_of_missing_partition() -> None:
    image = base()
    problems = image.apply(*change(T1, pid=3, isr=[1]), offset=42)
    assert problems == [ImageProblem("V102", problems[0].message, 42)]


def test_v103_leader_not_in_isr() -> None:
    image = base()
    assert codes(image.apply(*change(T1, isr=[2]))) == ["V103"]
    assert image.topics[T1]["partitions"][0]["isr"] == [2]  # applied, as Kafka would


def test_v104_isr_not_subset_of_replicas() -> None:
    image = base()
    assert codes(image.apply(*change(T1, isr=[1, 3]))) == ["V104"]


def test_v105_v106_epochs_backwards() -> None:
    image = MetadataImage.empty()
    image.apply_all([broker(1), broker(2), topic("orders", T1),
                     partition(T1, leader_epoch=5, partition_epoch=7)])
    assert codes(image.apply(*partition(T1, leader_epoch=4, partition_epoch=7))) == ["V105"]
    assert codes(image.apply(*partition(T1, leader_epoch=4, partition_epoch=6))) == ["V106"]


def test_v107_record_of_removed_topic() -> None:
    image = base()
    assert image.apply("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "orders",
                                            "name": "retention.ms", "value": "1"}) == []
    assert image.apply("REMOVE_TOPIC_RECORD", 0, {"topicId": T1}) == []
    assert image.topics == {} and image.configs == {}  # topic configs go with it
    assert codes(image.apply(*change(T1, isr=[1]))) == ["V107"]
    assert codes(image.apply(*partition(T1))) == ["V107"]


def test_v108_v109_broker_references() -> None:
    image = base()
    assert codes(image.apply("FENCE_BROKER_RECORD", 0, {"id": 9, "epoch": 10})) == ["V108"]
    assert codes(image.apply("UNREGISTER_BROKER_RECORD", 0,
                             {"brokerId": 9, "brokerEpoch": 1})) == ["V108"]
    assert codes(image.apply("UNFENCE_BROKER_RECORD", 0, {"id": 1, "epoch": 11})) == ["V109"]
    assert image.brokers[1]["fenced"] is True
    assert image.apply("UNFENCE_BROKER_RECORD", 0, {"id": 1, "epoch": 10}) == []
    assert image.brokers[1]["fenced"] is False
    assert image.apply("BROKER_REGISTRATION_CHANGE_RECORD", 1,
                       {"brokerId": 1, "brokerEpoch": 10, "fenced": 1,
                        "inControlledShutdown": 1}) == []
    assert image.brokers[1]["fenced"] is True
    assert image.brokers[1]["inControlledShutdown"] is True
    assert codes(image.apply("BROKER_REGISTRATION_CHANGE_RECORD", 0,
                             {"brokerId": 2, "brokerEpoch": 3, "fenced": -1})) == ["V109"]


def test_v110_v111_topic_records() -> None:
    image = base()
    assert codes(image.apply(*topic("orders", T2))) == ["V110"]
    assert T2 not in image.topics
    assert codes(image.apply(*topic("orders", T1))) == ["V111"]
    assert image.topics[T1]["partitions"] == {}


def test_v114_leader_not_registered() -> None:
    image = base()
    assert codes(image.apply(*change(T1, leader=3, isr=[1, 2, 3], replicas=[1, 2, 3],
                                     directories=[]))) == ["V114"]


def test_v115_directories_mismatch() -> None:
    image = base()
    assert codes(image.apply(*partition(T1, pid=1,
                                        directories=[DIR_A]))) == ["V115"]
    assert codes(image.apply(*change(T1, replicas=[1, 2], directories=[DIR_A]))) == ["V115"]
    assert 1 not in image.topics[T1]["partitions"]


def test_v116_bad_enum_values() -> None:
    image = base()
    assert codes(image.apply("BROKER_REGISTRATION_CHANGE_RECORD", 0,
                             {"brokerId": 1, "brokerEpoch": 10, "fenced": 5})) == ["V116"]
    assert codes(image.apply(*change(T1, leaderRecoveryState=3))) == ["V116"]
    assert codes(image.apply("ZK_MIGRATION_STATE_RECORD", 0,
                             {"zkMigrationState": 9})) == ["V116"]


def test_v117_removal_of_missing_entities() -> None:
    image = base()
    assert codes(image.apply("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", 0, {"id": U})) == ["V117"]
    assert codes(image.apply("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 0,
                             {"name": "alice", "mechanism": 1})) == ["V117"]
    assert codes(image.apply("REMOVE_DELEGATION_TOKEN_RECORD", 0,
                             {"tokenId": "t"})) == ["V117"]
    assert codes(image.apply("UNREGISTER_CONTROLLER_RECORD", 0,
                             {"controllerId": 3})) == ["V117"]


def test_v118_producer_ids_backwards() -> None:
    image = base()
    rec = ("PRODUCER_IDS_RECORD", 0, {"brokerId": 1, "brokerEpoch": 10,
                                      "nextProducerId": 2000})
    assert image.apply(*rec) == []
    rec[2]["nextProducerId"] = 1000
    assert codes(image.apply(*rec)) == ["V118"]


def test_v119_malformed_data() -> None:
    image = base()
    assert codes(image.apply("TOPIC_RECORD", 0, {"name": "x"})) == ["V119"]
    assert codes(image.apply("PARTITION_RECORD", 1, None)) == ["V119"]
    # Undecodable payloads arrive as hex dicts: a problem, never an exception.
    assert codes(image.apply("CONFIG_RECORD", 0, {"apiKey": 4, "hex": "00"})) == ["V119"]


def test_every_code_is_exercised_by_a_test() -> None:
    text = Path(__file__).read_text()
    for code in PROBLEM_CODES:
        if code in ("V112", "V113"):
            continue  # the transaction tests below
        assert f'"{code}"' in text, code


def test_other_sections_and_secrets_are_fingerprinted() -> None:
    image = base()
    image.apply_all([
        ("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21}),
        ("FEATURE_LEVEL_RECORD", 0, {"name": "group.version", "featureLevel": 1}),
        ("CLIENT_QUOTA_RECORD", 0, {"entity": [{"entityType": "user", "entityName": None}],
                                    "key": "producer_byte_rate", "value": 1e6,
                                    "remove": False}),
        ("USER_SCRAM_CREDENTIAL_RECORD", 0, {"name": "alice", "mechanism": 2,
                                             "salt": b"salt", "storedKey": b"sk",
                                             "serverKey": b"svk", "iterations": 4096}),
        ("DELEGATION_TOKEN_RECORD", 0, {"owner": "User:a", "requester": "User:a",
                                        "renewers": [], "issueTimestamp": 1,
                                        "maxTimestamp": 3, "expirationTimestamp": 2,
                                        "tokenId": "secret-token-id"}),
        ("REGISTER_CONTROLLER_RECORD", 0, {"controllerId": 3, "incarnationId": U,
                                           "zkMigrationReady": False, "endPoints": [],
                                           "features": []}),
    ])
    j = image.to_json()
    assert j["features"] == {"group.version": 1, "metadata.version": 21}
    assert j["clientQuotas"] == {'{"user":null}': {"producer_byte_rate": 1e6}}
    assert j["scram"]["alice"]["SCRAM-SHA-512"]["iterations"] == 4096
    text = repr(j)
    assert "secret-token-id" not in text and "b'sk'" not in text
    assert image.apply("FEATURE_LEVEL_RECORD", 0, {"name": "group.version",
                                                   "featureLevel": 0}) == []
    assert "group.version" not in image.features
    assert image.apply("REMOVE_DELEGATION_TOKEN_RECORD", 0,
                       {"tokenId": "secret-token-id"}) == []
    assert set(image.section_digests()) == set(j)


def test_clear_elr_advances_partition_epoch() -> None:
    image = base()
    image.apply(*change(T1, eligibleLeaderReplicas=[2], lastKnownElr=[]))
    epoch = image.topics[T1]["partitions"][0]["partitionEpoch"]
    assert image.apply("CLEAR_ELR_RECORD", 0, {"topicName": ""}) == []
    p = image.topics[T1]["partitions"][0]
    assert p["eligibleLeaderReplicas"] == [] and p["partitionEpoch"] == epoch + 1
    assert image.apply("CLEAR_ELR_RECORD", 0, {"topicName": "orders"}) == []
    assert image.topics[T1]["partitions"][0]["partitionEpoch"] == epoch + 1  # no ELR left


def test_copy_is_independent_and_diff_paths() -> None:
    a = base()
    b = a.copy()
    b.apply(*change(T1, leader=2))
    assert a.topics[T1]["partitions"][0]["leader"] == 1
    assert "/topics/orders/partitions/0/leader: 1 -> 2" in diff_images(a, b)
    assert "/topics/orders/partitions/0/leaderEpoch: 0 -> 1" in diff_images(a, b)
    b.apply(*topic("payments", T2))
    assert any(line.startswith("/topics/payments: (absent) -> ") for line in diff_images(a, b))
    assert diff_images(a, a.copy()) == []
    assert a == a.copy() and a != b


# ------------------------------------------------------------------ transactions


def test_transaction_commit_applies_atomically() -> None:
    image = base()
    assert image.apply("BEGIN_TRANSACTION_RECORD", 0, {"name": "create"}, 10) == []
    assert image.in_transaction
    before = image.to_json()
    assert image.apply(*topic("payments", T2), 11) == []
    assert image.apply(*partition(T2, pid=7), 12) == []
    assert T2 not in image.topics  # buffered, not yet visible
    assert image.to_json()["transaction"] == {"name": "create", "pendingRecords": 2}
    assert before["topics"] == image.to_json()["topics"]
    assert image.apply("END_TRANSACTION_RECORD", 0, {}, 13) == []
    assert not image.in_transaction
    assert image.topics[T2]["partitions"][7]["leader"] == 1
    assert image.to_json()["transaction"] is None


def test_transaction_problems_reported_at_end_with_their_offsets() -> None:
    image = base()
    image.apply("BEGIN_TRANSACTION_RECORD", 0, {}, 10)
    assert image.apply(*change(T2, isr=[1]), 11) == []
    assert image.apply("END_TRANSACTION_RECORD", 0, {}, 12) == [
        ImageProblem("V101", image_problem_message(T2), 11)]


def image_problem_message(tid: str) -> str:
    return f"PartitionChangeRecord for unknown topic id {tid}"


def test_transaction_abort_discards() -> None:
    image = base()
    before = image.digest()
    image.apply("BEGIN_TRANSACTION_RECORD", 0, {})
    image.apply(*topic("doomed", T2))
    assert image.apply("ABORT_TRANSACTION_RECORD", 0, {"reason": "failover"}) == []
    assert not image.in_transaction
    assert image.digest() == before


def test_transaction_nesting_and_unmatched_end() -> None:
    image = base()
    assert codes(image.apply("END_TRANSACTION_RECORD", 0, {}, 1)) == ["V113"]
    assert codes(image.apply("ABORT_TRANSACTION_RECORD", 0, {}, 2)) == ["V113"]
    assert image.apply("BEGIN_TRANSACTION_RECORD", 0, {}, 3) == []
    assert codes(image.apply("BEGIN_TRANSACTION_RECORD", 0, {}, 4)) == ["V112"]
    assert image.in_transaction
    image.apply(*topic("payments", T2))
    assert image.apply("END_TRANSACTION_RECORD", 0, {}) == []
    assert T2 in image.topics


# ------------------------------------------------------------------ order independence

_names = st.text(alphabet="abcdefgh.-_", min_size=1, max_size=8)


@st.composite
def final_states(draw: Any) -> list[tuple]:
    """Independent creations (topics, configs, ACLs) whose order does not matter."""
    recs: list[tuple] = []
    for i, name in enumerate(draw(st.lists(_names, unique=True, max_size=5))):
        tid = f"dG9waWMtaWQtMDAwMDAw{i:02d}"[:22]
        recs.append(topic(name, tid))
    for rtype, rname, key, value in draw(st.lists(
            st.tuples(st.sampled_from([2, 4]), _names, _names, _names),
            unique_by=lambda t: (t[0], t[1], t[2]), max_size=8)):
        recs.append(("CONFIG_RECORD", 0, {"resourceType": rtype, "resourceName": rname,
                                          "name": key, "value": value}))
    for i, (principal, op) in enumerate(draw(st.lists(
            st.tuples(_names, st.integers(2, 14)), max_size=6))):
        recs.append(("ACCESS_CONTROL_ENTRY_RECORD", 0, {
            "id": f"YWNsLWlkLTAwMDAwMDAw{i:02d}", "resourceType": 2, "resourceName": "x",
            "patternType": 3, "principal": f"User:{principal}", "host": "*",
            "operation": op, "permissionType": 3}))
    return recs


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_digest_independent_of_creation_order(data: Any) -> None:
    recs = data.draw(final_states())
    shuffled = data.draw(st.permutations(recs))
    a, b = MetadataImage.empty(), MetadataImage.empty()
    assert a.apply_all(recs) == []
    assert b.apply_all(shuffled) == []
    assert a.digest() == b.digest()
    assert a.to_json() == b.to_json()
    assert a.section_digests() == b.section_digests()


def test_zk_migration_state_names_follow_kafka() -> None:
    # ZkMigrationState.java: MIGRATION is 1 and PRE_MIGRATION 2 (swapped in 3.5, because
    # 3.4 wrote PRE_MIGRATION as 1); ZK is 4; there is no -1.
    image = MetadataImage.empty()
    names = {}
    for state in (0, 1, 2, 3, 4):
        assert image.apply("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": state}) == []
        names[state] = image.to_json()["zkMigrationState"]
    assert names == {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION",
                     4: "ZK"}
    assert codes(image.apply("ZK_MIGRATION_STATE_RECORD", 0,
                             {"zkMigrationState": -1})) == ["V116"]
