"""What the records table holds (kmeta.ops.export.rows.Scope) and whose node a row names, without
Spark: the data source and ``kmeta export`` plan their work with the same functions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import clirun
import pytest
from conftest import HEALTHY

from kmeta.errors import UsageError
from kmeta.ops.export import Scope, Unit, file_chunks, plan_units, unit_rows

ORDERS = "orders-0"  # the healthy fixture's data topic: 11 records, 2 of them control


def _records(scope: Scope | None = None, paths: list[str] | None = None) -> list[tuple]:
    units, _ = plan_units(paths or [str(HEALTHY)], "records", scope)
    return [row for u in units for row in unit_rows(u)]


def _of(rows: list[tuple], partition: str) -> list[tuple]:
    return [r for r in rows if r[3] == partition]


def test_records_hold_the_metadata_log_only_by_default() -> None:
    rows = _records()
    assert rows and not _of(rows, ORDERS)
    assert {r[3] for r in rows} == {"__cluster_metadata-0", None}  # None: bootstrap.checkpoint
    assert "RAW" not in {r[10] for r in rows}


def test_data_topics_without_their_keys_and_values() -> None:
    rows = _of(_records(Scope(data_topics=True)), ORDERS)
    assert len(rows) == 11
    data = [r for r in rows if not r[9]]
    assert len(data) == 9 and all(r[10] == "RAW" and r[19] is None for r in data)
    # the transaction markers are Kafka's, not the customer's: they keep their payload
    markers = [json.loads(r[19]) for r in rows if r[9]]
    assert len(markers) == 2 and all("coordinatorEpoch" in m for m in markers)


def test_payloads_keep_keys_and_values() -> None:
    rows = _of(_records(Scope(data_topics=True, payloads=True)), ORDERS)
    payloads = [json.loads(r[19]) for r in rows if not r[9]]
    assert len(payloads) == 9 and payloads[0]["key"] == "b3JkZXItMDAwMA=="
    # metadata records are the same whatever the scope
    assert _records() == [r for r in _records(Scope(data_topics=True, payloads=True))
                          if r[3] != ORDERS]


def test_export_reads_every_file_once_in_the_same_scope() -> None:
    """export plans the batches table (every file) and takes the records of the units
    whose scope wants them: the same rows as the records table of that scope."""
    for scope in (Scope(), Scope(data_topics=True), Scope(data_topics=True, payloads=True)):
        units, _ = plan_units([str(HEALTHY)], "batches", scope)
        assert any(u.partition == ORDERS for u in units)  # batch headers of every topic
        got = [row for u in units for table, chunk in file_chunks(u, 100)
               if table == "records" for row in chunk.rows()]
        assert sorted(got, key=repr) == sorted(_records(scope), key=repr), scope


def test_payloads_alone_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="data topics"):
        Scope(payloads=True)
    done = clirun.run("export", HEALTHY, "--to", "/nonexistent/out", "--payloads", timeout=60)
    assert done.returncode == 2 and "--data-topics" in done.stderr
    assert "Traceback" not in done.stderr


def test_scope_from_data_source_options() -> None:
    assert Scope.from_options({}) == Scope()
    assert Scope.from_options({"data_topics": "TRUE", "payloads": "true"}) == \
        Scope(True, True)
    assert Scope.from_options(Scope(True, False).to_options()) == Scope(True, False)
    with pytest.raises(UsageError, match="data_topics: true or false"):
        Scope.from_options({"data_topics": "yes"})


def _copy(tmp_path: Path, meta: str | None) -> Path:
    """The healthy fixture with another meta.properties (or none)."""
    out = tmp_path / "node"
    shutil.copytree(HEALTHY, out)
    if meta is None:
        (out / "meta.properties").unlink()
    else:
        (out / "meta.properties").write_text(meta)
    return out


def test_an_empty_cluster_id_is_null_in_every_table(tmp_path: Path) -> None:
    node = _copy(tmp_path, "version=1\ncluster.id=\nnode.id=4\n")
    for table in ("batches", "records", "findings", "epochs", "timeline", "snapshots",
                  "image"):
        units, _ = plan_units([str(node)], table)
        assert units and {(u.cluster_id, u.node_id) for u in units} == {(None, 4)}, table


def test_a_file_given_alone_names_its_node_and_partition() -> None:
    """A segment given by itself is still node 4's, in __cluster_metadata-0, and read as
    metadata (not as a data topic's raw records)."""
    seg = HEALTHY / "__cluster_metadata-0" / "00000000000000000000.log"
    (alone,), _ = plan_units([str(seg)], "records")
    (whole,) = [u for u in plan_units([str(HEALTHY)], "records")[0] if u.path == str(seg)]
    assert alone == Unit("records", str(seg), str(seg), whole.cluster_id, 4,
                         "__cluster_metadata-0", metadata=True)
    assert [r[4:] for r in unit_rows(alone)] == [r[4:] for r in unit_rows(whole)]


def test_empty_files_are_no_work(tmp_path: Path) -> None:
    """An empty segment has no rows: no unit (a Spark task each cost minutes over the
    hundreds of empty segments of a real fleet's internal topics)."""
    node = _copy(tmp_path, None)
    empty = node / ORDERS / "00000000000000000099.log"
    empty.write_bytes(b"")
    units, _ = plan_units([str(node)], "batches")
    assert units and str(empty) not in {u.path for u in units}


def test_export_tasks_share_the_files_out_by_size(monkeypatch) -> None:
    """A task per core, in full waves of tasks under TASK_BYTES each, the files shared
    out by size."""
    from kmeta.ops.export import chunks, task_groups

    units, _ = plan_units([str(HEALTHY)], "batches")
    assert len(units) > 4
    groups = task_groups(units, 2)
    assert len(groups) == 2 and sorted(u.path for g in groups for u in g) == \
        sorted(u.path for u in units)
    sizes = [sum(Path(u.path).stat().st_size for u in g) for g in groups]
    biggest = max(Path(u.path).stat().st_size for u in units)
    assert max(sizes) - min(sizes) <= biggest  # greedy by size: no group far behind
    assert len(task_groups(units[:3], 4)) == 3  # never more tasks than files
    assert task_groups([], 2) == []
    total = sum(Path(u.path).stat().st_size for u in units)
    # more than a wave of TASK_BYTES: two full waves of two
    monkeypatch.setattr(chunks, "TASK_BYTES", -(-total // 3))
    assert len(task_groups(units, 2)) == 4
    monkeypatch.setattr(chunks, "TASK_BYTES", 1)  # tiny tasks: one per file
    assert len(task_groups(units, 2)) == len(units)


def test_internal_topics_are_decoded_in_the_records_table() -> None:
    """With data topics, the internal topics' records are Kafka's own: decoded (type,
    version, JSON) like metadata records, the partition their key names in the entity
    columns, whatever ``payloads`` says."""
    consumers = str(Path(__file__).resolve().parents[1] / "fixtures" / "data" / "consumers"
                    / "node1")
    assert not _of(_records(paths=[consumers]), "__consumer_offsets-0")  # default scope
    rows = _of(_records(Scope(data_topics=True), [consumers]), "__consumer_offsets-0")
    types = {r[10] for r in rows if not r[9]}
    assert {"OFFSET_COMMIT", "GROUP_METADATA", "CONSUMER_GROUP_MEMBER_METADATA",
            "SHARE_GROUP_METADATA"} <= types and "RAW" not in types
    commit = next(r for r in rows if r[10] == "OFFSET_COMMIT" and r[19])
    assert json.loads(commit[19])["key"]["group"] == "billing"
    assert (commit[13], commit[14]) == ("orders", 0)  # topic_name, partition
    txn = _of(_records(Scope(data_topics=True), [consumers]), "__transaction_state-0")
    assert {r[10] for r in txn} == {"TRANSACTION_LOG"}
