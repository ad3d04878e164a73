"""The image as Kafka 4.0's metadata-shell node tree (kmeta.core.image_nodes) and the text
of ls, cat, tree and find (kmeta.render.nodes): Kafka's names and leaf texts on hand-built
images and the notes' worked examples, every node of every fixture and real log, globs,
the ls columns, diffs, the paths a record touches, redaction."""

from __future__ import annotations

import string
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, HEALTHY, HEALTHY_META
from hypothesis import given, settings
from hypothesis import strategies as st
from test_image import T1, T2, U, base, broker, change, partition, records, topic

from kmeta.core.image import MetadataImage
from kmeta.core.image_nodes import (
    Node,
    Provenance,
    change_dir,
    complete_path,
    diff_nodes,
    flatten,
    glob_regex,
    image_tree,
    java_double,
    java_sorted,
    path_of,
    record_paths,
    related,
    resolve,
    split_path,
    walk,
)
from kmeta.errors import KmetaError
from kmeta.ops.replay import build_image
from kmeta.render.nodes import (
    cat_lines,
    column_schema,
    entry_lines,
    find_lines,
    ls_lines,
    tree_lines,
)

DIR_B = "NLjAj98r1eFM3QLHlxYhFg"
SECRET_PASSWORD = "hunter2-very-secret"
TOKEN_ID = "token-id-that-is-secret"


def text(root: Node, path: str) -> str:
    found = resolve(root, "/", path)
    assert len(found) == 1, (path, found)
    assert not found[0][1].is_dir, path
    return found[0][1].text


def names(root: Node, path: str) -> list[str]:
    [(_, node)] = resolve(root, "/", path)
    return node.names()


def rich() -> MetadataImage:
    """An image with every section filled, secrets included."""
    image = base()
    problems = image.apply_all([
        ("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 25}),
        ("FEATURE_LEVEL_RECORD", 0, {"name": "group.version", "featureLevel": 1}),
        ("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": 2}),
        broker(3, epoch=9, rack="r1", logDirs=[DIR_B, "AAAAAAAAAAAAAAAAAAAAAQ",
                                               "_____________________w"],
               endPoints=[{"name": "SSL", "host": "k", "port": 9093, "securityProtocol": 1},
                          {"name": "PLAINTEXT", "host": "k", "port": 9092,
                           "securityProtocol": 0}],
               features=[{"name": "metadata.version", "minSupportedVersion": 7,
                          "maxSupportedVersion": 27},
                         {"name": "group.version", "minSupportedVersion": 1,
                          "maxSupportedVersion": 1},
                         {"name": "a.version", "minSupportedVersion": 0,
                          "maxSupportedVersion": 32767}]),
        ("REGISTER_CONTROLLER_RECORD", 0, {
            "controllerId": 3000, "incarnationId": "HqTjG2NDQTupNBzkPuqOtQ",
            "zkMigrationReady": False, "features": [],
            "endPoints": [{"name": "CONTROLLER", "host": "kafka", "port": 9093,
                           "securityProtocol": 0}]}),
        topic("payments", T2),
        *[partition(T2, pid) for pid in (0, 1, 2, 10)],
        ("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": "orders",
                              "name": "cleanup.policy", "value": "compact"}),
        ("CONFIG_RECORD", 0, {"resourceType": 4, "resourceName": "",
                              "name": "min.insync.replicas", "value": "2"}),
        ("CONFIG_RECORD", 0, {"resourceType": 4, "resourceName": "1",
                              "name": "ssl.keystore.password", "value": SECRET_PASSWORD}),
        ("CLIENT_QUOTA_RECORD", 0, {"entity": [{"entityType": "user", "entityName": "alice"},
                                               {"entityType": "client-id",
                                                "entityName": "a(p)p"}],
                                    "key": "producer_byte_rate", "value": 1048576.0,
                                    "remove": False}),
        ("CLIENT_QUOTA_RECORD", 0, {"entity": [{"entityType": "user", "entityName": None}],
                                    "key": "consumer_byte_rate", "value": 1.048576e7,
                                    "remove": False}),
        ("PRODUCER_IDS_RECORD", 0, {"brokerId": 1, "brokerEpoch": 10,
                                    "nextProducerId": 5000}),
        ("ACCESS_CONTROL_ENTRY_RECORD", 0, {"id": "dmFD58w7QUGmJhtU1L0vPA", "resourceType": 2,
                                            "resourceName": "orders", "patternType": 3,
                                            "principal": "User:alice", "host": "*",
                                            "operation": 3, "permissionType": 3}),
        ("USER_SCRAM_CREDENTIAL_RECORD", 0, {"name": "admin", "mechanism": 1,
                                             "salt": b"\x01\xab", "storedKey": b"\x02\xcd",
                                             "serverKey": b"\x03\xef", "iterations": 4096}),
        ("DELEGATION_TOKEN_RECORD", 0, {"owner": "User:alice", "requester": "User:alice",
                                        "renewers": ["User:bob", "User:carol"],
                                        "issueTimestamp": 1, "maxTimestamp": 3,
                                        "expirationTimestamp": 2, "tokenId": TOKEN_ID}),
    ])
    assert problems == [], problems
    return image


# ------------------------------------------------------------------ names and texts

def test_tree_names_as_kafka_names_them() -> None:
    root = image_tree(rich())
    assert names(root, "/") == ["image", "local"]
    assert names(root, "/image") == ["acls", "clientQuotas", "cluster", "configs",
                                     "delegationToken", "features", "producerIds",
                                     "provenance", "scram", "topics"]
    assert names(root, "/image/topics") == ["byId", "byName"]
    assert names(root, "/image/topics/byName/payments") == ["0", "1", "10", "2", "id", "name"]
    assert names(root, "/image/topics/byId") == [T1, T2]
    assert names(root, "/image/cluster") == ["brokers", "controllers"]
    assert names(root, "/image/configs") == ["BROKER", "BROKER:1", "TOPIC:orders"]
    assert names(root, "/image/features") == ["finalized_group.version", "metadataVersion",
                                              "zkMigrationState"]
    assert names(root, "/image/scram") == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert names(root, "/image/scram/SCRAM-SHA-512") == []
    assert names(root, "/image/clientQuotas") == ["clientId(a\\(p\\)p)_user(alice)", "user"]
    assert names(root, "/image/acls") == ["byId"]
    assert text(root, "/local/version") == __import__("kmeta").__version__


def test_leaf_texts_as_kafka_prints_them() -> None:
    root = image_tree(rich(), provenance=Provenance(4566, 3, 1714533165123))
    assert text(root, "/image/cluster/brokers/3") == (
        "BrokerRegistration(id=3, epoch=9, incarnationId=AAAAAAAAAAAAAAAAAAAAAA, listeners=["
        "Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='k', port=9092), "
        "Endpoint(listenerName='SSL', securityProtocol=SSL, host='k', port=9093)], "
        "supportedFeatures={a.version: 0+, group.version: 1, metadata.version: 7-27}, "
        "rack=Optional[r1], fenced=true, inControlledShutdown=false, isMigratingZkBroker=false, "
        # Uuid.compareTo: signed longs, so 0xffff... (-1) sorts first
        f"directories=[_____________________w, AAAAAAAAAAAAAAAAAAAAAQ, {DIR_B}])")
    assert text(root, "/image/cluster/controllers/3000") == (
        "ControllerRegistration(id=3000, incarnationId=HqTjG2NDQTupNBzkPuqOtQ, "
        "zkMigrationReady=false, listeners=[Endpoint(listenerName='CONTROLLER', "
        "securityProtocol=PLAINTEXT, host='kafka', port=9093)], supportedFeatures={})")
    assert text(root, "/image/topics/byName/orders/0") == (
        "PartitionRegistration(replicas=[1, 2], directories=[AAAAAAAAAAAAAAAAAAAAAA, "
        "AAAAAAAAAAAAAAAAAAAAAA], isr=[1, 2], removingReplicas=[], addingReplicas=[], elr=[], "
        "lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, "
        "partitionEpoch=0)")
    assert text(root, f"/image/topics/byId/{T1}/0") == text(root, "/image/topics/byName/orders/0")
    assert text(root, "/image/topics/byName/orders/name") == "orders"
    assert text(root, "/image/topics/byName/orders/id") == T1
    assert text(root, "/image/features/metadataVersion") == "Optional[4.0-IV3]"
    assert text(root, "/image/features/finalized_group.version") == "1"
    assert text(root, "/image/features/zkMigrationState") == "PRE_MIGRATION"
    assert text(root, "/image/configs/TOPIC:orders/cleanup.policy") == "compact"
    assert text(root, "/image/configs/BROKER/min.insync.replicas") == "2"
    assert text(root, "/image/clientQuotas/user/consumer_byte_rate") == "1.048576E7"
    # the name holds backslashes, which a path escapes (glob_escape)
    assert text(root, "/image/clientQuotas/clientId(a\\\\(p\\\\)p)_user(alice)/"
                "producer_byte_rate") == "1048576.0"
    assert text(root, "/image/producerIds/nextProducerId") == "5000"
    assert text(root, "/image/acls/byId/dmFD58w7QUGmJhtU1L0vPA") == (
        "StandardAcl(resourceType=TOPIC, resourceName=orders, patternType=LITERAL, "
        "principal=User:alice, host=*, operation=READ, permissionType=ALLOW)")
    assert text(root, "/image/provenance") == (
        "offset 4566, epoch 3, time 2024-05-01T03:12:45.123Z[UTC]")


def test_empty_image_texts() -> None:
    root = image_tree(MetadataImage.empty())
    assert text(root, "/image/features/metadataVersion") == "Optional.empty"
    assert text(root, "/image/features/zkMigrationState") == "NONE"
    assert text(root, "/image/producerIds/nextProducerId") == "-1"
    assert text(root, "/image/provenance") == (
        "offset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]")
    assert names(root, "/image/topics/byName") == []
    # kraft.version, hidden by Kafka 4.0, is listed when the log set it
    image = MetadataImage.empty()
    image.apply("FEATURE_LEVEL_RECORD", 0, {"name": "kraft.version", "featureLevel": 1})
    assert text(image_tree(image), "/image/features/finalized_kraft.version") == "1"


def test_provenance_fraction_as_java_prints_it() -> None:
    def prov(ms: int) -> str:
        return text(image_tree(MetadataImage.empty(), provenance=Provenance(1, 2, ms)),
                    "/image/provenance")
    assert prov(1714533165000).endswith("time 2024-05-01T03:12:45Z[UTC]")
    assert prov(1714533165120).endswith("time 2024-05-01T03:12:45.12Z[UTC]")


def test_secrets_redacted_unless_asked() -> None:
    image = rich()
    root = image_tree(image)
    assert text(root, "/image/configs/BROKER:1/ssl.keystore.password") == "[redacted]"
    assert text(root, "/image/scram/SCRAM-SHA-256/admin") == (
        "ScramCredentialData(salt=[redacted], storedKey=[redacted], serverKey=[redacted], "
        "iterations=4096)")
    [token] = names(root, "/image/delegationToken")
    assert token.startswith("xxh3:")
    assert text(root, f"/image/delegationToken/{token}") == (
        "DelegationTokenDatatokenId=[redacted](owner=User:alice(tokenRequester=User:alice("
        "renewers=User:bob User:carol, issueTimestamp=1, maxTimestamp=3), expiryTimestamp=2")
    assert_no_secret(image, root)

    clear = image_tree(image, show_secrets=True)
    assert text(clear, "/image/configs/BROKER:1/ssl.keystore.password") == SECRET_PASSWORD
    assert text(clear, "/image/scram/SCRAM-SHA-256/admin") == (
        "ScramCredentialData(salt=01ab, storedKey=02cd, serverKey=03ef, iterations=4096)")
    assert names(clear, "/image/delegationToken") == [TOKEN_ID]
    assert text(clear, f"/image/delegationToken/{TOKEN_ID}").startswith(
        f"DelegationTokenDatatokenId={TOKEN_ID}(owner=")


def _secret_strings(image: MetadataImage) -> list[str]:
    out = []
    for v in image.secrets.values():
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, tuple):
            out += [bytes(x).hex() for x in v if len(bytes(x)) >= 2]
    return [s for s in out if len(s) >= 4]


def assert_no_secret(image: MetadataImage, root: Node) -> None:
    secrets = _secret_strings(image)
    for path, node in walk(root, "/"):
        shown = path + "\n" + (node.text if not node.is_dir else "")
        for s in secrets:
            assert s not in shown, (path, s)


def test_java_double() -> None:
    cases = {1048576.0: "1048576.0", 1.048576e7: "1.048576E7", 1e-4: "1.0E-4",
             0.001: "0.001", 100.0: "100.0", 0.5: "0.5", 1e7: "1.0E7", 9999999.0: "9999999.0",
             -2.5: "-2.5", 0.0: "0.0", 1.5e300: "1.5E300", 123456.789: "123456.789",
             0.0123: "0.0123", float("inf"): "Infinity", float("nan"): "NaN"}
    for v, want in cases.items():
        assert java_double(v) == want, v


def test_java_sort_is_utf16_order() -> None:
    assert java_sorted(["name", "10", "2", "id", "1"]) == ["1", "10", "2", "id", "name"]
    # U+FF5E is above the surrogates a U+1F600 is written with in UTF-16
    assert java_sorted(["\uff5e", "\U0001f600"]) == ["\U0001f600", "\uff5e"]


# ------------------------------------------------------------------ the notes' examples

def test_kraft41_broker_and_partition_as_kafka_40_prints_them(real_data: Path) -> None:
    root = image_tree(build_image(real_data / "kraft41-offsets").image)
    assert text(root, "/image/cluster/brokers/1") == (
        "BrokerRegistration(id=1, epoch=9, incarnationId=yLHWHyvyRwWU8B9Aj24ytQ, listeners=["
        "Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='kafka', "
        "port=9092)], supportedFeatures={eligible.leader.replicas.version: 0-1, "
        "group.version: 0-1, kraft.version: 0-1, metadata.version: 7-27, share.version: 0-1, "
        "transaction.version: 0-2}, rack=Optional.empty, fenced=true, "
        "inControlledShutdown=true, isMigratingZkBroker=false, "
        "directories=[NLjAj98r1eFM3QLHlxYhFg])")
    assert text(root, "/image/topics/byName/alerts/0") == (
        "PartitionRegistration(replicas=[1], directories=[NLjAj98r1eFM3QLHlxYhFg], isr=[], "
        "removingReplicas=[], addingReplicas=[], elr=[1], lastKnownElr=[1], leader=-1, "
        "leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=1)")
    assert text(root, "/image/configs/TOPIC:__consumer_offsets/cleanup.policy") == "compact"
    # the cluster-wide BROKER default, which kmeta's old paths could not reach
    assert names(root, "/image/configs/BROKER") == ["min.insync.replicas"]
    assert text(root, "/image/features/metadataVersion") == "Optional[4.1-IV1]"


# ------------------------------------------------------------------ every image we have

def _images(real_data: Path) -> list[tuple[str, MetadataImage]]:
    dirs = sorted({p.parent for p in FIXTURES.rglob("__cluster_metadata-0")})
    dirs += sorted(p for p in real_data.iterdir() if p.is_dir())
    dirs += sorted(p.parent for p in (real_data / "quorum3-boaz").rglob("__cluster_metadata-0"))
    dirs += sorted(p.parent for p in (real_data / "kraft32-three").rglob("__cluster_metadata-0"))
    out = []
    for d in dirs:
        try:
            out.append((str(d), build_image(d).image))
        except KmetaError:
            continue  # no image to build (no metadata log, a hole in it): said elsewhere
    for snap in sorted(real_data.rglob("*.checkpoint")):
        if snap.name != "bootstrap.checkpoint":
            out.append((str(snap), build_image(snap).image))
    return out


@pytest.fixture(scope="module")
def every_image(real_data: Path) -> list[tuple[str, MetadataImage]]:
    images = _images(real_data)
    assert len(images) > 40
    return images


def test_every_node_of_every_image_resolves(every_image: list) -> None:
    for where, image in every_image:
        for show in (False, True):
            root = image_tree(image, show_secrets=show)
            leaves = 0
            for path, node in walk(root, "/"):
                found = resolve(root, "/", path_of(path.split("/")[1:] if path != "/" else []))
                assert [p for p, _ in found] == [path], (where, path)
                assert found[0][1].is_dir == node.is_dir
                if node.is_dir:
                    assert node.names() == java_sorted(node.names())
                else:
                    assert isinstance(node.text, str) and "\n" not in node.text
                    leaves += 1
                node.json  # noqa: B018  (every node has a JSON value)
            assert leaves >= 4, where
            if not show:
                assert_no_secret(image, root)
            cat = list(cat_lines(root, "/image/topics", ["byName/*/*"]))
            assert not any(line.error for line in cat) or not image.topics, where


def _removes(type_name: str, data: dict) -> bool:
    return (type_name.startswith(("REMOVE", "UNREGISTER"))
            or (type_name == "CLIENT_QUOTA_RECORD" and data["remove"])
            or (type_name == "CONFIG_RECORD" and data["value"] is None)
            or (type_name == "FEATURE_LEVEL_RECORD" and data["featureLevel"] == 0))


def test_record_paths_of_every_record_type(real_data: Path) -> None:
    held: set[str] = set()
    seen: set[str] = set()
    logs = sorted(FIXTURES.rglob("__cluster_metadata-0")) + \
        sorted(real_data.rglob("__cluster_metadata-0"))
    for log in logs:
        segs = sorted(log.glob("*.log"))
        try:
            recs = list(records(segs))
        except AssertionError:
            continue  # a damaged fixture: its records do not all read
        image = MetadataImage.empty()
        for type_name, version, data, offset in recs:
            held.add(type_name)
            before_root = image_tree(image.copy()) if _removes(type_name, data) else None
            paths = record_paths(type_name, data, image)
            problems = image.apply(type_name, version, data, offset)
            if problems or image.in_transaction:
                continue  # refused, or waiting for its transaction's end
            after = image_tree(image)
            for p in paths:
                ok = resolve(after, "/", path_of(p.split("/")[1:])) or (
                    before_root is not None
                    and resolve(before_root, "/", path_of(p.split("/")[1:])))
                assert ok, (log, offset, type_name, p)
            if paths:
                seen.add(type_name)
    changes_nothing = {"NO_OP_RECORD", "BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD",
                       "ABORT_TRANSACTION_RECORD", "UNKNOWN"}
    assert len(held) > 20
    assert seen == held - changes_nothing, held - changes_nothing - seen


def test_record_paths_by_hand() -> None:
    image = rich()
    assert record_paths(*change(T1, isr=[1])[::2], image) == [
        f"/image/topics/byId/{T1}/0", "/image/topics/byName/orders/0"]
    assert record_paths("CONFIG_RECORD", {"resourceType": 4, "resourceName": "",
                                          "name": "x", "value": "1"}, image) == [
        "/image/configs/BROKER/x"]
    assert record_paths("REGISTER_BROKER_RECORD", {"brokerId": 3}, image) == [
        "/image/cluster/brokers/3"]
    assert record_paths("NO_OP_RECORD", {}, image) == []
    assert record_paths("PARTITION_RECORD", {"topicId": None}, image) == [
        "/image/topics/byId/None/-1"]
    assert record_paths("CONFIG_RECORD", {"resourceType": 2}, image) == []
    [token] = names(image_tree(image), "/image/delegationToken")
    assert record_paths("REMOVE_DELEGATION_TOKEN_RECORD", {"tokenId": TOKEN_ID}, image) == [
        f"/image/delegationToken/{token}"]


# ------------------------------------------------------------------ paths and globs

def test_paths_and_globs() -> None:
    root = image_tree(rich())

    def paths(cwd: str, path: str) -> list[str]:
        return [p for p, _ in resolve(root, cwd, path)]

    assert paths("/", "/") == ["/"]
    assert paths("/", "/..") == ["/"]
    assert paths("/image", "topics//byName/") == ["/image/topics/byName"]
    assert paths("/image/topics", "../cluster/./brokers/1") == ["/image/cluster/brokers/1"]
    assert paths("/", "/nothing/../image") == ["/image"]  # lexical, before any lookup
    assert paths("/", "/image/topics/byName/*/1?") == ["/image/topics/byName/payments/10"]
    assert paths("/", "/image/topics/byName/{orders,payments}/0") == [
        "/image/topics/byName/orders/0", "/image/topics/byName/payments/0"]
    assert paths("/", "/image/cluster/brokers/?") == [
        "/image/cluster/brokers/1", "/image/cluster/brokers/2", "/image/cluster/brokers/3"]
    assert paths("/", "/image/clientQuotas/clientId(a\\\\*") == [
        "/image/clientQuotas/clientId(a\\(p\\)p)_user(alice)"]
    assert paths("/", "/image/configs/BROKER*") == ["/image/configs/BROKER",
                                                    "/image/configs/BROKER:1"]
    assert paths("/", "/image/cluster/brokers/[12]") == []  # no [...] ranges
    assert paths("/", "/image/topics/byName/orders/0/x") == []  # below a leaf
    assert paths("/", "/image/cluster/brokers/01") == []
    assert paths("/", "/image/{a,{b}}") == []  # nested braces: a literal
    assert glob_regex("plain") is None and glob_regex("{a") is None
    assert split_path("/a/b", "../../../c") == ["c"]
    # the working directory is a real path: its names are not globs
    quota = "/image/clientQuotas/clientId(a\\(p\\)p)_user(alice)"
    assert paths(quota, ".") == [quota]
    assert paths(quota, "producer_byte_rate") == [quota + "/producer_byte_rate"]
    assert paths(quota, "../user") == ["/image/clientQuotas/user"]
    assert complete_path(root, "/", "/image/c") == [
        ("/image/clientQuotas/", False), ("/image/cluster/", False), ("/image/configs/", False)]
    assert complete_path(root, "/image", "producerIds/n") == [
        ("producerIds/nextProducerId", True)]
    assert complete_path(root, "/image", "") == [(n + "/", False) if n != "provenance" else
                                                 (n, True) for n in names(root, "/image")]
    # a name with glob characters completes escaped, and the completion resolves to it
    [(done, complete)] = complete_path(root, "/image", "clientQuotas/cl")
    assert not complete
    assert [p for p, _ in resolve(root, "/image", done)] == [
        "/image/clientQuotas/clientId(a\\(p\\)p)_user(alice)"]
    assert complete_path(root, "/", "/nope/x") == []
    assert complete_path(root, "/", "/image/provenance/") == []
    assert related("/image/topics", "/image/topics/byName/a/0")
    assert related("/image/topics/byName/a/0", "/image/topics")
    assert related("/", "/image") and related("/image", "/image")
    assert not related("/image/topics/byName/a", "/image/topics/byName/ab")
    assert change_dir(root, "/", "image/top*") == ("/image/topics", [])
    assert change_dir(root, "/image", "producerIds/next*") == (
        "/image", ["cd: producerIds/next*: not a directory."])
    assert change_dir(root, "/image", "nope") == ("/image", ["cd: nope: no such directory."])
    assert change_dir(root, "/image", None) == ("/", [])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.printable + "*?{}\\,/.é\U0001f600", max_size=40),
       st.sampled_from(["/", "/image", "/image/topics/byName"]))
def test_resolve_never_raises(path: str, cwd: str) -> None:
    found = resolve(_FUZZ_ROOT, cwd, path)
    for real, _ in found:
        assert real.startswith("/") and "//" not in real
        back = path_of(real.split("/")[1:] if real != "/" else [])
        assert [p for p, _ in resolve(_FUZZ_ROOT, "/", back)] == [real]


_FUZZ_ROOT = image_tree(rich())


# ------------------------------------------------------------------ command text

def test_ls_column_layout() -> None:
    assert column_schema(["abc", "def", "ghi"], None) == ([0], 3)
    assert column_schema(["abc", "def"], 0) == ([0], 2)
    assert column_schema(["a", "abcdef", "beta"], 80) == ([3, 8, 6], 1)
    five = ["alphabet", "beta", "gamma", "theta", "zeta"]
    assert column_schema(five, 18) == ([10, 7], 3)
    assert entry_lines(five, 18) == ["alphabet  theta", "beta      zeta", "gamma     "]
    root = image_tree(rich())
    lines = [line.text for line in ls_lines(root, "/", ["/image"], width=80)]
    # each column as wide as its longest name + 2; the last one not padded
    assert lines == ["acls          cluster  delegationToken  producerIds  scram",
                     "clientQuotas  configs  features         provenance   topics"]
    assert all(len(line) <= 80 for line in lines)


def test_ls_headers_and_errors() -> None:
    root = image_tree(rich())

    def ls(*targets: str, cwd: str = "/") -> list[tuple[str, bool]]:
        return [(line.text, line.error) for line in ls_lines(root, cwd, list(targets))]

    assert ls() == [("image", False), ("local", False)]
    assert ls("/image/topics/byName/orders/name", "/image/cluster", "/local") == [
        ("name", False), ("", False), ("cluster:", False), ("brokers", False),
        ("controllers", False), ("", False), ("local:", False), ("version", False)]
    # an empty directory prints nothing but still counts for the blank line
    assert ls("/image/scram/SCRAM-SHA-512", "/local") == [
        ("", False), ("local:", False), ("version", False)]
    assert ls("/nope") == [("ls: /nope: no such file or directory.", True)]


def test_cat_tree_find() -> None:
    root = image_tree(rich())
    cat = list(cat_lines(root, "/image", ["features/m*", "topics", "x"]))
    assert [(line.text, line.error) for line in cat] == [
        ("Optional[4.0-IV3]", False), ("cat: topics: Is a directory", True),
        ("cat: x: No such file or directory.", True)]
    tree = [line.text for line in tree_lines(root, "/", ["/image/topics/byName/orders"])]
    assert tree == ["0:", "  PartitionRegistration(replicas=[1, 2], directories=["
                    "AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], isr=[1, 2], "
                    "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], "
                    "leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, "
                    "partitionEpoch=0)", "id:", f"  {T1}", "name:", "  orders"]
    assert [line.text for line in tree_lines(root, "/", ["/local"])] == [
        "version:", "  " + __import__("kmeta").__version__]
    assert list(tree_lines(root, "/", ["/x"]))[0].text == "tree: /x: No such file or directory."
    find = [line.text for line in find_lines(root, "/image/cluster", ["brokers/*"])]
    assert find == ["/image/cluster/brokers/1", "/image/cluster/brokers/2",
                    "/image/cluster/brokers/3"]
    everything = [line.text for line in find_lines(root, "/", [])]
    assert everything[:3] == ["/", "/image", "/image/acls"]
    assert "/image/features/zkMigrationState" in everything
    assert list(find_lines(root, "/", ["/x"]))[0].text == \
        "find: /x: no such file or directory."


# ------------------------------------------------------------------ diff

def _brute(a: Node, b: Node) -> list[tuple[str, str, Any, Any]]:
    fa, fb = flatten(a), flatten(b)
    out = []
    for p in sorted(set(fa) | set(fb)):
        if p not in fa:
            out.append((p, "added", None, fb[p]))
        elif p not in fb:
            out.append((p, "removed", fa[p], None))
        elif fa[p] != fb[p]:
            out.append((p, "changed", fa[p], fb[p]))
    return out


def _order(changes: list) -> list:
    return sorted(changes, key=lambda c: [s.encode("utf-16-be") for s in c[0].split("/")])


def test_diff_equals_brute_force_on_the_healthy_log() -> None:
    recs = list(records(sorted(HEALTHY_META.glob("*.log"))))
    image = MetadataImage.empty()
    checked = 0
    for i, rec in enumerate(recs):
        before = image.copy() if i % 97 == 0 else None
        image.apply(*rec)
        if before is None:
            continue
        # a few records later
        after = image.copy()
        for later in recs[i + 1:i + 6]:
            after.apply(*later)
        a, b = image_tree(before), image_tree(after)
        assert _order(diff_nodes(a, b)) == _order(_brute(a, b))
        checked += 1
    assert checked > 20


def test_diff_by_hand() -> None:
    a = rich()
    b = rich()
    b.apply(*change(T1, leader=2))
    b.apply(*topic("fresh", "ZnJlc2gtdG9waWMtaWQtMQ"))
    b.apply("UNREGISTER_CONTROLLER_RECORD", 0, {"controllerId": 3000})
    d = diff_nodes(image_tree(a), image_tree(b))
    kinds = {(p, k) for p, k, _, _ in d}
    assert ("/image/topics/byName/orders/0", "changed") in kinds
    assert (f"/image/topics/byId/{T1}/0", "changed") in kinds
    assert ("/image/topics/byName/fresh/name", "added") in kinds
    assert ("/image/cluster/controllers/3000", "removed") in kinds
    assert diff_nodes(image_tree(a), image_tree(rich())) == []


def _big(n_topics: int, per_topic: int) -> MetadataImage:
    image = MetadataImage.empty()
    for t in range(n_topics):
        tid = f"t{t:021d}"
        image.topics[tid] = {"name": f"topic-{t}", "topicId": tid, "partitions": {
            pid: {"replicas": [1, 2, 3], "isr": [1, 2, 3], "removingReplicas": [],
                  "addingReplicas": [], "leader": 1, "leaderRecoveryState": 0,
                  "leaderEpoch": 0, "partitionEpoch": 0, "directories": [U, U, U],
                  "eligibleLeaderReplicas": [], "lastKnownElr": []}
            for pid in range(per_topic)}}
    return image


def test_big_images_list_and_diff_fast() -> None:
    a, b = _big(4000, 25), _big(4000, 25)  # 100,000 partitions
    b.brokers[1] = {"id": 1, "epoch": 1, "incarnationId": U, "endPoints": [], "features": {},
                    "rack": None, "fenced": False, "inControlledShutdown": False,
                    "isMigratingZkBroker": False, "logDirs": [], "cordonedLogDirs": []}
    for t in (5, 77, 3999):
        b.topics[f"t{t:021d}"]["partitions"][3] = {
            **b.topics[f"t{t:021d}"]["partitions"][3], "leader": 2, "leaderEpoch": 1}
    start = time.perf_counter()
    root = image_tree(a)
    listed = next(iter(resolve(root, "/", "/image/topics/byName")))[1].names()
    assert len(listed) == 4000
    list(ls_lines(root, "/image/topics", ["byName"]))
    assert time.perf_counter() - start < 1.0
    start = time.perf_counter()
    d = diff_nodes(image_tree(a), image_tree(b))
    elapsed = time.perf_counter() - start
    assert len(d) == 7  # a broker added, three partitions changed under byId and byName
    assert elapsed < 1.0, elapsed


def test_healthy_dir_tree_json_is_kmeta_json() -> None:
    image = build_image(HEALTHY).image
    root = image_tree(image)
    [(_, brokers)] = resolve(root, "/", "/image/cluster/brokers")
    assert brokers.json == image.to_json()["brokers"]
    [(_, part)] = resolve(root, "/", "/image/topics/byName/audit/0")
    assert part.json == image.to_json()["topics"]["audit"]["partitions"]["0"]


# ------------------------------------------------------------------ old kmeta paths

def _json_paths(j: Any, path: str = "", depth: int = 4) -> list[str]:
    out = [path or "/"]
    if isinstance(j, dict) and depth:
        for k, v in j.items():
            seg = str(k).replace("~", "~0").replace("/", "~1")
            out += _json_paths(v, f"{path}/{seg}", depth - 1)
    return out


def test_every_old_path_maps_onto_a_node(every_image: list) -> None:
    from kmeta.core.image_nodes import is_legacy, kafka_path
    from kmeta.ops.replay import public_json

    for where, image in every_image:
        root = image_tree(image)
        j = public_json(image)
        for old in _json_paths(j):
            if old == "/" or old.startswith("/transaction"):
                assert kafka_path(old) is None
                continue
            assert is_legacy(old)
            new = kafka_path(old, image)
            assert new is not None and resolve(root, "/", new), (where, old, new)
        # the partition shortcut and the default BROKER resource
        for name, t in j["topics"].items():
            for pid in t["partitions"]:
                assert kafka_path(f"/topics/{name}/{pid}") == \
                    kafka_path(f"/topics/{name}/partitions/{pid}")
    assert kafka_path("/configs/BROKER/") == "/image/configs"
    assert kafka_path("/scram/alice/SCRAM-SHA-256") == "/image/scram/SCRAM-SHA-256/alice"
    assert kafka_path('/clientQuotas/{"user":null}/x') == "/image/clientQuotas/user/x"
    assert kafka_path("/clientQuotas/not json") is None
    assert kafka_path("/image/topics") is None and not is_legacy("topics/x")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.printable + "~é", max_size=40))
def test_kafka_path_never_raises(path: str) -> None:
    from kmeta.core.image_nodes import kafka_path

    new = kafka_path("/" + path)
    assert new is None or new.startswith("/image/")


_HEALTHY_RESULT = build_image(HEALTHY)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.printable + "~é", max_size=40),
       st.sampled_from(["ls", "cat"]))
def test_image_node_argument_is_a_value_or_a_usage_error(node: str, action: str) -> None:
    """Whatever NODE ``kmeta image`` is given: the nodes and their text, or one clear
    usage error."""
    from kmeta.errors import UsageError
    from kmeta.ops.replay import look_up
    from kmeta.render.image import node_lines

    for path in (node, "/" + node, "/topics/" + node, "/configs/" + node):
        try:
            found = look_up(_HEALTHY_RESULT, HEALTHY, path, action)
        except UsageError:
            continue
        for json_out in (False, True):
            assert all(isinstance(line, str) for line in node_lines(found, action, json_out))
