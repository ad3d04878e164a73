"""The ``kmeta`` Spark data source and ``kmeta export`` on a real local SparkSession."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import HEALTHY, REPO


def _dump_counts(paths: list[str]) -> Counter:
    """Batches and records as ``kmeta dump --json --records`` counts them, and
    ``metadata_record``: the records of files it decodes as metadata."""
    out = subprocess.run([sys.executable, "-m", "kmeta", "dump", "--json", "--records",
                          *paths], capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1), out.stderr
    counts: Counter = Counter()
    decoders: dict[str, str] = {}
    for line in out.stdout.splitlines():
        obj = json.loads(line)
        counts[obj["kind"]] += 1
        if obj["kind"] == "file":
            decoders[obj["file"]] = obj.get("decoder")
        elif obj["kind"] == "record" and decoders.get(obj["file"]) == "metadata":
            counts["metadata_record"] += 1
    return counts


def test_counts_equal_kmeta_dump(spark, real_data: Path) -> None:
    paths = [str(HEALTHY), str(real_data / "ldi-poc"), str(real_data / "quorum3-boaz"),
             str(real_data / "data-store")]
    want = _dump_counts(paths)
    read = spark.read.format("kmeta")
    batches = read.option("table", "batches").load(paths)
    records = read.option("table", "records").load(paths)
    assert batches.count() == want["batch"]
    # the metadata log's records by default, every topic's with data_topics
    assert records.count() == want["metadata_record"] < want["record"]
    assert read.option("data_topics", "true").load(paths).count() == want["record"]
    # files shared out over a task per core, not a task per file or directory
    import os

    from kmeta.ops.export import plan_units, task_groups

    for table, df in (("batches", batches), ("epochs", read.option("table", "epochs")
                                              .load(paths))):
        units, _ = plan_units(paths, table)
        tasks = df.rdd.getNumPartitions()
        assert tasks == len(task_groups(units, os.cpu_count() or 1)), table
        assert min(os.cpu_count() or 1, len(units)) <= tasks < len(units), \
            (table, tasks, len(units))


def test_tables_have_their_documented_schema(spark) -> None:
    from kmeta.ops.export import COMMON, TABLES

    for table, columns in TABLES.items():
        df = spark.read.format("kmeta").option("table", table).load(str(HEALTHY))
        assert df.columns == [c.name for c in COMMON + columns]
        # the healthy fixture verifies clean: rows in every table but findings, where the
        # one row says its image gives node 4 replicas this metadata-only copy never held
        if table == "findings":
            assert [r.code for r in df.select("code").collect()] == ["V199"]
        else:
            assert df.count() > 0, table


def test_rows_carry_identity_and_entities(spark) -> None:
    df = spark.read.format("kmeta").option("table", "records").load(str(HEALTHY))
    topics = df.where("type = 'TOPIC_RECORD'").select("topic_id", "topic_name",
                                                       "node_id", "cluster_id").collect()
    assert topics and all(r.topic_id and r.topic_name and r.node_id == 4 and r.cluster_id
                          for r in topics)
    configs = df.where("type = 'CONFIG_RECORD'").select("config_name", "data").collect()
    assert configs and all(json.loads(r.data)["name"] == r.config_name for r in configs)
    # secrets stay redacted in the data JSON
    scram = df.where("type = 'USER_SCRAM_CREDENTIAL_RECORD'").select("data").collect()
    assert scram and all("[redacted]" in r.data for r in scram)


def test_bad_input_is_findings_not_a_failed_job(spark, tmp_path: Path) -> None:
    torn = str(REPO / "fixtures" / "data" / "corrupt" / "torn-tail")
    missing = str(tmp_path / "gone")
    findings = spark.read.format("kmeta").option("table", "findings").load([torn, missing])
    codes = {r.code for r in findings.select("code").collect()}
    assert "S001" in codes and "S008" in codes
    batches = spark.read.format("kmeta").option("table", "batches").load([torn, missing])
    assert batches.count() > 0  # the intact batches still come through


def test_inputs_are_shared_out_over_tasks(spark, real_data: Path) -> None:
    """Many files give several input partitions, which together hold every row once.
    (That local[2] runs them two at a time is measured by tests/bench/bench_export.py.)"""
    paths = [str(real_data / "quorum3-boaz" / "data" / f"kafka-{n}") for n in (1, 2, 3)]
    import os

    df = spark.read.format("kmeta").option("table", "records").load(paths + [str(HEALTHY)])
    assert df.rdd.getNumPartitions() >= min(2, os.cpu_count() or 1)
    per_task = df.rdd.mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect()
    assert len(per_task) == df.rdd.getNumPartitions() and sum(per_task) == df.count()


def test_export_writes_parquet_that_reads_back_equal(spark, tmp_path: Path,
                                                     real_data: Path) -> None:
    from kmeta.spark.export import run_export

    paths = [str(HEALTHY), str(real_data / "quorum3-boaz" / "data" / "kafka-3")]
    out = tmp_path / "out"
    result = run_export(paths, out, spark=spark)
    assert set(result.rows) == {"batches", "records", "findings", "epochs", "timeline",
                                "snapshots", "image"}
    for table in ("batches", "records", "epochs", "timeline", "snapshots", "image"):
        direct = spark.read.format("kmeta").option("table", table).load(paths)
        written = spark.read.parquet(str(out / table)).select(*direct.columns)
        assert written.count() == result.rows[table] == direct.count()
        assert direct.exceptAll(written).count() == 0 and written.exceptAll(direct).count() == 0
    # partitioned by cluster id and node id
    assert sorted(p.name for p in (out / "records").glob("cluster_id=*/node_id=*")) == \
        ["node_id=3", "node_id=4"]
    with pytest.raises(Exception, match="not empty"):
        run_export(paths, out, spark=spark)


def test_export_without_pyspark_says_how_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from kmeta.cli import main\n"
            f"main(['export', {str(HEALTHY)!r}, '--to', {str(tmp_path / 'o')!r}])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "pip install 'kmeta[spark]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_file_chunks_give_the_same_rows_as_each_table(real_data: Path) -> None:
    """export's single read of a file gives exactly the rows of the two tables."""
    from dataclasses import replace

    from kmeta.ops.export import Scope, file_chunks, plan_units, unit_rows

    paths = [str(HEALTHY), str(real_data / "ldi-poc"),
             str(REPO / "fixtures" / "data" / "corrupt"),
             str(REPO / "fixtures" / "data" / "verify" / "v010-legacy-message")]
    units, _ = plan_units(paths, "batches", Scope(data_topics=True, payloads=True))
    for u in units:
        got: dict[str, list] = {"batches": [], "records": []}
        for table, chunk in file_chunks(u, 500):
            got[table] += list(chunk.rows())
        for table in got:
            assert got[table] == list(unit_rows(replace(u, table=table))), (table, u.path)


def test_not_null_columns_hold_a_value_in_every_row(real_data: Path) -> None:
    """The columns the DDL declares NOT NULL (Spark then reads their values without a
    null check) hold one in every row of every input, legacy and corrupt ones too; the
    reader refuses a batch with a null there rather than let Spark read it as a value."""
    from dataclasses import replace

    import pyarrow as pa

    from kmeta.ops.export import COMMON, TABLES, Scope, plan_units, unit_rows
    from kmeta.spark.source import _checked

    paths = [str(HEALTHY), str(real_data / "ldi-poc"),
             str(REPO / "fixtures" / "data" / "corrupt"),
             str(REPO / "fixtures" / "data" / "verify" / "v010-legacy-message")]
    units, _ = plan_units(paths, "batches", Scope(data_topics=True, payloads=True))
    for table in ("batches", "records"):
        required = [i for i, c in enumerate(COMMON + TABLES[table]) if not c.nullable]
        assert len(required) >= 7
        rows = [r for u in units for r in unit_rows(replace(u, table=table))]
        assert rows and not [r for r in rows if any(r[i] is None for i in required)]
    batch = pa.RecordBatch.from_pydict({"source": ["a", None], "n": [1, None]})
    assert _checked(batch, []) is batch
    with pytest.raises(ValueError, match="a null in column source"):
        _checked(batch, [0])


def test_units_are_read_from_the_root_and_keep_the_source_given(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative input names a file from the driver's directory: its units' paths are
    absolute (an executor of a cluster runs in a directory of its own), and the rows keep
    the path as given."""
    from kmeta.ops.export import plan_units, unit_rows

    monkeypatch.chdir(HEALTHY.parent)
    units, problems = plan_units([HEALTHY.name], "batches")
    assert units and not problems
    assert all(Path(u.path).is_absolute() and u.source == HEALTHY.name for u in units)
    assert {r[0] for u in units for r in unit_rows(u)} == {HEALTHY.name}


def test_partition_directory_names_follow_spark() -> None:
    from kmeta.spark.export import partition_dir

    assert partition_dir("node_id", None) == "node_id=__HIVE_DEFAULT_PARTITION__"
    assert partition_dir("cluster_id", "a/b:c=d") == "cluster_id=a%2Fb%3Ac%3Dd"
    assert partition_dir("node_id", 3) == "node_id=3"


def test_export_as_json(spark, tmp_path: Path) -> None:
    from kmeta.spark.export import run_export

    result = run_export([str(HEALTHY)], tmp_path / "j", fmt="json",
                        tables=("epochs", "batches"), spark=spark)
    direct = spark.read.format("kmeta").option("table", "epochs").load(str(HEALTHY))
    assert result.rows["epochs"] == direct.count() > 0
    assert result.rows["batches"] > 1000
    assert list((tmp_path / "j" / "epochs").glob("cluster_id=*/node_id=4/part-*.json"))


def test_export_expands_globs_for_every_table(spark, tmp_path: Path, real_data: Path) -> None:
    """A quoted glob reaches export unexpanded: every table must see what it matches."""
    from kmeta.spark.export import run_export

    pattern = str(real_data / "quorum3-boaz" / "data" / "kafka-*")
    result = run_export([pattern], tmp_path / "g", tables=("batches", "epochs"), spark=spark)
    nodes = sorted(p.name for p in (tmp_path / "g" / "batches").glob("cluster_id=*/node_id=*"))
    assert nodes == ["node_id=1", "node_id=2", "node_id=3"]
    dirs = [str(real_data / "quorum3-boaz" / "data" / f"kafka-{n}") for n in (1, 2, 3)]
    assert result.rows["batches"] == _dump_counts(dirs)["batch"]


def test_timeline_table_is_the_brokers_story(spark, real_data: Path) -> None:
    from kmeta.ops.brokers import brokers

    path = real_data / "quorum3-boaz" / "data" / "kafka-3"
    rows = (spark.read.format("kmeta").option("table", "timeline").load([str(path)])
            .orderBy("offset").collect())
    events = brokers(path).events
    assert [(r.offset, r.node, r.event, r.fenced_ms) for r in rows] == \
        [(e.offset, e.node, e.event, e.fenced_ms) for e in events]
    assert {r.partition_dir for r in rows} == {"__cluster_metadata-0"}
    # a fencing storm across the fleet is one query: uncontrolled fences per minute
    storms = [r for r in rows if r.event == "fenced" and r.state_before == "unfenced"]
    assert [r.node for r in storms] == [2, 1, 3, 1, 2]


def test_snapshots_table_is_retentions_view() -> None:
    from kmeta.ops.export import plan_units, unit_rows
    from kmeta.ops.retention import retention

    units, _ = plan_units([str(HEALTHY)], "snapshots")
    rows = [row for u in units for row in unit_rows(u)]
    assert [r[4:6] for r in rows] == [(s.id.offset, s.id.epoch)
                                      for s in retention(HEALTHY).snapshots]
